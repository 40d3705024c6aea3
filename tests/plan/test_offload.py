"""Host offload as a planned layout: the solver's answers and each engine's flags, through the CLI
and the resolver, checked against the engines' own flag vocabularies."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest

from recipegen.artifacts.kubernetes import PVC_MARGIN
from recipegen.catalog.vocabulary import check_argv, vocabulary
from recipegen.plan.offload import weight_split
from tests.support.cli import run_cli
from tests.support.contract import rejections


def explain(*args: str) -> dict:
    result = run_cli("explain", "--format", "json", *args)
    assert result.code == 0, result.err
    return result.json()


def first(plans: list[dict], engine: str) -> dict:
    return next(p for p in plans if p["engine"] == engine)


COMMAND_LENGTH = {"llama.cpp": 1, "vllm": 2, "sglang": 3}  # llama-server · vllm serve · python3 -m sglang…


def vocab_problems(plan: dict, reference: str) -> list[str]:
    return check_argv(vocabulary(reference), plan["argv"][COMMAND_LENGTH[plan["engine"]] :])


def test_two_3090s_run_gpt_oss_120b_with_experts_in_host_ram():
    """The issue's case: 2 × RTX 3090 and gpt-oss-120b was 'blocked'; now llama.cpp leads with
    --n-cpu-moe, a balanced --tensor-split, an offload summary and a speed estimate."""
    data = explain("--gpu", "rtx-3090", "--gpus", "2", "--model", "gpt-oss-120b")
    assert data["verdict"] == "runnable"
    top = data["plans"][0]
    assert top["engine"] == "llama.cpp"
    assert top["offload"]["mechanism"] == "expert-layers"
    layers = top["offload"]["cpu_layers"]
    assert 0 < layers < top["offload"]["of_layers"]
    argv = top["argv"]
    assert argv[argv.index("--n-cpu-moe") + 1] == str(layers)
    split = [int(n) for n in argv[argv.index("--tensor-split") + 1].split(",")]
    assert len(split) == 2 and sum(split) == 36
    assert split[0] > split[1], "the first GPU lost its experts to --n-cpu-moe, so it takes more layers"
    assert vocab_problems(top, "llama-server-0c1e570") == []
    assert top["speed"]["decode_tokens_per_s"] > 0
    assert data["request"]["host_memory_default"] is True


def test_more_context_moves_more_expert_layers_to_the_host():
    layers = []
    for context in ("4096", "65536", "131072"):
        data = explain(
            "--gpu",
            "rtx-3090",
            "--gpus",
            "2",
            "--model",
            "gpt-oss-120b",
            "--engine",
            "llama.cpp",
            "--context",
            context,
            "--host-memory",
            "256",
        )
        plan = data["plans"][0]
        assert plan["memory"]["context"] == int(context)
        layers.append(plan["offload"]["cpu_layers"])
    assert layers[0] <= layers[1] <= layers[2] and layers[0] < layers[2], layers


def test_too_little_host_ram_refuses_with_the_number_and_the_option():
    enough = explain(
        "--gpu", "rtx-3090", "--gpus", "2", "--model", "gpt-oss-120b", "--engine", "llama.cpp", "--host-memory", "32"
    )
    assert enough["verdict"] == "runnable"
    need = enough["plans"][0]["offload"]["host_gib"]
    short = explain(
        "--gpu", "rtx-3090", "--gpus", "2", "--model", "gpt-oss-120b", "--engine", "llama.cpp", "--host-memory", "16"
    )
    assert short["verdict"] == "blocked"
    memory = [r for r in rejections(short) if r["gate"] == "memory" and r["variant"] == "gguf"]
    assert memory and f"{need:.1f} GiB of host RAM" in memory[0]["reason"]
    assert "16 GiB" in memory[0]["reason"]


def test_refuses_when_even_full_offload_does_not_fit():
    """With every weight in host RAM, the KV cache of a 131k context × 64 requests still does not fit."""
    data = explain(
        "--gpu",
        "rtx-3090",
        "--gpus",
        "1",
        "--model",
        "qwen3-32b",
        "--engine",
        "vllm",
        "--variant",
        "bf16",
        "--context",
        "131072",
        "--concurrency",
        "64",
        "--host-memory",
        "512",
    )
    assert data["verdict"] == "blocked"
    reasons = [r["reason"] for r in rejections(data) if r["gate"] == "memory" and r["build"] == "vllm-0.33.0"]
    assert len(reasons) == 1 and "host offload: even with every weight in host RAM" in reasons[0]


def test_offload_ranks_below_plans_that_fit_and_a_layout_search_prefers_those():
    """Without --gpus, 4 × 3090 hold gpt-oss-120b in GPU memory: no offload plan is offered first."""
    data = explain("--gpu", "rtx-3090", "--model", "gpt-oss-120b")
    assert data["request"]["gpus_per_node"] == 4
    assert all(p["offload"] is None for p in data["plans"])
    pinned = explain("--gpu", "rtx-3090", "--gpus", "2", "--model", "gpt-oss-120b")
    kinds = [p["offload"]["mechanism"] for p in pinned["plans"]]
    assert kinds == sorted(kinds, key=lambda k: k == "weights-gb"), "PCIe-streamed weights rank after CPU experts"


@pytest.mark.parametrize(("engine", "reference"), [("vllm", "vllm-0.33.0"), ("sglang", "sglang-0.5.23")])
def test_cpu_offload_gb_plans_say_they_are_pcie_bound(engine, reference):
    data = explain("--gpu", "rtx-3090", "--gpus", "2", "--model", "gpt-oss-120b", "--engine", engine)
    plan = data["plans"][0]
    assert plan["offload"]["mechanism"] == "weights-gb"
    flag = next(f for f in plan["flags"] if f["flag"] == "--cpu-offload-gb")
    assert int(flag["value"]) == plan["offload"]["gib_per_gpu"] > 0
    assert "PCIe" in flag["reason"]
    assert plan["speed"]["bound_by"].startswith("PCIe")
    assert vocab_problems(plan, reference) == []


def test_ktransformers_plans_its_cpu_experts_and_its_flags_exist_in_sglang(catalog):
    """KTransformers' memory gate used to say 'unknown'; now it plans host RAM for every routed expert."""
    from recipegen.plan.flags import argv_of
    from recipegen.plan.hostflags import offload_flags
    from recipegen.plan.offload import HostFacts
    from recipegen.plan.resolve import resolve
    from recipegen.plan.types import Request

    request = Request(
        model=catalog.models["qwen3-235b-a22b"],
        hardware=catalog.hardware["rtx-4090"],
        gpus_per_node=1,
        engine="ktransformers",
        variant="bf16",
        host=HostFacts(memory_gib=1024, memory_default=False),
    )
    cand = next(c for c in resolve(catalog, request).candidates if c.variant.id == "bf16")
    memory = cand.gate("memory")
    assert memory.outcome == "pass" and "all 94 layers' routed experts in host RAM" in memory.reason
    flags = offload_flags(cand)
    assert [f.flag for f in flags] == ["--kt-method", "--kt-num-gpu-experts", "--kt-weight-path"]
    assert flags[0].value == "BF16"
    assert check_argv(vocabulary("sglang-0.5.23"), argv_of(cand.engine, flags)[3:]) == []
    small = resolve(catalog, Request(**{**request.__dict__, "host": HostFacts(memory_gib=128, memory_default=False)}))
    failed = next(c for c in small.candidates if c.variant.id == "bf16").gate("memory")
    assert failed.outcome == "fail" and "host RAM" in failed.reason


