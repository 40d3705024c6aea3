"""Harvest an engine release's facts from its own code: `python scripts/harvest vllm==0.8.5 sglang==0.4.6`.

Each release is fetched with `pip download --no-deps` into a throwaway folder and read in place
(AST, never imported): the architecture registry, the tool- and reasoning-parser registries, the
CLI options, the kernels and (vLLM) the RoPE scalings `get_rope` builds. One JSON file per release lands
in generator/data/harvest/<engine>/<version>.json, stamped with the artifact, its sha256, the day and the
method of each table. `--tree PATH` reads an unpacked tree or a local wheel/sdist instead of downloading
(the tests use small fixture trees).

`--run` (vLLM, SGLang) installs the release into a throwaway virtual environment and runs its own attention
selection and quantization code on each simulated GPU (ran.py; vllm_probe.py asks vLLM's selector, sglang_probe.py
resolves SGLang's server arguments): the `ran` tables, in <version>.ran.json beside the facts file, which then
names them; the backend vLLM's selector picked per case goes to <version>.selected.json (read only when a plan
asks which kernel the release picks). `--summaries` rewrites both summaries from the committed ran file.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import llamacpp_reader
import ran
import sglang_kernels
import sglang_reader
import vllm_kernels
import vllm_reader
import vllm_rope
from tree import Tree

READERS: dict[str, Any] = {"vllm": vllm_reader, "sglang": sglang_reader, "llama.cpp": llamacpp_reader}
KERNEL_READERS: dict[str, Any] = {"vllm": vllm_kernels, "sglang": sglang_kernels}  # what decides kernel verdicts
ROPE_READERS: dict[str, Any] = {"vllm": vllm_rope}  # which RoPE scalings a checkpoint's config may ask for
ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "generator" / "data" / "harvest"
SCHEMA = 1


def _built(path: Path) -> str | None:
    """The wheel's own file date (its dist-info): the day the release artifact was built."""
    if not zipfile.is_zipfile(path):
        return None
    with zipfile.ZipFile(path) as archive:
        stamps = [i.date_time for i in archive.infolist() if ".dist-info/" in i.filename]
    if not stamps or max(stamps)[0] < 2000:
        return None
    year, month, day = max(stamps)[:3]
    return dt.date(year, month, day).isoformat()


INDEX = "https://pypi.org/simple/{name}/"  # PEP 691 JSON: each file's PEP 700 upload-time


def upload_time(index: dict[str, Any], artifact: str) -> str | None:
    """The day the artifact was uploaded to PyPI, from the package's JSON simple index (None: not listed)."""
    for entry in index.get("files") or []:
        if isinstance(entry, dict) and entry.get("filename") == artifact and isinstance(entry.get("upload-time"), str):
            return str(entry["upload-time"])[:10]
    return None


def _uploaded(package: str, artifact: str) -> str | None:
    """The artifact's upload day on PyPI (the release date a user can check on its page), or None offline."""
    import urllib.request

    name = package.partition("==")[0]
    request = urllib.request.Request(INDEX.format(name=name), headers={"Accept": "application/vnd.pypi.simple.v1+json"})
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return upload_time(json.loads(response.read(64 << 20)), artifact)
    except (OSError, ValueError):
        return None


