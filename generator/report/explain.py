"""The decision trace `explain` prints: every candidate path with a mark per gate, the closest rejections, advice."""

from __future__ import annotations

from ..catalog.harvest import registers
from ..checkpoint.nearest import nearest_line
from ..plan.advice import Alternative
from ..plan.candidates import LOW_BITS
from ..plan.describe import (
    MARK,
    budget_summary,
    budget_table,
    candidate_title,
    fit,
    gate_lines,
    slow_word,
    speed_lines,
    target_line,
)
from ..plan.describe import closest_lines as describe_closest
from ..plan.speed import rate as tps
from ..plan.types import GATES, Candidate, Resolution

FASTER = 3  # the default view's faster layouts for a slow plan


def explain_text(
    r: Resolution, alternatives: list[Alternative] | None = None, verbose: bool = False, tail: list[str] | None = None
) -> str:
    """The trace; `tail` (explain's history lines) ends it. The default view fits one screen: when it would
    run past SCREEN lines its notes give way first, to one line each, then the last ones, then the faster
    layouts named for a slow plan (the verdict line still names the fastest)."""
    if verbose:
        return _explain(r, alternatives, True, tail or [], KEY_NOTES, 2)
    fewer_notes = ((n, 1, FASTER) for n in range(KEY_NOTES, 0, -1))
    steps = ((KEY_NOTES, 2, FASTER), *fewer_notes, (1, 1, 2), (1, 1, 1), (1, 1, 0))
    for notes, lines, faster in steps:
        text = _explain(r, alternatives, False, tail or [], notes, lines, faster)
        if text.count("\n") <= SCREEN:
            break
    return text


def _explain(
    r: Resolution,
    alternatives: list[Alternative] | None,
    verbose: bool,
    tail: list[str],
    notes: int,
    lines: int,
    faster: int = FASTER,
) -> str:
    hw = r.request.hardware
    out: list[str] = [f"recipegen explain — {target_line(r)}"]
    link = hw.interconnect.kind + (f" {hw.interconnect.bandwidth_gbs:g} GB/s" if hw.interconnect.bandwidth_gbs else "")
    fp8, fp4 = ("yes" if flag else "no" for flag in (hw.fp8_tensor_cores, hw.fp4_tensor_cores))
    if verbose:  # the title names the capability and memory; the rest is for a kernel question
        out.append(
            f"  target: {hw.compute_capability.sm} ({hw.family}), {hw.memory_gib:g} GiB {hw.memory_kind}, "
            f"{hw.smem_per_block_optin:,} B shared memory per block, FP8 tensor cores {fp8}, FP4 {fp4}, "
            f"host {'/'.join(hw.host_arch)}, {link}"
        )
    if r.request.target_note:
        out.extend(_said(f"  understood: {r.request.target_note}", verbose))
    out.extend(_said(f"  layout: {r.layout_note}", verbose))
    out.append("")
    if r.plans:
        out.extend(_said(verdict_line(r, alternatives or []), verbose))
        out.extend(plan_lines(r, verbose, notes, lines))
    elif r.undecided:
        out.extend(_said(unknown_verdict(r), verbose))
    else:
        out.append("VERDICT: blocked — no engine build runs this model on this target")
    out.append("")
    out.extend(rejected_lines(r) if verbose else closest_lines(r))
    if r.changes:
        out.append("")
        out.append("What changed between builds:")
        for ch in r.changes:
            line = (
                f"  • {ch.engine} / {ch.variant} — {ch.gate}: blocked in {ch.before_build} ({ch.before_date}); "
                f"passes since {ch.after_build} ({ch.after_date})" + (f": {ch.after_reason}" if verbose else "")
            )
            out.extend(_said(line, verbose, "    "))
    if not r.plans:
        out.extend(row for line in advice_lines(r, alternatives or [], verbose) for row in _said(line, verbose, "    "))
    elif alternatives and (verbose or faster):  # else the verdict line's "faster:" names the best of them
        top = r.plans[0].candidate
        why = (
            "needs host offload; faster without it"
            if top.offload is not None
            else f"stores fewer than {LOW_BITS:g} bits per weight; at 4 or more"
            if top.low_bit and not (top.speed and top.speed.slow)
            else "is slow; faster"
        )
        out.extend(["", f"Plan #1 {why}, with more or other GPUs (the fewest that run it):"])
        shown = alternatives if verbose else alternatives[:faster]
        out.extend(row for alt in shown for row in _said(f"  • on {alt.target}: {alt.summary}", verbose, "    "))
    out.extend(row for line in tail for row in _said(line, verbose, "    ", 3))  # a build history, said whole
    return "\n".join(out) + "\n"


