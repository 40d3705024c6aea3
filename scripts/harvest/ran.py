"""The `ran` tables: a release installed into a throwaway virtual environment, its own attention selector and
quantization code asked on each simulated GPU (vllm_probe.py, one fresh interpreter per capability).

The tables land in `<release>.ran.json` beside the release's facts file, which names them with method `ran`;
nothing in the catalog reads that file unless a request asks for those tables. The backend the selector picked per
case goes to `<release>.selected.json`, read only when a plan asks which of several kernels the release picks.
"""

from __future__ import annotations

import csv
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
import zipfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
PROBES = {"vllm": HERE / "vllm_probe.py", "sglang": HERE / "sglang_probe.py"}
SELECTED_SUFFIX = ".selected.json"  # the selector's picks per case, beside the facts file (catalog/harvest.py)
CAPABILITIES = (70, 75, 80, 86, 89, 90, 100, 103, 110, 120, 121)
# what else decides the answers: the kernels' own packages, recorded with the tables
PACKAGES = {
    "vllm": ("torch", "flashinfer-python", "tokenspeed-mla", "deep-gemm", "triton", "xformers"),
    "sglang": (
        "torch",
        "sglang-kernel",
        "sgl-kernel",  # its name up to 0.5.x (0.5.3 and older pin sgl-kernel)
        "flashinfer-python",
        "sgl-deep-gemm",
        "tokenspeed-mla",
        "triton",
        "transformers",
        "cuda-tile",
        "nvidia-cutlass-dsl",
    ),
}
SELECTOR_FROM = {
    "vllm": "vllm/platforms/cuda.py: CudaPlatform.get_valid_backends (order from _get_backend_priorities, each "
    "backend's validate_configuration) and get_attn_backend_cls",
    "sglang": "sglang/srt/server_args.py: ServerArgs.resolve_once (arg_groups/pipeline.py run_resolution_pipeline: "
    "the model overrides, get_default_attn_backend, the attention, DSA, KV-cache and linear-attention hooks) for a "
    "stand-in model folder (config.json only) per shape",
}
# SGLang 0.5.18 and older resolve while a ServerArgs is constructed (no resolve_once, no arg_groups)
SELECTOR_FROM_POST_INIT = (
    "sglang/srt/server_args.py: ServerArgs.__post_init__ (_handle_model_specific_adjustments, "
    "_get_default_attn_backend, the attention-backend, DSA, KV-cache, page-size and linear-attention handlers) for a "
    "stand-in model folder (config.json only) per shape"
)
# SGLang 0.5.3 and older pick the default attention backend after ServerArgs, in the model runner
# (sglang_model_runner.py)
SELECTOR_FROM_MODEL_RUNNER = (
    "sglang/srt/server_args.py: ServerArgs.__post_init__ (_handle_model_specific_adjustments, the attention-backend, "
    "KV-cache and page-size handlers), then sglang/srt/model_executor/model_runner.py: ModelRunner.__init__ up to the "
    "end of model_specific_adjustment (the default backend, MLA's backend check) with ModelConfig.from_server_args, "
    "for a stand-in model folder (config.json only) per shape"
)
# vLLM 0.11.0 and older: an if/else chain that returns one class path (vllm_chain.py)
SELECTOR_FROM_CHAIN = (
    "vllm/platforms/cuda.py: CudaPlatform.get_attn_backend_cls (an if/else chain: the chosen backend only, per "
    "block size; no candidate list, no reasons) with the block size from CudaPlatform.check_and_update_config"
)
# vLLM 0.6.6 and older (V0 only): the selector module decides, the platform does not (vllm_v0.py)
SELECTOR_FROM_V0 = (
    "vllm/attention/selector.py: get_attn_backend (which_attn_to_use's _Backend: the chosen backend only, per block "
    "size; no candidate list, no reasons) with the default block size of EngineArgs (or, where that is None, "
    "CudaPlatform.check_and_update_config)"
)
RAN_TABLES = ("attention_selector", "quantization")
QUANT_FROM = {
    "vllm": "vllm/model_executor/layers/quantization: get_quantization_config(m).get_min_capability() for "
    "QUANTIZATION_METHODS and the per-layer schemes; vllm/model_executor/kernels/linear _POSSIBLE_*_KERNELS "
    "is_supported(capability); fused_moe/oracle backend_to_kernel_cls _supports_current_device()",
    "sglang": "sglang/srt/layers/quantization: get_quantization_config(m).get_min_capability() for "
    "QUANTIZATION_METHODS and the per-layer schemes; fp8_utils.can_auto_enable_marlin_fp8() and "
    "marlin_utils.query_marlin_supported_quant_types(capability) per GPU",
}


