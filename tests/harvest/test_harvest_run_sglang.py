"""scripts/harvest sglang==X --run on a stand-in SGLang install (tests/harvest/data/sglang-run-tree: no engine, no
GPU): the release's ServerArgs resolved per shape, KV dtype and asked backend on each simulated GPU."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TREE = Path(__file__).parent / "data" / "sglang-run-tree"
OLD_TREE = Path(__file__).parent / "data" / "sglang-run-tree-0518"  # no arg_groups, resolved by __post_init__
NSA_TREE = Path(__file__).parent / "data" / "sglang-run-tree-0512"  # as OLD_TREE, DSA still named nsa
SMI_TREE = Path(__file__).parent / "data" / "sglang-run-tree-0509"  # as NSA_TREE, sized from nvidia-smi


def _run(out: Path, *args: str, tree: Path = TREE) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    command = [sys.executable, str(ROOT / "scripts" / "harvest"), *args, "--out", str(out), "--today", "2026-12-03"]
    return subprocess.run(command, capture_output=True, text=True, timeout=120, env=env)


@pytest.fixture(scope="module")
def ran(tmp_path_factory):
    out = tmp_path_factory.mktemp("ran")
    facts = {"engine": "sglang", "release": "9.9.9", "sha256": None, "tables": {"flags": {"method": "read"}}}
    (out / "sglang").mkdir()
    (out / "sglang" / "9.9.9.json").write_text(json.dumps(facts))
    proc = _run(out, "sglang==9.9.9", "--run", "--python", sys.executable, "--caps", "80,90,100")
    assert proc.returncode == 0, proc.stderr
    assert "attention_selector: 378 cases in" in proc.stderr  # 6 shapes x 3 KV dtypes x 7 asks x 3 GPUs
    return json.loads((out / "sglang" / "9.9.9.json").read_text()), json.loads(
        (out / "sglang" / "9.9.9.ran.json").read_text()
    )


def _case(tables, cap, shape, kv="auto", asked=None):
    selector = tables["attention_selector"]
    found = [
        c for c in selector["cases"] if (c["capability"], c["shape"], c["kv"], c["asked"]) == (cap, shape, kv, asked)
    ]
    assert len(found) == 1, (cap, shape, kv, asked, len(found))
    case = dict(found[0])
    if "refused" in case:
        case["refused"] = selector["reasons"][case["refused"]]
    case["warnings"] = [selector["reasons"][i] for i in case.get("warnings", [])]
    return case


def test_the_facts_file_names_both_ran_tables_with_their_sglang_origin(ran):
    facts, tables = ran
    assert facts["tables"]["flags"] == {"method": "read"}
    for name in ("attention_selector", "quantization"):
        entry = facts["tables"][name]
        assert (entry["method"], entry["file"], entry["ran_on"]) == ("ran", "9.9.9.ran.json", "2026-12-03")
        assert entry["capabilities"] == [80, 90, 100]
    assert facts["tables"]["attention_selector"]["from"].startswith(
        "sglang/srt/server_args.py: ServerArgs.resolve_once"
    )
    assert facts["tables"]["quantization"]["from"].startswith("sglang/srt/layers/quantization")
    assert (tables["engine"], tables["method"], tables["release"]) == ("sglang", "ran", "9.9.9")
    assert "ran_failed" not in facts and "case_errors" not in facts["tables"]["attention_selector"]


def test_the_release_s_own_default_backend_per_simulated_gpu(ran):
    """The stand-in's torch.cuda raises "Found no NVIDIA driver": every answer here came from the simulated GPU."""
    _, tables = ran
    assert [_case(tables, cap, "gqa")["resolved"]["attention_backend"] for cap in (80, 90, 100)] == [
        "flashinfer",
        "fa3",
        "trtllm_mha",
    ]
    assert _case(tables, 80, "sinks")["resolved"]["attention_backend"] == "triton"
    assert _case(tables, 100, "mla")["resolved"]["attention_backend"] == "trtllm_mla"
    assert tables["attention_selector"]["shapes"]["sparse_mla_glm"] == "GlmMoeDsaForCausalLM"
    assert tables["simulated_devices"]["90"]["name"] == "NVIDIA simulated sm_90"


