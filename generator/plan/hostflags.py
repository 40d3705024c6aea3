"""The engine flags of a host-offload plan, each with its reason (see offload.py for the mechanisms)."""

from __future__ import annotations

from .flags import container_model_path
from .offload import HOST_RESERVE_GIB, SOURCES, kt_method
from .types import Candidate, Flag


def offload_flags(cand: Candidate) -> list[Flag]:
    off = cand.offload
    if off is None:
        return []
    f = cand.engine.flags
    srcs = SOURCES[off.mechanism]
    total = f"{off.host.memory_gib:g} GiB, ~{HOST_RESERVE_GIB:g} GiB kept for the OS"
    room = f"{off.host_gib:.1f} GiB of host RAM (of {total})"
    out: list[Flag] = []
    if off.mechanism == "expert-layers":
        assert f.cpu_moe_layers is not None
        if f.gpu_layers:
            out.append(
                Flag(
                    f.gpu_layers,
                    "999",
                    "every layer on the GPUs: attention, shared experts, dense layers and the KV cache stay in GPU "
                    f"memory; only the experts named by {f.cpu_moe_layers} live in host RAM",
                    srcs,
                )
            )
        # llama.cpp counts layer indices from 0: leading dense layers have no experts but still count
        dense = off.split.dense_layers if off.split is not None else 0
        counted = f" (layers 0–{dense - 1} are dense and hold none)" if dense else ""
        out.append(
            Flag(
                f.cpu_moe_layers,
                str(dense + off.cpu_layers),
                f"the routed experts of the first {off.cpu_layers} of {off.moe_layers} MoE layers{counted} stay in "
                f"host RAM and run on the CPU: {room}; the fewest layers that let the GPUs hold the rest at "
                f"{off.budget.context:,} tokens of context",
                srcs,
            )
        )
        if f.tensor_split and off.tensor_split:
            out.append(
                Flag(
                    f.tensor_split,
                    ",".join(str(n) for n in off.tensor_split),
                    "layers per GPU, weighted so each GPU holds about the same bytes: the first layers lost their "
                    f"experts to {f.cpu_moe_layers}, so the first GPU takes more of them",
                    srcs,
                )
            )
    elif off.mechanism == "cpu-layers":
        assert f.gpu_layers is not None
        on_gpu = off.moe_layers - off.cpu_layers
        out.append(
            Flag(
                f.gpu_layers,
                str(on_gpu),
                f"the last {on_gpu} of {off.moe_layers} layers on the GPUs; the first {off.cpu_layers} (weights and "
                f"their KV cache) stay in host RAM and run on the CPU: {room} — every token reads them at host-RAM "
                "speed",
                srcs,
            )
        )
    elif off.mechanism == "weights-gb":
        assert f.cpu_offload_gb is not None
        out.append(
            Flag(
                f.cpu_offload_gb,
                str(off.gb_per_gpu),
                f"{off.gb_per_gpu} GiB of each GPU's weights stay in host RAM ({room}) and are copied over PCIe in "
                "every forward pass: decode is bound by PCIe, not by GPU memory",
                srcs,
            )
        )
    else:
        method = kt_method(cand.variant.quant)
        if f.cpu_expert_method and method:
            out.append(
                Flag(
                    f.cpu_expert_method,
                    method,
                    f"CPU expert kernel for {cand.variant.quant} weights: "
                    f"every routed expert runs from host RAM ({room})",
                    srcs,
                )
            )
        if f.gpu_experts:
            out.append(
                Flag(
                    f.gpu_experts,
                    "0",
                    "the memory plan keeps no routed expert on the GPU; raise it only with GPU memory to spare",
                    srcs,
                )
            )
        if f.cpu_expert_weights:
            out.append(
                Flag(
                    f.cpu_expert_weights,
                    container_model_path(cand.variant),
                    "the CPU expert kernel reads the same checkpoint",
                    srcs,
                )
            )
    return out
