# Shape of SGLang's sglang/srt/models/*.py: each module names its served classes in EntryClass.
class LlamaForCausalLM:
    pass


class Phi3ForCausalLM(LlamaForCausalLM):
    pass


EntryClass = [LlamaForCausalLM, Phi3ForCausalLM]