def test_unified_memory_never_offloads():
    data = explain("--gpu", "gb10", "--gpus", "1", "--model", "deepseek-v3")
    assert all(p["offload"] is None for p in data["plans"])


@pytest.mark.parametrize("value", ["0", "-5", "nan", "inf", "70000"])
def test_host_numbers_out_of_bounds_are_one_line_errors(value):
    result = run_cli("explain", "--gpu", "rtx-3090", "--model", "gpt-oss-120b", "--host-memory", value)
    assert result.code == 2
    assert "--host-memory" in result.err
    assert "Traceback" not in result.err


def test_blocked_by_host_ram_advises_a_host_memory_that_really_runs():
    args = ["--gpu", "rtx-3090", "--gpus", "2", "--model", "gpt-oss-120b", "--engine", "llama.cpp"]
    text = run_cli("explain", *args, "--host-memory", "16").out
    advised = re.search(r"--host-memory (\d+)", text.split("What would make it run:")[1])
    assert advised, text
    assert explain(*args, "--host-memory", advised.group(1))["verdict"] == "runnable"
    assert explain(*args, "--host-memory", str(int(advised.group(1)) - 1))["verdict"] == "blocked"


def test_an_offload_plan_names_faster_hardware_without_offload(tmp_path):
    result = run_cli("--gpu", "rtx-3090", "--gpus", "2", "--model", "gpt-oss-120b", "--out", str(tmp_path / "o"))
    assert result.code == 0, result.err
    own = float(re.search(r"speed \(estimate\): offload-bound \([^)]*\): ~([\d.]+) tok/s", result.out).group(1))
    section = result.out.split("faster without host offload, with more or other GPUs:")[1].split("closest rejected")[0]
    others = [float(x) for x in re.findall(r"~(\d+) tok/s for one request \(likely [\d.–]+\) \(estimate\)", section)]
    assert others and all(x > own for x in others)
    assert "with host offload" not in section