def _said(line: str, verbose: bool, hang: str = "     ", lines: int = 2) -> list[str]:
    """A line of the default view wrapped to the screen (at most `lines`, the rest elided and left to
    --verbose); --verbose prints it whole."""
    return [line] if verbose else fit(line, hang, lines)


def verdict_line(r: Resolution, alternatives: list[Alternative]) -> str:
    """RUNNABLE, and slow when plan #1 is (under 5 tok/s for one request or paced by host offload), with where it
    runs faster: no one reads "runnable" alone for a plan at ~1 tok/s."""
    top = r.plans[0].candidate
    head = f"VERDICT: runnable — {len(r.plans)} plan(s)"
    speed = top.speed
    if top.low_bit and top.offload is None and alternatives and (speed is None or not speed.slow):
        # the quality given up, and the nearest step that buys it back: more of the card the user has first
        near = ([a for a in alternatives if a.hardware_id == r.request.hardware.id] or alternatives)[0]
        quoted = f", ~{tps(near.decode_tps)} tok/s for one request" if near.decode_tps is not None else ""
        step = f"at 4 or more: on {near.target}{quoted}"
        return f"VERDICT: runnable, below {LOW_BITS:g} bits per weight — {step} — {len(r.plans)} plan(s)"
    if speed is None or not speed.slow:
        return head
    cause = f"host offload, paced by {speed.bound}" if top.offload is not None else f"bound by {speed.bound}"
    quicker = [a for a in alternatives if a.decode_tps is not None and a.decode_tps > speed.decode_tps]
    # more of the card the user has comes first (a second RTX 4090, not an H200), then the fastest elsewhere
    same = [a for a in quicker if a.hardware_id == r.request.hardware.id]
    best = same[0] if same else max(quicker, key=lambda a: a.decode_tps or 0.0, default=None)
    faster = f"on {best.target}, ~{tps(best.decode_tps or 0.0)} tok/s for one request" if best else "more GPU memory"
    return (
        f"VERDICT: runnable, {slow_word(speed.decode_tps)}: ~{tps(speed.decode_tps)} tok/s for one request ({cause}) — "
        f"faster: {faster} — "
        f"{len(r.plans)} plan(s)"
    )


def plan_lines(r: Resolution, verbose: bool, key_notes: int = 5, note_lines: int = 2) -> list[str]:
    out: list[str] = []
    for plan in r.plans:
        cand = plan.candidate
        if plan.rank > 1 and not verbose:
            if plan.rank > SHOWN_PLANS:
                rest = len(r.plans) - SHOWN_PLANS
                out.append(f"  … {rest} more runnable plan(s) (--verbose or --format json lists them all)")
                break
            speed = f" — {cand.speed.short()} (estimate)" if cand.speed is not None else ""
            out.extend(_said(f"  #{plan.rank} {candidate_title(cand)}{speed}", verbose))
            continue
        out.extend(_said(f"  #{plan.rank} {candidate_title(cand)}", verbose))
        if plan.why_first:
            out.extend(_said(f"     why first: {plan.why_first}", verbose, "       "))
        gates = gate_lines(cand)
        out.extend(line for row in gates for line in _said(row, verbose, " " * 20))
        if plan.rank == 1 and cand.budget is not None:
            out.extend(budget_table(cand.budget) if verbose else budget_summary(cand.budget))
        if plan.rank == 1:
            shown_speed = speed_lines(cand) if verbose else speed_lines(cand)[: 2 if cand.offload is not None else 1]
            out.extend(line for row in shown_speed for line in _said(row, verbose, "       "))
        elif cand.speed is not None:
            out.append(f"     speed (estimate): {cand.speed.headline()}")
        if plan.rank == 1:
            out.append("     command: " + " ".join(plan.argv))
            said = {g.reason for g in cand.gates}  # a note that repeats a gate's reason is said once, there
            notes = [n for n in plan.notes if n not in said]
            shown = notes if verbose else notes[:key_notes]
            out.extend(
                line for note in shown for line in _said(f"     note: {note}", verbose, "           ", note_lines)
            )
            if len(notes) > len(shown):
                out.append(f"     … {len(notes) - len(shown)} more note(s) (--verbose)")
    return out