def install(spec: str, venv: Path, left_out: tuple[str, ...] = ()) -> Path:
    """`python3.11 -m venv VENV && pip install SPEC` unless VENV already has it; returns its python. `left_out`
    names requirements pip cannot fetch here (a placeholder that downloads from another index): the release is
    installed without dependencies, then its own Requires-Dist minus those (the tables record which)."""
    python = venv / "bin" / "python"
    name, _, version = spec.partition("==")
    if python.exists() and _installed(python, name) == version:
        return python
    started = time.monotonic()
    base = os.environ.get("HARVEST_PYTHON", "python3.11")
    subprocess.run([base, "-m", "venv", str(venv)], check=True, capture_output=True, text=True)
    pip = ["nice", "-n", "10", str(python), "-m", "pip", "install", "-q"]
    steps: list[Any] = [[*pip, spec]]
    if left_out:  # the requirements are read from the release once it is installed, not before
        steps = [[*pip, "--no-deps", spec], lambda: [*pip, *_requirements(python, name, left_out)]]
    for step in steps:
        proc = subprocess.run(step() if callable(step) else step, capture_output=True, text=True)
        if proc.returncode != 0:
            tail = proc.stderr.strip().splitlines()[-1:] or [f"exit {proc.returncode}"]
            raise RuntimeError(f"pip install {spec} into {venv} failed: {tail[0]}")
    print(f"  installed {spec} into {venv} in {time.monotonic() - started:.0f}s", file=sys.stderr)
    return python


def _requirements(python: Path, name: str, left_out: tuple[str, ...]) -> list[str]:
    """The installed release's own requirements (no extras), less the named ones."""
    code = "import importlib.metadata as m, sys\nprint('\\n'.join(m.requires(sys.argv[1]) or ()))"
    listed = subprocess.run([str(python), "-c", code, name], capture_output=True, text=True).stdout.splitlines()
    out = []
    for line in listed:
        req = line.split(";")[0].strip()
        bare = req.split("[")[0].split("=")[0].split("<")[0].split(">")[0].split("!")[0].split("~")[0].strip()
        if "extra ==" not in line and bare.lower() not in {x.lower() for x in left_out}:
            out.append(line.strip())
    return out


def _installed(python: Path, name: str) -> str | None:
    code = "import importlib.metadata as m, sys\ntry: print(m.version(sys.argv[1]))\nexcept Exception: pass"
    proc = subprocess.run([str(python), "-c", code, name], capture_output=True, text=True)
    return proc.stdout.strip() or None


_DIST = """import importlib.metadata as m, json, sys
try:
    d = m.distribution(sys.argv[1])
except m.PackageNotFoundError:
    print("null")
else:
    read = {"record": d.read_text("RECORD"), "direct_url": d.read_text("direct_url.json")}
    print(json.dumps({"version": d.version, **read}))
"""


def _record(text: str | None) -> dict[str, str]:
    """A RECORD's `path -> hash` (entries without a hash, the RECORD itself and pip's own files are left out)."""
    out = {}
    for row in csv.reader((text or "").splitlines()):
        if len(row) >= 2 and row[1] and not row[0].endswith(".dist-info/RECORD"):
            out[row[0]] = row[1]
    return out


def installed_wheel(python: Path, name: str) -> tuple[str | None, str | None, str]:
    """The wheel `python` has `name` installed from and its sha256, and how that was known: the hash pip recorded
    in the install's direct_url.json (an install from a file or URL), else the release's wheel fetched again
    (`pip download --no-deps` by that interpreter, so for its platform), accepted only if every file its RECORD
    lists is in the install's RECORD with the same hash. (None, None, why) where neither tells."""
    proc = subprocess.run([str(python), "-c", _DIST, name], capture_output=True, text=True)
    dist = json.loads(proc.stdout.strip() or "null") if proc.returncode == 0 else None
    if not dist:
        return None, None, f"{python} has no installed {name} distribution (no dist-info)"
    direct = json.loads(dist["direct_url"] or "{}")
    hashes = direct.get("archive_info", {}).get("hashes") or {}
    legacy = direct.get("archive_info", {}).get("hash", "")
    sha256 = hashes.get("sha256") or (legacy.split("=", 1)[1] if legacy.startswith("sha256=") else None)
    if sha256:
        return direct["url"].rsplit("/", 1)[-1], sha256, "the install's direct_url.json"
    spec = f"{name}=={dist['version']}"
    with tempfile.TemporaryDirectory(prefix="harvest-wheel-") as tmp:
        proc = subprocess.run(
            [str(python), "-m", "pip", "download", "--no-deps", "-q", "-d", tmp, spec], capture_output=True, text=True
        )
        files = sorted(Path(tmp).glob("*.whl"))
        if proc.returncode != 0 or not files:
            tail = (proc.stderr.strip().splitlines() or [f"exit {proc.returncode}"])[-1]
            return None, None, f"pip download --no-deps {spec} failed: {tail}"
        wheel = files[0]
        with zipfile.ZipFile(wheel) as archive:
            listed = next((n for n in archive.namelist() if n.endswith(".dist-info/RECORD")), None)
            theirs = _record(archive.read(listed).decode() if listed else None)
        mine = _record(dist["record"])
        differ = sorted(p for p, h in theirs.items() if ".data/" not in p and mine.get(p) != h)
        if not theirs or differ:
            example = f", e.g. {differ[0]}" if differ else ""
            return None, None, f"{wheel.name} is not what {python} has installed ({len(differ)} files differ{example})"
        return wheel.name, file_sha256(wheel), f"{wheel.name} fetched again, its RECORD the install's"


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _probe(python: Path, args: list[str], stub: Path, probe: Path) -> dict[str, Any]:
    env = {**os.environ, "HARVEST_CUDA_STUB_DIR": str(stub), "CUDA_VISIBLE_DEVICES": ""}
    proc = subprocess.run(
        [str(python), str(probe), *args], capture_output=True, text=True, env=env, timeout=900, cwd=stub.parent
    )
    lines = proc.stdout.strip().splitlines()
    if proc.returncode != 0 or not lines:
        tail = "\n    ".join(proc.stderr.strip().splitlines()[-6:])
        raise RuntimeError(f"probe {' '.join(args)} failed (exit {proc.returncode}):\n    {tail}")
    result: dict[str, Any] = json.loads(lines[-1])
    return result