def test_n_cpu_moe_counts_leading_dense_layers(catalog):
    """llama.cpp's --n-cpu-moe N overrides the expert tensors of layers 0 … N-1; a model whose first
    layers are dense (DeepSeek, GLM: 3) needs N = 3 + the expert layers to move."""
    from dataclasses import replace

    from recipegen.plan.hostflags import offload_flags
    from recipegen.plan.resolve import resolve
    from recipegen.plan.types import Request

    request = Request(
        model=catalog.models["gpt-oss-120b"], hardware=catalog.hardware["rtx-3090"], gpus_per_node=2, engine="llama.cpp"
    )
    cand = resolve(catalog, request).plans[0].candidate
    off = cand.offload
    assert off is not None and off.split is not None and off.split.dense_layers == 0
    plain = {f.flag: f.value for f in offload_flags(cand)}["--n-cpu-moe"]
    assert plain == str(off.cpu_layers)
    dense = replace(cand, offload=replace(off, split=replace(off.split, dense_layers=3)))
    flag = next(f for f in offload_flags(dense) if f.flag == "--n-cpu-moe")
    assert flag.value == str(3 + off.cpu_layers)
    assert "layers 0–2 are dense" in flag.reason


def test_a_dense_gguf_model_keeps_its_first_layers_on_the_cpu(tmp_path):
    """A dense model has no experts to move: llama.cpp plans --gpu-layers below the layer count, and
    the layers left on the CPU (weights and KV) are read at host-RAM speed — slower than the same
    model held by more GPUs. The 39.60 GiB Q4_K_M size is Llama 3 70B's (XiongjieDai's table)."""
    import yaml

    from recipegen.recipes import __file__ as recipes_init

    source = yaml.safe_load((Path(recipes_init).parent / "models" / "llama-3.3-70b.yaml").read_text())
    source["variants"].append(
        {
            "id": "q4km",
            "repo": "example/Llama-3.3-70B-Instruct-GGUF",
            "quant": "gguf",
            "publisher": "community",
            "size_gib": 39.60,
            "file": "Llama-3.3-70B-Instruct-Q4_K_M.gguf",
        }
    )
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "llama-3.3-70b.yaml").write_text(yaml.safe_dump(source, sort_keys=False))
    args = ["--model", "llama-3.3-70b", "--engine", "llama.cpp", "--variant", "q4km", "--recipes", str(tmp_path)]
    one = explain("--gpu", "rtx-3090", "--gpus", "1", "--context", "8192", "--host-memory", "64", *args)
    plan = one["plans"][0]
    assert plan["offload"]["mechanism"] == "cpu-layers"
    on_gpu = int(next(f["value"] for f in plan["flags"] if f["flag"] == "--gpu-layers"))
    assert on_gpu == 80 - plan["offload"]["cpu_layers"] and 0 < on_gpu < 80
    assert "--n-cpu-moe" not in plan["argv"]
    assert vocab_problems(plan, "llama-server-0c1e570") == []
    two = explain("--gpu", "rtx-3090", "--gpus", "2", "--context", "8192", *args)["plans"][0]
    assert two["offload"] is None
    assert plan["speed"]["decode_tokens_per_s"] < two["speed"]["decode_tokens_per_s"]
    assert plan["speed"]["bound_by"] == "host RAM bandwidth"


