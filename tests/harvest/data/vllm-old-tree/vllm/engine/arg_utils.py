# Shape of vLLM's EngineArgs.add_cli_args: literal option strings, kwargs from the config dataclasses.
import argparse

KV_CACHE_DTYPES = ["auto", "fp8", "fp8_e4m3"]


class EngineArgs:
    @staticmethod
    def add_cli_args(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
        model_kwargs = get_kwargs(ModelConfig)
        model_group = parser.add_argument_group(title="ModelConfig")
        model_group.add_argument("--max-model-len", **model_kwargs["max_model_len"])
        model_group.add_argument("--quantization", "-q", **model_kwargs["quantization"])
        cache_kwargs = get_kwargs(CacheConfig)
        parser.add_argument("--kv-cache-dtype", **cache_kwargs["cache_dtype"])
        parser.add_argument("--enforce-eager", action="store_true")
        return parser