def _compact_cases(rows: list[dict[str, Any]]) -> tuple[list[str], list[dict[str, Any]]]:
    """Rejection reasons repeat across thousands of cases: store each once, cases point at them (vLLM's per-backend
    `rejected`, SGLang's `refused` and `warnings`)."""
    reasons: list[str] = []
    index: dict[str, int] = {}
    out = []
    for row in rows:
        row = dict(row)
        if "rejected" in row:
            row["rejected"] = {b: [index.setdefault(r, len(index)) for r in why] for b, why in row["rejected"].items()}
        if "refused" in row:
            row["refused"] = index.setdefault(row["refused"], len(index))
        if "warnings" in row:
            row["warnings"] = [index.setdefault(w, len(index)) for w in row["warnings"]]
        out.append(row)
    reasons = sorted(index, key=index.__getitem__)
    return reasons, out


def _try(python: Path, args: list[str], stub: Path, probe: Path) -> tuple[dict[str, Any] | None, str | None]:
    try:
        return _probe(python, args, stub, probe), None
    except (RuntimeError, subprocess.SubprocessError, ValueError) as exc:
        return None, " ".join(str(exc).split())[:600]


def _case_errors(cases: list[dict[str, Any]]) -> dict[str, Any]:
    """The cases the selector could not answer, by reason (the text before any per-case detail)."""
    reasons: dict[str, int] = {}
    for case in cases:
        if "error" in case:
            reasons[case["error"][:200]] = reasons.get(case["error"][:200], 0) + 1
    return {"count": sum(reasons.values()), "reasons": dict(sorted(reasons.items(), key=lambda i: -i[1]))}


