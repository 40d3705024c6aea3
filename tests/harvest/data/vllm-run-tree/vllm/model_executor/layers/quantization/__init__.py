QUANTIZATION_METHODS = ["fp8", "gptq", "fbgemm_fp8"]
DEPRECATED_QUANTIZATION_METHODS = ["fbgemm_fp8"]


def get_quantization_config(method):
    from vllm.model_executor.layers.quantization import fp8, gptq

    return {"fp8": fp8.Fp8Config, "gptq": gptq.GPTQConfig, "fbgemm_fp8": fp8.FBGEMMFp8Config}[method]
