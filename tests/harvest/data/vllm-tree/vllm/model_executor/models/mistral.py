from vllm.model_executor.models.llama import LlamaForCausalLM


class MistralForCausalLM(LlamaForCausalLM):
    pass
