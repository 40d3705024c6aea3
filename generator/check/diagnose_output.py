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
    if d.matches:
        out.append(f"diagnose: {len(d.matches)} known failure(s), most specific first")
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
    if d.looked_at:
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
        "slow_path": list(d.slow_path),
        "lint": list(d.lint),
        "looked_at": [{"line_number": n, "line": line} for n, line in d.looked_at],
        "plan": d.plan_json,
    }
