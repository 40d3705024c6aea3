"""A harvested release's kernel facts (its `kernels` read table) as the catalog's kernels and weight formats.

The harvester reads, from the release's own wheel, what decides a kernel verdict there: the GPU
architectures its compiled extensions carry, the bfloat16 capability check, each quantization method's
minimum capability, the FP8 Marlin fallback, and the attention backends its selector chooses between with
their conditions. Each becomes a fact sourced to that wheel. What the table leaves unread is not made up
here: the caller carries those facts from a later release, marked unverified (so they say "unknown").
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from .capability import capability_set
from .harvest import Harvest
from .schema import Kernel
from .schema.common import KvDtype, Source
from .schema.engine import Fallback, RequiredArg, WeightFormat

# the catalog's quantization formats and the release's method names that load each (best kernel first)
QUANT_METHODS: dict[str, tuple[str, ...]] = {
    "awq": ("awq_marlin", "awq"),
    "gptq": ("gptq_marlin", "gptq"),
    "nvfp4": ("modelopt_fp4", "modelopt_nvfp4", "nvfp4"),
    "mxfp4": ("mxfp4",),
    "gguf": ("gguf",),
}
FP4 = ("nvfp4", "mxfp4")  # native only on Blackwell; a lower minimum means a Marlin/emulation path not read here
FP8_KV: dict[str, KvDtype] = {"fp8": "fp8_e4m3", "fp8_e4m3": "fp8_e4m3", "fp8_e5m2": "fp8_e5m2"}


def _cc(value: int) -> str:
    return f"{value // 10}.{value % 10}"


def _source(facts: Harvest, files: Any, what: str) -> Source:
    """The release's wheel on PyPI, naming the files inside it the fact was read from."""
    where = ", ".join(files) if isinstance(files, list) else str(files)
    name, _, version = facts.package.partition("==")
    note = f"{what}: read from {where} in {facts.artifact}"
    if facts.sha256:
        note += f" (sha256 {facts.sha256[:12]}…)"
    return Source(
        url=f"https://pypi.org/project/{name}/{version}/", date=dt.date.fromisoformat(facts.harvested_on), note=note
    )


def compiled_terms(table: dict[str, Any]) -> tuple[str, ...] | None:
    """The capabilities the wheel's cubins run on: a cubin for X.Y runs on every X.Z with Z >= Y."""
    sm = (table.get("compiled_for") or {}).get("sm")
    if not sm:
        return None
    lowest: dict[int, int] = {}
    for arch in sm:
        major, minor = divmod(int(arch), 10)
        lowest[major] = min(lowest.get(major, 9), minor)
    return tuple(f"{m}.x" if lo == 0 else f"{m}.{lo}-{m}.9" for m, lo in sorted(lowest.items()))


def _sm(entry: dict[str, Any], everywhere: tuple[str, ...]) -> tuple[str, ...]:
    if entry.get("exactly"):
        return tuple(_cc(int(v)) for v in entry["exactly"])
    if entry.get("majors"):
        return tuple(f"{m}.x" for m in entry["majors"])
    if entry.get("min") is not None:
        low = int(entry["min"])
        if entry.get("compiled_majors"):  # its own extension's cubins bound it too
            return tuple(
                f"{m}.x" if m * 10 >= low else f"{_cc(low)}-{m}.9"
                for m in entry["compiled_majors"]
                if m * 10 + 9 >= low
            ) or (f">={_cc(low)}",)
        return (f">={_cc(low)}",)
    return everywhere  # the selector checks no capability: wherever the release runs


def _kv(entry: dict[str, Any], kv_choices: list[str]) -> list[KvDtype]:
    out: list[KvDtype] = ["bf16", "fp16"]
    # SGLang names the --kv-cache-dtype choices each backend takes; vLLM says whether it takes an FP8 cache
    choices = (entry["kv"] or []) if "kv" in entry else (kv_choices if entry.get("fp8_kv") else [])
    for choice in choices:
        dtype = FP8_KV.get(choice)
        if dtype is not None and dtype not in out:
            out.append(dtype)
    return out


