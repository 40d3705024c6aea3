"""The attention selector of vLLM 0.6.6 and older (the V0 engine only), run: `vllm/attention/selector.py`
`get_attn_backend(...)`, whose inputs change per release (0.5.x: num_heads, head_size, num_kv_heads, sliding_window,
dtype, kv_cache_dtype, block_size; 0.6.0-0.6.3: head_size, sliding_window, dtype, kv_cache_dtype, block_size,
is_attention_free; 0.6.6: no sliding_window). It returns one backend class, decided by `which_attn_to_use`, whose
`_Backend` member is recorded by name (these releases' backend classes name themselves for display: 'flash-attn').
As with the chain of later releases (vllm_chain.py) there is no candidate list and no reason for a backend passed
over, so a case records the choice at the release's default block size and at each block size a user can pass.
Imported by vllm_probe.py inside the release's environment (stdlib and that release only).
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import inspect
from typing import Any

import vllm_chain

# what a GQA layer of the asked shape passes where the release's selector takes it (0.5.x: head counts)
LAYER = {"num_heads": 32, "num_kv_heads": 8, "sliding_window": 4096}
# the case inputs recipegen asks (vllm_probe.cases) -> the selector parameter that carries each
CASE_INPUTS = {"head_size": "head_size", "dtype": "dtype", "kv_cache_dtype": "kv_cache_dtype"}
WINDOW = "has_sliding_window"
# the FlashAttention package the selector imports before it picks FLASH_ATTN, and falls back on ImportError
FLASH_ATTN_MODULES = ("vllm.vllm_flash_attn", "vllm_flash_attn")


def is_v0(platform_cls: type) -> bool:
    """A release whose platform does not choose the attention backend (no get_attn_backend_cls): the selector
    module does."""
    return not hasattr(platform_cls, "get_attn_backend_cls") and not hasattr(platform_cls, "get_valid_backends")


def _selector() -> Any:
    return importlib.import_module("vllm.attention.selector")


def inputs_of() -> set[str]:
    """The case inputs the release's get_attn_backend takes (a sliding window only where it has the parameter)."""
    taken = set(inspect.signature(_selector().get_attn_backend).parameters)
    out = {case for case, param in CASE_INPUTS.items() if param in taken}
    return out | ({WINDOW} if "sliding_window" in taken else set())


def default_block_size(platform_cls: type) -> tuple[int | None, str]:
    """The KV block size a release uses when none is passed: EngineArgs.block_size where it is a number (0.6.3 and
    older: 16), else what CudaPlatform.check_and_update_config sets (0.6.6: None, then 16)."""
    from vllm.engine.arg_utils import EngineArgs

    default = getattr(EngineArgs, "block_size", None)
    if isinstance(default, int):
        return default, "vllm/engine/arg_utils.py: EngineArgs.block_size"
    block, why = vllm_chain.default_block_size(platform_cls, False, {})
    return block, why or "vllm/platforms/cuda.py: CudaPlatform.check_and_update_config (EngineArgs.block_size None)"


def flash_attn_import() -> dict[str, str]:
    """The FlashAttention package the selector imports before it picks FLASH_ATTN (`vllm.vllm_flash_attn` from 0.6.2,
    the separate `vllm_flash_attn` before), where it does not load here: the selector then falls back to XFORMERS
    silently, which would be this host's answer, not the GPU's. Empty where it loads."""
    source = inspect.getsource(_selector())
    module = next((m for m in FLASH_ATTN_MODULES if f"import {m}" in source), None)
    if module is None:
        return {}
    try:
        importlib.import_module(module)
    except ImportError as exc:
        return {module: f"{type(exc).__name__}: {str(exc).splitlines()[0][:200] if str(exc) else ''}"}
    return {}