def test_the_facts_file_keeps_the_default_pick_per_shape_kv_and_gpu(ran):
    """What a plan reads on every request that touches the release (the ran file is read only on demand): the backend
    resolved without --attention-backend. A DSA resolution that names no prefill and decode kernel (this stand-in
    tree's) says nothing a plan can name; the pair is checked on the tree that names it (the nsa test below)."""
    facts, tables = ran
    picked = facts["tables"]["attention_selector"]["picked"]
    assert picked["gqa"]["bfloat16"] == {"80": "flashinfer", "90": "fa3", "100": "trtllm_mha"}
    assert picked["mla"]["fp8_e4m3"]["100"] == "trtllm_mla"
    assert picked["sinks"]["auto"]["80"] == "triton"
    assert _case(tables, 100, "sparse_mla")["resolved"] == {
        "attention_backend": "dsa",
        "kv_cache_dtype": "fp8_e4m3",
        "page_size": 64,
    }
    assert set(picked) == {"gqa", "sinks", "mla", "hybrid_linear"}
    assert "picked" not in facts["tables"]["quantization"]


def test_a_backend_the_release_refuses_on_a_gpu_keeps_its_message(ran):
    _, tables = ran
    hopper = _case(tables, 90, "mla", asked="trtllm_mla")
    assert "resolved" not in hopper
    assert hopper["refused"] == (
        "ValueError: TRTLLM MLA backend is only supported on Blackwell GPUs (SM100/SM12x). "
        "Please use a different backend."
    )
    assert _case(tables, 100, "mla", asked="trtllm_mla")["resolved"]["attention_backend"] == "trtllm_mla"


def test_kv_cache_dtype_adjustments_and_the_warning_a_user_reads(ran):
    _, tables = ran
    hopper, blackwell = _case(tables, 90, "sparse_mla"), _case(tables, 100, "sparse_mla")
    assert (hopper["resolved"]["kv_cache_dtype"], blackwell["resolved"]["kv_cache_dtype"]) == ("bfloat16", "fp8_e4m3")
    assert hopper["resolved"]["page_size"] == 64
    assert hopper["warnings"] == ["Setting KV cache dtype to bfloat16 for DeepSeek DSA on SM9 device."]
    assert _case(tables, 90, "sparse_mla", kv="fp8_e4m3")["resolved"]["kv_cache_dtype"] == "fp8_e4m3"


def test_only_nvidia_backends_of_the_release_s_choices_are_asked(ran):
    _, tables = ran
    selector = tables["attention_selector"]
    assert "aiter" in selector["backend_choices"]
    assert {c["asked"] for c in selector["cases"]} == {
        None,
        "triton",
        "flashinfer",
        "fa3",
        "trtllm_mha",
        "trtllm_mla",
        "dsa",
    }


def test_quantization_minimums_and_the_marlin_fallback_per_gpu(ran):
    _, tables = ran
    quant = tables["quantization"]
    assert quant["methods"]["fp8"] == {
        "class": "Fp8Config",
        "module": "srt/layers/quantization/fp8.py",
        "min_capability": 80,
    }
    assert quant["methods"]["awq_marlin"]["min_capability"] == 75
    assert quant["schemes"] == {
        "srt/layers/quantization/compressed_tensors/schemes/w8a8_fp8.py:CompressedTensorsW8A8Fp8": 89
    }
    by_cap = quant["by_capability"]
    assert {c: by_cap[c]["fp8_marlin_auto"] for c in by_cap} == {"80": True, "90": False, "100": False}
    assert "float8_e4m3fn" in by_cap["80"]["marlin_types"]