def kernels(
    facts: Harvest, table: dict[str, Any], everywhere: tuple[str, ...], kv_choices: list[str]
) -> tuple[list[Kernel], set[str]]:
    """The attention kernels the release's selector chooses between, and the ops they cover."""
    out: list[Kernel] = []
    covered: set[str] = set()
    attention = table.get("attention") or {}
    for key, op in (("gqa", "attention.gqa"), ("mla", "attention.mla")):
        entries = attention.get(key) or []
        if not entries:
            continue
        covered.add(op)
        for entry in entries:
            what = f"{entry['backend']} ({op})"
            sizes = entry.get("head_sizes") if op == "attention.gqa" else None
            source = _source(facts, entry.get("from") or [], what + ", its selector's conditions")
            if entry.get("sliding_window") is False:  # 0.6.3 and older: read, and what their runs returned
                source = Source(
                    url=source.url,
                    date=source.date,
                    note=f"{source.note}; the selector turns it down for a layer with a sliding window, which then "
                    "runs XFORMERS",
                )
            optional = entry.get("optional_package")
            if optional:  # the selector prefers it where the package is installed; the package is not in the wheel
                source = Source(
                    url=source.url,
                    date=source.date,
                    unverified=True,
                    note=f"{source.note}; {optional} is an optional package the wheel does not ship: "
                    "whether it is installed and runs there is not read",
                )
            sm = _sm(entry, everywhere)
            split: list[tuple[tuple[str, ...], Source]] = [(sm, source)]
            if entry["backend"] == "XFORMERS" and sm == everywhere:
                # its prompt kernels come from the xformers package, which the wheel does not ship: on the
                # Blackwell families (10.x, 12.x) a pinned xformers build's support is not read here
                older = tuple(t for t in sm if int(t.split(".")[0].lstrip("<>=")) < 10)
                newer = tuple(t for t in sm if t not in older)
                unread = Source(
                    url=source.url,
                    date=source.date,
                    unverified=True,
                    note=f"{source.note}; on 10.x/12.x the xformers package it runs is not read",
                )
                split = [(terms, src) for terms, src in ((older, source), (newer, unread)) if terms]
            for terms, src in split:
                out.append(
                    Kernel(
                        name=str(entry["backend"]),
                        provides=op,  # type: ignore[arg-type]
                        sm=capability_set(terms),
                        head_sizes=[int(s) for s in sizes] if sizes else None,
                        kv_dtypes=_kv(entry, kv_choices),
                        sources=[src],
                    )
                )
    return out, covered


def _format(quant: str, native: tuple[str, ...] | None, sources: list[Source], **extra: Any) -> WeightFormat:
    return WeightFormat(
        quant=quant,  # type: ignore[arg-type]
        native=capability_set(native) if native else None,
        sources=sources,
        **extra,
    )


def weight_formats(
    facts: Harvest, table: dict[str, Any], everywhere: tuple[str, ...]
) -> tuple[list[WeightFormat], set[str]]:
    """The weight formats the read facts decide, and the formats they decided (absent ones included)."""
    out: list[WeightFormat] = []
    decided: set[str] = set()
    bf16 = (table.get("dtypes") or {}).get("bfloat16")
    if bf16 is not None and bf16.get("min") is not None:
        need = int(bf16["min"])
        src = [_source(facts, bf16["from"], f"bfloat16 needs compute capability {_cc(need)}")]
        fallbacks = []
        if str(bf16.get("below", "")).startswith("float16"):
            auto = bf16["below"] == "float16-auto"
            fallbacks.append(
                Fallback(
                    kernel="FP16 cast",
                    sm=capability_set((f"<{_cc(need)}",)),
                    cost="runs in float16: values beyond fp16's range can overflow",
                    args=[] if auto else ["--dtype", "half"],
                    sources=src,
                )
            )
        out.append(_format("bf16", (f">={_cc(need)}",), src, fallbacks=fallbacks))
        decided.add("bf16")
    floor = (table.get("min_sm") or {}).get("min")
    fp16_on = (f">={_cc(int(floor))}",) if floor is not None else everywhere
    fp16_from = (table.get("min_sm") or {}).get("from") or (table.get("compiled_for") or {}).get("from") or []
    if fp16_on:
        out.append(_format("fp16", fp16_on, [_source(facts, fp16_from, "float16 runs wherever the release runs")]))
        decided.add("fp16")
    quant = table.get("quantization") or {}
    methods: dict[str, Any] = quant.get("methods") or {}
    registered = set(quant.get("registered") or ()) | set(methods)
    if methods:
        _fp8_formats(facts, table, methods, registered, out, decided)
        _bnb_formats(facts, table, methods, registered, out, decided)
        for fmt, names in QUANT_METHODS.items():
            present = [n for n in names if n in methods]  # a config class, whatever name the registry files it under
            mins = [int(methods[n]["min"]) for n in present if methods[n].get("min") is not None]
            if not present:
                if not registered & set(names):
                    decided.add(fmt)  # the release registers no method that loads it
                continue  # registered, but its class is not in this wheel (SGLang importing vLLM's): not read
            if len(mins) != len(present):
                continue
            if fmt in FP4 and min(mins) < 100:
                continue  # a loader below Blackwell runs an emulation or Marlin path this reading does not follow
            src = [_source(facts, [methods[n]["from"] for n in present], f"{'/'.join(present)} get_min_capability()")]
            out.append(_format(fmt, (f">={_cc(min(mins))}",), src))
            decided.add(fmt)
    return out, decided


