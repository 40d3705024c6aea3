# Shape of llama.cpp's conversion/ package: each converter class names the HF classes it converts.
from .base import ModelBase, TextModel


@ModelBase.register("LlamaForCausalLM", "MistralForCausalLM")
class LlamaModel(TextModel):
    model_arch = "llama"