KEY_NOTES = 5  # the default view's notes, most important first; --verbose shows all
SCREEN = 40  # the default view's lines at most (the copy-paste command is one, however long)
CLOSEST = 3  # the default view's rejected paths, closest first
SHOWN_PLANS = 2  # the default view's plans: #1 in full, the next one in a line


def closest_lines(r: Resolution) -> list[str]:
    head, *rows = describe_closest(r, CLOSEST, "--verbose shows every gate", indent="")
    return [head[:1].upper() + head[1:], *rows]  # a heading of its own here, as "VERDICT" is


def _format_mismatch(cand: Candidate) -> bool:
    """A GGUF variant offered to an HF engine or the reverse: true but uninteresting in a text trace."""
    return (cand.engine.loads == "gguf") != (cand.variant.quant == "gguf")


_SHORT = {
    "architecture": "arch",
    "weight-format": "weights",
    "kernel": "kernel",
    "platform": "platform",
    "memory": "memory",
    "topology": "topology",
}


def _gate_grid(cands: list[Candidate]) -> list[str]:
    """One ✓/✗/? per gate for each variant of a build: the whole verdict at a glance."""
    width = max(len(c.variant.id) for c in cands)
    head = "     " + " " * (width + 2) + " ".join(f"{_SHORT[g]:<8}" for g in GATES)
    rows = ["     " + f"{c.variant.id:<{width}}  " + " ".join(f"{MARK[g.outcome]:<8}" for g in c.gates) for c in cands]
    return [head.rstrip(), *(row.rstrip() for row in rows)]


def rejected_lines(r: Resolution) -> list[str]:
    """Rejected candidates grouped by engine build; a reason shared by every variant is said once."""
    rejected = [c for c in r.candidates if not c.runnable and not _format_mismatch(c)]
    skipped = sum(1 for c in r.candidates if not c.runnable and _format_mismatch(c))
    out = [f"Rejected paths ({len(rejected)}): every gate per variant, then the reasons for the failing ones"]
    groups: dict[tuple[str, str, str], list[Candidate]] = {}
    for cand in rejected:
        key = (cand.engine.id, cand.build.id, cand.deployment.id if cand.deployment else "")
        groups.setdefault(key, []).append(cand)
    for cands in groups.values():
        first = cands[0]
        tag = f"curated: {first.deployment.id}" if first.deployment else "derived"
        variants = ", ".join(c.variant.id for c in cands)
        build = f"{first.build.id} ({first.build.provenance}, {first.build.released})"
        only_unknown = all(g.outcome == "unknown" for c in cands for g in c.failing())
        out.append(f"  {'?' if only_unknown else '✗'} {first.engine.name} {build} · {tag} · {variants}")
        out.extend(_gate_grid(cands))
        for gate in GATES:
            hits = [(c.variant.id, g) for c in cands for g in c.failing() if g.gate == gate]
            reasons = {g.reason for _, g in hits}
            if not hits:
                continue
            mark = MARK[hits[0][1].outcome]
            if len(reasons) == 1:
                scope = "" if len(hits) == len(cands) else f" [{', '.join(v for v, _ in hits)}]"
                out.append(f"     {mark} {gate:<13} {hits[0][1].reason}{scope}")
            else:
                out.append(f"     {mark} {gate}:")
                out.extend(f"         {MARK[g.outcome]} {variant}: {g.reason}" for variant, g in hits)
    if skipped:
        out.append(
            f"  ({skipped} more pair GGUF files with Hugging Face engines or the reverse; --format json lists them)"
        )
    return out