def stamp_uploaded(facts_path: Path) -> str | None:
    """Add the upload day of the artifact a committed facts file was read from (no download, no rerun)."""
    facts = json.loads(facts_path.read_text(encoding="utf-8"))
    day = _uploaded(facts.get("package") or f"{facts['engine']}=={facts['release']}", facts["artifact"])
    if day is not None:
        facts["uploaded"] = day
        facts_path.write_text(json.dumps(facts, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return day


def _table(method: str, read: Any, key: str, value: Any) -> dict[str, Any]:
    return {"method": method, "from": read, key: value}


def _files(table: Any) -> list[str]:
    """Every file a kernels table names in its `from` fields (`path:function` counted as its path)."""
    found: set[str] = set()

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            for key, item in value.items():
                if key == "from":
                    for path in item if isinstance(item, list) else [item]:
                        if isinstance(path, str):
                            found.add(path.split(":")[0])
                else:
                    walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    walk(table)
    return sorted(found)


def harvest(engine: str, version: str, artifact: Path, today: str, package: str | None = None) -> dict[str, Any]:
    reader = READERS[engine]
    tree = Tree(artifact)
    tables: dict[str, Any] = {}
    failures: dict[str, str] = {}
    try:
        table, path = reader.registry(tree)
        tables["architectures"] = {"method": "read", "from": path, **table}
    except (LookupError, SyntaxError) as exc:
        failures["architectures"] = str(exc)
    for name in ("tool_parsers", "reasoning_parsers"):
        names, path = getattr(reader, name)(tree)
        if names is None:  # the release has no such registry: none to choose from
            tables[name] = {"method": "read", "from": None, "names": [], "note": "no parser registry in this release"}
        else:
            tables[name] = _table("read", path, "names", names)
    try:
        options, paths = reader.flags(tree)
        tables["flags"] = _table("read", paths, "options", options)
    except (LookupError, SyntaxError) as exc:
        failures["flags"] = str(exc)
        options = {}
    if engine in KERNEL_READERS:
        try:
            table = KERNEL_READERS[engine].kernels(tree)
            attention = table.get("attention") or {}
            count = len((table.get("quantization") or {}).get("methods") or {}) + sum(map(len, attention.values()))
            count += sum(1 for part in ("compiled_for", "dtypes", "min_sm", "fp8") if part in table)
            tables["kernels"] = {"method": "read", "from": _files(table), "count": count, **table}
        except (LookupError, SyntaxError) as exc:
            failures["kernels"] = str(exc)
    if engine in ROPE_READERS:
        try:
            table = ROPE_READERS[engine].rope(tree)
            tables["rope"] = {"method": "read", **table}
        except (LookupError, SyntaxError) as exc:
            failures["rope"] = str(exc)
    for name, flag in (("tool_parsers", "--tool-call-parser"), ("reasoning_parsers", "--reasoning-parser")):
        extra = options.get(flag, {}).get("choices_extra")
        if extra:  # choices the CLI offers beside the registry's names (SGLang's `auto`)
            tables[name]["cli_extra"] = sorted(set(extra) - set(tables[name]["names"]))
    stamp: dict[str, Any] = {
        "schema": SCHEMA,
        "engine": engine,
        "release": version,
        "package": package or f"{engine}=={version}",  # the PyPI release the artifact is
        "artifact": artifact.name,
        "sha256": ran.file_sha256(artifact) if artifact.is_file() else None,
        "built": _built(artifact) if artifact.is_file() else None,
        "harvested_on": today,
        "harvester": "scripts/harvest",
        "tables": tables,
    }
    if failures:
        stamp["failed"] = failures
    return stamp


def split(result: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The facts file (names only: what the catalog reads per release) and its detail file (per-architecture
    module/class/kinds/traits and the CLI options, read only by lint and `list engines --verbose`)."""
    facts = json.loads(json.dumps(result))
    detail: dict[str, Any] = {"engine": result["engine"], "release": result["release"], "sha256": result["sha256"]}
    archs = facts["tables"].get("architectures")
    if archs is not None and "entries" in archs:
        detail["architectures"] = archs.pop("entries")
        archs["names"] = sorted(detail["architectures"])
    flags = facts["tables"].get("flags")
    if flags is not None and "options" in flags:
        detail["flags"] = flags.pop("options")
        flags["count"] = len(detail["flags"])
    facts["detail"] = f"{result['release']}.detail.json"
    return facts, detail


def write(result: dict[str, Any], folder: Path) -> Path:
    facts, detail = split(result)
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / f"{result['release']}.json"
    if target.exists():  # a rerun of the read tables keeps the ran ones (and their file) of the same artifact
        before = json.loads(target.read_text(encoding="utf-8"))
        if before.get("sha256") == facts["sha256"]:
            facts["tables"].update({k: v for k, v in before["tables"].items() if v.get("method") == "ran"})
            if "uploaded" in before:  # read again offline: the artifact's upload day does not change
                facts.setdefault("uploaded", before["uploaded"])
    target.write_text(json.dumps(facts, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    (folder / facts["detail"]).write_text(
        json.dumps(detail, sort_keys=True, separators=(",", ":")) + "\n", encoding="utf-8"
    )
    return target


def _download(spec: str, folder: Path, source: bool = False) -> Path:
    started = time.monotonic()
    command = [sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d", str(folder), spec]
    if source:  # an sdist that vendors the engine's source tree
        command[4:4] = ["--no-binary", ":all:"]
    proc = subprocess.run(command, capture_output=True, text=True, timeout=900)
    files = sorted(folder.iterdir())
    if proc.returncode != 0 or not files:
        raise RuntimeError(f"pip download {spec} failed: {proc.stderr.strip().splitlines()[-1:] or proc.returncode}")
    print(f"  downloaded {files[0].name} in {time.monotonic() - started:.1f}s", file=sys.stderr)
    return files[0]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="scripts/harvest", description=__doc__.splitlines()[0])
    parser.add_argument("releases", nargs="+", help="ENGINE==VERSION (vllm, sglang from PyPI; llama.cpp==COMMIT)")
    parser.add_argument("--tree", type=Path, help="read this unpacked tree / wheel / sdist instead of downloading")
    parser.add_argument(
        "--sdist",
        help="llama.cpp: the PyPI sdist that vendors that commit, e.g. llama-cpp-python==0.3.36 (llama.cpp==0c1e570)",
    )
    parser.add_argument("--out", type=Path, default=OUT, help="folder for <engine>/<version>.json")
    parser.add_argument("--today", default=dt.date.today().isoformat())
    parser.add_argument(
        "--run", action="store_true", help="vllm, sglang: run the release's attention choice and quantization code"
    )
    parser.add_argument(
        "--venv", type=Path, help="--run: the virtual environment (default /tmp/harvest-venv-<engine>-<version>)"
    )
    parser.add_argument("--python", type=Path, help="--run: use this interpreter as is (it must import the release)")
    parser.add_argument("--caps", help="--run: compute capabilities, e.g. 90,100 (default 70 … 121)")
    parser.add_argument(
        "--leave-out",
        action="append",
        default=[],
        metavar="REQUIREMENT",
        help="--run: install the release without this requirement (one pip cannot fetch); recorded in the tables",
    )
    parser.add_argument("--jobs", type=int, default=1, help="--run: probes run side by side (default 1)")
    parser.add_argument(
        "--merge",
        action="store_true",
        help="--run: add these --caps to the release's committed ran tables (same packages) instead of replacing them",
    )
    parser.add_argument(
        "--uploaded",
        action="store_true",
        help="stamp each committed facts file with its artifact's upload day on PyPI (the JSON simple index)",
    )
    parser.add_argument(
        "--summaries",
        action="store_true",
        help="recompute, from each release's committed ran file, the selector summaries: the facts file's and the picks"
        " per case in <version>.selected.json beside it",
    )
    args = parser.parse_args(argv)
    if args.run:
        return _run_all(args)
    if args.uploaded:
        for spec in args.releases:
            engine, _, version = spec.partition("==")
            day = stamp_uploaded(args.out / engine / f"{version}.json")
            print(f"{spec}: uploaded {day or 'not found (offline?)'}", file=sys.stderr)
        return 0
    if args.summaries:
        for spec in args.releases:
            engine, _, version = spec.partition("==")
            done = ran.summarize(args.out / engine / f"{version}.json")
            print(f"{spec}: {'summaries rewritten' if done else 'no selector run'}", file=sys.stderr)
        return 0
    failed: list[str] = []
    for spec in args.releases:
        engine, sep, version = spec.partition("==")
        if not sep or engine not in READERS:
            print(f"{spec}: expected ENGINE==VERSION with ENGINE one of {', '.join(READERS)}", file=sys.stderr)
            return 2
        print(f"{spec}:", file=sys.stderr)
        try:
            with tempfile.TemporaryDirectory(prefix="harvest-") as tmp:
                if engine == "llama.cpp" and not (args.tree or args.sdist):
                    raise RuntimeError("llama.cpp is not on PyPI: give --sdist PACKAGE==VERSION or --tree PATH")
                artifact = args.tree or _download(args.sdist or spec, Path(tmp), source=bool(args.sdist))
                result = harvest(engine, version, artifact, args.today, args.sdist)
                if not args.tree and (day := _uploaded(args.sdist or spec, artifact.name)):
                    result["uploaded"] = day
        except (RuntimeError, OSError, subprocess.TimeoutExpired) as exc:
            print(f"  FAILED: {exc}", file=sys.stderr)
            failed.append(spec)
            continue
        target = write(result, args.out / engine)
        counts = {
            k: len(v.get("entries") or v.get("names") or v.get("options") or v.get("types") or [])
            for k, v in result["tables"].items()
        }
        print(
            f"  wrote {target.relative_to(ROOT) if target.is_relative_to(ROOT) else target}: {counts}"
            + (f" failed: {result['failed']}" if "failed" in result else ""),
            file=sys.stderr,
        )
        if "failed" in result:
            failed.append(spec)
    return 1 if failed else 0


def _run_all(args: argparse.Namespace) -> int:
    caps = tuple(int(c) for c in args.caps.split(",")) if args.caps else ran.CAPABILITIES
    failed = 0
    for spec in args.releases:
        engine, _, version = spec.partition("==")
        if engine not in ran.PROBES or not version:
            print(
                f"{spec}: --run asks the release's own code: expected vllm==VERSION or sglang==VERSION", file=sys.stderr
            )
            return 2
        facts = args.out / engine / f"{version}.json"
        if not facts.exists():
            print(f"{spec}: {facts} does not exist: run python scripts/harvest {spec} first", file=sys.stderr)
            return 2
        print(f"{spec} --run:", file=sys.stderr)
        try:
            venv = args.venv or Path(f"/tmp/harvest-venv-{engine}-{version}")
            python = args.python or ran.install(spec, venv, tuple(args.leave_out))
        except (RuntimeError, OSError, subprocess.SubprocessError) as exc:
            ran.record_failure(facts, str(exc), args.today)  # the facts file says why neither table was run
            print(f"  FAILED: {exc}", file=sys.stderr)
            failed += 1
            continue
        try:
            tables = ran.run(spec, python, caps, args.today, args.jobs)
            if args.leave_out:  # what the environment the tables came from lacks, and why
                tables["left_out"] = {
                    r: "the release's own requirement was left out: pip could not fetch it here (`packages` names the"
                    " version another requirement brought in, if any)"
                    for r in args.leave_out
                }
            if tables["release"] != version:
                raise RuntimeError(f"{python} imports {engine} {tables['release']}, not {version}")
            artifact, sha256, how = ran.installed_wheel(python, engine)
            print(f"  sha256 {sha256 or 'not recorded'}: {how}", file=sys.stderr)
            committed = facts.parent / f"{version}.ran.json"
            if args.merge and committed.exists():
                before = json.loads(committed.read_text(encoding="utf-8"))
                if sha256 and before.get("sha256") and before["sha256"] != sha256:
                    was, now = before["sha256"][:12], sha256[:12]
                    raise RuntimeError(f"--merge: {committed.name} ran the wheel with sha256 {was}…, this one {now}…")
                tables = ran.merge(before, tables, caps, ran.pinned(python, engine))
                artifact, sha256 = artifact or before.get("artifact"), sha256 or before.get("sha256")
            target = ran.write(tables, facts, artifact, sha256)
        except (RuntimeError, OSError, subprocess.SubprocessError, ValueError) as exc:
            print(f"  FAILED: {exc}", file=sys.stderr)
            failed += 1
            continue
        shown = target.relative_to(ROOT) if target.is_relative_to(ROOT) else target
        smi = tables.get("nvidia_smi")
        if smi:  # the release ran nvidia-smi: the stand-in answered it (or refused, which the release may swallow)
            asked = sorted({q for calls in smi["by_capability"].values() for q in calls})
            print(f"  nvidia-smi stand-in answered: {'; '.join(asked) or 'nothing'}", file=sys.stderr)
            for query in smi.get("unanswered", ()):
                print(f"  nvidia-smi stand-in REFUSED (no simulated answer): {query}", file=sys.stderr)
        for table in ran.RAN_TABLES:
            done = tables[table]
            if "failed" in done:
                print(f"  {table}: FAILED: {done['failed']}", file=sys.stderr)
                failed += 1
                continue
            size = f"{len(done['cases'])} cases" if "cases" in done else f"{len(done['methods'])} methods"
            errors = done.get("case_errors", {}).get("count")
            missed = ", sm_".join(done.get("failed_capabilities") or ())
            print(
                f"  {table}: {size} in {shown}"
                + (f", {errors} unanswered" if errors else "")
                + (f", failed on sm_{missed}" if missed else ""),
                file=sys.stderr,
            )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
