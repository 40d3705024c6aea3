QuantizationMethods = Literal["awq", "fp8", "gptq", "gptq_marlin", "ipex"]
