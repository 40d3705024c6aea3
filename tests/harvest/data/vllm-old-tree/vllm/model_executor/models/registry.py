# Shape of vLLM's vllm/model_executor/models/registry.py (v0.33.0): category tables of
# "Architecture": (module, class), a union table built by ** spreads, a comprehension inside one table,
# and the removed/out-of-tree tables. Entries trimmed to a handful.
import sys

from .interfaces import is_hybrid

_TEXT_GENERATION_MODELS = {
    # [Decoder-only]
    "JambaForCausalLM": ("jamba", "JambaForCausalLM"),
    "LlamaForCausalLM": ("llama", "LlamaForCausalLM"),
    "MistralForCausalLM": ("mistral", "MistralForCausalLM"),
    "AquilaForCausalLM": ("llama", "LlamaForCausalLM"),
}

_EMBEDDING_MODELS = {
    "LlamaModel": ("llama", "LlamaForCausalLM"),
    **{
        # Multiple models share the same architecture, so we include them all
        k: (mod, arch)
        for k, (mod, arch) in _TEXT_GENERATION_MODELS.items()
        if arch == "LlamaForCausalLM"
    },
}

_MULTIMODAL_MODELS = {
    "Qwen3VLForConditionalGeneration": ("qwen3_vl", "Qwen3VLForConditionalGeneration"),
    "Step5ForConditionalGeneration": (
        "vllm.models.step5",
        "Step5ForConditionalGeneration",
    ),
}

_VLLM_MODELS = {
    **_TEXT_GENERATION_MODELS,
    **_EMBEDDING_MODELS,
    **_MULTIMODAL_MODELS,
}

_SUBPROCESS_COMMAND = [sys.executable, "-m", "vllm.model_executor.models.registry"]

_PREVIOUSLY_SUPPORTED_MODELS = {
    "MiniMaxM1ForCausalLM": "0.23.0",
}

_OOT_SUPPORTED_MODELS = {
    "BartModel": "https://github.com/vllm-project/bart-plugin",
}
