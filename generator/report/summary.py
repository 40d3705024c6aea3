"""What `generate` prints: the verdict, what it understood, plan #1 in a few lines, the closest rejections."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..plan.advice import advice_for, faster_elsewhere, fuller_elsewhere
from ..plan.checkpoint_size import ESTIMATED
from ..plan.describe import candidate_title, closest_lines, fit, slow_words, target_line
from ..plan.footprint import BLOCK_SCALED_8BIT_KV
from ..plan.resolve import layer_split_note
from .explain import explain_text

if TYPE_CHECKING:
    from ..catalog.index import Catalog
    from ..plan.types import Resolution


LINES_PER_ITEM = 8  # a summary line wraps, never elides


def explanation(catalog: Catalog, resolution: Resolution, verbose: bool = False, tail: list[str] | None = None) -> str:
    """explain's trace with its advice: where else the model runs when blocked, or runs faster when offloaded."""
    return explain_text(resolution, advice_for(catalog, resolution), verbose=verbose, tail=tail)


def closest_rejections(resolution: Resolution, limit: int = 5) -> list[str]:
    return closest_lines(resolution, limit, "REJECTED.md groups them by reason")


def generate_summary(
    catalog: Catalog, resolution: Resolution, typed_model: str | None, folder: str, files: list[str], changed: bool
) -> str:
    """One screen for a runnable request; `folder` is the output folder as it may be printed."""
    top, request = resolution.plans[0], resolution.request
    lines = [f"{target_line(resolution)}: RUNNABLE{slow_words(top.candidate)}", f"  understood: {request.target_note}"]
    if request.weights_folder is not None:
        lines.append(f"  weights: the local folder {request.weights_folder}, mounted read-only; nothing is downloaded")
        if request.weights_blobs:
            lines.append(
                f"    (a Hugging Face cache snapshot: its links point into {request.weights_blobs}, mounted too)"
            )
        if typed_model != request.weights_folder:
            lines.append(f"    (--model {typed_model} made absolute: the artifacts name this path)")
    lines += [
        f"  layout: {resolution.layout_note}",
        f"  plan #1: {candidate_title(top.candidate)}",
        f"  why: {top.why_first}",
    ]
    if top.candidate.budget is not None:
        b = top.candidate.budget
        estimated = " (checkpoint size estimated from the parameter count; README.md says how)" * any(
            n.startswith(ESTIMATED) for n in b.notes
        )
        kv = top.candidate.settings.kv_dtype
        # a KV cache quantized past the engine's default is what buys the context: said where the context is
        quantized = f" (KV cache {kv})" if kv in BLOCK_SCALED_8BIT_KV else ""
        lines.append(
            f"  memory: {b.weights_gib:.1f} GiB weights/GPU{estimated}, context {b.context}{quantized}, "
            f"concurrency {b.concurrency} ({b.limit})"
        )
    if top.candidate.offload is not None:
        lines.append(f"  offload: {top.candidate.offload.summary()}")
    if top.candidate.speed is not None:
        lines.append(f"  speed (estimate): {top.candidate.speed.headline()}")
    if top.candidate.via_fallback:  # what runs the weights where the GPU has no native kernel for their format
        fmt = top.candidate.gate("weight-format").details
        kernel = ", ".join(name for _, name in fmt.kernels)
        lines.append(
            f"  kernel: no native {fmt.operation} kernel on {fmt.capability}: the weights run through {kernel}"
        )
    split = layer_split_note(top.candidate)  # what the GPUs asked for add: a speed the user might expect
    if split:
        lines.append(f"  note: {split}")
    if top.candidate.offload is not None or (top.candidate.speed is not None and top.candidate.speed.slow):
        faster = faster_elsewhere(catalog, resolution)  # what the same model does on hardware that holds it
        head = "faster without host offload" if top.candidate.offload is not None else "faster"
        lines.extend([f"  {head}, with more or other GPUs:"] if faster else [])
        lines.extend(f"    • {alt.target}: {alt.summary}" for alt in faster)
    elif top.candidate.low_bit and top.candidate.offload is None:
        fuller = fuller_elsewhere(catalog, resolution)  # what buys back the quality a sub-4-bit file gives up
        lines.extend(["  at 4 bits per weight or more, with more or other GPUs:"] if fuller else [])
        lines.extend(f"    • {alt.target}: {alt.summary}" for alt in fuller)
    lines.extend(closest_rejections(resolution))
    verb = "wrote" if changed else "unchanged"
    lines.append(f"  {verb} {folder}/: " + ", ".join(files))
    # wrapped to the screen like explain's default view; nothing is cut (the folder's README.md has it all)
    return "\n".join(row for line in lines for row in fit(line, lines=LINES_PER_ITEM))
