"""Every known defect and every community build in the catalog, walked the way a user meets them (issue 28): a plan on
an affected build names the defect and carries its workaround, or refuses the build naming it; `history` lists it on
that build and not from its fixing release on; `lint` of a command in the affected configuration flags it; a defect
that says what the engine logs is what `diagnose` reports for that line. Community builds: a plan on a GPU the build
was reported on takes it (or says why not), and a report dated before its release does not know it.

The requests are derived from each defect's own selectors, so a new defect or build is checked with no test change.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterator
from typing import Any

from recipegen.catalog.harvest import registers
from tests.support.release_history import defect_ids, explain, history_of, lint, verdicts

TRIES = 6  # requests tried per defect before the walk says none reaches it


def _carriers(catalog: Any) -> dict[str, list[tuple[Any, Any, Any]]]:
    """Each defect id with the (engine, build, defect) that carry it, official releases first, oldest first."""
    out: dict[str, list[tuple[Any, Any, Any]]] = {}
    ordered = sorted(catalog.builds(), key=lambda eb: (eb[1].provenance != "official", eb[1].released, eb[1].id))
    for engine, build in ordered:
        for defect in build.defects:
            out.setdefault(defect.id, []).append((engine, build, defect))
    return out


def _loads(engine: Any, quant: str) -> bool:
    return quant.startswith("gguf") == (engine.loads == "gguf")


def _requests(catalog: Any, engine: Any, build: Any, defect: Any, verified: bool = True) -> list[tuple[Any, Any, Any]]:
    """(GPU, model, variant) that the defect's selectors hit on this build, smallest checkpoint and x86 hosts first;
    `verified`: only GPUs the build was reported working on."""
    gpus = [
        h
        for h in catalog.hardware.values()
        if (defect.sm is None or h.compute_capability in defect.sm)
        and (defect.host_arch is None or h.host_arch[0] in defect.host_arch)
        and h.compute_capability in build.cuda_archs
        and (not build.images or h.host_arch[0] in build.images)
        and (not verified or build.verified_sm is None or h.compute_capability in build.verified_sm)
    ]
    found = []
    for model in catalog.models.values():
        arch = model.gguf_arch if engine.loads == "gguf" else model.architecture
        if arch is None or not registers(build, arch):  # the registry the architecture gate reads (harvested or listed)
            continue
        named = (model.architecture, model.gguf_arch)  # llama.cpp builds name GGUF architectures
        if (defect.models is not None and model.id not in defect.models) or (
            defect.architectures is not None and not set(named).intersection(defect.architectures)
        ):
            continue
        if defect.ops is not None and not {n.op for n in model.needs}.intersection(defect.ops):
            continue
        if defect.moe is not None and (model.moe is not None) != defect.moe:
            continue
        for variant in model.variants:
            if (defect.quants is not None and variant.quant not in defect.quants) or not _loads(engine, variant.quant):
                continue
            size = variant.size_gb or (variant.size_gib or 1e6) * 1.074
            for gpu in gpus:
                # a host-offload defect needs a plan that offloads: the smallest GPU and the largest checkpoint first
                fit = (gpu.memory_gib, -size) if defect.host_offload else (size, -gpu.memory_gib)
                found.append(((gpu.host_arch[0] != "x86_64", *fit, gpu.id), gpu, model, variant))
    found.sort(key=lambda row: row[0])
    picked, seen = [], set()
    for _, gpu, model, variant in found:  # one per GPU and model, so a gate one GPU fails does not hide the rest
        if (gpu.id, model.id) not in seen:
            seen.add((gpu.id, model.id))
            picked.append((gpu, model, variant))
    return picked


def _reach(catalog: Any) -> Iterator[tuple[str, Any, Any, Any, list[tuple[Any, Any, Any]]]]:
    for defect_id, carriers in _carriers(catalog).items():
        for engine, build, defect in carriers:
            requests = _requests(catalog, engine, build, defect)
            if requests:
                yield defect_id, engine, build, defect, requests
                break
        else:
            yield defect_id, carriers[0][0], carriers[0][1], carriers[0][2], []


def _layout_scoped(defect: Any) -> bool:
    """A defect of a parallel layout that recipegen chooses itself (PP, DP, EP): only a command can put a plan in it."""
    return any(x is not None for x in (defect.pipeline_parallel_min, defect.data_parallel, defect.expert_parallel))


def _kv_word(engine: Any, defect: Any) -> str | None:
    names = engine.kv_dtype_names or {}
    return next((names[k] for k in defect.kv_dtypes or () if k in names), None)


def _count(scope: Any) -> int | None:
    """A size inside a defect's range (tensor-parallel size, draft tokens): its smallest, else its largest."""
    return None if scope is None else scope.min or scope.max


