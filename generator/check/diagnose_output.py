"""A diagnosis as text (the known failures with why and fix, the lines looked at, what the log says, the
plan that runs) and as JSON (schema recipegen.diagnosis/1).
"""

from __future__ import annotations

import shlex
from typing import Any

from .diagnose import Diagnosis, printable
from .log_facts import LogFacts

SCHEMA = "recipegen.diagnosis/1"


def format_diagnosis(d: Diagnosis) -> str:
    f = d.facts
    out: list[str] = []
    hits = d.config.hits
    if d.matches:
        out.append(f"diagnose: {len(d.matches)} known failure(s), most specific first")
    elif hits:
        out.append(
            f"diagnose: no error line matches, but the configuration this log shows is in {len(hits)} known "
            f"defect(s) of {d.config.build}"
        )
    else:
        out.append("diagnose: no known failure in this log (recipegen lists the lines it looked at)")
    for m in d.matches[:3]:
        fp = m.fingerprint
        gate = f"gate {m.gate}" if m.gate else "no gate: a flag choice"
        out.append(f"✗ {fp.title} [{fp.stage} · {gate}] ({fp.id})")
        out.append(f"    line {m.line_number}: {_short(m.line)}")
        if m.ruling is not None:
            out.append(f"    cause: {printable(m.ruling.cause)}" + (" (a flag, not the GPU)" if m.ruling.flag else ""))
        out.append(f"    why: {m.why}")
        out.append(f"    fix: {m.fix}")
        if m.sources:
            out.append(f"    seen in: {', '.join(m.sources[:2])}")
    if len(d.matches) > 3:
        out.append(f"  (+{len(d.matches) - 3} more; --format json lists them)")
    out.extend(_config_lines(d))
    if d.looked_at and not hits:
        out.append("  lines looked at:")
        out.extend(f"    {n}: {_short(line)}" for n, line in d.looked_at)
    for line in d.slow_path:
        out.append(f"slow path: {printable(line)}")
    for line in d.lint[:5]:
        out.append(f"lint (the command in the log): {_short(line)}")
    engine = f.flavor or f.engine
    said = [
        f"engine {engine} {f.version or '(version not in the log)'}" if engine else "engine: not in the log",
        f"model {f.model.name} ({f.model_text})" if f.model else f"model: {f.model_text or 'not in the log'}",
        f"GPU {f.hardware.name} ({f.gpu_text})" if f.hardware else f"GPU: {f.gpu_text or 'not in the log'}",
    ]
    shown = f.gpu_text or ""
    if (
        f.capability
        and f.capability not in shown
        and (f.hardware is None or str(f.hardware.compute_capability) != f.capability)
    ):
        said.append(f"compute capability {f.capability}")
    layout = [f"{k} {v}" for k, v in (("tensor parallel", f.tp), ("pipeline parallel", f.pp), ("nodes", f.nodes)) if v]
    said.extend(layout)
    out.append("the log says: " + printable(" · ".join(said)))
    more = [f"architecture {f.architecture}"] if f.architecture else []
    more += [f"served as {f.served_name}"] if f.served_name else []
    more += [f"{kind} {name}" for kind, name in f.backends[:4]]
    more += [_KV_WORDS.get(name, name + " {:g}").format(value) for name, value in f.kv]
    if more:
        out.append("  " + printable(" · ".join(more)))
    out.extend(f"  note: {n}" for n in f.notes)
    out.extend(f"  warning: {printable(w)}" for w in f.warnings)
    if d.plan_summary:
        out.append("plan that runs:")
        out.extend(f"  {line}" for line in d.plan_summary)
    elif f.model is None or f.hardware is None:
        missing = " and ".join(x for x, v in (("--model", f.model), ("--gpu", f.hardware)) if v is None)
        out.append(f"for the plan that runs, add {missing} (e.g. recipegen diagnose LOG {_hint(f)})")
    return "\n".join(out) + "\n"


_SYMPTOM_WORDS = {
    "wrong-output": "give wrong output",
    "crash": "crash",
    "hang": "hang",
    "oom": "run out of memory",
    "slow": "run slow",
}


