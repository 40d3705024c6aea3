"""The attention selector of vLLM 0.11.0 and older, run: `CudaPlatform.get_attn_backend_cls(selected_backend, head_size,
dtype, kv_cache_dtype, block_size, use_v1, use_mla[, has_sink][, use_sparse])` walks an if/else chain and returns
one backend's class path. There is no candidate list and no reason for a backend it passes over, so a case records
only what the chain chose for the engine a user gets without VLLM_USE_V1 set (V0 up to 0.7.x, V1 from 0.8.0): at
the block size the release itself sets for the model (`check_and_update_config`: 16 unless an MLA backend forces
its own) and at each block size a user can pass (`--block-size`), which decides the MLA branch. Imported by
vllm_probe.py inside the release's environment (stdlib and that release only).
"""

from __future__ import annotations

import contextlib
import importlib
import inspect
import os
import types
from collections.abc import Callable
from typing import Any

BLOCK_SIZES = (16, 32, 64, 128)
REJECTIONS = (
    "not stated by the release: its selector returns one class path and names no reason for the backends it passes over"
)


def is_chain(platform_cls: type) -> bool:
    """A selector without a candidate list (no get_valid_backends)."""
    return not hasattr(platform_cls, "get_valid_backends") and hasattr(platform_cls, "get_attn_backend_cls")


def default_use_v1() -> bool:
    """Whether the release runs its V1 engine when VLLM_USE_V1 is not set: its envs.py default ("0" up to 0.7.x,
    "1" from 0.8.0; a release without the variable has only V1)."""
    import vllm.envs as envs

    saved = os.environ.pop("VLLM_USE_V1", None)
    try:
        return bool(getattr(envs, "VLLM_USE_V1", True))
    finally:
        if saved is not None:
            os.environ["VLLM_USE_V1"] = saved


def backend_names() -> list[str]:
    """The release's own attention-backend enum (`_Backend`), named as later releases name them: 0.10.x suffixes
    its V1 backends `_VLLM_V1` (TRITON_ATTN_VLLM_V1), which 0.11.0 dropped."""
    for module in ("vllm.platforms.interface", "vllm.attention.backends.registry"):
        with contextlib.suppress(ImportError, AttributeError):
            enum = importlib.import_module(module)._Backend
            return sorted({_plain(member.name) for member in enum})
    return []


def _plain(name: str) -> str:
    return name[: -len("_VLLM_V1")] if name.endswith("_VLLM_V1") else name


class Names:
    """Class path -> the backend's own `get_name()` (plain), importing each class once; `retry` re-imports a
    module that allocates on the GPU at import (vllm_probe._cuda_tensors_on_meta)."""

    def __init__(self, retry: Callable[[], Any]) -> None:
        self.retry = retry
        self.names: dict[str, str] = {}
        self.report: dict[str, str] = {}

    def __call__(self, path: str) -> str:
        if path not in self.names:
            self.names[path] = self._resolve(path)
        return self.names[path]

    def _resolve(self, path: str) -> str:
        module, _, name = path.rpartition(".")
        try:
            return _plain(str(getattr(importlib.import_module(module), name).get_name()))
        except Exception as exc:
            first = f"{type(exc).__name__}: {str(exc).splitlines()[0][:160] if str(exc) else ''}"
        try:
            with self.retry():
                found = _plain(str(getattr(importlib.import_module(module), name).get_name()))
            self.report[found] = f"{first} on CPU; re-imported with its CUDA allocations on the meta device"
            return found
        except Exception as exc:  # the class path is what the chain returned; its name stays unread
            self.report[path] = f"{first}; retry failed: {type(exc).__name__}: {exc}"[:300]
            return path


def default_block_size(platform_cls: type, mla: bool, hf_config: dict[str, Any]) -> tuple[int | None, str | None]:
    """The KV block size the release sets for a model (`check_and_update_config` on a stand-in config that holds
    only what it reads before the attention choice), and why not where it could not be asked. The env value it
    may write (0.11.0: VLLM_ATTENTION_BACKEND=CUTLASS_MLA on SM 10.0) is restored."""
    import vllm.envs as envs

    cache = types.SimpleNamespace(block_size=None)
    config = types.SimpleNamespace(
        parallel_config=types.SimpleNamespace(worker_cls="vllm.v1.worker.gpu_worker.Worker", data_parallel_size=1),
        scheduler_config=types.SimpleNamespace(is_multi_step=False),
        cache_config=cache,
        model_config=types.SimpleNamespace(
            use_mla=mla, hf_config=types.SimpleNamespace(**hf_config), enforce_eager=False
        ),
        compilation_config=types.SimpleNamespace(use_cudagraph=True, cudagraph_mode=None),
        speculative_config=None,
    )
    saved = dict(vars(envs))
    try:
        platform_cls.check_and_update_config(config)  # type: ignore[attr-defined]
    except Exception as exc:
        return None, f"check_and_update_config: {type(exc).__name__}: {exc}"[:300]
    finally:
        for key in [k for k in vars(envs) if k not in saved]:
            delattr(envs, key)
        for key, value in saved.items():
            if vars(envs).get(key) is not value:
                setattr(envs, key, value)
    return cache.block_size, None


def ask(platform_cls: type, inputs: dict[str, Any], block_size: int, names: Names) -> tuple[str | None, str | None]:
    """The chain's choice for one case at one block size: (backend name, None) or (None, its error)."""
    accepted = inspect.signature(platform_cls.get_attn_backend_cls).parameters  # type: ignore[attr-defined]
    given = {**inputs, "selected_backend": None, "block_size": block_size, "use_v1": default_use_v1()}
    try:
        path = platform_cls.get_attn_backend_cls(**{k: v for k, v in given.items() if k in accepted})  # type: ignore[attr-defined]
    except Exception as exc:
        return None, f"{type(exc).__name__}: {exc}"[:300]
    return names(str(path)), None


def inputs_of(platform_cls: type) -> set[str]:
    """The case inputs the chain takes (selected_backend, block_size and use_v1 are the probe's own)."""
    accepted = set(inspect.signature(platform_cls.get_attn_backend_cls).parameters)  # type: ignore[attr-defined]
    return accepted - {"cls", "selected_backend", "block_size", "use_v1"}


def answer(
    platform_cls: type, inputs: dict[str, Any], mla: bool, hf_config: dict[str, Any], names: Names
) -> dict[str, Any]:
    """One case: the backend chosen at the release's own block size, and at each block size a user may pass."""
    row: dict[str, Any] = {}
    block, why = default_block_size(platform_cls, mla, hf_config)
    by_block: dict[str, str | None] = {}
    errors: dict[str, str] = {}
    for size in sorted({*BLOCK_SIZES, *([block] if block else [])}):
        chosen, error = ask(platform_cls, inputs, size, names)
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


def table_keys(names: Names) -> dict[str, Any]:
    """What the probe says of the chain once per capability (ran.py keeps the first capability's)."""
    v1 = default_use_v1()
    asked = f"CudaPlatform.get_attn_backend_cls(selected_backend=None, …, use_v1={v1}) per block size"
    return {
        "chain": {
            "asked": asked if v1 else f"{asked} (VLLM_USE_V1 unset: the release's default engine is V0)",
            "use_v1": v1,
            "block_sizes": list(BLOCK_SIZES),
            "default_block_size_from": "CudaPlatform.check_and_update_config",
            "backends": backend_names(),
            "rejections": REJECTIONS,
        },
        "imports": names.report,
    }