def _gpus(defect: Any, default: int) -> int:
    """The GPUs a request needs for the defect's tensor-parallel size (a plan's TP group is every GPU); one GPU for
    a host-offload defect, so that the plan offloads."""
    return _count(defect.tensor_parallel) or (1 if defect.host_offload else default)


def _explain_options(engine: Any, defect: Any, kv: str | None = None, history: bool = False) -> list[str]:
    """The options that put `explain` (or `history`, which plans no context) in the defect's configuration."""
    out: list[str] = []
    if defect.kv_dtypes:
        out += ["--kv-cache-dtype", kv or _kv_word(engine, defect) or defect.kv_dtypes[0]]
    if defect.speculative:
        out += ["--speculative", defect.speculative[0]]
        if defect.speculative_tokens is not None:
            out += ["--speculative-tokens", str(_count(defect.speculative_tokens))]
    if defect.tensor_parallel is not None and not history:
        out += ["--gpus", str(_gpus(defect, 1))]
    if defect.host_offload:
        out += ["--host-memory", "1024"]  # room for the offload the defect needs
    if defect.dcp:
        out += ["--dcp", "2"]
    if defect.cuda_graphs is False:
        out += ["--eager"]
    if defect.batch is not None:
        out += ["--concurrency", str(defect.batch.min or defect.batch.max)]
    if defect.context_above is not None and not history:
        out += ["--context", str(defect.context_above * 2)]
    if defect.multi_node:
        out += ["--nodes", "2"]
    return out


def _command_flags(engine: Any, defect: Any) -> list[str]:
    """The engine's own flags that put a command in the defect's configuration."""
    f = engine.flags
    out: list[str] = []
    if defect.kv_dtypes and f.kv_cache_dtype and _kv_word(engine, defect):
        out += [f.kv_cache_dtype, str(_kv_word(engine, defect))]
    if defect.speculative and f.speculative:
        method = defect.speculative[0]
        config = f.speculative.endswith("-config")  # vLLM takes a JSON object, SGLang the algorithm's name
        drafts = _count(defect.speculative_tokens) or 1
        out += [
            f.speculative,
            json.dumps({"method": method, "num_speculative_tokens": drafts}) if config else method.upper(),
        ]
        if defect.speculative_tokens is not None and f.speculative_tokens and not config:
            out += [f.speculative_tokens, str(drafts)]
    if defect.tensor_parallel is not None and f.tensor_parallel:
        out += [f.tensor_parallel, str(_gpus(defect, 1))]
    if defect.host_offload:
        offload = next(
            ([flag, value] for flag, value in ((f.cpu_moe_layers, "8"), (f.cpu_offload_gb, "8")) if flag), []
        )
        out += offload
    if defect.dcp and f.decode_context_parallel:
        out += [f.decode_context_parallel, "2"]
    if defect.cuda_graphs is False and f.disable_cuda_graphs:
        out += [f.disable_cuda_graphs]
    if defect.batch is not None and f.max_concurrency:
        out += [f.max_concurrency, str(defect.batch.min or defect.batch.max)]
    if defect.context_above is not None and f.context_length:
        out += [f.context_length, str(defect.context_above * 2)]
    if defect.pipeline_parallel_min is not None and f.pipeline_parallel:
        out += [f.pipeline_parallel, str(defect.pipeline_parallel_min)]
    if defect.data_parallel and f.data_parallel:
        out += [f.data_parallel, "2"]
    if defect.expert_parallel and f.expert_parallel:
        out += [f.expert_parallel]
    return out


def _command(engine: Any, variant: Any, defect: Any) -> list[str]:
    model = [engine.flags.model] if engine.flags.model else []
    weights = f"/models/{variant.file}" if engine.loads == "gguf" and variant.file else variant.repo
    return [*engine.command, *model, weights, *_command_flags(engine, defect)]


def _named(doc: dict[str, Any], build: Any, defect: Any) -> str | None:
    """How an explain answer names the defect: 'plan' (the plan carries it), 'path' (a path on the build that is not
    planned lists it), or None."""
    if doc["plans"]:
        return "plan" if defect.id in defect_ids(doc["plans"][0]) else None
    rows = [r for r in doc["rejected"] if r["build"] == build.id]
    return "path" if any(defect.id in r["defects"] for r in rows) else None


def _workaround_missing(plan: dict[str, Any], defect: Any, gpu: Any) -> list[str]:
    flags = {f["flag"]: f.get("value") for f in plan["flags"]}
    env = {e["name"]: e["value"] for e in plan["env"]}
    missing = [
        f"{a.flag} {a.value}"
        for a in defect.workaround_args
        if (a.capability is None or gpu.compute_capability in a.capability)
        and flags.get(a.flag, "<unset>") != a.value
        and not any(defect.id in n and "conflicts" in n for n in plan["notes"])
    ]
    return missing + [f"{v.name}={v.value}" for v in defect.workaround_env if env.get(v.name) != v.value]