def _fp8_formats(
    facts: Harvest,
    table: dict[str, Any],
    methods: dict[str, Any],
    registered: set[str],
    out: list[WeightFormat],
    decided: set[str],
) -> None:
    if "fp8" not in registered or "fp8" not in methods:
        decided.update(("fp8", "fp8_block"))
        return
    fp8 = table.get("fp8") or {}
    lowest = methods["fp8"].get("min")
    below = fp8.get("marlin_below")
    if lowest is None:
        return
    lowest = int(lowest)
    files = [methods["fp8"]["from"]]
    native_from = fp8.get("native_from")
    if below is None and native_from is None and lowest < 89:
        return  # below sm89 its path is chosen at run time (cutlass / torch._scaled_mm): not read
    native = int(below) if below is not None else int(native_from) if native_from is not None else lowest
    marlin = below is not None and lowest < native
    span = (f"{_cc(lowest)}-{_cc(native - 1)}",)
    what = f"Fp8Config.get_min_capability() {_cc(lowest)}" + (
        f", Fp8LinearMethod's Marlin path below {_cc(native)}" if marlin else ""
    )
    if native_from is not None:
        files.append(fp8["native_from_file"])
        what += f", cutlass_fp8_supported() from {_cc(native)} (Marlin only when an environment variable forces it)"
    src = [_source(facts, files, what)]
    dense_only = not fp8.get("moe_marlin", False)
    cost = "weight-only FP8 (W8A16) through Marlin: FP8 weights, 16-bit math"

    def fallbacks(on: bool) -> list[Fallback]:
        if not (marlin and on):
            return []
        return [
            Fallback(
                kernel="Marlin FP8 (W8A16)",
                sm=capability_set(span),
                cost=cost,
                dense_only=dense_only,
                weight_only=True,  # Marlin dequantises the FP8 weights inside the GEMM
                sources=src,
            )
        ]

    out.append(_format("fp8", (f">={_cc(native)}",), src, fallbacks=fallbacks(True)))
    decided.add("fp8")
    if fp8.get("block_quant"):
        block_src = [
            _source(facts, files, what + ("" if fp8.get("block_marlin") else "; block-scaled FP8 turns Marlin off"))
        ]
        out.append(
            _format("fp8_block", (f">={_cc(native)}",), block_src, fallbacks=fallbacks(bool(fp8.get("block_marlin"))))
        )
    decided.add("fp8_block")  # without weight_block_size in Fp8Config the release loads no block-scaled FP8


BNB = ("bnb4", "bnb8")


def _bnb_formats(
    facts: Harvest,
    table: dict[str, Any],
    methods: dict[str, Any],
    registered: set[str],
    out: list[WeightFormat],
    decided: set[str],
) -> None:
    """Pre-quantized bitsandbytes checkpoints: the method's minimum capability, the arguments the release needs to
    load one (the `bitsandbytes` entry: both flags before it took the load format from the checkpoint), and 8-bit
    ones only where its loader reads `load_in_8bit`."""
    if "bitsandbytes" not in registered:
        decided.update(BNB)  # no bitsandbytes method: no loader for either
        return
    read = table.get("bitsandbytes")
    lowest = (methods.get("bitsandbytes") or {}).get("min")
    if read is None or lowest is None:
        return  # how it loads one was not read: carried, unverified
    what = f"BitsAndBytesConfig.get_min_capability() {_cc(int(lowest))}"
    files = [methods["bitsandbytes"]["from"], *read["from"]]
    args: list[RequiredArg] = []
    if read["load_format"] == "flags":
        what += "; a pre-quantized checkpoint needs --quantization and --load-format bitsandbytes (create_load_config)"
        src = [_source(facts, files, what)]
        args = [
            RequiredArg(
                flag=flag,
                value="bitsandbytes",
                reason="the release loads a pre-quantized bitsandbytes checkpoint only with both --quantization and "
                "--load-format bitsandbytes (it refuses either alone)",
                sources=src,
            )
            for flag in ("--quantization", "--load-format")
        ]
    else:
        what += "; the load format follows the checkpoint's quantization_config"
        src = [_source(facts, files, what)]
    out.append(_format("bnb4", (f">={_cc(int(lowest))}",), src, requires_args=args))
    decided.add("bnb4")
    if read.get("prequant_8bit"):
        out.append(_format("bnb8", (f">={_cc(int(lowest))}",), src, requires_args=args))
        decided.add("bnb8")
    elif "prequant_8bit" in read:
        refused = "its bitsandbytes loader reads no 8-bit checkpoint (no load_in_8bit in it)"
        out.append(_format("bnb8", None, [_source(facts, files, refused)], refused=refused))
        decided.add("bnb8")
