"""The catalog stands on the harvested facts (data/harvest/): every official vLLM/SGLang release in it has
its release's own registry, and no hand-written fact contradicts one without a source saying why."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from recipegen.catalog import harvest
from recipegen.catalog.capability import capability_set

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


# a hand-written attention kernel's op -> the selector case it is: (shape, GQA variant or MLA head size)
RAN_SHAPE = {
    "attention.gqa": ("gqa", "plain"),
    "attention.sinks": ("gqa", "sinks"),
    "attention.mla": ("mla", 576),
    "attention.sparse_mla": ("sparse_mla", 576),
    "attention.sparse_mla_nope": ("sparse_mla", 512),
}
# the catalog's KV dtype -> vLLM's --kv-cache-dtype (a 16-bit cache is the model's own dtype: auto); fp8_e5m2 not asked.
# The runs asked with bf16 weights; no run release's selector turns on which 16-bit dtype it is (every backend lists
# both), so an fp16 cache is read from the same `auto` cases: below 8.0, where vLLM casts bf16 weights to fp16 and the
# catalog's kernels state fp16 alone, that is the only 16-bit cache there is
RAN_KV = {"bf16": "auto", "fp16": "auto", "fp8_e4m3": "fp8_e4m3", "fp8_ds_mla": "fp8_ds_mla"}


def _ours(kv, cap):
    """The catalog's KV dtype a run case's --kv-cache-dtype stands for on that GPU (auto: bf16 from 8.0, else fp16)."""
    return ("bf16" if cap >= 80 else "fp16") if kv == "auto" else next(k for k, v in RAN_KV.items() if v == kv)


GQA_HEADS = (64, 80, 96, 128, 256)  # the catalog's GQA models' head sizes (512 is DeepSeek-V4's own path)
PROFILE_NOPE = {"deepseek_v3_dense": 128, "deepseek_v32_sparse": 128, "glm5_sparse_nope192": 192, "nope512_sparse": 256}


def _cell(cases, op, cap, kv, heads=GQA_HEADS, nope=None):
    """The selector cases a kernel fact's (op, capability, KV dtype) stands for."""
    shape, which = RAN_SHAPE[op]
    found = []
    for case in cases:
        if (case["capability"], case["shape"], case["kv"]) != (cap, shape, kv):
            continue
        if shape == "gqa" and (case["variant"] != which or case["head_size"] not in heads):
            continue
        if shape != "gqa" and case["head_size"] != which:
            continue
        profile = case.get("profile", "none")
        if which == 512 and shape == "sparse_mla" and profile != "nope512_sparse":
            continue  # the 512-wide sparse shape is the NoPE model's; without its dims the checks are skipped
        if nope and profile != "none" and PROFILE_NOPE[profile] not in nope:
            continue
        found.append(case)
    return found


def _sourced(kernel, *words):
    texts = [kernel.note or "", *(s.note or "" for s in kernel.sources)]
    return any("harvest" in t and all(w in t for w in words) for t in texts)


# every release whose selector and quantization code was run (a committed <release>.ran.json)
def _ran_releases(engine_id):
    return sorted(
        (p.name[: -len(".ran.json")] for p in (DATA / "harvest" / engine_id).glob("*.ran.json")),
        key=lambda v: tuple(int(x) for x in v.split(".") if x.isdigit()),
    )


RAN_RELEASES = _ran_releases("vllm")
SGLANG_RAN_RELEASES = _ran_releases("sglang")


def _selector_kind(release):
    """How a run vLLM release's selector answered: `candidates` (valid backends, order, reasons) or `chain` (0.11.0 and
    older: the one class its if/else chain returns), None without a selector table."""
    selector = (harvest.ran("vllm", release) or {}).get("attention_selector")
    return None if selector is None else "chain" if "chain" in selector else "candidates"


def _hand_written(engine_id):
    """The releases the catalog has a hand-written build of; one that is only harvested (no release file, 0.32.0)
    has no hand-written fact to compare, and its ran file is checked by the test of committed ran files."""
    from recipegen.catalog.load import load

    return {b.id.removeprefix(f"{engine_id}-") for b in load().engines[engine_id].builds}


# each comparison runs on the releases whose tables it reads, so no parameter is a skip
COMPARED_RELEASES = [r for r in RAN_RELEASES if r in _hand_written("vllm")]
CANDIDATE_RELEASES = [r for r in COMPARED_RELEASES if _selector_kind(r) == "candidates"]
CHAIN_RELEASES = [r for r in COMPARED_RELEASES if _selector_kind(r) == "chain"]
QUANT_RELEASES = [r for r in CANDIDATE_RELEASES + CHAIN_RELEASES if "quantization" in (harvest.ran("vllm", r) or {})]