def test_a_release_that_resolves_in_post_init_gives_the_same_answers(ran, tmp_path):
    """SGLang 0.5.18 and older have no resolve_once, resolution_result or arg_groups/choices.py: constructing
    ServerArgs resolves it. The probe asks such a release the same cases and reads the result off the fields."""
    facts = {"engine": "sglang", "release": "9.9.9", "sha256": None, "tables": {"flags": {"method": "read"}}}
    (tmp_path / "sglang").mkdir()
    (tmp_path / "sglang" / "9.9.9.json").write_text(json.dumps(facts))
    proc = _run(tmp_path, "sglang==9.9.9", "--run", "--python", sys.executable, "--caps", "80,90,100", tree=OLD_TREE)
    assert proc.returncode == 0, proc.stderr
    old = json.loads((tmp_path / "sglang" / "9.9.9.ran.json").read_text())
    _, new = ran
    assert old["attention_selector"]["backend_choices"] == new["attention_selector"]["backend_choices"]
    assert old["attention_selector"]["cases"] == new["attention_selector"]["cases"]
    assert _case(old, 90, "mla", asked="trtllm_mla")["refused"].startswith("ValueError: TRTLLM MLA backend")
    assert _case(old, 100, "sparse_mla")["resolved"]["kv_cache_dtype"] == "fp8_e4m3"
    # the table names the code that decided: construction, not a resolve_once this release lacks
    said = json.loads((tmp_path / "sglang" / "9.9.9.json").read_text())["tables"]["attention_selector"]["from"]
    assert said.startswith("sglang/srt/server_args.py: ServerArgs.__post_init__ (") and "resolve_once" not in said
    assert new["attention_selector"]["from"].startswith("sglang/srt/server_args.py: ServerArgs.resolve_once (")


def test_a_release_that_still_names_dsa_nsa_is_asked_and_read_in_its_own_names(tmp_path):
    """SGLang 0.5.12 and older call the DSA backend `nsa` and write its kernels to nsa_prefill_backend /
    nsa_decode_backend: the probe asks `--attention-backend nsa` there and records those fields as the release
    named them, so the DSA picks of such a release are in its table, not lost."""
    facts = {"engine": "sglang", "release": "9.9.9", "sha256": None, "tables": {"flags": {"method": "read"}}}
    (tmp_path / "sglang").mkdir()
    (tmp_path / "sglang" / "9.9.9.json").write_text(json.dumps(facts))
    proc = _run(tmp_path, "sglang==9.9.9", "--run", "--python", sys.executable, "--caps", "90,100", tree=NSA_TREE)
    assert proc.returncode == 0, proc.stderr
    tables = json.loads((tmp_path / "sglang" / "9.9.9.ran.json").read_text())
    assert {c["asked"] for c in tables["attention_selector"]["cases"]} == {
        None,
        "triton",
        "flashinfer",
        "fa3",
        "trtllm_mha",
        "trtllm_mla",
        "nsa",
    }
    hopper, blackwell = _case(tables, 90, "sparse_mla"), _case(tables, 100, "sparse_mla_glm")
    assert hopper["resolved"] == {
        "attention_backend": "nsa",
        "nsa_prefill_backend": "flashmla_sparse",
        "nsa_decode_backend": "fa3",
        "kv_cache_dtype": "bfloat16",
        "page_size": 64,
    }
    assert hopper["warnings"] == ["Setting KV cache dtype to bfloat16 for DeepSeek NSA on SM9 device."]
    assert (blackwell["resolved"]["nsa_prefill_backend"], blackwell["resolved"]["nsa_decode_backend"]) == (
        "trtllm",
        "trtllm",
    )
    asked = _case(tables, 90, "sparse_mla", kv="fp8_e4m3", asked="nsa")["resolved"]
    assert (asked["attention_backend"], asked["nsa_decode_backend"]) == ("nsa", "flashmla_kv")
    # flashinfer's kernel library does not load in this tree: that is the environment's error, not a refusal
    unloaded = _case(tables, 90, "gqa", asked="flashinfer")
    assert "refused" not in unloaded and unloaded["error"] == "ModuleNotFoundError: No module named 'sgl_kernel'"
    errors = tables["attention_selector"]["case_errors"]
    assert errors == {"count": 6 * 3 * 2, "reasons": {"ModuleNotFoundError: No module named 'sgl_kernel'": 36}}
    facts = json.loads((tmp_path / "sglang" / "9.9.9.json").read_text())
    assert facts["tables"]["attention_selector"]["case_errors"] == 36
    # the default DSA pick as a plan names it: prefill + decode, one name where both are the same; `auto` that the
    # release turned into an FP8 cache (DSA on SM 10.0) is left out: it says nothing of what `auto` means elsewhere
    picked = facts["tables"]["attention_selector"]["picked"]
    assert picked["sparse_mla"]["bfloat16"] == {"90": "flashmla_sparse + fa3", "100": "flashmla_sparse + trtllm"}
    assert picked["sparse_mla_glm"]["fp8_e4m3"] == {"90": "flashmla_kv", "100": "trtllm"}
    assert _case(tables, 100, "sparse_mla")["resolved"]["kv_cache_dtype"] == "fp8_e4m3"
    assert "100" not in picked["sparse_mla"]["auto"]


