#!/usr/bin/env python3
"""Which decoder classes of the newest harvested vLLM registry recipegen plans from their own config.json.

For every class that registry lists as a decoder (kinds text_generation, multimodal or transformers_supported)
and for which tests/data holds a real config.json (see tests/data/PROVENANCE.md), the script lays out a local
folder as the tests do (the config, plus the index's total_size where tests/data records one) and asks
`recipegen explain --engine vllm --build vllm-<newest>` on H200s, as many as the widest tensor-parallel split of
8 the heads allow. Every other decoder class of the registry is measured the same way from a config of its own
class's defaults (tests/data/defaults, made by scripts/default_configs.py from transformers' or vLLM's
configuration class), under a heading of its own: defaults are no checkpoint, and size the model from shapes.

It prints one line per class: planned (KV bytes per token, the window-bounded KV per request where sliding-window
layers keep one, weights per GPU), unknown (no gate fails, but one cannot say: vLLM's reason), refused for memory
alone (with the figures) or failed (the reason), then the totals per heading, how many planned classes without a
recipe in recipes/models are sized from their checkpoint's own bytes (an index's total_size or a single weight
file's size), and how many decoder classes have no config at all (--format json: `without_config`, each with the
reason scripts/default_configs.py recorded): the classes this measurement cannot speak for.

python scripts/arch_coverage.py                 # the table and the totals
python scripts/arch_coverage.py --format json   # one object per class
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data"
DEFAULTS = DATA / "defaults"  # configs of defaults from the classes' own configuration code (SOURCES.json)
DECODER_KINDS = {"text_generation", "multimodal", "transformers_supported"}
# where a class has several configs, the folder with the best weight facts first (an index beats a file size
# beats a published count beats none)
FACT_FILES = ("index-metadata.json", "weight-files.json", "published-params.json")
OFFLINE = {"HF_HUB_OFFLINE": "1", "HF_ENDPOINT": "http://127.0.0.1:9"}
REAL = ("index-metadata.json", "weight-files.json")  # the checkpoint's own byte count, not a published estimate


def _configs(defaults: bool = False) -> dict[str, Path]:
    """Each class's config.json folder in tests/data (the one with the strongest weight facts): a real checkpoint's,
    or with `defaults` the configs of defaults scripts/default_configs.py made from the classes' own code."""
    found: dict[str, Path] = {}
    for path in sorted((DEFAULTS if defaults else DATA).rglob("config.json")):
        if not defaults and DEFAULTS in path.parents:
            continue
        try:
            config = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        archs = config.get("architectures") if isinstance(config, dict) else None
        if not isinstance(archs, list) or not archs or not isinstance(archs[0], str):
            continue
        arch, folder = archs[0], path.parent
        rank = next((i for i, f in enumerate(FACT_FILES) if (folder / f).exists()), len(FACT_FILES))
        if arch not in found or rank < next(
            (i for i, f in enumerate(FACT_FILES) if (found[arch] / f).exists()), len(FACT_FILES)
        ):
            found[arch] = folder
    return found


def _total_size(source: Path) -> int | None:
    index = source / "index-metadata.json"
    if index.exists():
        return int(json.loads(index.read_text())["metadata"]["total_size"])
    files = source / "weight-files.json"
    if files.exists():
        return sum(int(v) for v in json.loads(files.read_text())["files"].values())
    return None


def _folder(source: Path, into: Path) -> Path:
    """A checkpoint folder as a user has it: config.json, the other small JSON files, the index's total_size."""
    into.mkdir(parents=True)
    for f in source.iterdir():
        if f.suffix == ".json" and f.name not in (*FACT_FILES, "model_files.json"):
            shutil.copy(f, into / f.name)
    total = _total_size(source)
    if total is not None and not (into / "model.safetensors.index.json").exists():
        (into / "model.safetensors.index.json").write_text(json.dumps({"metadata": {"total_size": total}}))
    return into


def _int(c: dict[str, Any], *keys: str) -> int | None:
    for k in keys:
        v = c.get(k)
        if isinstance(v, int) and not isinstance(v, bool) and v > 0:
            return v
    return None


def _gpus(config: dict[str, Any]) -> int:
    """The widest tensor-parallel split of 8 that the language model's heads allow."""
    from recipegen.checkpoint.configfields import text_config

    c = text_config(config)  # the language model's fields, nested as recipegen reads them
    heads = _int(c, "num_attention_heads", "n_head", "n_heads") or 8
    kv = _int(c, "num_key_value_heads", "n_head_kv", "num_kv_heads", "multi_query_group_num") or heads
    return next(tp for tp in (8, 4, 2, 1) if heads % tp == 0 and (kv % tp == 0 or tp % kv == 0))


def _explain(folder: Path, gpus: int, build: str) -> tuple[int, str, str]:
    from recipegen.cli.inprocess import run

    args = ["explain", "--gpu", "h200", "--gpus", str(gpus), "--model", str(folder), "--build", build]
    result = run([*args, "--format", "json"], env=OFFLINE)
    return result.code, result.out, result.err


def _registry() -> tuple[str, dict[str, Any]]:
    from recipegen.catalog import harvest

    release = max(harvest.releases("vllm"), key=lambda r: harvest.release_key(r) or ())
    return release, harvest.detail("vllm", release)["architectures"]


def _decoders(registry: dict[str, Any]) -> list[str]:
    return sorted(a for a, v in registry.items() if set(v.get("kinds", ())) & DECODER_KINDS)


