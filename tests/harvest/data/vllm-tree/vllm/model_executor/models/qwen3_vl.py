from torch import nn

from .interfaces import MultiModalEmbeddings, SupportsMultiModal, SupportsPP


class Qwen3VLForConditionalGeneration(nn.Module, SupportsMultiModal, SupportsPP):
    pass
