"""Run inside an SGLang release's own virtual environment (stdlib + that release only): resolve its ServerArgs for
each attention shape recipegen plans on one simulated GPU, ask its quantization code for each method's minimum
capability, and print JSON.

SGLang chooses attention backends while it resolves its server arguments (`ServerArgs.resolve_once`; up to 0.5.18
`__post_init__`: the model overrides, `get_default_attn_backend`, the attention, DSA, KV-cache and linear-attention
hooks), asking only torch.cuda (is_available, get_device_capability, torch.version.cuda), whether flashinfer
imports and, in 0.5.9 and older, `nvidia-smi --query-gpu=memory.total` (a stand-in answers it). So the whole
resolution is run here, as `python -m sglang.launch_server --model-path DIR` would, on a stand-in model folder
holding only a config.json (no weights, no download), over a torch.cuda that reports the simulated GPU
(simulated_gpu.py; with a stand-in nvidia-smi first on PATH that answers the GPU's figures and says so in the
ran file). One fresh interpreter per capability: the capability probes are lru_cache-d.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import sys
import tempfile
import warnings
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from sglang_model_runner import (
    StepUnavailable,
    chooses_in_model_runner,
    cli_backend_choices,
    model_runner_step,
)
from simulated_gpu import (
    device_properties,
    ensure_libcuda,
    ensure_nvidia_smi,
    nvidia_smi_calls,
    probe_arguments,
    scheme_minimums,
    simulate_torch_cuda,
    source_of,
)

# One config.json per attention shape recipegen plans: the fields the resolution reads (architecture, attention
# geometry, DSA's index_topk, the hybrid layout); the rest take the config class's defaults.
SHAPES: dict[str, dict[str, Any]] = {
    "gqa": {
        "architectures": ["LlamaForCausalLM"],
        "model_type": "llama",
        "hidden_size": 4096,
        "intermediate_size": 14336,
        "num_attention_heads": 32,
        "num_key_value_heads": 8,
        "head_dim": 128,
        "num_hidden_layers": 32,
        "vocab_size": 128256,
        "max_position_embeddings": 131072,
    },
    "sinks": {  # gpt-oss: attention sinks, alternating sliding window, BF16 weights
        "architectures": ["GptOssForCausalLM"],
        "model_type": "gpt_oss",
        "hidden_size": 2880,
        "intermediate_size": 2880,
        "num_attention_heads": 64,
        "num_key_value_heads": 8,
        "head_dim": 64,
        "num_hidden_layers": 24,
        "num_local_experts": 32,
        "num_experts_per_tok": 4,
        "sliding_window": 128,
        "layer_types": ["sliding_attention", "full_attention"] * 12,
        "vocab_size": 201088,
        "max_position_embeddings": 131072,
    },
    "mla": {  # DeepSeek-V3: dense MLA
        "architectures": ["DeepseekV3ForCausalLM"],
        "model_type": "deepseek_v3",
        "hidden_size": 7168,
        "intermediate_size": 18432,
        "moe_intermediate_size": 2048,
        "num_attention_heads": 128,
        "num_key_value_heads": 128,
        "kv_lora_rank": 512,
        "q_lora_rank": 1536,
        "qk_nope_head_dim": 128,
        "qk_rope_head_dim": 64,
        "v_head_dim": 128,
        "num_hidden_layers": 61,
        "first_k_dense_replace": 3,
        "n_routed_experts": 256,
        "n_shared_experts": 1,
        "num_experts_per_tok": 8,
        "vocab_size": 129280,
        "max_position_embeddings": 163840,
    },
}
# each stand-in names its checkpoint's own model_type: a release maps an unknown one itself (0.5.11 loads
# deepseek_v32 as DeepseekV3ForCausalLM, the architecture its DSA switch looks for)
SHAPES["sparse_mla"] = {  # DeepSeek-V3.2: DSA sparse MLA (the same geometry plus the indexer)
    **SHAPES["mla"],
    "architectures": ["DeepseekV32ForCausalLM"],
    "model_type": "deepseek_v32",
    "index_topk": 2048,
    "index_head_dim": 128,
    "index_n_heads": 64,
}
SHAPES["sparse_mla_glm"] = {  # GLM-5: DSA with a 192-wide NoPE part
    **SHAPES["sparse_mla"],
    "architectures": ["GlmMoeDsaForCausalLM"],
    "model_type": "glm_moe_dsa",
    "num_attention_heads": 64,
    "num_key_value_heads": 64,
    "qk_nope_head_dim": 192,
    "v_head_dim": 256,
}
SHAPES["hybrid_linear"] = {  # Qwen3-Next: gated DeltaNet layers with every fourth layer full attention
    "architectures": ["Qwen3NextForCausalLM"],
    "model_type": "qwen3_next",
    "hidden_size": 2048,
    "intermediate_size": 5120,
    "moe_intermediate_size": 512,
    "num_attention_heads": 16,
    "num_key_value_heads": 2,
    "head_dim": 256,
    "num_hidden_layers": 48,
    "full_attention_interval": 4,
    "linear_num_key_heads": 16,
    "linear_num_value_heads": 32,
    "linear_key_head_dim": 128,
    "linear_value_head_dim": 128,
    "linear_conv_kernel_dim": 4,
    "num_experts": 512,
    "num_experts_per_tok": 10,
    "vocab_size": 151936,
    "max_position_embeddings": 262144,
}
KV = ("auto", "bfloat16", "fp8_e4m3")
# the NVIDIA backends a user may pass as --attention-backend (each asked of every shape; None: the release's pick)
NVIDIA = ("triton", "flashinfer", "fa3", "fa4", "trtllm_mha", "flashmla", "trtllm_mla", "cutedsl_mla")
NVIDIA += ("tokenspeed_mla", "dsa")
# 0.5.12 and older call the DSA backend `nsa` (`--nsa-prefill-backend`, `--nsa-decode-backend`); 0.5.13 renamed it
# `dsa` and kept `nsa` as an alias, which is not asked twice
OLD_DSA = "nsa"
# what the resolution decided, per case (None where the release leaves a field unset)
RESOLVED = (
    "attention_backend",
    "prefill_attention_backend",
    "decode_attention_backend",
    "dsa_prefill_backend",
    "dsa_decode_backend",
    "nsa_prefill_backend",
    "nsa_decode_backend",
    "nsa_prefill",  # 0.5.3 (the first with DSA): --nsa-prefill / --nsa-decode
    "nsa_decode",
    "kv_cache_dtype",
    "page_size",
    "linear_attn_backend",
    "linear_attn_prefill_backend",
    "linear_attn_decode_backend",
)


def asked_backends(backends: list[str]) -> list[str]:
    """The NVIDIA backends of the release's choices, in the release's own names."""
    asked = [b for b in NVIDIA if b in backends]
    if "dsa" not in backends and OLD_DSA in backends:
        asked.append(OLD_DSA)
    return asked


def cases(backends: list[str]) -> list[dict[str, Any]]:
    return [
        {"shape": shape, "kv": kv, "asked": asked}
        for shape in SHAPES
        for kv in KV
        for asked in (None, *asked_backends(backends))
    ]


class _Said(logging.Handler):
    """The warnings the release logs while it resolves one case (what a user reads at start-up)."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        line = " ".join(record.getMessage().split())[:300]
        if line not in self.lines:
            self.lines.append(line)