def _config_lines(d: Diagnosis) -> list[str]:
    """The known defects the log's configuration is in, the configuration read, and what would decide the rest."""
    c = d.config
    out: list[str] = []
    for hit in c.hits[:3]:
        defect = hit.defect
        out.append(f"⚠ this configuration is known to {_SYMPTOM_WORDS[defect.symptom]}: {defect.title} ({defect.id})")
        out.append(f"    configuration: {printable(hit.matched)}")
        fixed = f" (fixed in {defect.fixed_in})" if defect.fixed_in and defect.workaround else ""
        out.append(f"    fix: {hit.fix}{fixed}")
        out.append(f"    seen in: {', '.join(s.url for s in defect.sources[:2])}")
    if len(c.hits) > 3:
        out.append(f"  (+{len(c.hits) - 3} more known defects of this configuration; --format json lists them)")
    if c.shown or c.kv_note:
        where = f" ({', '.join(c.sources)})" if c.sources else ""
        said = "; ".join(x for x in (c.shown, c.kv_note) if x)
        out.append(f"configuration the log prints{where}: {_short(said, 240)}")
        if c.build is None:
            out.append("  the log names no release of the engine, so no release's known defects were matched")
    if c.undecided:
        needs = sorted({n for _, need in c.undecided for n in need.split(" and ")})
        out.append(
            f"  {len(c.undecided)} more known defect(s) of {c.build} depend on what the log does not name: add "
            f"{' and '.join(needs)} ({', '.join(i for i, _ in c.undecided[:3])}{', …' if len(c.undecided) > 3 else ''})"
        )
    return out


_KV_WORDS = {
    "available_gib": "KV pool {:g} GiB",
    "tokens": "KV {:,.0f} tokens",
    "gpu_blocks": "{:.0f} GPU KV blocks",
    "concurrency": "max concurrency {:g}x",
    "context": "context {:,.0f}",
    "kv_mib": "KV {:g} MiB",
}


def _hint(f: LogFacts) -> str:
    """The hint to add, written from what the log said (the user only checks it)."""
    parts = []
    if f.hardware is None:  # what the log named is not in the catalog, so the user names it
        parts.append("--gpu <your GPU, e.g. a100>")
    if f.model is None:
        parts.append(f"--model {shlex.quote(f.model_text)}" if f.model_text else "--model <the model, e.g. glm-5.2>")
    return printable(" ".join(parts))


def _short(line: str, width: int = 300) -> str:
    line = printable(line)
    return line if len(line) <= width else line[: width - 1] + "…"


def diagnosis_json(d: Diagnosis) -> dict[str, Any]:
    f = d.facts
    return {
        "schema": SCHEMA,
        "known": d.known,
        "matches": [
            {
                "fingerprint": m.fingerprint.id,
                "title": m.fingerprint.title,
                "stage": m.fingerprint.stage,
                "line_number": m.line_number,
                "line": m.line,
                "captured": m.groups,
                "gate": m.gate,
                "explanation": m.why,
                "fix": m.fix,
                "cause": m.ruling.cause if m.ruling else None,
                "flag_cause": m.ruling.flag if m.ruling else m.fingerprint.gate is None,
                "sources": list(m.sources),
            }
            for m in d.matches
        ],
        "log": {
            "engine": f.engine,
            "version": f.version,
            "build": f.build,
            "build_resolution": f.resolution.as_json() if f.resolution else None,
            "model": f.model.id if f.model else None,
            "model_text": f.model_text,
            "hardware": f.hardware.id if f.hardware else None,
            "gpu_text": f.gpu_text,
            "tensor_parallel": f.tp,
            "notes": list(f.notes),
            "flavor": f.flavor,
            "architecture": f.architecture,
            "served_name": f.served_name,
            "capability": f.capability,
            "pipeline_parallel": f.pp,
            "nodes": f.nodes,
            "gpu_memory_utilization": f.memory_utilization,
            "backends": [{"kind": kind, "name": name} for kind, name in f.backends],
            "kv_cache": dict(f.kv),
            "command": f.command,
            "warnings": list(f.warnings),
        },
        "configuration": {
            "build": d.config.build,
            "read_from": list(d.config.sources),
            "shown": d.config.shown,
            "kv_note": d.config.kv_note,
            "defects": [
                {
                    "id": h.defect.id,
                    "title": h.defect.title,
                    "symptom": h.defect.symptom,
                    "gate": h.defect.gate,
                    "build": h.build,
                    "matched": h.matched,
                    "fix": h.fix,
                    "fixed_in": h.defect.fixed_in,
                    "sources": [s.url for s in h.defect.sources],
                }
                for h in d.config.hits
            ],
            "undecided": [{"id": i, "needs": need} for i, need in d.config.undecided],
        },
        "slow_path": list(d.slow_path),
        "lint": list(d.lint),
        "looked_at": [{"line_number": n, "line": line} for n, line in d.looked_at],
        "plan": d.plan_json,
    }
