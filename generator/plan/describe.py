"""A plan's facts as lines of text: its target, title, memory budget, speed estimate and gate marks.

The folder's README.md (artifacts) and `explain` (report) print the same lines, so they cannot disagree.
"""

from __future__ import annotations

import textwrap

from .checkpoint_size import estimated_label
from .memory import Budget
from .speed import SLOW_TPS, rate
from .types import Candidate, Resolution

MARK = {"pass": "✓", "fail": "✗", "unknown": "?"}


def target_line(r: Resolution) -> str:
    hw = r.request.hardware
    layout = r.layout
    count = f"{layout.nodes} × {layout.gpus_per_node}" if layout.nodes > 1 else f"{layout.gpus_per_node}"
    spec = f"{hw.compute_capability.sm}, {hw.memory_gib:g} GiB {hw.memory_kind}"
    return f"{r.request.model.name} on {count} × {hw.name} ({spec})"


def budget_table(b: Budget, indent: str = "     ") -> list[str]:
    fraction = f" × {b.fraction:g}" if b.fraction is not None else ""
    rows = [
        f"{indent}memory per GPU ({b.gpu_gib:g} GiB{fraction}):",
        f"{indent}  weights            {b.weights_gib:8.2f} GiB"
        + ("  (estimated size: the note says how)" if estimated_label(b.notes) else ""),
    ]
    if b.reserve_gib:
        rows.append(f"{indent}  runtime reserve    {b.reserve_gib:8.2f} GiB  (estimate)")
    rows += [
        f"{indent}  KV pool            {b.kv_pool_gib:8.2f} GiB",
        f"{indent}    one {b.context}-token request  {b.kv_gib:8.2f} GiB  ({b.per_token_bytes / 1024:.2f} KiB/token"
        + ("; the window layers' KV is per-request cache, below)" if b.window_per_request_bytes else ")"),
    ]
    if b.per_request_bytes:
        window, state = b.window_per_request_bytes / 2**20, b.state_per_request_bytes / 2**20
        parts = [f"window-bounded KV {window:.1f} MiB"] * bool(window) + [f"recurrent state {state:.1f} MiB"] * bool(
            state
        )
        rows.append(
            f"{indent}    per-request cache × {b.concurrency}  {b.state_gib:8.2f} GiB  "
            f"({b.per_request_bytes / 2**20:.1f} MiB each: {', '.join(parts)})"
        )
    rows.append(f"{indent}    free               {b.free_gib:8.2f} GiB")
    rows.append(
        f"{indent}  → context {b.context}, concurrency {b.concurrency} "
        f"({b.full_length_requests} full-length request(s) at once; decided by: {b.limit})"
    )
    for what, value in b.lines:
        unit = "B/request" if "per request" in what else "B/token"
        rows.append(f"{indent}    · {what}: {value:,.0f} {unit}")
    return rows


def budget_summary(b: Budget, indent: str = "     ") -> list[str]:
    """The budget in one line (the default view's): what each GPU holds and what it decides."""
    fraction = f" × {b.fraction:g}" if b.fraction is not None else ""
    reserve = f" + reserve {b.reserve_gib:.2f} (estimate)" if b.reserve_gib else ""
    text = (
        f"memory per GPU ({b.gpu_gib:g} GiB{fraction}): weights {b.weights_gib:.2f} GiB{reserve} + KV pool "
        f"{b.kv_pool_gib:.2f} GiB → context {b.context}, concurrency {b.concurrency} (decided by: {b.limit})"
    )
    return wrap(text, indent, indent + "  ")


def speed_lines(cand: Candidate, indent: str = "     ") -> list[str]:
    """The estimate, its derivation and its assumptions; the band comes from the calibration table."""
    est = cand.speed
    if est is None:
        return [f"{indent}speed: unknown (no memory plan to estimate from)"]
    label = estimated_label(cand.budget.notes) if cand.budget is not None else None
    sized = f" (estimated size: {label})" if label else ""
    rows = [f"{indent}speed (an estimate, not a measurement): {est.headline()}{sized}"]
    if cand.offload is not None:
        rows.append(f"{indent}  offload: {cand.offload.summary()}")
        if cand.offload.split is not None:
            rows.append(f"{indent}  split: {cand.offload.split.note}")
    rows += [f"{indent}  · {line}" for line in est.lines]
    rows += [f"{indent}  assumes: {line}" for line in est.assumptions]
    return rows


