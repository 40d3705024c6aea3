"""A lint result as text (one screen, each finding with its why, fix and source, then the plan recipegen
would write) and as JSON (schema recipegen.check.lint/1).
"""

from __future__ import annotations

import json
from typing import Any

from .diagnose import printable
from .lint import SEVERITIES, LintResult

SCHEMA = "recipegen.check.lint/1"
MARK = {"error": "✗", "silent": "!", "warn": "~", "info": "i"}


def format_lint(r: LintResult) -> str:
    inv = r.invocation
    subject = []
    if r.model is not None:
        subject.append(f"{r.model.name} · {r.variant.id if r.variant else '?'}")
    if r.hardware is not None:
        subject.append(f"{r.layout.gpus} × {r.hardware.name} ({r.hardware.compute_capability.sm})")
    out = [
        f"lint: {inv.engine.name} command from {inv.where or 'the command'} — build {r.build_note}",
        "  " + (" on ".join(subject) if subject else "model not recognised"),
    ]
    if not r.findings:
        out.append("✓ no findings: every flag is in the engine's vocabulary and every gate passes on these choices")
    for f in r.findings:
        flag = f"{f.flag}{' ' + f.value if f.value else ''}" if f.flag else f"[{f.gate or 'lint'}]"
        out.append(f"{MARK[f.severity]} {f.severity:<6} {flag}: {f.what}")
        out.append(f"    why: {f.why}")
        if f.fix:
            out.append(f"    fix: {f.fix}")
        if f.sources:
            out.append(f"    source: {', '.join(s.url for s in f.sources[:2])}")
    if r.plan is not None and r.failing:
        top = r.plan
        out.append(
            f"plan recipegen would generate: {top.engine.name} {top.build.id} · {top.variant.id} "
            f"({top.candidate.status}) on {top.candidate.layout.gpus} GPU(s)"
        )
        out.append("  " + " ".join(top.argv))
        out.append(f"  write it: {r.plan_command}")
    counts = {s: sum(1 for f in r.findings if f.severity == s) for s in SEVERITIES}
    out.append(", ".join(f"{n} {s}" for s, n in counts.items()) + (" — exit 1" if r.failing else ""))
    return printable("\n".join(out)) + "\n"


def lint_json(r: LintResult) -> dict[str, Any]:
    from ..artifacts.contract import plan_json, settings_json

    return {
        "schema": SCHEMA,
        "engine": r.invocation.engine.id,
        "build": r.build.id,
        "build_note": r.build_note,
        "build_resolution": r.invocation.resolution.as_json() if r.invocation.resolution else None,
        "image": r.invocation.image,
        "where": r.invocation.where,
        "model": r.model.id if r.model else None,
        "model_arg": r.model_arg,
        "variant": r.variant.id if r.variant else None,
        "hardware": r.hardware.id if r.hardware else None,
        "gpus_per_node": r.layout.gpus_per_node,
        "nodes": r.layout.nodes,
        "args": list(r.invocation.args),
        "env": dict(r.invocation.env),
        "settings": settings_json(r.settings) if r.settings else None,
        "findings": [
            {
                "severity": f.severity,
                "code": f.code,
                "flag": f.flag,
                "value": f.value,
                "what": f.what,
                "why": f.why,
                "fix": f.fix,
                "gate": f.gate,
                "sources": [s.url for s in f.sources],
            }
            for f in r.findings
        ],
        "failing": r.failing,
        "plan": plan_json(r.plan) if r.plan else None,
        "plan_command": r.plan_command,
    }


def dumps(r: LintResult) -> str:
    return json.dumps(lint_json(r), indent=2, ensure_ascii=False)