def _folders(root: str) -> dict[str, str]:
    out = {}
    for shape, config in SHAPES.items():
        folder = os.path.join(root, shape)
        os.makedirs(folder, exist_ok=True)
        with open(os.path.join(folder, "config.json"), "w") as handle:
            json.dump({**config, "torch_dtype": "bfloat16"}, handle)
        out[shape] = folder
    return out


def _resolution_result() -> Any:
    """What resolution decided for a field. From 0.5.19 the record stays raw and `resolution_result` reads the
    declarations; 0.5.18 and older resolve in `__post_init__` and write the result onto the fields."""
    try:
        from sglang.srt.arg_groups.overrides import resolution_result

        return resolution_result
    except ImportError:
        return lambda args, field: getattr(args, field, None)


def backend_choices() -> list[str]:
    """The release's `--attention-backend` choices: arg_groups/choices.py from 0.5.20, server_args.py before, and
    only the parser `ServerArgs.add_cli_args` builds in 0.5.0rc2 and older."""
    try:
        from sglang.srt.arg_groups import choices
    except ImportError:
        from sglang.srt import server_args as choices
    if not hasattr(choices, "ATTENTION_BACKEND_CHOICES"):
        from sglang.srt.server_args import ServerArgs

        return cli_backend_choices(ServerArgs)
    return list(choices.ATTENTION_BACKEND_CHOICES)