def test_offload_sources_are_valid_sources():
    """SOURCES is built without validation at import (start-up time); it must still be what validation gives."""
    from recipegen.catalog.schema import Source
    from recipegen.catalog.schema.records import to_data, validate
    from recipegen.plan.offload import SOURCES

    for sources in SOURCES.values():
        for source in sources:
            assert validate(Source, to_data(source)) == source


def test_every_catalog_moe_splits_into_experts_and_the_rest_consistently(catalog):
    """The routed experts from the shapes sit inside the total (the total taken from the shapes where the
    catalog's is a rounded headline, as Kimi K2's "1T"); what a token reads — the rest plus its top-k share
    of the experts — is at least the catalog's active count, and the rest alone is not more than it."""
    for model in catalog.models.values():
        if model.moe is None:
            continue
        split = weight_split(model, model.params_total_b * 1e9)
        assert split is not None, model.id
        assert 0 < split.expert_params < split.total_params, model.id
        if model.params_active_b is not None:
            rest = split.total_params - split.expert_params
            reads = rest + split.expert_params * model.moe.top_k / model.moe.experts
            assert reads >= 0.8 * model.params_active_b * 1e9, model.id
            assert rest <= 1.1 * model.params_active_b * 1e9, model.id


def test_kimi_k2_on_8_h200_reads_the_active_experts_only():
    """Kimi K2's expert shapes (384 × 3 × 7168 × 2048 × 60 = 1,014.7B) exceed its "1,000B" total: the split
    takes the total from the shapes instead of treating the model as dense (~1 TB read per token)."""
    result = run_cli("explain", "--format", "json", "--gpu", "h200", "--gpus", "8", "--model", "kimi-k2")
    assert result.code == 0, result.err
    speed = result.json()["plans"][0]["speed"]
    weights = next(line for line in speed["derivation"] if line.startswith("weights read per step"))
    match = re.search(r"of the routed experts \((\d+) request\(s\), top-8\) = ([\d.]+) GB on GPU", weights)
    assert match is not None, weights
    requests, gb = int(match.group(1)), float(match.group(2))
    assert gb < 1000 * (1 - (1 - 8 / 384) ** requests) + 15  # the touched experts and the rest, not the whole file
    assert speed["decode_tokens_per_s"] > 20


def test_an_offload_plan_names_more_of_the_same_gpu_first_at_the_fewest_that_run_it():
    """Qwen2.5-72B on one 24 GB card offloads (its smallest file, IQ2_XXS at 25.5 GB, does not fit the card whole);
    the first way out a user can take is a second card of the same kind, and every other part is named at the
    fewest GPUs that hold the model, not at a whole 8-GPU box."""
    text = run_cli("explain", "--gpu", "rtx-4090", "--gpus", "1", "--model", "qwen2.5-72b").out
    section = text.split("with more or other GPUs (the fewest that run it):")[1].split("\n\n")[0]
    rows = re.findall(r"• on (\d+)×([\w-]+): runs with .*~([\d.]+) tok/s for one request", section)
    assert rows and rows[0][:2] == ("2", "rtx-4090"), section
    assert all(int(gpus) <= 2 for gpus, _, _ in rows), section  # 70B at 4-8 bits fits one or two of any of them


