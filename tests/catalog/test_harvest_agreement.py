"""The catalog stands on the harvested facts (data/harvest/): every official vLLM/SGLang release in it has
its release's own registry, and no hand-written fact contradicts one without a source saying why."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from recipegen.catalog import harvest

DATA = Path(__file__).resolve().parents[2] / "generator" / "data"


def _official(catalog, engine_id):
    return [b for b in catalog.engines[engine_id].builds if b.provenance == "official"]


def _explained(build, name):
    """A disagreement is kept only with a source of the build naming it and the harvest."""
    return any(name in (s.note or "") and "harvest" in (s.note or "") for s in build.sources)


@pytest.mark.parametrize("engine_id", ["vllm", "sglang"])
def test_every_official_release_has_a_harvested_registry(catalog, engine_id):
    missing = [b.id for b in _official(catalog, engine_id) if harvest.of(b) is None]
    assert not missing, (
        f"run: python scripts/harvest {' '.join(f'{engine_id}=={b[len(engine_id) + 1 :]}' for b in missing)}"
    )
    for build in _official(catalog, engine_id):
        facts = harvest.of(build)
        assert facts.sha256 and len(facts.sha256) == 64 and facts.methods["architectures"] == "read"
        assert not facts.failed, (build.id, facts.failed)


@pytest.mark.parametrize("engine_id", ["vllm", "sglang", "llama.cpp"])
def test_no_hand_written_fact_contradicts_the_harvest(catalog, engine_id):
    problems = []
    for build in _official(catalog, engine_id):
        facts = harvest.of(build)
        if facts is None:  # llama.cpp tags without a vendoring sdist are not harvested
            continue
        # (a kernel or defect limited to an architecture the release lacks is inherited and never reached)
        named = {*build.architectures}
        problems += [
            f"{build.id}: architecture {a} is not in its registry ({facts.read_from['architectures']})"
            for a in sorted(named)
            if a not in facts.architectures and not _explained(build, a)
        ]
        for kind, field in (("tool", "tool_parsers"), ("reasoning", "reasoning_parsers")):
            stated = getattr(build, field)
            if stated is None or kind in build.parsers_inherited:
                continue
            have = set(facts.parsers(kind) or ())
            problems += [
                f"{build.id}: {kind} parser {p} is not registered by the release"
                for p in stated
                if p not in have and not _explained(build, p)
            ]
            problems += [
                f"{build.id}: the release registers {kind} parser {p}, its file omits it" for p in have - {*stated}
            ]
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize(("engine_id", "release"), [("vllm", "0.33.0"), ("sglang", "0.5.23")])
def test_harvest_read_agrees_with_the_vocabulary_dumped_by_running_the_release(engine_id, release):
    """engine-cli/*.json was dumped by running the installed release (argparse objects); the harvest reads source."""
    dumped = json.loads((DATA / "engine-cli" / f"{engine_id}-{release}.json").read_text())
    facts = harvest.load(engine_id, release)
    options = harvest.flags(engine_id, release)
    assert facts is not None and options is not None
    registries = dumped["registries"]
    assert sorted(facts.parsers("tool") or ()) == sorted(
        {*registries["tool_call_parsers"]} | {"auto"} & {*facts.parsers("tool")}
    )
    assert sorted(facts.parsers("reasoning") or ()) == sorted(
        {*registries["reasoning_parsers"]} | {"auto"} & {*facts.parsers("reasoning")}
    )
    read, ran = set(options), set(dumped["options"])
    # reading source misses an option only where the release renames a field's CLI spelling at run time
    assert len(read & ran) >= 0.99 * len(ran), sorted(ran - read)


ORACLE = Path(__file__).resolve().parents[1] / "data" / "oracle"
# the oracle's names for the linear-kernel families the harvest keys by their vLLM table
ORACLE_FAMILY = {
    "fp8_w8a8": "fp8_w8a8_per_tensor_or_channel",
    "fp8_w8a16": "fp8_weight_only_w8a16",
    "wna16": "mixed_precision_wNa16_int4_int8",
}


def _oracle_key(case):
    shape = ("sparse_mla" if case["use_sparse"] else "mla") if case["use_mla"] else "gqa"
    heads = case["num_heads"] if case["use_mla"] else None
    profile = case["model_profile"] if case["use_mla"] else None
    return (case["capability"], shape, "plain", case["head_size"], case["kv_cache_dtype"], heads, profile)


def _ran_key(case):
    heads = case.get("heads_per_rank")
    return (
        case["capability"],
        case["shape"],
        case.get("variant", "plain"),
        case["head_size"],
        case["kv"],
        heads,
        case.get("profile"),
    )


def test_ran_attention_selector_agrees_with_the_oracle_case_by_case():
    """Both ran vLLM 0.33.0's own selector on simulated GPUs: the oracle (tests/data/oracle) and the harvester."""
    tables = harvest.ran("vllm", "0.33.0")
    assert (
        tables is not None and tables["method"] == "ran" and tables["sha256"] == harvest.load("vllm", "0.33.0").sha256
    )
    ran = {_ran_key(c): c for c in tables["attention_selector"]["cases"]}
    oracle = json.loads((ORACLE / "attn_oracle.json").read_text())
    assert oracle["version"] == tables["release"]
    differ = []
    for case in oracle["cases"]:
        mine = ran[_oracle_key(case)]
        if mine["order"] != case["priority_order"] or mine["valid"] != case["valid"]:
            differ.append(f"{_oracle_key(case)}: valid {mine['valid']} vs the oracle's {case['valid']}")
        elif mine["selected"] != case["selected"] or mine["rejected"] != case["invalid"]:
            differ.append(f"{_oracle_key(case)}: selected/reasons differ")
    assert len(oracle["cases"]) == 957 and not differ, "\n".join(differ)
    # beyond the oracle's grid: the head sizes of the catalog's models, sinks and sliding window
    extra = {k for k in ran if k[1] == "gqa" and (k[2] != "plain" or k[3] in (80, 96, 512))}
    assert len(extra) == 11 * (6 * 3 - 3) * 4


def test_ran_quantization_agrees_with_the_oracle():
    quant = harvest.ran("vllm", "0.33.0")["quantization"]
    oracle = json.loads((ORACLE / "quant_caps.json").read_text())
    strip = {m: {k: v for k, v in e.items() if k != "module"} for m, e in oracle["config_min_capability"].items()}
    assert {m: {k: v for k, v in e.items() if k != "module"} for m, e in quant["methods"].items()} == strip
    schemes = {k: v.get("min_capability") for k, v in oracle["scheme_min_capability"].items()}
    assert quant["schemes"] == {k: v for k, v in schemes.items() if isinstance(v, int)}
    assert set(quant["linear_kernels"]) == set(ORACLE_FAMILY) | (
        set(oracle["linear_kernels"]) - {*ORACLE_FAMILY.values()}
    )
    for family, table in quant["linear_kernels"].items():
        theirs = oracle["linear_kernels"][ORACLE_FAMILY.get(family, family)]
        assert table["candidates"] == theirs["candidates_in_priority_order"], family
        assert table["by_capability"] == theirs["is_supported_by_capability"], family
        assert table["first_supported"] == theirs["first_supported_by_capability"], family
    # what a user asks: Marlin is the FP8 path below Ada, native FP8 GEMM from 8.9 on
    assert quant["linear_kernels"]["fp8_w8a8"]["first_supported"]["86"].startswith("Marlin")