@pytest.mark.parametrize(("engine_id", "first"), [("vllm", "0.33.0"), ("sglang", "0.5.21")])
def test_every_committed_ran_file_is_named_by_its_release_facts(engine_id, first):
    assert first in _ran_releases(engine_id)
    for release in _ran_releases(engine_id):
        facts = harvest.load(engine_id, release)
        assert facts is not None and facts.ran_file == f"{release}.ran.json", release
        tables = harvest.ran(engine_id, release)
        assert tables is not None and tables["release"] == release and tables["sha256"] == facts.sha256, release
        assert tables["engine"] == engine_id and tables["method"] == "ran"
        assert {t for t in harvest.RAN_TABLES if t in tables} == {t for t in harvest.RAN_TABLES if t in facts.methods}


def _ran_build(release):
    """The catalog's vLLM build of a release that was run, and the release's selector cases it answered
    (a case the release's selector could not be asked, `error`, says nothing either way)."""
    from recipegen.catalog.capability import Capability
    from recipegen.catalog.load import load

    build = next((b for b in load().engines["vllm"].builds if b.id == f"vllm-{release}"), None)
    tables = harvest.ran("vllm", release)
    assert build is not None and tables is not None and "attention_selector" in tables, release
    cases = [c for c in tables["attention_selector"]["cases"] if "valid" in c]
    return build, cases, Capability


