"""A diagnosis as text (the known failures with why and fix, the lines looked at, what the log says, the
plan that runs) and as JSON (schema recipegen.diagnosis/1).
"""

from __future__ import annotations

from typing import Any

from .diagnose import Diagnosis, printable

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
        gate = f"gate {fp.gate}" if fp.gate else "no gate: a flag choice"
        out.append(f"✗ {fp.title} [{fp.stage} · {gate}] ({fp.id})")
        out.append(f"    line {m.line_number}: {_short(m.line)}")
        out.append(f"    why: {m.fill(fp.explanation)}")
        out.append(f"    fix: {m.fill(fp.fix)}")
        if fp.sources:
            out.append(f"    seen in: {', '.join(s.url for s in fp.sources[:2])}")
    if len(d.matches) > 3:
        out.append(f"  (+{len(d.matches) - 3} more; --format json lists them)")
    if d.looked_at:
        out.append("  lines looked at:")
        out.extend(f"    {n}: {_short(line)}" for n, line in d.looked_at)
    said = [
        f"engine {f.engine} {f.version or '(version not in the log)'}" if f.engine else "engine: not in the log",
        f"model {f.model.name} ({f.model_text})" if f.model else f"model: {f.model_text or 'not in the log'}",
        f"GPU {f.hardware.name} ({f.gpu_text})" if f.hardware else f"GPU: {f.gpu_text or 'not in the log'}",
    ]
    if f.tp:
        said.append(f"tensor parallel {f.tp}")
    out.append("the log says: " + printable(" · ".join(said)))
    out.extend(f"  note: {n}" for n in f.notes)
    if d.plan_summary:
        out.append("plan that runs:")
        out.extend(f"  {line}" for line in d.plan_summary)
    elif f.model is None or f.hardware is None:
        missing = " and ".join(x for x, v in (("--model", f.model), ("--gpu", f.hardware)) if v is None)
        out.append(f"for the plan that runs, add {missing} (e.g. recipegen diagnose LOG --gpu a100 --model glm-5.2)")
    return "\n".join(out) + "\n"


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
                "gate": m.fingerprint.gate,
                "line_number": m.line_number,
                "line": m.line,
                "captured": m.groups,
                "explanation": m.fill(m.fingerprint.explanation),
                "fix": m.fill(m.fingerprint.fix),
                "sources": [s.url for s in m.fingerprint.sources],
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
        },
        "looked_at": [{"line_number": n, "line": line} for n, line in d.looked_at],
        "plan": d.plan_json,
    }
