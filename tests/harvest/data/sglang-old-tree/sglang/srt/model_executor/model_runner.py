# Shaped like SGLang 0.4.x's ModelRunner (a fixture: only what the reader reads).
class ModelRunner:
    def model_specific_adjustment(self):
        server_args = self.server_args
        if server_args.attention_backend is None:
            if not self.use_mla_backend:
                if is_hopper_with_cuda_12_3():
                    server_args.attention_backend = "fa3"
                else:
                    server_args.attention_backend = "flashinfer"
            else:
                server_args.attention_backend = "triton"
        elif self.use_mla_backend:
            if server_args.attention_backend in ["flashinfer", "fa3", "triton"]:
                logger.info("MLA optimization is on with the chosen backend.")
        if server_args.attention_backend == "fa3" and server_args.kv_cache_dtype == "fp8_e5m2":
            logger.warning("FlashAttention3 takes fp8_e4m3 only; switching to triton.")

    def load_model(self):
        if torch.cuda.get_device_capability()[0] < 8:
            logger.info("Below sm80 there is no bfloat16: running in float16.")
            self.server_args.dtype = "float16"
            if torch.cuda.get_device_capability()[1] < 5:
                raise RuntimeError("SGLang only supports sm75 and above.")