def _ask(gpu: Any, model: Any, variant: Any, engine: Any, build: Any) -> tuple[str, ...]:
    return ("--gpu", gpu.id, "--model", model.id, "--variant", variant.id, "--engine", engine.id, "--build", build.id)


def test_every_defect_has_a_request_its_selectors_hit_on_a_build_that_carries_it(catalog):
    unreachable = [d for d, _, _, _, requests in _reach(catalog) if not requests]
    assert not unreachable, f"no catalog GPU, model and checkpoint meets these defects on their builds: {unreachable}"


def test_a_plan_on_an_affected_build_names_each_defect_and_carries_its_workaround(cli, catalog):
    problems = []
    for defect_id, engine, build, defect, requests in _reach(catalog):
        answers = []
        kvs = [(engine.kv_dtype_names or {}).get(k, k) for k in defect.kv_dtypes or [None]]
        for (gpu, model, variant), kv in [(r, kv) for r in requests[:TRIES] for kv in kvs]:
            doc = explain(cli, *_ask(gpu, model, variant, engine, build), *_explain_options(engine, defect, kv))
            how = _named(doc, build, defect)
            if how == "plan":
                missing = _workaround_missing(doc["plans"][0], defect, gpu)
                if missing:
                    problems.append(f"{defect_id}: the plan on {gpu.id}/{model.id} lacks its workaround {missing}")
                break
            if how == "path":
                refused = any(f"known defect {defect_id}" in r for r in json.dumps(doc["reasons"]).split("reason"))
                if refused and not defect.blocks:
                    problems.append(f"{defect_id} has a workaround, yet it refuses {build.id} on {gpu.id}")
                break
            plan = doc["plans"][0] if doc["plans"] else None
            if plan is not None and defect.scoped:  # recipegen's own plan is outside the configuration: it moves on
                break
            answers.append(f"{gpu.id}/{model.id}/{variant.id}: {doc['verdict']} {doc['verdict_detail']}")
        else:
            if requests:
                problems.append(f"{defect_id} on {build.id}: no answer names it ({'; '.join(answers)})")
    assert not problems, "\n".join(problems)


def test_history_lists_each_defect_on_its_build_and_not_from_its_fixing_release_on(cli, catalog):
    problems = []
    for defect_id, engine, build, defect, requests in _reach(catalog):
        if not requests or build.provenance != "official" or _layout_scoped(defect):
            continue
        # a host-offload defect needs a request whose plan offloads and still fits: try a few
        for gpu, model, variant in requests[:TRIES] if defect.host_offload else requests[:1]:
            rows = verdicts(
                history_of(
                    cli,
                    engine.id,
                    gpu.id,
                    model.id,
                    _gpus(defect, 8),
                    "--variant",
                    variant.id,
                    *_explain_options(engine, defect, history=True),
                )
            )
            if defect_id in rows.get(build.id, {}).get("defects", []):
                break
        if defect_id not in rows.get(build.id, {}).get("defects", []):
            problems.append(f"{defect_id}: history on {gpu.id}/{model.id} does not list it on {build.id}")
        if defect.fixed_in is not None:
            fixed = rows.get(defect.fixed_in)
            if fixed is None or defect_id in fixed["defects"]:
                problems.append(f"{defect_id}: history does not drop it at {defect.fixed_in}")
    assert not problems, "\n".join(problems)


def test_lint_flags_a_command_in_each_defects_configuration(cli, catalog):
    problems = []
    for defect_id, engine, build, defect, requests in _reach(catalog):
        if not requests:
            continue
        gpu, _, variant = requests[0]
        nodes = ["--nodes", "2"] if defect.multi_node else []
        gpus = "8" if (defect.data_parallel or defect.pipeline_parallel_min or defect.expert_parallel) else "1"
        gpus = str(_gpus(defect, int(gpus)))
        doc = lint(cli, "--gpu", gpu.id, "--gpus", gpus, *nodes, "--build", build.id, "--",
                   *_command(engine, variant, defect))  # fmt: skip
        if not any(f["code"] == "defect" and defect.title in f["why"] for f in doc["findings"]):
            problems.append(f"{defect_id}: lint of {' '.join(_command(engine, variant, defect))} on {gpu.id} is silent")
    assert not problems, "\n".join(problems)


def test_diagnose_reports_each_defect_from_the_line_the_engine_logs(cli, catalog, tmp_path):
    problems = []
    for defect_id, _, _, defect, requests in _reach(catalog):
        if defect.log_line is None or not requests:
            continue
        gpu, model, _ = requests[0]
        log = tmp_path / f"{defect_id}.log"
        log.write_text(f"INFO starting the server\nERROR {defect.log_line}\n", encoding="utf-8")
        result = cli("diagnose", str(log), "--gpu", gpu.id, "--model", model.id, "--format", "json")
        if defect_id not in result.out:
            problems.append(f"{defect_id}: diagnose of its log line names something else (exit {result.code})")
    assert not problems, "\n".join(problems)