def run(spec: str, python: Path, capabilities: tuple[int, ...], today: str, jobs: int = 1) -> dict[str, Any]:
    """Both `ran` tables of one release, from its own code on each simulated capability. A probe that fails
    on one capability leaves that capability out of its table and says why (`failed_capabilities`); a table no
    capability answered is `failed` with the reason instead of a table. `jobs` probes run side by side (each is
    its own interpreter; the tables do not depend on the order)."""
    engine = spec.partition("==")[0]
    probe = PROBES[engine]
    with tempfile.TemporaryDirectory(prefix="harvest-run-") as tmp:
        stub = Path(tmp) / "libcuda"
        started = time.monotonic()
        methods, methods_failed = _try(python, ["--methods"], stub, probe)  # also builds the stand-in libcuda once
        kernels: dict[int, dict[str, Any]] = {}
        selector: dict[int, dict[str, Any]] = {}
        failed: dict[str, dict[str, str]] = {"quantization": {}, "attention_selector": {}}
        parts = (("kernels", kernels, "quantization"), ("attention", selector, "attention_selector"))
        # SGLang's imports take most of a minute: one interpreter answers both of its tables, as for a vLLM V0 release
        # (0.6.6 and older), whose kernel part asks only class minimums (no CUDA init that could fail the selector)
        joint = engine == "sglang" or (methods or {}).get("selector") == "get_attn_backend"
        asks = [("all", parts)] if joint else [(entry[0], (entry,)) for entry in parts]
        asked = [(cap, part, fills) for cap in capabilities for part, fills in asks]
        with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
            answers = pool.map(lambda job: _try(python, ["--cap", str(job[0]), "--part", job[1]], stub, probe), asked)
            for (cap, _part, fills), (answer, why) in zip(asked, answers, strict=True):
                for _name, into, table in fills:
                    if answer is None:
                        failed[table][str(cap)] = why or "no answer"
                    else:
                        into[cap] = answer
                if any(table == "attention_selector" for _name, _into, table in fills):
                    shown = len(selector[cap]["cases"]) if cap in selector else "no"
                    print(f"  sm_{cap}: {shown} attention cases", file=sys.stderr)
    # the release's own __version__, unless it is no version: vLLM 0.6.3's wheel ships no vllm/_version.py, so it says
    # "dev"; then the installed distribution's (importlib.metadata), and the file says what the release reported
    reported = (methods or {}).get("version")
    version = reported if reported and reported[:1].isdigit() else _installed(python, spec.partition("==")[0])
    out: dict[str, Any] = {
        "release": version,
        **({"version_reported": f"{engine}.__version__ is {reported!r}"} if reported and reported != version else {}),
        "ran_on": today,
        "python": subprocess.run(
            [str(python), "-c", "import platform; print(platform.python_version())"], capture_output=True, text=True
        ).stdout.strip(),
        "packages": {k: v for k, v in {p: _installed(python, p) for p in PACKAGES[engine]}.items() if v},
        "libcuda": next((a["libcuda"] for a in (*kernels.values(), *selector.values())), None),
        "simulated_devices": {str(c): a["device"] for c, a in selector.items() if "device" in a},
    }
    smi = nvidia_smi_table({**{str(c): a for c, a in kernels.items()}, **{str(c): a for c, a in selector.items()}})
    if smi:
        out["nvidia_smi"] = smi
    ran_caps = [c for c in capabilities if c in selector]
    if ran_caps:
        rows = [row for cap in ran_caps for row in selector[cap]["cases"]]
        reasons, cases = _compact_cases(rows)
        first = selector[ran_caps[0]]
        out["attention_selector"] = {
            "from": _selector_from(engine, first),
            "capabilities": ran_caps,
            "dtype": "bfloat16",
            **(
                {
                    "imports": {str(c): selector[c]["imports"] for c in ran_caps if selector[c]["imports"]},
                    **({"chain": first["chain"]} if "chain" in first else {}),
                }
                if engine == "vllm"
                else {
                    k: first[k]
                    for k in ("backend_choices", "shapes", "torch_cuda", "logged_on_every_case")
                    if k in first
                }
            ),
            "reasons": reasons,
            "cases": cases,
            "case_errors": _case_errors(rows),
            **({"failed_capabilities": failed["attention_selector"]} if failed["attention_selector"] else {}),
        }
    else:
        out["attention_selector"] = {"failed": _first(failed["attention_selector"]) or "no capability was asked"}
    quant_caps = [c for c in capabilities if c in kernels]
    if methods is not None and quant_caps:
        per_cap = (
            {"linear_kernels": _linear(kernels, quant_caps), "moe_kernels": _moe(kernels, quant_caps)}
            if engine == "vllm"
            else {"by_capability": {str(c): kernels[c]["kernels"] for c in quant_caps}}
        )
        out["quantization"] = {
            "from": QUANT_FROM[engine],
            "capabilities": quant_caps,
            "methods": methods["methods"],
            "schemes": methods["schemes"],
            **per_cap,
            **({"failed_capabilities": failed["quantization"]} if failed["quantization"] else {}),
        }
    else:
        why = f"--methods: {methods_failed}" if methods_failed else _first(failed["quantization"])
        out["quantization"] = {"failed": why or "no capability was asked"}
    print(f"  ran in {time.monotonic() - started:.0f}s", file=sys.stderr)
    return out


NVIDIA_SMI_HOW = (
    "a stand-in nvidia-smi the harvester wrote per probe into its temporary folder and put first on PATH "
    "(scripts/harvest/simulated_gpu.py ensure_nvidia_smi): --list-gpus and --query-gpu answered with the simulated "
    "GPU's figures (device_properties: one GPU, memory in MiB as torch.cuda reports it), any other query refused "
    "with a message and exit 2"
)


def nvidia_smi_table(answers: dict[str, dict[str, Any]]) -> dict[str, Any] | None:
    """How the stand-in nvidia-smi answered the release, per capability probed (None where no probe ran it), and
    every query it refused: the release may have swallowed the failure, so the table says it."""
    by_cap = {c: a["nvidia_smi"] for c, a in sorted(answers.items(), key=lambda i: int(i[0])) if a.get("nvidia_smi")}
    if not by_cap:
        return None
    unanswered = sorted({q for calls in by_cap.values() for q in calls.get("unanswered", ())})
    return {
        "how": NVIDIA_SMI_HOW,
        "by_capability": {c: calls["answered"] for c, calls in by_cap.items()},
        **({"unanswered": unanswered} if unanswered else {}),
    }


def _selector_from(engine: str, first: dict[str, Any]) -> str:
    if "chain" in first:
        return SELECTOR_FROM_V0 if first["chain"].get("selector") == "get_attn_backend" else SELECTOR_FROM_CHAIN
    if first.get("resolved_in") == "__post_init__+model_specific_adjustment":
        return SELECTOR_FROM_MODEL_RUNNER
    return SELECTOR_FROM_POST_INIT if first.get("resolved_in") == "__post_init__" else SELECTOR_FROM[engine]


