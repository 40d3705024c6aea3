class AWQConfig(QuantizationConfig):
    def get_name(self):
        return "awq"

    @classmethod
    def get_min_capability(cls):
        return 75
