class AttentionType:
    DECODER = "decoder"
    ENCODER = "encoder"