def resolve(folder: str, kv: str, asked: str | None, in_model_runner: bool = False) -> dict[str, Any]:
    """One `launch_server --model-path FOLDER --kv-cache-dtype KV [--attention-backend ASKED]` resolution; with
    `in_model_runner` (0.5.3 and older) followed by the release's ModelRunner step that picks the backend."""
    from sglang.srt.server_args import ServerArgs

    resolution_result = _resolution_result()
    said = _Said()
    logging.getLogger().addHandler(said)
    row: dict[str, Any] = {}
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            args = ServerArgs(model_path=folder, kv_cache_dtype=kv, attention_backend=asked)
            if hasattr(args, "resolve_once"):  # 0.5.19 on; before, construction resolved
                args.resolve_once()
            if in_model_runner:
                model_runner_step(args)
        row["resolved"] = {f: resolution_result(args, f) for f in RESOLVED}
        row["resolved"] = {k: v for k, v in row["resolved"].items() if v is not None}
        if row["resolved"].get("attention_backend") != "nsa":  # 0.5.3 gives --nsa-prefill/--nsa-decode defaults
            row["resolved"] = {k: v for k, v in row["resolved"].items() if k not in ("nsa_prefill", "nsa_decode")}
        said.lines += [" ".join(str(w.message).split())[:300] for w in caught if w.category is not DeprecationWarning]
    except StepUnavailable as exc:  # the probe could not run the release's step: no answer
        row["error"] = f"probe: {exc}"[:300]
    except (ImportError, OSError) as exc:  # a library this environment lacks or cannot load: not the release's answer
        row["error"] = f"{type(exc).__name__}: {' '.join(str(exc).split())}"[:300]
    except Exception as exc:  # the release refuses this case: its own message is the reason
        text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        row["refused"] = f"{type(exc).__name__}: {text}"[:300]
    finally:
        logging.getLogger().removeHandler(said)
    if said.lines:
        row["warnings"] = said.lines
    return row


def attention(capability: int) -> dict[str, Any]:
    backends = backend_choices()
    in_model_runner = chooses_in_model_runner()
    rows = []
    with tempfile.TemporaryDirectory(prefix="sglang-probe-") as root:
        folders = _folders(root)
        for case in cases(backends):
            answer = resolve(folders[case["shape"]], case["kv"], case["asked"], in_model_runner)
            rows.append({"capability": capability, **case, **answer})
    # what the release logs on every case (the host's own: no nvidia-smi here) is said once, not per case
    common = [w for w in rows[0].get("warnings", []) if all(w in r.get("warnings", ()) for r in rows)]
    for row in rows:
        row["warnings"] = [w for w in row.get("warnings", []) if w not in common]
        if not row["warnings"]:
            del row["warnings"]
    import torch

    shapes = {shape: config["architectures"][0] for shape, config in SHAPES.items()}
    from sglang.srt.server_args import ServerArgs

    return {
        "cases": rows,
        "resolved_in": _resolved_in(ServerArgs, in_model_runner),
        "backend_choices": backends,
        "shapes": shapes,
        "torch_cuda": torch.version.cuda,
        "logged_on_every_case": common,
    }


