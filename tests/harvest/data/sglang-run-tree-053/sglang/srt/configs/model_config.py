import enum
import json
import os


class AttentionArch(enum.Enum):
    MLA = enum.auto()
    MHA = enum.auto()


class ModelConfig:
    def __init__(self, model_path):
        with open(os.path.join(model_path, "config.json")) as handle:
            self.hf_config = json.load(handle)
        self.attention_arch = AttentionArch.MLA if "kv_lora_rank" in self.hf_config else AttentionArch.MHA
        self.is_multimodal = False

    @staticmethod
    def from_server_args(server_args, model_path=None):
        return ModelConfig(model_path or server_args.model_path)
