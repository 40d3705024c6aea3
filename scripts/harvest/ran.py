"""The `ran` tables: a release installed into a throwaway virtual environment, its own attention selector and
quantization code asked on each simulated GPU (vllm_probe.py, one fresh interpreter per capability).

The tables land in `<release>.ran.json` beside the release's facts file, which names them with method `ran`;
nothing in the catalog reads that file unless a request asks for those tables.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

PROBE = Path(__file__).resolve().parent / "vllm_probe.py"
CAPABILITIES = (70, 75, 80, 86, 89, 90, 100, 103, 110, 120, 121)
# what else decides the answers: the kernels' own packages, recorded with the tables
PACKAGES = ("torch", "flashinfer-python", "tokenspeed-mla", "deep-gemm", "triton")
SELECTOR_FROM = (
    "vllm/platforms/cuda.py: CudaPlatform.get_valid_backends (order from _get_backend_priorities, each "
    "backend's validate_configuration) and get_attn_backend_cls"
)
QUANT_FROM = (
    "vllm/model_executor/layers/quantization: get_quantization_config(m).get_min_capability() for "
    "QUANTIZATION_METHODS and the per-layer schemes; vllm/model_executor/kernels/linear _POSSIBLE_*_KERNELS "
    "is_supported(capability); fused_moe/oracle backend_to_kernel_cls _supports_current_device()"
)


def install(spec: str, venv: Path) -> Path:
    """`python3.11 -m venv VENV && pip install SPEC` unless VENV already has it; returns its python."""
    python = venv / "bin" / "python"
    name, _, version = spec.partition("==")
    if python.exists() and _installed(python, name) == version:
        return python
    started = time.monotonic()
    base = os.environ.get("HARVEST_PYTHON", "python3.11")
    subprocess.run([base, "-m", "venv", str(venv)], check=True, capture_output=True, text=True)
    proc = subprocess.run(
        ["nice", "-n", "10", str(python), "-m", "pip", "install", "-q", spec], capture_output=True, text=True
    )
    if proc.returncode != 0:
        tail = proc.stderr.strip().splitlines()[-1:] or [f"exit {proc.returncode}"]
        raise RuntimeError(f"pip install {spec} into {venv} failed: {tail[0]}")
    print(f"  installed {spec} into {venv} in {time.monotonic() - started:.0f}s", file=sys.stderr)
    return python


def _installed(python: Path, name: str) -> str | None:
    code = "import importlib.metadata as m, sys\ntry: print(m.version(sys.argv[1]))\nexcept Exception: pass"
    proc = subprocess.run([str(python), "-c", code, name], capture_output=True, text=True)
    return proc.stdout.strip() or None


def wheel_sha256(python: Path, spec: str) -> tuple[str | None, str | None]:
    """The artifact pip installs for `spec` (pip download --no-deps) and its sha256."""
    with tempfile.TemporaryDirectory(prefix="harvest-wheel-") as tmp:
        proc = subprocess.run(
            [str(python), "-m", "pip", "download", "--no-deps", "-q", "-d", tmp, spec], capture_output=True, text=True
        )
        files = sorted(Path(tmp).iterdir())
        if proc.returncode != 0 or not files:
            return None, None
        digest = hashlib.sha256(files[0].read_bytes()).hexdigest()
        return files[0].name, digest


def _probe(python: Path, args: list[str], stub: Path) -> dict[str, Any]:
    env = {**os.environ, "HARVEST_CUDA_STUB_DIR": str(stub), "CUDA_VISIBLE_DEVICES": ""}
    proc = subprocess.run(
        [str(python), str(PROBE), *args], capture_output=True, text=True, env=env, timeout=900, cwd=stub.parent
    )
    lines = proc.stdout.strip().splitlines()
    if proc.returncode != 0 or not lines:
        tail = "\n    ".join(proc.stderr.strip().splitlines()[-6:])
        raise RuntimeError(f"probe {' '.join(args)} failed (exit {proc.returncode}):\n    {tail}")
    result: dict[str, Any] = json.loads(lines[-1])
    return result


def _compact_cases(rows: list[dict[str, Any]]) -> tuple[list[str], list[dict[str, Any]]]:
    """Rejection reasons repeat across thousands of cases: store each once, cases point at them."""
    reasons: list[str] = []
    index: dict[str, int] = {}
    out = []
    for row in rows:
        row = dict(row)
        if "rejected" in row:
            row["rejected"] = {b: [index.setdefault(r, len(index)) for r in why] for b, why in row["rejected"].items()}
        out.append(row)
    reasons = sorted(index, key=index.__getitem__)
    return reasons, out


def run(spec: str, python: Path, capabilities: tuple[int, ...], today: str) -> dict[str, Any]:
    """Both `ran` tables of one release, from its own code on each simulated capability."""
    with tempfile.TemporaryDirectory(prefix="harvest-run-") as tmp:
        stub = Path(tmp) / "libcuda"
        started = time.monotonic()
        methods = _probe(python, ["--methods"], stub)
        per_cap = {}
        for cap in capabilities:
            per_cap[cap] = {
                **_probe(python, ["--cap", str(cap), "--part", "kernels"], stub),
                **_probe(python, ["--cap", str(cap), "--part", "attention"], stub),
            }
            print(f"  sm_{cap}: {len(per_cap[cap]['cases'])} attention cases", file=sys.stderr)
    rows = [row for cap in capabilities for row in per_cap[cap]["cases"]]
    reasons, cases = _compact_cases(rows)
    linear: dict[str, Any] = {}
    for family, first in per_cap[capabilities[0]]["linear_kernels"].items():
        order = first["candidates"]  # the release's priority order (the same list on every capability)
        by_cap = {str(c): per_cap[c]["linear_kernels"][family]["verdicts"] for c in capabilities}
        linear[family] = {
            "candidates": order,
            "first_supported": {
                c: next((k for k in order if r.get(k) == "supported"), None) for c, r in by_cap.items()
            },
            "by_capability": by_cap,
        }
    moe: dict[str, Any] = {}
    for cap in capabilities:
        for module, backends in per_cap[cap]["moe_kernels"].items():
            for backend, kernels in backends.items() if isinstance(backends, dict) else ():
                if not isinstance(kernels, dict):
                    continue
                for kernel, ok in kernels.items():
                    moe.setdefault(module, {}).setdefault(backend, {}).setdefault(kernel, {})[str(cap)] = ok
    packages = {p: _installed(python, p) for p in PACKAGES}
    print(f"  ran in {time.monotonic() - started:.0f}s", file=sys.stderr)
    return {
        "release": methods["version"],
        "ran_on": today,
        "python": subprocess.run(
            [str(python), "-c", "import platform; print(platform.python_version())"], capture_output=True, text=True
        ).stdout.strip(),
        "packages": {k: v for k, v in packages.items() if v},
        "libcuda": per_cap[capabilities[0]]["libcuda"],
        "attention_selector": {
            "from": SELECTOR_FROM,
            "capabilities": list(capabilities),
            "dtype": "bfloat16",
            "imports": {str(c): per_cap[c]["imports"] for c in capabilities if per_cap[c]["imports"]},
            "reasons": reasons,
            "cases": cases,
        },
        "quantization": {
            "from": QUANT_FROM,
            "capabilities": list(capabilities),
            "methods": methods["methods"],
            "schemes": methods["schemes"],
            "linear_kernels": linear,
            "moe_kernels": moe,
        },
    }


def write(tables: dict[str, Any], facts_path: Path, artifact: str | None, sha256: str | None) -> Path:
    """`<release>.ran.json` beside the facts file, and the facts file's two table entries pointing at it."""
    facts = json.loads(facts_path.read_text(encoding="utf-8"))
    if sha256 and facts.get("sha256") and facts["sha256"] != sha256:
        raise RuntimeError(
            f"{facts_path.name} was read from sha256 {facts['sha256'][:12]}…, pip installs {sha256[:12]}…:"
            " rerun the read harvest first"
        )
    name = f"{facts['release']}.ran.json"
    ran = {
        "engine": facts["engine"],
        "release": facts["release"],
        "artifact": artifact,
        "sha256": sha256,
        "method": "ran",
        **tables,
    }
    (facts_path.parent / name).write_text(json.dumps(ran, sort_keys=True, separators=(",", ":")) + "\n")
    selector, quant = tables["attention_selector"], tables["quantization"]
    facts["tables"]["attention_selector"] = {
        "method": "ran",
        "from": SELECTOR_FROM,
        "file": name,
        "ran_on": tables["ran_on"],
        "count": len(selector["cases"]),
        "capabilities": selector["capabilities"],
    }
    facts["tables"]["quantization"] = {
        "method": "ran",
        "from": QUANT_FROM,
        "file": name,
        "ran_on": tables["ran_on"],
        "count": len(quant["methods"]),
        "capabilities": quant["capabilities"],
    }
    facts_path.write_text(json.dumps(facts, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return facts_path.parent / name