def _resolved_in(server_args: Any, in_model_runner: bool) -> str:
    resolved = "resolve_once" if hasattr(server_args, "resolve_once") else "__post_init__"
    return f"{resolved}+model_specific_adjustment" if in_model_runner else resolved


def kernels(capability: int) -> dict[str, Any]:
    """What the quantization code decides from the capability alone: FP8 through Marlin (weight-only) where the
    GPU lacks FP8 tensor cores, and the weight types Marlin takes."""
    out: dict[str, Any] = {}
    with contextlib.suppress(ImportError, AttributeError):
        from sglang.srt.layers.quantization.fp8_utils import can_auto_enable_marlin_fp8

        out["fp8_marlin_auto"] = bool(can_auto_enable_marlin_fp8())
    with contextlib.suppress(ImportError, AttributeError):
        from sglang.srt.layers.quantization.marlin_utils import query_marlin_supported_quant_types

        out["marlin_types"] = [str(t) for t in query_marlin_supported_quant_types(None, True, capability)]
    return out


def methods() -> dict[str, Any]:
    """Each --quantization method's config class and minimum capability, and the per-layer schemes'."""
    import sglang
    import sglang.srt.layers.quantization as quant

    site = os.path.dirname(sglang.__file__)

    configs = {}
    for method in quant.QUANTIZATION_METHODS:
        try:
            cls = quant.get_quantization_config(method)
            entry = {"class": cls.__name__, "module": source_of(cls, site)}
            try:
                entry["min_capability"] = cls.get_min_capability()
            except TypeError:  # an instance method (Fp8Config: mxfp8 asks more): the config `--quantization M` builds
                config = cls.from_config({"quant_method": method, "activation_scheme": "dynamic"})
                entry["min_capability"] = config.get_min_capability()
                entry["asked_of"] = f"{cls.__name__}.from_config(quant_method={method!r})"
            configs[method] = entry
        except Exception as exc:
            configs[method] = {"error": f"{type(exc).__name__}: {exc}"[:200]}
    schemes = scheme_minimums(quant, (".schemes.", "compressed_tensors.", "quark."), site)
    return {"version": sglang.__version__, "methods": configs, "schemes": schemes}


def main() -> None:
    args = probe_arguments()
    os.environ.setdefault("SGLANG_LOGGING_LEVEL", "WARNING")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # the stand-in folders are local: nothing is fetched
    logging.getLogger().setLevel(logging.WARNING)  # what resolve() records; printed nowhere
    logging.getLogger().addHandler(logging.NullHandler())
    warnings.filterwarnings("ignore")
    libcuda = ensure_libcuda(args.stub_dir)
    simulate_torch_cuda(args.cap or 100)  # before any SGLang module runs its import-time capability probes
    # 0.5.9 and older size their defaults from `nvidia-smi --query-gpu=memory.total` and have no fallback without it
    smi = ensure_nvidia_smi(os.path.dirname(os.path.abspath(args.stub_dir)), args.cap or 100)
    if args.methods:
        result = methods()
    else:
        result = {}
        if args.part in ("all", "kernels"):
            result["kernels"] = kernels(args.cap)
        if args.part in ("all", "attention"):
            result.update(attention(args.cap))
    if args.cap:
        result["device"] = device_properties(args.cap)
    result["libcuda"] = libcuda if libcuda in ("system", "not needed") else "stand-in"
    calls = nvidia_smi_calls(smi, args.cap or 100)
    if calls is not None:  # how the stand-in answered, for the ran file
        result["nvidia_smi"] = calls
    sys.stdout.write("\n" + json.dumps(result, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
