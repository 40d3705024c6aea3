"""The catalog's vLLM 0.33.0 facts held against vLLM 0.33.0's own code (tests/data/oracle).

attn_oracle.json is the engine's attention selector run per compute capability; quant_caps.json its
quantization minimums and linear-kernel candidates. For every attention shape the catalog's models
need and every KV dtype, the catalog's kernel gate must agree with the selector (valid or not, and
which backends), and for every weight format native-vs-Marlin must agree with the kernel table.
Each deliberate difference (a run-time failure the selector cannot see, a platform check that comes
before selection) is listed in oracle/deliberate.json with its reason and sources; an entry that no
longer matches anything fails the test too, so the list cannot go stale.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pytest

from recipegen.catalog.capability import Capability
from recipegen.catalog.schema import Hardware, Model, Variant
from recipegen.catalog.schema.engine import Build
from recipegen.catalog.schema.model import Need
from recipegen.frozen import evolve
from recipegen.plan import build_gates
from recipegen.plan.flags import kv_choices
from tests.support.data import ORACLE

BUILD = "vllm-0.33.0"
ATTN = json.loads((ORACLE / "attn_oracle.json").read_text())
QUANT = json.loads((ORACLE / "quant_caps.json").read_text())
DELIBERATE = json.loads((ORACLE / "deliberate.json").read_text())

# The oracle's selector configuration for each catalog attention op (model profile by qk_nope_head_dim).
SHAPES: dict[str, dict[str, Any]] = {
    "attention.gqa": {"use_mla": False, "use_sparse": False},
    "attention.mla": {"use_mla": True, "use_sparse": False, "head_size": 576},
    "attention.sparse_mla": {"use_mla": True, "use_sparse": True, "head_size": 576},
    "attention.sparse_mla_nope": {"use_mla": True, "use_sparse": True, "head_size": 512},
}
PROFILES = {
    ("attention.mla", 128): "deepseek_v3_dense",
    ("attention.sparse_mla", 128): "deepseek_v32_sparse",
    ("attention.sparse_mla", 192): "glm5_sparse_nope192",
    ("attention.sparse_mla_nope", 256): "nope512_sparse",
}
# A catalog weight format -> (vLLM --quantization method whose minimum applies, linear-kernel family).
FORMATS = {
    "fp8": ("fp8", "fp8_w8a8_per_tensor_or_channel"),
    "fp8_block": ("fp8", "fp8_block"),
    "nvfp4": ("modelopt_fp4", "nvfp4"),
    "mxfp4": ("mxfp4", "mxfp4"),
    "int4_int8_mix": ("compressed-tensors", "mixed_precision_wNa16_int4_int8"),
    "int4": ("compressed-tensors", "mixed_precision_wNa16_int4_int8"),
    "awq": ("awq", "mixed_precision_wNa16_int4_int8"),
    "gptq": ("gptq", "mixed_precision_wNa16_int4_int8"),
}


@dataclass(frozen=True)
class Disagreement:
    kind: str  # "attention" | "backend" | "weights"
    subject: str  # op or weight format
    capability: int
    kv: str | None
    backend: str | None
    catalog: str
    oracle: str

    def key(self) -> tuple[Any, ...]:
        return (self.kind, self.subject, self.capability, self.kv, self.backend)


def _cap(code: int) -> Capability:
    return Capability(code // 10, code % 10)


def _gpu(catalog: Any, code: int) -> Hardware:
    base: Hardware = catalog.hardware["h200"]
    return evolve(base, compute_capability=_cap(code))


def _build(catalog: Any) -> Build:
    return next(b for e in catalog.engines.values() for b in e.builds if b.id == BUILD)


def _shapes(catalog: Any) -> list[Need]:
    """Every attention need of the catalog's models that the oracle covers, once each."""
    seen: dict[tuple[Any, ...], Need] = {}
    for model in catalog.models.values():
        for need in model.needs:
            if need.op not in SHAPES:
                continue
            if need.op == "attention.gqa" and need.head_size not in (64, 128, 256):
                continue
            if need.op != "attention.gqa" and (need.op, need.qk_nope_head_dim or 128) not in PROFILES:
                continue
            seen.setdefault((need.op, need.head_size, need.qk_nope_head_dim, need.index_topk), need)
    return list(seen.values())


def _cases(need: Need, code: int) -> list[dict[str, Any]]:
    shape = dict(SHAPES[need.op])
    if need.op == "attention.gqa":
        shape["head_size"] = need.head_size
        profile = "none"
    else:
        profile = PROFILES[(need.op, need.qk_nope_head_dim or 128)]
    return [
        c
        for c in ATTN["cases"]
        if c["capability"] == code and c["model_profile"] == profile and all(c[k] == v for k, v in shape.items())
    ]


def _catalog_kv(catalog: Any, name: str) -> tuple[Any, ...]:
    return () if name == "auto" else kv_choices(catalog.engines["vllm"], name)


def _passes(model: Model, build: Build, hw: Hardware, kv: tuple[Any, ...]) -> bool:
    return build_gates.kernels(model, build, hw, kv).outcome == "pass"


