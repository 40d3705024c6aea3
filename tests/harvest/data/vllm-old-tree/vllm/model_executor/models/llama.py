from torch import nn

from .interfaces import SupportsEagle3, SupportsLoRA, SupportsPP


class LlamaModel(nn.Module):
    pass


class LlamaForCausalLM(nn.Module, SupportsLoRA, SupportsPP, SupportsEagle3):
    pass