def test_a_release_that_sizes_its_defaults_from_nvidia_smi_is_answered_by_the_stand_in(tmp_path):
    """SGLang 0.5.9 and older run `nvidia-smi --query-gpu=memory.total` while resolving ServerArgs and raise "nvidia-smi
    not found" without it (this host has none): the harvester's stand-in answers with the simulated GPU's memory, so
    every case is the release's own answer, and the ran file says how each GPU's nvidia-smi answered. A query the
    stand-in has no figure for fails loudly: the release swallows it, the harvester does not."""
    facts = {"engine": "sglang", "release": "9.9.9", "sha256": None, "tables": {"flags": {"method": "read"}}}
    (tmp_path / "sglang").mkdir()
    (tmp_path / "sglang" / "9.9.9.json").write_text(json.dumps(facts))
    env_path = os.environ.get("PATH", "")
    assert not any(Path(d, "nvidia-smi").exists() for d in env_path.split(os.pathsep) if d)  # none here
    proc = _run(tmp_path, "sglang==9.9.9", "--run", "--python", sys.executable, "--caps", "86,90", tree=SMI_TREE)
    assert proc.returncode == 0, proc.stderr
    tables = json.loads((tmp_path / "sglang" / "9.9.9.ran.json").read_text())
    selector = tables["attention_selector"]
    assert not any("refused" in c and "nvidia-smi" in selector["reasons"][c["refused"]] for c in selector["cases"])
    assert _case(tables, 90, "sparse_mla")["resolved"]["nsa_decode_backend"] == "fa3"
    query = "nvidia-smi --query-gpu=memory.total --format=csv,noheader,nounits"
    smi = tables["nvidia_smi"]
    assert smi["by_capability"]["86"][query] == "24576" and smi["by_capability"]["90"][query] == "81920"  # MiB
    assert smi["by_capability"]["90"][query] == str(tables["simulated_devices"]["90"]["total_memory"] >> 20)
    assert smi["unanswered"] == ["nvidia-smi topo -C -i 0"] and "stand-in" in smi["how"]
    assert f"nvidia-smi stand-in answered: {query}" in proc.stderr
    assert "nvidia-smi stand-in REFUSED (no simulated answer): nvidia-smi topo -C -i 0" in proc.stderr
    # a release that never runs nvidia-smi gets no such table
    (tmp_path / "sglang" / "9.9.9.ran.json").unlink()
    proc = _run(tmp_path, "sglang==9.9.9", "--run", "--python", sys.executable, "--caps", "90", tree=NSA_TREE)
    assert proc.returncode == 0, proc.stderr
    assert "nvidia_smi" not in json.loads((tmp_path / "sglang" / "9.9.9.ran.json").read_text())