def _arguments(selector: Any, case: dict[str, Any], block_size: int) -> dict[str, Any]:
    params = inspect.signature(selector.get_attn_backend).parameters
    given = {
        **{param: case[key] for key, param in CASE_INPUTS.items()},
        "block_size": block_size,
        "sliding_window": LAYER["sliding_window"] if case.get(WINDOW) else None,
        "num_heads": LAYER["num_heads"],
        "num_kv_heads": LAYER["num_kv_heads"],
        "is_attention_free": False,
        "is_blocksparse": False,
        "use_v1": False,
    }
    missing = [p for p, v in params.items() if v.default is inspect.Parameter.empty and p not in given]
    if missing:
        raise TypeError(f"get_attn_backend takes {', '.join(missing)}, which the probe has no value for")
    return {k: v for k, v in given.items() if k in params}


def _clear_caches(selector: Any) -> None:
    """get_attn_backend is lru_cached (0.6.3 and older itself, 0.6.6 its _cached_get_attn_backend): every case
    must reach which_attn_to_use."""
    for value in vars(selector).values():
        if isinstance(value, functools._lru_cache_wrapper):
            value.cache_clear()


def ask(case: dict[str, Any], block_size: int) -> tuple[str | None, str | None]:
    """The release's choice for one case at one block size: which_attn_to_use's `_Backend` name, with get_attn_backend
    run to the end (it imports the backend class); (name, error) where that import failed, (None, error) where the
    choice itself raised."""
    selector = _selector()
    chosen: list[Any] = []
    original = selector.which_attn_to_use

    def recorded(*args: Any, **kwargs: Any) -> Any:
        backend = original(*args, **kwargs)
        chosen.append(backend)
        return backend

    _clear_caches(selector)
    selector.which_attn_to_use = recorded
    try:
        selector.get_attn_backend(**_arguments(selector, case, block_size))
        error = None
    except Exception as exc:
        error = f"{type(exc).__name__}: {exc}"[:300]
    finally:
        selector.which_attn_to_use = original
    return (chosen[-1].name if chosen else None), error


def answer(platform_cls: type, case: dict[str, Any]) -> dict[str, Any]:
    """One case: the backend chosen at the release's default block size and at each block size a user may pass."""
    row: dict[str, Any] = {}
    block, why = default_block_size(platform_cls)
    by_block: dict[str, str | None] = {}
    errors: dict[str, str] = {}
    for size in sorted({*vllm_chain.BLOCK_SIZES, *([block] if block else [])}):
        chosen, error = ask(case, size)
        by_block[str(size)] = chosen
        if error:
            errors[str(size)] = error
    row["by_block_size"] = by_block
    if block is None:
        row["block_size_error"] = why
        row["selected"] = None
    else:
        row["block_size"] = block
        row["selected"] = by_block[str(block)]
        if str(block) in errors:
            row["selection_error"] = errors[str(block)]
    if errors and "selection_error" not in row:
        row["block_size_errors"] = errors
    return row


def backend_names() -> list[str]:
    """The release's `_Backend` members (0.6.6 keeps the enum in vllm.platforms, 0.6.3 and older in the selector)."""
    for module in ("vllm.attention.selector", "vllm.platforms"):
        with contextlib.suppress(ImportError, AttributeError):
            return sorted(member.name for member in importlib.import_module(module)._Backend)
    return []


def table_keys(platform_cls: type) -> dict[str, Any]:
    """What the probe says of the selector once per capability (ran.py keeps the first capability's)."""
    _block, block_from = default_block_size(platform_cls)
    params = inspect.signature(_selector().get_attn_backend).parameters
    return {
        "chain": {
            "selector": "get_attn_backend",
            "asked": "vllm/attention/selector.py get_attn_backend("
            + ", ".join(params)
            + ") per block size, use_v1 False where taken; the choice is which_attn_to_use's _Backend",
            "layer": {
                k: v for k, v in LAYER.items() if k in inspect.signature(_selector().get_attn_backend).parameters
            },
            "block_sizes": list(vllm_chain.BLOCK_SIZES),
            "default_block_size_from": block_from,
            "backends": backend_names(),
            "rejections": vllm_chain.REJECTIONS,
        },
        "imports": flash_attn_import(),
    }