def unknown_reasons(r: Resolution) -> list[str]:
    """The distinct reasons the undecided paths cannot be decided, in rank order."""
    reasons: list[str] = []
    for cand in r.undecided:
        for g in cand.failing():
            if g.reason not in reasons:
                reasons.append(g.reason)
    return reasons


def unknown_verdict(r: Resolution) -> str:
    """The verdict line when no path is known to run but some path fails no gate: unknown, not blocked."""
    reasons = unknown_reasons(r)
    shown = "; ".join(reasons[:2]) + (f" (+{len(reasons) - 2} more)" if len(reasons) > 2 else "")
    return f"VERDICT: unknown — no path is known to run, but {len(r.undecided)} path(s) fail no gate: {shown}"


def advice_lines(r: Resolution, alternatives: list[Alternative], verbose: bool = True) -> list[str]:
    out = ["", "What would make it run:"]

    def failing(c: Candidate) -> list[tuple[str, str]]:
        return [(g.gate, g.outcome) for g in c.failing()]

    memory_only = [c for c in r.candidates if failing(c) == [("memory", "fail")]]
    for cand in memory_only[: 4 if verbose else 2]:
        b = cand.budget
        extra = f" (weights {b.weights_gib:.1f} GiB per GPU)" if b else ""
        out.append(f"  • more or larger GPUs: {candidate_title(cand)} passes every gate but memory{extra}")
        need = cand.gate("memory").details.host_memory_gib
        if need is not None:
            out.append(f"    or a host with {need:g} GiB of RAM: it runs with host offload at --host-memory {need:g}")
    unknown = [c for c in r.candidates if c.failing() and all(g.outcome == "unknown" for g in c.failing())]
    for cand in unknown[: 3 if verbose else 1]:
        reasons = "; ".join(g.reason for g in cand.failing())
        out.append(f"  • unknown, nothing rules it out: {candidate_title(cand)} — {reasons}")
        if cand.build_defects:  # a path no plan is made for still says what it would run into
            out.append(f"    known defects on this path: {', '.join(d.id for d in cand.build_defects)}")
    unsized = sorted({c.variant.repo for c in unknown if c.gate("memory").outcome == "unknown" and c.budget is None})
    if unsized:
        online = "online (HF_HUB_OFFLINE unset) recipegen reads the repo's files, size included; " * (
            r.request.model_facts == "name"
        )
        out.append(
            f"  • the checkpoint size decides: {online}`recipegen inspect {unsized[0]}` shows the size its files "
            "give; state it as size_gb in a models/*.yaml passed with --recipes"
        )
    # the kernel wall, where the kernel is what blocks (the build loads the model, its weights and image fit)
    walls = sorted(
        {
            wall
            for c in r.candidates
            if {gate for gate, _ in failing(c)} <= {"kernel", "memory"}
            for g in c.failing()
            if g.gate == "kernel"
            for miss in g.details.misses
            if miss.tried
            for wall in (f"no {miss.op} kernel for {g.details.capability}",)
        }
    )
    if walls:
        out.append(f"  • the kernel wall: {'; '.join(walls)} — more GPUs or a lower context will not change this")
    for alt in alternatives:
        out.append(f"  • on {alt.target}: {alt.summary}")
    for item in r.request.model.watch:
        out.append(f"  • watch upstream: {item.text}" + (f" ({item.sources[0].url})" if item.sources else ""))
    arch = r.request.model.architecture
    builds = {c.build.id: (c.engine, c.build) for c in r.candidates}
    blocked = r.candidates and all(c.gate("architecture").outcome == "fail" for c in r.candidates)
    if blocked and not any(registers(b, arch) for _, b in builds.values()):
        near = nearest_line(builds.values(), arch, r.request.model.model_type)
        out.append(f"  • no build considered here registers {arch}; {near}")
    if len(out) == 2:
        out.append("  • nothing in the catalog; add a deployment or build recipe with --recipes DIR")
    return out