def test_the_stand_in_nvidia_smi_prints_what_the_real_one_prints_and_refuses_the_rest(tmp_path):
    """The forms of the queries the releases run, as nvidia-smi prints them (header and units unless asked not to);
    anything else exits non-zero naming the query, and every call is logged for the ran file. The forms the releases
    run are answered by the script itself, the rest by the same code in Python."""
    code = (
        "import json, subprocess, sys\n"
        f"sys.path.insert(0, {str(ROOT / 'scripts' / 'harvest')!r})\n"
        "import simulated_gpu\n"
        "folder = simulated_gpu.ensure_nvidia_smi(sys.argv[1], 100)\n"
        "asks = [['--query-gpu=compute_cap', '--format=csv,noheader'], ['--query-gpu=name,memory.total', "
        "'--format=csv'], ['--list-gpus'], ['--query-gpu=driver_version', '--format=csv'], ['-q']]\n"
        "out = [subprocess.run(['nvidia-smi', *a], capture_output=True, text=True) for a in asks]\n"
        "calls = simulated_gpu.nvidia_smi_calls(folder, 100)\n"
        "print(json.dumps([[p.returncode, p.stdout, p.stderr] for p in out] + [calls]))"
    )
    proc = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    *answers, calls = json.loads(proc.stdout)
    assert answers[0] == [0, "10.0\n", ""]
    assert answers[1] == [0, "name, memory.total [MiB]\nNVIDIA simulated sm_100, 184320 MiB\n", ""]
    assert answers[2][:2] == [0, "GPU 0: NVIDIA simulated sm_100 (UUID: GPU-00000000-0000-0000-0000-000000000000)\n"]
    for returncode, stdout, stderr in answers[3:]:
        assert returncode != 0 and stdout == "" and "no simulated answer for `nvidia-smi " in stderr
    assert calls["unanswered"] == ["nvidia-smi --query-gpu=driver_version --format=csv", "nvidia-smi -q"]
    assert len(calls["answered"]) == 3


def test_run_for_an_engine_without_a_probe_is_refused_in_one_line(tmp_path):
    proc = _run(tmp_path, "llama.cpp==0c1e570", "--run")
    assert (proc.returncode, proc.stderr.strip()) == (
        2,
        "llama.cpp==0c1e570: --run asks the release's own code: expected vllm==VERSION or sglang==VERSION",
    )


@pytest.mark.parametrize(
    ("shape", "model"),
    [
        ("gqa", "llama-3.1-8b"),
        ("sinks", "gpt-oss-120b"),
        ("mla", "deepseek-v3"),
        ("sparse_mla", "deepseek-v3.2"),
        ("sparse_mla_glm", "glm-5"),
        ("hybrid_linear", "qwen3-next-80b-a3b-instruct"),
    ],
)
def test_each_stand_in_model_folder_says_what_its_checkpoint_says(catalog, shape, model):
    """A release resolves from the checkpoint's architecture and model_type, and older releases rewrite an unknown
    model_type themselves (SGLang 0.5.11 loads deepseek_v32 as DeepseekV3ForCausalLM, the architecture its DSA
    switch asks for; a stand-in saying deepseek_v3 was resolved as dense MLA). Each stand-in names what the
    catalog's model of that shape names."""
    sys.path.insert(0, str(ROOT / "scripts" / "harvest"))
    try:
        import sglang_probe
    finally:
        sys.path.pop(0)
    config, known = sglang_probe.SHAPES[shape], catalog.models[model]
    assert (config["architectures"][0], config["model_type"]) == (known.architecture, known.model_type)