def without_config() -> dict[str, str]:
    """The decoder classes of the newest harvested vLLM registry that tests/data holds no config.json for, neither a
    checkpoint's nor one of defaults, each with the reason scripts/default_configs.py recorded."""
    _, registry = _registry()
    have = _configs() | _configs(defaults=True)
    sources = json.loads((DEFAULTS / "SOURCES.json").read_text())["classes"] if DEFAULTS.exists() else {}
    return {a: sources.get(a, {}).get("why", "not swept") for a in _decoders(registry) if a not in have}


def _row(arch: str, source: Path, kind: str, build: str, tmp: Path) -> dict[str, Any]:
    config = json.loads((source / "config.json").read_text())
    folder = _folder(source, tmp / arch)
    gpus = _gpus(config)
    code, out, err = _explain(folder, gpus, build)
    row: dict[str, Any] = {"class": arch, "config": str(source.relative_to(ROOT)), "config_kind": kind, "gpus": gpus}
    row["weights_from"] = next((f for f in FACT_FILES if (source / f).exists()), "shapes")
    doc = json.loads(out) if code == 0 and out.strip().startswith("{") else None
    plans = doc["plans"] if doc else []
    if plans:
        memory = plans[0]["memory"]
        row |= {"planned": True, "understood_as": doc["request"]["understood_as"]}
        row |= {"kv_bytes_per_token": memory["kv_bytes_per_token"], "weights_gib": memory["weights_gib"]}
        row["kv_window_bytes_per_request"] = memory["kv_window_bytes_per_request"]
        return row
    rejected = doc["rejected"] if doc else []
    reasons = [doc["reasons"][r["reason_id"]]["reason"] for r in rejected] if doc else []
    # no gate fails, one is unknown (a kernel fact the catalog lacks): not refused, not planned
    unknown = bool(rejected) and all(r["outcome"] == "unknown" for r in rejected)
    row |= {"planned": False, "unknown": unknown}
    row["reason"] = reasons[0] if reasons else (err.strip().splitlines() or ["no output"])[-1]
    # refused for memory alone, with the figures (weights per GPU against what the GPUs hold), or failed: the
    # config was not understood, or another gate refused it
    row["memory_only"] = bool(reasons) and str(row["reason"]).startswith(f"on {gpus} GPU(s): weights need ")
    return row


def measure(defaults: bool = True) -> tuple[str, list[dict[str, Any]]]:
    """(the vLLM build measured, one row per decoder class with a config in tests/data: a checkpoint's where one was
    copied, else, with `defaults`, the config of the class's own defaults)."""
    release, registry = _registry()
    build = f"vllm-{release}"
    decoders = set(_decoders(registry))
    real = {a: p for a, p in _configs().items() if a in decoders}
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp:
        for arch, source in sorted(real.items()):
            rows.append(_row(arch, source, "checkpoint", build, Path(tmp)))
        if defaults:
            for arch, source in sorted(_configs(defaults=True).items()):
                if arch in decoders and arch not in real:
                    rows.append(_row(arch, source, "defaults", build, Path(tmp)))
    return build, rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--format", choices=("text", "json"), default="text")
    args = parser.parse_args()
    build, rows = measure()
    missing = without_config()
    if args.format == "json":
        print(json.dumps({"build": build, "classes": rows, "without_config": missing}, indent=1))
        return 0
    for kind, title in (("checkpoint", "a checkpoint's own config.json"), ("defaults", "the class's defaults")):
        part = [r for r in rows if r["config_kind"] == kind]
        if not part:
            continue
        print(f"— {len(part)} classes from {title}")
        for r in part:
            if r["planned"]:
                what = f"planned  {r['gpus']}×H200  KV {r['kv_bytes_per_token']} B/token"
                if r["kv_window_bytes_per_request"]:  # the sliding-window layers' KV, bounded by the window
                    what += f" + {r['kv_window_bytes_per_request'] / 2**20:.1f} MiB/request in windows"
                what += f"  weights {r['weights_gib']} GiB/GPU"
            elif r.get("unknown"):
                what = f"UNKNOWN  {r['reason']}"
            elif r["memory_only"]:
                what = f"REFUSED (memory)  {r['reason']}"
            else:  # the builds that load the class are in --format json; here the reason it is not planned
                what = "FAILED  " + re.sub(r" is loaded by .*?, but ", " is loaded, but ", str(r["reason"]))
            print(f"{r['class']:<40} {r['weights_from'] if kind == 'checkpoint' else 'defaults':<22} {what}")
    print()
    for kind, title in (("checkpoint", "a checkpoint's own config"), ("defaults", "the class's defaults")):
        part = [r for r in rows if r["config_kind"] == kind]
        planned = sum(r["planned"] for r in part)
        unknown = sum(bool(r.get("unknown")) for r in part)
        memory = sum(bool(r.get("memory_only")) for r in part)
        failed = len(part) - planned - unknown - memory
        print(f"{build}, from {title}: {planned} of {len(part)} decoder classes planned, {memory} refused for memory "
              f"alone (with the figures), {unknown} unknown (a kernel fact is missing), {failed} failed")  # fmt: skip
    from recipegen.catalog import load

    curated = {m.architecture for m in load.load().models.values()}  # classes a recipe in recipes/models covers
    real = [r for r in rows if r["planned"] and r["class"] not in curated and r["weights_from"] in REAL]
    print(f"{len(real)} of the planned classes without a recipe are sized from a real index total_size or single "
          "weight file")  # fmt: skip
    print(f"{len(missing)} decoder classes of {build}'s registry have no config in tests/data, neither a checkpoint's "
          "nor one of defaults (their configuration code ships only with the checkpoint; --format json lists them "
          "as without_config, each with the reason)")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
