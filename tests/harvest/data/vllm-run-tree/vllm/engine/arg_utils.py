"""0.6.3's engine arguments: the KV block size a release uses when none is passed."""


class EngineArgs:
    block_size = 16
