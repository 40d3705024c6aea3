ATTENTION_BACKEND_CHOICES = ["triton", "dsa", "fa3", "flashinfer", "trtllm_mla", "trtllm_mha", "aiter"]