def test_layers_on_the_cpu_keep_their_kv_cache_in_host_ram_and_every_output_counts_it(tmp_path):
    """llama.cpp allocates a layer's K and V on that layer's device (src/llama-kv-cache.cpp), so the 44 layers a
    Q4_K_M of Llama 3.3 70B leaves on the CPU of one RTX 3090 hold their share of the 32k-token KV cache in host
    RAM: 44 layers × 8 KV heads × 128 × (K, V) × 2 bytes (f16) per token. The host check, plan.json, the offload
    summary and the Kubernetes volume (weights only) all agree with that."""
    args = ["--gpu", "rtx-3090", "--gpus", "1", "--model", "llama-3.3-70b", "--variant", "gguf-q4-k-m"]
    args += ["--engine", "llama.cpp", "--build", "llama.cpp-0c1e570", "--context", "32768"]
    plan = explain(*args)["plans"][0]
    off, settings = plan["offload"], plan["settings"]
    assert off["mechanism"] == "cpu-layers" and settings["kv_cache_dtype"] == "fp16"
    per_layer_token = 8 * 128 * 2 * 2
    kv = off["cpu_layers"] * per_layer_token * settings["context"] * settings["concurrency"] / 2**30
    assert off["host_kv_gib"] == pytest.approx(kv, abs=0.01)
    assert off["host_gib"] == pytest.approx(off["host_weights_gib"] + off["host_kv_gib"], abs=0.01)
    assert off["host_weights_gib"] == pytest.approx(42.9e9 / 2**30 * off["cpu_layers"] / off["of_layers"], rel=0.02)
    assert (
        f"{off['host_gib']:.1f} GiB ({off['host_weights_gib']:.1f} weights + {off['host_kv_gib']:.1f} KV cache)"
        in (off["summary"])
    )
    flag = next(f for f in plan["flags"] if f["flag"] == "--gpu-layers")
    assert f"{off['host_gib']:.1f} GiB of host RAM" in flag["reason"]

    # RAM for the weights alone but not for their KV cache: refused, with both figures and a --host-memory that runs
    weights_only = math.ceil(off["host_weights_gib"] + 8 + 1)
    assert weights_only < off["host_gib"] + 8
    short = explain(*args, "--host-memory", str(weights_only))
    assert short["verdict"] == "blocked"
    reason = next(r["reason"] for r in rejections(short) if r["gate"] == "memory")
    assert f"{off['host_gib']:.1f} GiB of host RAM for weights and KV cache" in reason, reason
    enough = math.ceil(off["host_gib"] + 8)
    assert explain(*args, "--host-memory", str(enough))["verdict"] == "runnable"

    out = tmp_path / "o"
    result = run_cli(*args, "--out", str(out), "--k8s")
    assert result.code == 0, result.err
    written = json.loads((out / "plan.json").read_text())["plans"][0]["offload"]
    assert written["host_gib"] == off["host_gib"] and written["host_kv_gib"] == off["host_kv_gib"]
    # the checkpoint is unsized, so the volume is sized from the plan's weights: on the GPU and in host RAM, no KV
    weights = (
        written["host_weights_gib"] + json.loads((out / "plan.json").read_text())["plans"][0]["memory"]["weights_gib"]
    )
    storage = re.search(r"storage: (\d+)Gi", (out / "k8s" / "weights.yaml").read_text())
    assert storage and int(storage.group(1)) == math.ceil(weights * 2**30 // 1 * PVC_MARGIN / 2**30)

    # a command without the offload is told the same figure
    lint = run_cli(
        "lint", "--gpu", "rtx-3090", "--gpus", "1", "--",
        "llama-server", "--model", "/models/Llama-3.3-70B-Instruct-Q4_K_M.gguf", "--ctx-size", "32768",
    )  # fmt: skip
    assert f"--gpu-layers {80 - off['cpu_layers']} ({off['host_gib']:.1f} GiB of weights and KV cache" in lint.out, (
        lint.out
    )