def gate_lines(cand: Candidate, indent: str = "     ") -> list[str]:
    return [f"{indent}{MARK[g.outcome]} {g.gate:<13} {g.reason}" for g in cand.gates]


def slow_words(cand: Candidate) -> str:
    """What a verdict adds for a slow plan (under 5 tok/s for one request, or paced by host offload)."""
    speed = cand.speed
    if speed is None or not speed.slow:
        return ""
    return f", {slow_word(speed.decode_tps)}: ~{rate(speed.decode_tps)} tok/s for one request (estimate)"


def slow_word(decode_tps: float) -> str:
    """ "slow" under 5 tok/s for one request; a faster plan that host offload paces is "offload-bound"."""
    return "slow" if decode_tps < SLOW_TPS else "offload-bound"


def candidate_title(cand: Candidate) -> str:
    tag = f"curated: {cand.deployment.id}" if cand.deployment else "derived"
    build = f"{cand.build.id} ({cand.build.provenance}, {cand.build.released})"
    return f"{cand.engine.name} {build} · {cand.variant.id} ({cand.variant.repo}) · {tag}"


def clip(text: str, limit: int) -> str:
    """At most `limit` characters, cut at a word boundary and marked with "…" (never mid-word, never silently)."""
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    if " " in cut and not text[limit - 1].isspace():
        cut = cut.rsplit(" ", 1)[0]
    return cut.rstrip(" ,;:(") + "…"


def closest_lines(r: Resolution, limit: int, more: str, indent: str = "  ") -> list[str]:
    """The rejected paths that came closest (ranking.closest_rejected), each with its first failing reason: the
    same paths in the same order, with the same marks, wherever they are printed."""
    rejected, every = r.paths.closest(limit, official_only=bool(r.plans))
    if not rejected:
        others = f" ({every} in all: {more})" if every else ""
        scope = "among the official builds" if r.plans else "that loads the model"
        return [f"{indent}closest rejected paths: none {scope}{others}"]
    scope = "official builds, " if r.plans else ""
    out = [f"{indent}closest rejected paths ({scope}{len(rejected)} of {every}; {more}):"]
    for cand in rejected:
        failing = cand.failing()
        gates = ", ".join(g.gate for g in failing)
        line = f"{cand.engine.name} {cand.build.id} · {cand.variant.id} [{gates}]: {failing[0].reason}"
        out.append(f"{indent}  {MARK[failing[0].outcome]} {clip(line, LINE - len(indent) - 4)}")
    return out


LINE = 160  # the longest line a default view prints; longer text is clipped with "…"
MORE = " (--verbose)"  # where an elided text of the default view is said in full


def wrap(text: str, first: str, hang: str, lines: int = 2, width: int = LINE) -> list[str]:
    """`text` in at most `lines` lines of `width`, broken at spaces with a hanging indent; what does not fit
    ends in "…" and names --verbose, where the whole text is printed."""
    out = textwrap.wrap(
        text,
        width,
        initial_indent=first,
        subsequent_indent=hang,
        break_long_words=False,
        break_on_hyphens=False,
    )
    if len(out) <= lines:
        return out
    kept, rest = out[: lines - 1], out[lines - 1]
    prefix = first if not kept else hang
    body = " ".join([rest[len(prefix) :], out[lines].strip()])
    return [*kept, prefix + clip(body, width - len(prefix) - len(MORE) - 1).removesuffix("…") + "…" + MORE]


def fit(line: str, hang: str = "     ", lines: int = 2) -> list[str]:
    """A default view's line wrapped to the screen under its own indent, hanging by at least two more."""
    indent = line[: len(line) - len(line.lstrip())]
    return wrap(line.lstrip(), indent, max(hang, indent + "  ", key=len), lines) or [line]