def _first(by_cap: dict[str, str]) -> str | None:
    """One reason for a table that failed everywhere: the first capability's, saying how many shared it."""
    if not by_cap:
        return None
    cap, why = next(iter(by_cap.items()))
    same = sum(1 for w in by_cap.values() if w == why)
    return f"sm_{cap}{f' and {same - 1} more' if same > 1 else ''}: {why}"


def _linear(per_cap: dict[int, dict[str, Any]], capabilities: list[int]) -> dict[str, Any]:
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
    return linear


def _moe(per_cap: dict[int, dict[str, Any]], capabilities: list[int]) -> dict[str, Any]:
    moe: dict[str, Any] = {}
    for cap in capabilities:
        for module, backends in per_cap[cap]["moe_kernels"].items():
            for backend, kernels in backends.items() if isinstance(backends, dict) else ():
                if not isinstance(kernels, dict):
                    continue
                for kernel, ok in kernels.items():
                    moe.setdefault(module, {}).setdefault(backend, {}).setdefault(kernel, {})[str(cap)] = ok
    return moe


def write(tables: dict[str, Any], facts_path: Path, artifact: str | None, sha256: str | None) -> Path:
    """`<release>.ran.json` beside the facts file, and the facts file's two table entries pointing at it; a
    table that failed is named in the facts file's `ran_failed` with its reason instead (record_failure)."""
    facts = json.loads(facts_path.read_text(encoding="utf-8"))
    if sha256 and facts.get("sha256") and facts["sha256"] != sha256:
        raise RuntimeError(
            f"{facts_path.name} was read from sha256 {facts['sha256'][:12]}…, the installed wheel is {sha256[:12]}…:"
            " rerun the read harvest first"
        )
    name = f"{facts['release']}.ran.json"
    ok = {t: v for t, v in ((t, tables[t]) for t in RAN_TABLES) if "failed" not in v}
    target = facts_path.parent / name
    if ok:
        ran = {
            "engine": facts["engine"],
            "release": facts["release"],
            "artifact": artifact,
            "sha256": sha256,
            "method": "ran",
            **{k: v for k, v in tables.items() if k not in RAN_TABLES},
            **ok,
        }
        target.write_text(json.dumps(ran, sort_keys=True, separators=(",", ":")) + "\n")
    elif target.exists():
        target.unlink()
    failures = dict(facts.get("ran_failed") or {})
    for table in RAN_TABLES:
        facts["tables"].pop(table, None)
        failures.pop(table, None)
        if table not in ok:
            failures[table] = {"method": "ran", "tried_on": tables["ran_on"], "reason": tables[table]["failed"]}
            continue
        entry: dict[str, Any] = {
            "method": "ran",
            "from": ok[table]["from"],
            "file": name,
            "ran_on": tables["ran_on"],
            "count": len(ok[table]["cases"]) if table == "attention_selector" else len(ok[table]["methods"]),
            "capabilities": ok[table]["capabilities"],
        }
        if ok[table].get("failed_capabilities"):
            entry["failed_capabilities"] = ok[table]["failed_capabilities"]
        errors = ok[table].get("case_errors", {}).get("count")
        if errors:  # cases the selector could not answer (their reasons are in the ran file)
            entry["case_errors"] = errors
        if table == "attention_selector":
            entry.update(summaries(facts_path, ok[table]["cases"]))
        facts["tables"][table] = entry
    if "attention_selector" not in ok:
        _write_selected(facts_path, {})
    _set_failures(facts, failures)
    facts_path.write_text(json.dumps(facts, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return target


def summaries(facts_path: Path, cases: list[dict[str, Any]]) -> dict[str, Any]:
    """What the catalog reads of a selector run, kept apart from the ran file (read only on demand): in the facts file,
    read on every request that touches the release, the KV spellings no backend takes and the backend an SGLang
    release picks by default (small); in `<release>.selected.json` beside it, read only when a plan asks which of
    several kernels the release picks, the backend a vLLM selector returned per case (written here, or removed when
    the run selected none). Returns the facts file's part, naming the side file."""
    out: dict[str, Any] = {}
    if no_backend_takes(cases):
        out["kv_cache_dtypes_no_backend_takes"] = no_backend_takes(cases)
    picks = selected(cases)
    if _write_selected(facts_path, picks):
        out["selected_file"] = selected_path(facts_path).name
    if picked(cases):
        out["picked"] = picked(cases)
    return out


def _dsa_pair(resolved: dict[str, Any]) -> str | None:
    """A DSA resolution's `prefill + decode` kernels (one name when both are the same): `dsa_*_backend` from 0.5.13,
    `nsa_*_backend` in 0.5.4-0.5.12, `nsa_prefill`/`nsa_decode` in 0.5.3."""
    dsa = resolved.get("attention_backend")
    pair = [resolved.get(f"{dsa}_{p}_backend") or resolved.get(f"{dsa}_{p}") for p in ("prefill", "decode")]
    if not all(isinstance(name, str) for name in pair):
        return None
    return str(pair[0]) if pair[0] == pair[1] else f"{pair[0]} + {pair[1]}"


def picked(cases: list[dict[str, Any]]) -> dict[str, dict[str, dict[str, str]]]:
    """The attention backend an SGLang release resolves to by default (no --attention-backend), compact: `shape` ->
    `--kv-cache-dtype` asked -> capability -> the backend (DSA: `prefill + decode`). A case whose resolution settled on
    another KV dtype than the one asked (`auto` on an FP8-default GPU) is left out, as are refusals."""
    out: dict[str, dict[str, dict[str, str]]] = {}
    for case in cases:
        resolved = case.get("resolved")
        if "asked" not in case or case["asked"] is not None or not isinstance(resolved, dict):
            continue
        settled = resolved.get("kv_cache_dtype")
        if settled != case["kv"] and not (case["kv"] == "auto" and settled in ("auto", "bfloat16")):
            continue
        backend = resolved.get("attention_backend")
        name = _dsa_pair(resolved) if backend in ("dsa", "nsa") else backend
        if isinstance(name, str):
            out.setdefault(str(case["shape"]), {}).setdefault(str(case["kv"]), {})[str(case["capability"])] = name
    return out


def selected_path(facts_path: Path) -> Path:
    """The side file of a release's selector picks: `<release>.selected.json` beside its facts file."""
    return facts_path.with_name(facts_path.name[: -len(".json")] + SELECTED_SUFFIX)


def _write_selected(facts_path: Path, picks: dict[str, Any]) -> bool:
    """Write the picks' side file (True), or remove a stale one when there are none (False)."""
    target = selected_path(facts_path)
    if not picks:
        target.unlink(missing_ok=True)
        return False
    target.write_text(json.dumps({"selected": picks}, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return True


def selected(cases: list[dict[str, Any]]) -> dict[str, dict[str, dict[str, Any]]]:
    """The backend a candidate-list selector (vLLM 0.11.1 and later) returned per case, compact:
    `shape/variant-or-head-size/head size/profile` -> KV spelling -> capability -> the backend, or heads per GPU ->
    the backend where the case was asked per head count (MLA). Cases with no valid backend are left out."""
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for case in cases:
        if "valid" not in case or not case.get("selected"):
            continue
        which = case.get("variant", "plain") if case["shape"] == "gqa" else case["head_size"]
        key = f"{case['shape']}/{which}/{case['head_size']}/{case.get('profile') or '-'}"
        by_cap = out.setdefault(key, {}).setdefault(str(case["kv"]), {})
        heads = case.get("heads_per_rank")
        if heads is None:
            by_cap[str(case["capability"])] = case["selected"]
        else:
            by_cap.setdefault(str(case["capability"]), {})[str(heads)] = case["selected"]
    return out


def summarize(facts_path: Path) -> bool:
    """Recompute the summaries of a release's committed selector run into its facts file (no rerun); False when the
    release has no selector run."""
    facts = json.loads(facts_path.read_text(encoding="utf-8"))
    entry = facts["tables"].get("attention_selector")
    if entry is None or "file" not in entry:
        return False
    tables = json.loads((facts_path.parent / entry["file"]).read_text(encoding="utf-8"))
    for key in ("kv_cache_dtypes_no_backend_takes", "selected", "selected_file", "picked"):
        entry.pop(key, None)  # `selected` was kept in the facts file itself before it moved to its side file
    entry.update(summaries(facts_path, tables["attention_selector"]["cases"]))
    facts_path.write_text(json.dumps(facts, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return True


def no_backend_takes(cases: list[dict[str, Any]]) -> list[str]:
    """The `--kv-cache-dtype` values the release's CLI offers but its selector refused in every case it answered (on
    every GPU and shape asked): a plan must not pass one (0.14.0 and older take `auto`, not `bfloat16`, for a 16-bit
    cache). vLLM rows only: SGLang's cases resolve rather than list valid backends."""
    answered = [c for c in cases if "valid" in c and "kv" in c]
    asked = {c["kv"] for c in answered}
    return sorted(kv for kv in asked if not any(c["valid"] for c in answered if c["kv"] == kv))


def record_failure(facts_path: Path, reason: str, today: str) -> None:
    """A run that produced no table at all (the install failed): both tables are named with the reason, and
    a previously committed run of them is kept only if it is of this same release (it is: one file a release)."""
    facts = json.loads(facts_path.read_text(encoding="utf-8"))
    failures = dict(facts.get("ran_failed") or {})
    for table in RAN_TABLES:
        if table not in facts["tables"]:
            failures[table] = {"method": "ran", "tried_on": today, "reason": " ".join(reason.split())[:600]}
    _set_failures(facts, failures)
    facts_path.write_text(json.dumps(facts, indent=1, sort_keys=True) + "\n", encoding="utf-8")


def _set_failures(facts: dict[str, Any], failures: dict[str, Any]) -> None:
    if failures:
        facts["ran_failed"] = failures
    else:
        facts.pop("ran_failed", None)


_PINS = """import importlib.metadata as m, json, sys
from packaging.requirements import Requirement
pins = {}
for line in m.requires(sys.argv[1]) or ():
    req = Requirement(line)
    spec = list(req.specifier)
    if len(spec) == 1 and spec[0].operator == "==" and (req.marker is None or req.marker.evaluate({"extra": ""})):
        pins[req.name.lower()] = spec[0].version
print(json.dumps(pins))
"""


def pinned(python: Path, name: str) -> dict[str, str]:
    """The installed release's own exact pins (`Requires-Dist: x==v` whose marker holds here, no extras)."""
    proc = subprocess.run([str(python), "-c", _PINS, name], capture_output=True, text=True)
    try:
        pins = json.loads(proc.stdout or "{}")
    except ValueError:
        return {}
    return {str(k): str(v) for k, v in pins.items()} if isinstance(pins, dict) else {}


def merge(
    before: dict[str, Any], tables: dict[str, Any], asked: tuple[int, ...], pins: dict[str, str] | None = None
) -> dict[str, Any]:
    """A run on more capabilities added to the committed run of the same release (`--merge`): the capabilities
    asked now replace theirs, the others are kept. Both runs must come from the same interpreter and packages
    (the tables depend on them), else this refuses naming what differs. A package the committed run did not stamp
    (PACKAGES named fewer then) is taken only where the release pins it exactly (`pins`) to the version found now:
    pip installed that same version for the committed run; the merged file says which were not stamped before."""
    unstamped = {
        p: v
        for p, v in (tables.get("packages") or {}).items()
        if p not in (before.get("packages") or {}) and (pins or {}).get(p) == v
    }
    for key in ("release", "python", "packages"):
        was = {**before.get(key), **unstamped} if key == "packages" and before.get(key) else before.get(key)
        if was != tables.get(key):
            raise RuntimeError(
                f"--merge: the committed run has {key} {before.get(key)}, this one {tables.get(key)}: rerun every"
                " capability in one environment instead"
            )
    out = {k: v for k, v in tables.items() if k not in ("engine", "artifact", "sha256", "method")}
    if unstamped or before.get("packages_pinned_not_stamped"):
        out["packages_pinned_not_stamped"] = {
            "packages": dict(
                sorted({**before.get("packages_pinned_not_stamped", {}).get("packages", {}), **unstamped}.items())
            ),
            "why": "the earlier run of this file did not stamp them; the release pins each to this version (==), so"
            " pip installed the same one for it",
        }
    devices = {c: d for c, d in before.get("simulated_devices", {}).items() if int(c) not in asked}
    out["simulated_devices"] = dict(sorted({**devices, **tables["simulated_devices"]}.items(), key=lambda i: int(i[0])))
    out["libcuda"] = tables.get("libcuda") or before.get("libcuda")
    if before.get("nvidia_smi") or tables.get("nvidia_smi"):  # the stand-in's answers of both runs, by capability
        was, now = before.get("nvidia_smi") or {}, tables.get("nvidia_smi") or {}
        kept = {c: a for c, a in was.get("by_capability", {}).items() if int(c) not in asked}
        by_cap = dict(sorted({**kept, **now.get("by_capability", {})}.items(), key=lambda i: int(i[0])))
        unanswered = sorted({*was.get("unanswered", ()), *now.get("unanswered", ())})
        out["nvidia_smi"] = {
            "how": NVIDIA_SMI_HOW,
            "by_capability": by_cap,
            **({"unanswered": unanswered} if unanswered else {}),
        }
    earlier = _earlier_runs(before, asked, tables["ran_on"])
    if earlier:  # which capabilities earlier days answered (each day once, oldest first)
        out["earlier_run"] = earlier
    for name in RAN_TABLES:
        old, new = before.get(name), tables[name]
        if old is None or "failed" in old:
            continue
        if "failed" in new:  # nothing answered now: the committed capabilities stay, the new ones say why
            failures = {**_failed(old, asked), **{str(c): new["failed"] for c in asked}}
            out[name] = {**old, "failed_capabilities": failures}
            continue
        out[name] = _merge_selector(old, new, asked) if name == "attention_selector" else _merge_quant(old, new, asked)
    return out


def _kept(before: dict[str, Any], asked: tuple[int, ...]) -> list[int]:
    caps = {c for t in RAN_TABLES for c in (before.get(t) or {}).get("capabilities", ())}
    return sorted(c for c in caps if c not in asked)


def _earlier_runs(before: dict[str, Any], asked: tuple[int, ...], today: str) -> list[dict[str, Any]]:
    """The day each capability this merge keeps was run on: the day an earlier merge recorded for it, else the
    committed run's own day, so a release merged more than once still says when each capability ran."""
    prior = before.get("earlier_run") or []
    day_of = {c: run["ran_on"] for run in ([prior] if isinstance(prior, dict) else prior) for c in run["capabilities"]}
    by_day: dict[str, list[int]] = {}
    for cap in _kept(before, asked):
        by_day.setdefault(str(day_of.get(cap, before.get("ran_on"))), []).append(cap)
    return [{"ran_on": day, "capabilities": caps} for day, caps in sorted(by_day.items()) if day != today]


def _failed(table: dict[str, Any], asked: tuple[int, ...]) -> dict[str, str]:
    return {c: why for c, why in (table.get("failed_capabilities") or {}).items() if int(c) not in asked}


def _capabilities(old: dict[str, Any], new: dict[str, Any], asked: tuple[int, ...]) -> list[int]:
    return sorted({c for c in old["capabilities"] if c not in asked} | set(new["capabilities"]))


def _merge_failures(merged: dict[str, Any], old: dict[str, Any], new: dict[str, Any], asked: tuple[int, ...]) -> None:
    failures = {**_failed(old, asked), **(new.get("failed_capabilities") or {})}
    merged.pop("failed_capabilities", None)
    if failures:
        merged["failed_capabilities"] = dict(sorted(failures.items(), key=lambda i: int(i[0])))


def _expand(table: dict[str, Any]) -> list[dict[str, Any]]:
    """The inverse of _compact_cases: each case with its reasons written out."""
    reasons = table["reasons"]
    rows = []
    for case in table["cases"]:
        row = dict(case)
        if "rejected" in row:
            row["rejected"] = {b: [reasons[i] for i in why] for b, why in row["rejected"].items()}
        if "refused" in row:
            row["refused"] = reasons[row["refused"]]
        if "warnings" in row:
            row["warnings"] = [reasons[i] for i in row["warnings"]]
        rows.append(row)
    return rows


def _merge_selector(old: dict[str, Any], new: dict[str, Any], asked: tuple[int, ...]) -> dict[str, Any]:
    caps = _capabilities(old, new, asked)
    kept = [r for r in _expand(old) if r["capability"] not in asked]
    rows = sorted([*kept, *_expand(new)], key=lambda r: caps.index(r["capability"]))  # stable: each run's order
    reasons, cases = _compact_cases(rows)
    merged = {**new, "capabilities": caps, "reasons": reasons, "cases": cases, "case_errors": _case_errors(rows)}
    if "imports" in old or "imports" in new:
        imports = {c: v for c, v in old.get("imports", {}).items() if int(c) not in asked}
        merged["imports"] = dict(sorted({**imports, **new.get("imports", {})}.items(), key=lambda i: int(i[0])))
    _merge_failures(merged, old, new, asked)
    return merged


def _merge_quant(old: dict[str, Any], new: dict[str, Any], asked: tuple[int, ...]) -> dict[str, Any]:
    for key in ("methods", "schemes"):
        if old[key] != new[key]:  # the same code answers these on every capability
            raise RuntimeError(f"--merge: the committed run's quantization {key} differ from this one's")
    merged = {**new, "capabilities": _capabilities(old, new, asked)}

    def by_cap(old_map: dict[str, Any], new_map: dict[str, Any]) -> dict[str, Any]:
        both = {**{c: v for c, v in old_map.items() if int(c) not in asked}, **new_map}
        return dict(sorted(both.items(), key=lambda i: int(i[0])))

    if "linear_kernels" in new:  # vLLM
        linear = {}
        for family in sorted(set(old["linear_kernels"]) | set(new["linear_kernels"])):
            was, now = old["linear_kernels"].get(family, {}), new["linear_kernels"].get(family, {})
            linear[family] = {
                "candidates": now.get("candidates", was.get("candidates")),
                "first_supported": by_cap(was.get("first_supported", {}), now.get("first_supported", {})),
                "by_capability": by_cap(was.get("by_capability", {}), now.get("by_capability", {})),
            }
        moe: dict[str, Any] = {}
        for source, skip in ((old["moe_kernels"], asked), (new["moe_kernels"], ())):
            for module, backends in source.items():
                for backend, kernels in backends.items():
                    for kernel, verdicts in kernels.items():
                        into = moe.setdefault(module, {}).setdefault(backend, {}).setdefault(kernel, {})
                        into.update({c: ok for c, ok in verdicts.items() if int(c) not in skip})
                        moe[module][backend][kernel] = dict(sorted(into.items(), key=lambda i: int(i[0])))
        merged["linear_kernels"], merged["moe_kernels"] = linear, moe
    else:  # SGLang
        merged["by_capability"] = by_cap(old["by_capability"], new["by_capability"])
    _merge_failures(merged, old, new, asked)
    return merged