# --- community builds ---------------------------------------------------------------------------------------------


def _community(catalog: Any) -> Iterator[tuple[Any, Any, list[tuple[Any, Any, Any]]]]:
    """Each community, fork or model-image build with the requests on the GPUs it was reported on."""
    for engine, build in catalog.builds():
        if build.provenance == "official":
            continue
        # a build for GPUs it was not reported on (built for sm80, run on sm86) is checked where it was built for
        yield (
            engine,
            build,
            _requests(catalog, engine, build, _NO_SCOPE)
            or _requests(catalog, engine, build, _NO_SCOPE, verified=False),
        )


class _NoScope:
    """A defect that selects nothing: every GPU, model and checkpoint the build can take."""

    sm = models = architectures = ops = quants = moe = host_arch = host_offload = None


_NO_SCOPE = _NoScope()


def _side_path(cli: Any, engine: Any, build: Any, gpu: Any, model: Any, *extra: str) -> dict[str, Any] | None:
    doc = history_of(cli, engine.id, gpu.id, model.id, 8, *extra)
    rows = {r["build"]: r for r in [*doc["builds"], *doc.get("side_paths", [])]}
    return rows.get(build.id)


def test_a_plan_on_a_gpu_each_community_build_was_reported_on_takes_it_or_says_why(cli, catalog):
    problems = []
    for engine, build, requests in _community(catalog):
        if not requests:
            problems.append(f"{build.id}: no catalog GPU it was reported on, with a model it loads")
            continue
        for gpu, model, variant in requests[:TRIES]:
            doc = explain(cli, *_ask(gpu, model, variant, engine, build))
            if any(p["build"] == build.id for p in doc["plans"]) or any(
                r["build"] == build.id for r in doc["rejected"]
            ):
                break
        else:
            problems.append(f"{build.id}: no plan on {[g.id for g, _, _ in requests[:TRIES]]} takes it or names it")
    assert not problems, "\n".join(problems)


def test_history_knows_each_community_build_from_its_release_day_and_not_the_day_before(cli, catalog):
    problems = []
    for engine, build, requests in _community(catalog):
        if not requests:
            continue
        gpu, model, _ = requests[0]
        day = build.released
        if _side_path(cli, engine, build, gpu, model, "--as-of", str(day)) is None:
            problems.append(f"{build.id}: history as of its release {day} on {gpu.id}/{model.id} does not list it")
        before = str(day - dt.timedelta(days=1))
        if _side_path(cli, engine, build, gpu, model, "--as-of", before) is not None:
            problems.append(f"{build.id}: history as of {before}, before its release, already lists it")
    assert not problems, "\n".join(problems)


def test_an_undecided_path_says_which_known_defects_it_would_run_into(cli):
    """No plan is made on RTX PRO 6000 for the GLM-5.3-Flash image (its GB10 TileLang tile is unverified there), yet the
    path's SM120 DeepGEMM pre-norm crash is what a user who tries it meets first: the text names it under the path."""
    result = cli("explain", "--gpu", "rtx-pro-6000", "--model", "glm-5.3-flash", "--variant", "nvfp4", "--engine",
                 "sglang", "--build", "sglang-glm53-flash-arm64")  # fmt: skip
    assert "VERDICT: unknown" in result.out
    advice = result.out.split("What would make it run:")[1]
    assert "known defects on this path: sglang-glm53-hc-prenorm-deep-gemm-nameerror" in advice
    fine = cli("explain", "--gpu", "gb10", "--model", "glm-5.3-flash", "--engine", "sglang", "--nodes", "2")
    assert "known defects on this path" not in fine.out


def test_coverage_calls_a_defect_fixed_only_where_the_catalog_names_its_fixing_build(cli, catalog):
    named = {d.id for _, b in catalog.builds() for d in b.defects if d.fixed_in is not None}
    result = cli("coverage", "--format", "json")
    assert result.code == 0, result.err
    cells = result.json()["cells"]
    for cell in cells:
        assert set(cell["defects_fixed"]) == set(cell["defects_closed"]) & named, cell
    spark = next(c for c in cells if c["family"] == "deepseek-r1" and c["gpu_class"] == "sm121")
    older = set(spark["defects_closed"]) - set(spark["defects_fixed"])
    assert "vllm-gb10-cross-node-cudagraph-capture" in older  # reported on 0.24.0 only, no fix named
    text = cli("coverage").out
    row = next(line for line in text.splitlines() if line.startswith("| deepseek-r1 |"))
    assert f"{len(spark['defects_fixed'])} fixed, {len(older)} older" in row.split(" | ")[-1]