def attention_disagreements(catalog: Any) -> list[Disagreement]:
    build = _build(catalog)
    model: Model = catalog.models["glm-5.3-flash"]
    out: list[Disagreement] = []
    names = {n for c in ATTN["cases"] for n in c["priority_order"]}
    for need in _shapes(catalog):
        one = evolve(model, needs=[need])
        for code in ATTN["capabilities"]:
            hw = _gpu(catalog, code)
            if hw.compute_capability not in build.cuda_archs:
                continue
            by_kv: dict[str, set[str]] = {}
            for case in _cases(need, code):
                by_kv.setdefault(case["kv_cache_dtype"], set()).update(case["valid"])
            for kv_name, valid in sorted(by_kv.items()):
                kv = _catalog_kv(catalog, kv_name)
                ours = _passes(one, build, hw, kv)
                if ours != bool(valid):
                    verdict = ("valid", "invalid")
                    out.append(
                        Disagreement(
                            "attention",
                            need.op,
                            code,
                            kv_name,
                            None,
                            verdict[not ours],
                            verdict[not valid],
                        )
                    )
                kernels = [k for k in build.kernels if k.provides == need.op]
                for base in sorted({k.name.split(" (")[0] for k in kernels} & names):
                    same = [k for k in kernels if k.name.split(" (")[0] == base]
                    mine = _passes(one, evolve(build, kernels=same), hw, kv)
                    if mine != (base in valid):
                        out.append(
                            Disagreement(
                                "backend",
                                need.op,
                                code,
                                kv_name,
                                base,
                                "valid" if mine else "invalid",
                                "valid" if base in valid else "invalid",
                            )
                        )
    return out


def weight_disagreements(catalog: Any) -> list[Disagreement]:
    build = _build(catalog)
    model: Model = catalog.models["llama-3.3-70b"]
    out: list[Disagreement] = []
    for fmt in build.weight_formats:
        if fmt.quant not in FORMATS:
            continue
        method, family = FORMATS[fmt.quant]
        minimum = QUANT["config_min_capability"][method]["min_capability"]
        first = QUANT["linear_kernels"][family]["first_supported_by_capability"]
        variant = Variant(id="probe", repo="probe/probe", quant=fmt.quant, publisher="official")
        for code_text, kernel in sorted(first.items()):
            code = int(code_text)
            hw = _gpu(catalog, code)
            if hw.compute_capability not in build.cuda_archs:
                continue
            result = build_gates.weight_format(model, variant, build, hw)
            ours = "fails" if result.outcome != "pass" else ("marlin" if result.details.via_fallback else "native")
            theirs = "fails" if code < minimum or kernel is None else ("marlin" if "Marlin" in kernel else "native")
            if ours != theirs:
                out.append(Disagreement("weights", fmt.quant, code, None, kernel, ours, theirs))
    return out


def _matches(entry: dict[str, Any], d: Disagreement) -> bool:
    return (
        entry["kind"] == d.kind
        and entry["subject"] == d.subject
        and d.capability in entry["capabilities"]
        and (entry.get("kv") is None or d.kv in entry["kv"])
        and (entry.get("backend") is None or d.backend == entry["backend"])
        and entry["catalog"] == d.catalog
        and entry["oracle"] == d.oracle
    )


@pytest.fixture(scope="module")
def disagreements(catalog):  # type: ignore[no-untyped-def]
    return attention_disagreements(catalog) + weight_disagreements(catalog)


def test_the_oracle_covers_what_the_catalog_needs(catalog):  # type: ignore[no-untyped-def]
    ops = {n.op for n in _shapes(catalog)}
    assert {"attention.gqa", "attention.mla", "attention.sparse_mla", "attention.sparse_mla_nope"} <= ops
    build = _build(catalog)
    assert {w.quant for w in build.weight_formats} & set(FORMATS) >= {"fp8", "fp8_block", "nvfp4", "mxfp4", "int4"}


def test_every_disagreement_with_the_engine_is_deliberate(disagreements):  # type: ignore[no-untyped-def]
    unexplained = [d for d in disagreements if not any(_matches(e, d) for e in DELIBERATE["differences"])]
    assert not unexplained, "catalog disagrees with vLLM 0.33.0's own code:\n" + "\n".join(map(str, unexplained))


def test_every_listed_difference_still_exists_and_is_sourced(disagreements):  # type: ignore[no-untyped-def]
    for entry in DELIBERATE["differences"]:
        assert entry["why"] and entry["sources"], entry
        assert any(_matches(entry, d) for d in disagreements), f"stale deliberate difference: {entry['why']}"


def test_users_read_the_runtime_bug_behind_a_difference(cli):  # type: ignore[no-untyped-def]
    """The NoPE FP8-KV difference on Hopper is a run-time failure: a Hopper plan says so, with the issue."""
    doc = cli("explain", "--format", "json", "--gpu", "h200", "--model", "glm-5.3-flash", "--engine", "vllm").json()
    notes = [n for p in doc["plans"] for n in p["notes"]]
    assert any("MLA kv_data_type torch.uint8 is not supported" in n and "#57713" in n for n in notes)
    flags = {f["flag"]: f["value"] for p in doc["plans"] for f in p["flags"] if p["deployment"] is None}
    assert flags.get("--kv-cache-dtype") == "bfloat16"
