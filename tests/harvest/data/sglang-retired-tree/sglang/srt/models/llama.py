class LlamaForCausalLM:
    pass


EntryClass = LlamaForCausalLM
