# a module saved with a byte-order mark (SGLang 0.4.6 qwen2_classification.py)
class Qwen3NextForCausalLM:
    pass


EntryClass = Qwen3NextForCausalLM