@pytest.mark.parametrize("release", CANDIDATE_RELEASES)
def test_every_hand_written_attention_kernel_is_one_its_release_s_selector_accepts(release):
    """A kernel fact (backend, op, GPU, KV dtype) of a release that was run and that its own selector rejects is
    removed, or kept with a source naming the harvest and why (a host-dependent check, a defect)."""
    build, cases, capability = _ran_build(release)
    agree, problems, explained = 0, [], 0
    for kernel in build.kernels:
        if kernel.provides not in RAN_SHAPE:
            continue  # DeepSeek-V4, linear attention, indexer: not chosen by the platform's selector
        backend = kernel.name.split(" (")[0]
        for cap in sorted({c["capability"] for c in cases}):
            if capability(cap // 10, cap % 10) not in kernel.sm:
                continue
            for kv in dict.fromkeys(RAN_KV[k] for k in kernel.kv_dtypes or ["bf16"] if k in RAN_KV):
                cell = _cell(cases, kernel.provides, cap, kv, kernel.head_sizes or GQA_HEADS, kernel.qk_nope_head_dims)
                if not cell:
                    continue  # not asked of this release (its selector has no such input)
                if any(backend in c["valid"] for c in cell):
                    agree += 1
                elif _sourced(kernel):
                    explained += 1
                else:
                    why = sorted({r for c in cell for r in c["rejected"].get(backend, [])})
                    if backend not in {b for c in cell for b in c["order"]}:
                        why = [f"{backend} is not a candidate of the release on this GPU"]
                    problems.append(f"{kernel.name} {kernel.provides} sm_{cap} kv {kv}: rejected ({'; '.join(why)})")
    assert not problems, f"vllm {release}:\n" + "\n".join(problems)
    if release == "0.33.0":
        assert agree >= 120 and explained == 4  # FLASHINFER sinks on 10.0/10.3 need FlashInfer's cubins (its source)


@pytest.mark.parametrize("release", CANDIDATE_RELEASES)
def test_where_a_release_s_selector_accepts_a_shape_the_catalog_has_a_kernel_or_a_sourced_reason(release):
    """The other way round: an (op, GPU, KV dtype) with a valid backend but no hand-written kernel would be a
    refusal the release does not make. Below 8.0 a 16-bit cache is fp16 (vLLM casts bf16 weights there)."""
    build, cases, capability = _ran_build(release)
    checked, problems = 0, []
    for op in RAN_SHAPE:
        for cap in sorted({c["capability"] for c in cases}):
            for ours, kv in RAN_KV.items():
                if kv == "auto" and ours != _ours(kv, cap):
                    continue
                valid = {b for c in _cell(cases, op, cap, kv) for b in c["valid"]}
                if not valid:
                    continue
                checked += 1
                gpu = capability(cap // 10, cap % 10)
                kernels = [k for k in build.kernels if k.provides == op and gpu in k.sm]
                if any(k.kv_dtypes is None or ours in k.kv_dtypes for k in kernels):
                    continue
                # kept out on purpose: a kernel of a valid backend names this KV dtype where it says why
                spelled = ("bf16", "auto") if ours == "bf16" else (ours,)
                if any(
                    k.name.split(" (")[0] in valid and any(_sourced(k, w) or w in (k.note or "") for w in spelled)
                    for k in kernels
                ):
                    continue
                problems.append(f"{op} sm_{cap} kv {kv}: the release accepts {sorted(valid)}, the catalog has none")
    assert not problems, f"vllm {release}:\n" + "\n".join(problems)
    if release == "0.33.0":
        assert checked >= 60


def _chain_build(release):
    """The catalog's build of a release whose selector walks an if/else chain (0.11.0 and older: one class path
    returned, no candidate list, no reasons), its chain description and its cases with an answer."""
    from recipegen.catalog.capability import Capability
    from recipegen.catalog.load import load

    build = next((b for b in load().engines["vllm"].builds if b.id == f"vllm-{release}"), None)
    selector = (harvest.ran("vllm", release) or {}).get("attention_selector", {})
    assert build is not None and "chain" in selector, release
    return build, selector, Capability


# the shapes compared for a chain release: head sizes of the catalog's models (gpt-oss, the sink model, is 64 wide)
# and the --kv-cache-dtype values its CLI takes (fp8_ds_mla is no choice before 0.12.0: DSA sets it itself)
CHAIN_HEADS = {
    "attention.gqa": GQA_HEADS,
    "attention.sinks": (64,),
    "attention.mla": (576,),
    "attention.sparse_mla": (576,),
}
CHAIN_KV = {"attention.gqa": ("auto", "fp8_e4m3"), "attention.sinks": ("auto", "fp8_e4m3")}
CHAIN_KV |= {"attention.mla": ("auto", "fp8_e4m3"), "attention.sparse_mla": ("auto",)}


@pytest.mark.parametrize("release", CHAIN_RELEASES)
def test_a_chain_release_s_attention_kernels_are_backends_it_has_for_shapes_it_takes(release):
    """A hand-written attention kernel of a release whose selector is a chain names a backend of that release (its
    `_Backend` enum or a class the chain returned) for a shape its selector takes (0.10.x has no sparse-MLA input);
    else it is removed, or a source naming the harvest says why."""
    build, selector, _ = _chain_build(release)
    have = set(selector["chain"]["backends"]) | {
        b for c in selector["cases"] for b in [c.get("selected"), *c.get("by_block_size", {}).values()] if b
    }
    asked = {c["shape"] for c in selector["cases"] if "error" not in c}
    problems = []
    for kernel in build.kernels:
        if kernel.provides not in RAN_SHAPE or _sourced(kernel):
            continue
        backend = kernel.name.split(" (")[0]
        if backend not in have:
            problems.append(f"{kernel.name} ({kernel.provides}): not an attention backend of vllm {release}")
        elif RAN_SHAPE[kernel.provides][0] not in asked:
            problems.append(f"{kernel.name} ({kernel.provides}): the selector of vllm {release} takes no such shape")
    assert not problems, f"vllm {release}:\n" + "\n".join(problems)


@pytest.mark.parametrize("release", COMPARED_RELEASES)
def test_the_backend_each_release_picks_is_a_kernel_of_the_catalog_there(release):
    """Per GPU (7.0 to 12.1), KV dtype and head size: the backend the release's selector picked (a chain release: at
    its own block size) is a hand-written kernel of that shape there, so a plan names what the server runs; or that
    kernel says with a source naming the harvest why the catalog keeps it out (a check at backend start-up the
    selector skips, a GPU its kernels are not built for); or the kernel that runs instead says why the pick is not
    what users get (a V0 fallback, a defect of the pinned library). Which of several kernels a plan names is
    selector_picks.py's business, tested through the CLI."""
    build, _, capability = _ran_build(release)
    selector = harvest.ran("vllm", release)["attention_selector"]
    checked, problems = 0, []
    by_cell: dict = {}
    for case in selector["cases"]:
        op = next(
            (
                o
                for o, (shape, which) in RAN_SHAPE.items()
                if (case["shape"], case.get("variant", case["head_size"])) == (shape, which)
            ),
            None,
        )
        if op not in CHAIN_HEADS or case["kv"] not in CHAIN_KV[op]:
            continue
        if case["head_size"] not in CHAIN_HEADS[op] or not case.get("selected"):
            continue
        if case.get("profile", "none") not in ("none", "deepseek_v3_dense", "deepseek_v32_sparse"):
            continue  # a dense-MLA stand-in with DSA's index_topk gets the sparse block size: not a dense model
        key = (op, case["capability"], case["kv"], case["head_size"])
        by_cell.setdefault(key, set()).add(case["selected"])
    for (op, cap, kv, head), chosen in sorted(by_cell.items()):
        gpu = capability(cap // 10, cap % 10)
        ours = _ours(kv, cap)
        serving = [
            k
            for k in build.kernels
            if k.provides == op
            and gpu in k.sm
            and (k.kv_dtypes is None or ours in k.kv_dtypes)
            and (k.head_sizes is None or head in k.head_sizes)
        ]
        checked += 1
        if chosen & {k.name.split(" (")[0] for k in serving}:
            continue
        spelled = ("bf16", "auto") if ours == "bf16" else (ours,)
        # kept out with a reason: the KV dtype where the kernel serves this GPU, else the GPU itself
        kept_out = [
            k
            for k in build.kernels
            if k.provides == op
            and k.name.split(" (")[0] in chosen
            and any(_sourced(k, w) for w in (spelled if gpu in k.sm else (f"sm_{cap}",)))
        ]
        # or what runs instead: a kernel on this GPU, or one of the chosen backend, says with a source naming the
        # harvest, the backend, the GPU (and the op, if it is another op's kernel) why the chain's answer is not what
        # users get here (a V0 fallback the chain, asked for V1, does not see; an argument the backend swallows)
        instead = [
            k
            for k in build.kernels
            if gpu in k.sm or k.name.split(" (")[0] in chosen
            if any(_sourced(k, c, f"sm_{cap}", *(() if k.provides == op else (op.split(".")[1],))) for c in chosen)
        ]
        if not kept_out and not instead:
            problems.append(
                f"{op} sm_{cap} kv {kv} head {head}: the release chose {sorted(chosen)}, the catalog has "
                f"{sorted({k.name.split(' (')[0] for k in serving})}"
            )
    assert not problems, f"vllm {release}:\n" + "\n".join(problems)
    assert checked >= 40


def _marlin_defect(build, quant, gpu):
    """A known defect of the build that explains why the release's own kernel table does not pick Marlin where
    the catalog serves the format through it: it hits this format on this GPU, its workaround passes the Marlin
    backend, and a source names the harvest."""
    return any(
        (d.quants is None or quant in d.quants)
        and (d.sm is None or gpu in d.sm)
        and any(a.value == "marlin" for a in d.workaround_args)
        and any("harvest" in (s.note or "") for s in d.sources)
        for d in build.defects
    )


# weight format -> (its GEMM family in the ran table, the --quantization method whose minimum gates it)
RAN_QUANT = {"fp8": ("fp8_w8a8", "fp8"), "fp8_block": ("fp8_block", "fp8"), "nvfp4": ("nvfp4", "modelopt_fp4")}
RAN_QUANT["mxfp4"] = ("mxfp4", "mxfp4")


@pytest.mark.parametrize("release", QUANT_RELEASES)
def test_hand_written_marlin_fallbacks_are_where_the_release_s_kernel_table_falls_back(release):
    """Per GPU from the method's minimum on: the release's first supported GEMM kernel is Marlin exactly where the
    catalog lists a Marlin fallback (MoE-only fallbacks aside: the linear table does not choose experts), and the
    lowest GPU the catalog serves the format on is the method's get_min_capability(). A family the release's
    kernel table does not hold (older releases choose some GEMMs outside it) is not compared."""
    build, _, capability = _ran_build(release)
    quant = harvest.ran("vllm", release).get("quantization")
    assert quant is not None, release
    checked, problems = 0, []
    for fmt in build.weight_formats:
        if fmt.quant not in RAN_QUANT:
            continue
        family, method = RAN_QUANT[fmt.quant]
        minimum = quant["methods"].get(method, {}).get("min_capability")
        if minimum is None or family not in quant["linear_kernels"]:
            continue
        marlin = [f for f in fmt.fallbacks if f.kernel.startswith("Marlin") and "MoE" not in f.kernel]
        served = [
            c
            for c in quant["capabilities"]
            if any(capability(c // 10, c % 10) in s for s in (fmt.native, *(f.sm for f in fmt.fallbacks)) if s)
        ]
        # the lowest capability of the run from the minimum on (a run of some capabilities, `--caps`, may not
        # have asked the minimum itself)
        lowest = min((c for c in quant["capabilities"] if c >= minimum), default=None)
        if served and min(served) != lowest and not _sourced(fmt, method):
            problems.append(f"{fmt.quant}: the catalog serves it from sm_{min(served)}, {method} needs {minimum}")
        for cap, first in quant["linear_kernels"][family]["first_supported"].items():
            if int(cap) < minimum:
                continue
            checked += 1
            gpu = capability(int(cap) // 10, int(cap) % 10)
            if (
                (first or "").startswith("Marlin") != any(gpu in f.sm for f in marlin)
                and not _sourced(fmt, cap)
                and not _marlin_defect(build, fmt.quant, gpu)
            ):
                problems.append(f"{fmt.quant} sm_{cap}: the release's first {family} kernel is {first}")
    assert not problems, f"vllm {release}:\n" + "\n".join(problems)
    if release == "0.33.0":
        assert checked == 10 + 10 + 10 + 9  # fp8, fp8 block, NVFP4 from 7.5; MXFP4 from 8.0


@pytest.mark.parametrize("release", QUANT_RELEASES)
def test_a_named_native_kernel_is_the_one_its_release_s_kernel_table_picks(release):
    """Where the catalog names the kernel a weight format runs natively on (`native_kernels`), that is the release's
    first supported kernel of the format's GEMM family on each GPU it was run on (the class vLLM logs as "Selected
    …"), named in the kernel or its note, unless a source naming the harvest and the GPU says why not."""
    build, _, capability = _ran_build(release)
    quant = harvest.ran("vllm", release).get("quantization")
    assert quant is not None, release
    checked, problems = 0, []
    for fmt in build.weight_formats:
        table = quant["linear_kernels"].get(RAN_QUANT.get(fmt.quant, ("",))[0])
        if table is None:
            continue
        for cap, first in table["first_supported"].items():
            gpu = capability(int(cap) // 10, int(cap) % 10)
            named = next((k for k in fmt.native_kernels if gpu in k.sm), None)
            if named is None:
                continue
            checked += 1
            if (first is None or first not in f"{named.kernel} {named.note or ''}") and not _sourced(named, cap):
                problems.append(f"{fmt.quant} sm_{cap}: the catalog names {named.kernel}, the release picks {first}")
    assert not problems, f"vllm {release}:\n" + "\n".join(problems)
    if release == "0.33.0":
        assert checked == 6  # block FP8 on 9.0, 10.0, 10.3, 11.0, 12.0, 12.1


# SGLang: the release's ServerArgs resolved per stand-in model (sglang_probe.py). A hand-written attention kernel's
# op -> the shapes it serves; the catalog's KV dtype -> the --kv-cache-dtype asked (fp8_e5m2 is not asked)
SGLANG_SHAPES = {
    "attention.gqa": ("gqa",),
    "attention.sinks": ("sinks",),
    "attention.mla": ("mla",),
    "attention.sparse_mla": ("sparse_mla", "sparse_mla_glm"),
}
SGLANG_KV = {"bf16": "bfloat16", "fp8_e4m3": "fp8_e4m3"}


def _sglang_build(release):
    """The catalog's build of a run SGLang release: its hand-written file's, else the one made from its harvested code
    (0.5.22, 0.5.23: no release file; kernels read from the wheel or inherited from the file below), as `--build
    sglang==<release>` makes it — an inherited kernel fact is held against the release's own run as a written one is."""
    from recipegen.catalog.harvested_builds import adopt
    from recipegen.catalog.load import load

    catalog = load()
    build = next((b for b in catalog.engines["sglang"].builds if b.id == f"sglang-{release}"), None)
    return build or adopt(catalog, "sglang", release)


def _sglang_ran(release):
    from recipegen.catalog.capability import Capability

    build = _sglang_build(release)
    tables = harvest.ran("sglang", release)
    assert build is not None and tables is not None and "attention_selector" in tables, release
    return build, tables["attention_selector"], Capability


def _build_says(build, *words):
    """A source of the build itself (its compiled targets, a check at start-up) naming the harvest and the words."""
    return any("harvest" in (s.note or "") and all(w in (s.note or "") for w in words) for s in build.sources)


def _targets_say(build, capability):
    """Why the build does not start on this GPU: a source of the build naming the harvest and the GPU, or of the
    release file it inherits its `cuda_archs` from unchanged (a build made from harvested code names the file it was
    carried from in its notes)."""
    from recipegen.catalog.load import load

    builds = {b.id: b for b in load().engines[build.id.split("-")[0]].builds}
    carried = re.search(
        r"(?:inherited|carried) from (\S+?)[ ,)]", " ".join([*build.notes, *(s.note or "" for s in build.sources)])
    )
    seen, parent_id = build, build.extends or (carried.group(1) if carried and build.id not in builds else None)
    while seen is not None:
        if _build_says(seen, f"sm_{capability}"):
            return True
        parent = builds.get(parent_id or "")
        if parent is None or parent.cuda_archs != seen.cuda_archs:
            return False
        seen, parent_id = parent, parent.extends
    return False


def _backends(kernel):
    """The backends a kernel fact names: `fa3 (MLA)` -> {fa3}; `flashmla_sparse + fa3 (DSA auto)` -> both."""
    return set(kernel.name.split(" (")[0].split(" + "))


@pytest.mark.parametrize("release", SGLANG_RAN_RELEASES)
def test_every_hand_written_sglang_attention_kernel_is_one_its_release_accepts(release):
    """A kernel fact (backend, op, GPU, KV dtype) whose backend `--attention-backend` names is asked of the release:
    its resolution must keep that backend (not refuse it, not switch away), or a source naming the harvest says why.
    The DSA kernels are SGLang's own picks inside `dsa`, checked against its defaults below."""
    build, selector, capability = _sglang_ran(release)
    asked = {c["asked"] for c in selector["cases"]}
    agree, problems = 0, []
    for kernel in build.kernels:
        backend = kernel.name.split(" (")[0]
        if kernel.provides not in SGLANG_SHAPES or backend not in asked or kernel.provides == "attention.sparse_mla":
            continue
        for case in selector["cases"]:
            cap, kv = case["capability"], case["kv"]
            if case["asked"] != backend or case["shape"] not in SGLANG_SHAPES[kernel.provides]:
                continue
            if "error" in case:  # the environment could not ask it (a library that does not load): no answer
                continue
            if capability(cap // 10, cap % 10) not in kernel.sm or kv not in {
                SGLANG_KV[k] for k in kernel.kv_dtypes or ["bf16"] if k in SGLANG_KV
            }:
                continue
            if case.get("resolved", {}).get("attention_backend") == backend:
                agree += 1
            elif not _sourced(kernel, f"sm_{cap}"):
                why = selector["reasons"][case["refused"]] if "refused" in case else f"resolved {case['resolved']}"
                problems.append(f"{kernel.name} {kernel.provides} sm_{cap} kv {kv}: {why}")
    assert not problems, f"sglang {release}:\n" + "\n".join(problems)
    assert agree >= 20


@pytest.mark.parametrize("release", SGLANG_RAN_RELEASES)
def test_the_backend_sglang_picks_by_default_is_a_kernel_of_the_catalog(release):
    """Where no backend is asked, the release's own pick (for DSA its prefill and decode kernels, and the KV dtype it
    settles on) on each GPU it was run on is a hand-written kernel of that op there: a plan then launches what SGLang
    runs, and says so. Where the catalog keeps a pick out (it fails on that GPU), that kernel's source names the
    harvest and the GPU. On a GPU the build does not start on at all (outside its `cuda_archs`: sgl-kernel without
    code for it from 0.5.3, ModelRunner's "SGLang only supports sm75 and above" on 7.0, neither of which the
    resolution reaches) a pick the catalog lacks is never run, where a source of the build (or of the release file
    its targets are inherited from) names the harvest and that GPU."""
    build, selector, capability = _sglang_ran(release)
    checked, stopped, problems = 0, 0, []
    for case in selector["cases"]:
        if case["asked"] is not None or "resolved" not in case:
            continue
        gpu = capability(case["capability"] // 10, case["capability"] % 10)
        op = next((o for o, shapes in SGLANG_SHAPES.items() if case["shape"] in shapes), None)
        if op is None:
            continue
        resolved, cap = case["resolved"], case["capability"]
        kv = "bf16" if resolved["kv_cache_dtype"] in ("auto", "bfloat16") else resolved["kv_cache_dtype"]
        dsa = resolved["attention_backend"]  # `nsa` in 0.5.12 and older, its fields nsa_*_backend (0.5.3: nsa_*)
        picked = (
            {resolved.get(f"{dsa}_{p}_backend") or resolved[f"{dsa}_{p}"] for p in ("prefill", "decode")}
            if dsa in ("dsa", "nsa")
            else {resolved["attention_backend"]}
        )
        arch = selector["shapes"][case["shape"]]
        checked += 1
        mine = [k for k in build.kernels if k.provides == op and _backends(k) == picked]
        # a kernel stating no KV dtypes takes any, as the planner reads it (SGLang's 7.5 flashinfer: the cache follows
        # the model's dtype, and FlashInfer converts an FP8 cache in software below 9.0)
        if not any(
            gpu in k.sm
            and (k.kv_dtypes is None or kv in k.kv_dtypes)
            and (not k.architectures or arch in k.architectures)
            for k in mine
        ) and not any(_sourced(k, f"sm_{cap}") for k in mine):  # kept out: the kernel says why on this GPU
            if gpu not in build.cuda_archs and _targets_say(build, cap):
                stopped += 1  # the server stops before attention runs: the plan is refused at the platform gate
                continue
            problems.append(f"{op} ({arch}) sm_{cap} kv {kv}: SGLang picks {' + '.join(sorted(picked))}")
    assert not problems, f"sglang {release}:\n" + "\n".join(sorted(set(problems)))
    # each op's first stand-in resolves by default with each KV dtype on each GPU where the release registers its
    # architecture (DeepSeek-V3.2's DSA arrived in 0.5.3, an older release refuses its model type; a run may ask
    # fewer GPUs); one default a GPU may be a refusal instead (0.5.9's pinned Transformers refuses GLM-5's config);
    # on the GPUs the build starts on, that many agree with the catalog rather than being stopped
    registered = set(harvest.load("sglang", release).architectures)
    loaded = [shapes[0] for shapes in SGLANG_SHAPES.values() if selector["shapes"][shapes[0]] in registered]
    runs = [c for c in selector["capabilities"] if capability(c // 10, c % 10) in build.cuda_archs]
    assert checked >= (3 * len(loaded) - 1) * len(selector["capabilities"])
    assert checked - stopped >= (3 * len(loaded) - 1) * len(runs)


# an attention op -> the harvested flags whose choices name its kernels: --attention-backend, and for DSA the prefill
# and decode kernel choices (`nsa` in 0.5.12 and older, `dsa` from 0.5.13)
# 0.5.3, the first release with DSA, names its kernel flags --nsa-prefill / --nsa-decode
SGLANG_DSA_FLAGS = (
    *(f"--{n}-{p}-backend" for n in ("dsa", "nsa") for p in ("prefill", "decode")),
    "--nsa-prefill",
    "--nsa-decode",
)
SGLANG_CHOICE_FLAGS = {
    "attention.gqa": ("--attention-backend",),
    "attention.sinks": ("--attention-backend",),
    "attention.mla": ("--attention-backend",),
    "attention.dsv4": ("--attention-backend",),
    "attention.sparse_mla": SGLANG_DSA_FLAGS,
    "attention.sparse_mla_nope": SGLANG_DSA_FLAGS,
}
SGLANG_OP_ONLY_FOR = {"attention.dsv4": "DeepseekV4ForCausalLM"}  # its own attention: no other model reaches it


def test_every_sglang_attention_kernel_is_a_backend_its_release_offers(catalog):
    """A hand-written attention kernel of an official SGLang release names backends of that release's own choices
    (its harvested CLI options): a plan passes them by name, and a name the release lacks stops the server at start.
    A kernel inherited from a newer file is the usual way one slips in. An op only an architecture the release does
    not register needs (DeepSeek-V4's own attention) is never reached, so its kernel is not asked."""
    problems, checked = [], 0
    for build in _official(catalog, "sglang"):
        facts = harvest.of(build)
        flags = harvest.flags("sglang", facts.release) if facts else None
        if not flags:
            continue
        for kernel in build.kernels:
            only = SGLANG_OP_ONLY_FOR.get(kernel.provides)
            if kernel.provides not in SGLANG_CHOICE_FLAGS or (only and only not in facts.architectures):
                continue
            offered = {c for f in SGLANG_CHOICE_FLAGS[kernel.provides] for c in (flags.get(f) or {}).get("choices", ())}
            if not offered:  # the release reads no choices for that flag: nothing to hold the name against
                continue
            checked += 1
            problems += [
                f"{build.id}: {kernel.name} ({kernel.provides}) names {name}, not among its release's "
                f"{'/'.join(f for f in SGLANG_CHOICE_FLAGS[kernel.provides] if f in flags)} choices"
                for name in sorted(_backends(kernel) - offered)
                if not _sourced(kernel, name, facts.release)
            ]
    assert not problems, "\n".join(problems)
    assert checked >= 300


# weight format -> the --quantization method whose get_min_capability() gates it in SGLang
SGLANG_QUANT = {"fp8": "fp8", "fp8_block": "fp8", "nvfp4": "modelopt_fp4", "mxfp4": "mxfp4"}


@pytest.mark.parametrize("release", SGLANG_RAN_RELEASES)
def test_sglang_weight_formats_start_at_the_method_minimum_and_fall_back_to_marlin_where_it_does(release):
    """The lowest GPU the catalog serves a format on is its method's get_min_capability(); FP8 runs as Marlin W8A16
    exactly where the release's can_auto_enable_marlin_fp8() says so."""
    from recipegen.catalog.capability import Capability

    build = _sglang_build(release)
    quant = harvest.ran("sglang", release)["quantization"]
    checked, problems = 0, []
    for fmt in build.weight_formats:
        method = SGLANG_QUANT.get(fmt.quant)
        if method is not None and method not in quant["methods"]:  # a format inherited from a later release
            checked += 1
            if not _sourced(fmt, method):
                problems.append(f"{fmt.quant}: the release has no --quantization {method}")
            continue
        minimum = quant["methods"].get(method or "", {}).get("min_capability")
        if minimum is None:
            continue
        served = [
            c
            for c in quant["capabilities"]
            if any(Capability(c // 10, c % 10) in s for s in (fmt.native, *(f.sm for f in fmt.fallbacks)) if s)
        ]
        checked += 1
        if served and min(served) != minimum and not _sourced(fmt, method):
            problems.append(f"{fmt.quant}: the catalog serves it from sm_{min(served)}, {method} needs {minimum}")
        if method != "fp8":
            continue
        for cap, kernels in quant["by_capability"].items():
            gpu = Capability(int(cap) // 10, int(cap) % 10)
            marlin = any(f.kernel.startswith("Marlin FP8") and gpu in f.sm for f in fmt.fallbacks)
            # 0.5.0rc2 and older have no can_auto_enable_marlin_fp8(): FP8 Marlin only when asked for, never chosen
            auto = kernels.get("fp8_marlin_auto", False)
            if int(cap) >= minimum and marlin != auto and not _sourced(fmt, "Marlin FP8", f"sm_{cap}"):
                problems.append(f"{fmt.quant} sm_{cap}: Marlin FP8 {marlin}, the release {auto}")
    assert not problems, f"sglang {release}:\n" + "\n".join(problems)
    assert checked >= (3 if "mxfp4" not in quant["methods"] else 4)  # fp8, fp8_block, nvfp4 (+ mxfp4 from 0.5.0rc2)


def test_the_sglang_releases_that_choose_in_the_model_runner_were_run():
    """The 0.4 line and 0.5.0rc2-0.5.3 pick their default attention backend in ModelRunner (the probe's second step):
    each has a run, on Ampere and on Ada at least, so the tests above hold their kernels, default picks and FP8 rules
    against their own code, not against a newer release they inherit from."""
    for release in ("0.4.8", "0.4.9", "0.4.10", "0.5.0rc2", "0.5.2", "0.5.3"):
        assert release in SGLANG_RAN_RELEASES, f"python scripts/harvest sglang=={release} --run"
        tables = harvest.ran("sglang", release)
        assert {80, 86, 89, 90} <= set(tables["attention_selector"]["capabilities"]), release
        assert "model_specific_adjustment" in tables["attention_selector"]["from"], release
        assert {80, 86} <= set(tables["quantization"]["capabilities"]), release


def test_both_kinds_of_vllm_selector_were_run():
    assert {"0.33.0", "0.13.0", "0.11.1"} <= set(CANDIDATE_RELEASES)
    assert {"0.11.0", "0.10.2", "0.10.1", "0.10.0"} <= set(CHAIN_RELEASES)
    assert set(QUANT_RELEASES) == set(COMPARED_RELEASES)


def _ran_module() -> Any:
    """scripts/harvest/ran.py, which writes the summaries the planner reads from each committed run."""
    import importlib
    import sys

    sys.path.insert(0, str(DATA.parents[1] / "scripts" / "harvest"))
    try:
        return importlib.import_module("ran")
    finally:
        sys.path.pop(0)


@pytest.mark.parametrize("release", CANDIDATE_RELEASES)
def test_the_selected_summary_a_facts_file_keeps_is_its_ran_file_s(release):
    """The planner names kernels from the summary beside the facts file (<release>.selected.json; scripts/harvest
    --summaries writes it from the committed run); it must say what the run says, case by case."""
    ran = _ran_module()
    tables = json.loads((DATA / "harvest" / "vllm" / f"{release}.ran.json").read_text())
    facts = harvest.load("vllm", release)
    assert facts is not None and facts.selected_file == f"{release}.selected.json"
    picks = harvest.picks("vllm", release)
    assert picks and picks == ran.selected(tables["attention_selector"]["cases"])


def test_no_facts_file_keeps_the_selected_summary_inline():
    """The picks per case moved out of the facts file every request reads (they were ~40 % of its bytes); a facts file
    merged from a run made before the move still carries them: `python scripts/harvest ENGINE==VERSION --summaries`
    moves them to the side file."""
    inline = [
        p.name
        for p in (DATA / "harvest").glob("*/*.json")
        if not p.name.endswith(harvest.SIBLINGS)
        and "selected" in json.loads(p.read_text()).get("tables", {}).get("attention_selector", {})
    ]
    assert not inline, f"rerun scripts/harvest --summaries for {inline}"


@pytest.mark.parametrize("release", SGLANG_RAN_RELEASES)
def test_the_sglang_default_picks_a_facts_file_keeps_are_its_ran_file_s(release):
    """A plan names the kernel an SGLang release picks by default from the `picked` summary in its facts file
    (selector_picks.py); scripts/harvest --summaries writes it from the committed run and it must say what the run
    says, shape by shape."""
    ran = _ran_module()
    tables = json.loads((DATA / "harvest" / "sglang" / f"{release}.ran.json").read_text())
    facts = harvest.load("sglang", release)
    assert facts is not None and facts.picked == ran.picked(tables["attention_selector"]["cases"])
    assert facts.picked["gqa"], release


def test_the_newest_sglang_releases_ran_on_every_capability_and_are_compared():
    """0.5.23–0.5.18 (0.5.22 has no release file) were run on all 11 GPUs, 0.5.19's and 0.5.18's first runs on four
    and six with the rest merged into them, so the tests above hold their builds — the inherited one as `--build
    sglang==0.5.22` makes it — against every capability."""
    every = [70, 75, 80, 86, 89, 90, 100, 103, 110, 120, 121]
    for release in ("0.5.18", "0.5.19", "0.5.20", "0.5.21", "0.5.22", "0.5.23"):
        assert release in SGLANG_RAN_RELEASES
        tables = harvest.ran("sglang", release)
        assert tables["attention_selector"]["capabilities"] == every == tables["quantization"]["capabilities"]
        assert not tables["attention_selector"]["case_errors"]["count"]
        assert _sglang_build(release).version == release


def _compiled_releases():
    """The hand-written vLLM releases whose wheel's cubins the harvest read (the kernels table's compiled_for)."""
    written = _hand_written("vllm")
    return [
        r
        for r in harvest.releases("vllm")
        if r in written and ((harvest.load("vllm", r).kernels or {}).get("compiled_for") or {}).get("sm")
    ]


COMPILED_RELEASES = _compiled_releases()


def test_the_cuda_12_and_13_releases_have_their_wheels_cubins_read():
    assert {"0.10.2", "0.13.0", "0.19.0", "0.20.1", "0.24.0", "0.33.0"} <= set(COMPILED_RELEASES)


@pytest.mark.parametrize("release", COMPILED_RELEASES)
def test_a_vllm_release_file_s_cuda_targets_are_its_wheel_s_cubins(release):
    """On every GPU of the catalog that sits in an x86_64 host, the release file's `cuda_archs` (inherited or its
    own) says what the x86_64 wheel's cubins say: a target there iff a cubin of its family at or below it. A GPU
    only ever in aarch64 hosts (GB10's 12.1) is the aarch64 image's, which the x86_64 wheel does not speak for."""
    from recipegen.catalog.harvested_kernels import compiled_terms
    from recipegen.catalog.load import load

    catalog = load()
    build = next(b for b in catalog.engines["vllm"].builds if b.id == f"vllm-{release}")
    compiled = capability_set(compiled_terms(harvest.load("vllm", release).kernels) or ())
    x86 = {h.compute_capability for h in catalog.hardware.values() if "x86_64" in h.host_arch}
    differ = sorted(str(cc) for cc in x86 if (cc in compiled) != (cc in build.cuda_archs))
    assert not differ, f"{build.id}: cuda_archs {build.cuda_archs}, the wheel's cubins {compiled}: differ on {differ}"
