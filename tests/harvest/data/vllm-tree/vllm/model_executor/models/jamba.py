from torch import nn

from .interfaces import HasInnerState, IsHybrid, SupportsLoRA, SupportsPP


class JambaForCausalLM(nn.Module, HasInnerState, SupportsLoRA, SupportsPP, IsHybrid):
    pass
