"""scripts/harvest --run on a stand-in vLLM install (tests/harvest/data/vllm-run-tree: no engine, no GPU)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TREE = Path(__file__).parent / "data" / "vllm-run-tree"


def _run(out: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(TREE), **(env or {})}
    command = [sys.executable, str(ROOT / "scripts" / "harvest"), *args, "--out", str(out), "--today", "2026-12-02"]
    return subprocess.run(command, capture_output=True, text=True, timeout=120, env=env)


def _stand_in_run(out: Path, selector: str, caps: str) -> dict:
    """A run against the stand-in tree shaped as release `selector` lays out its selector; the ran tables."""
    (out / "vllm").mkdir()
    facts = {"engine": "vllm", "release": "9.9.9", "sha256": None, "tables": {}}
    (out / "vllm" / "9.9.9.json").write_text(json.dumps(facts))
    proc = _run(
        out, "vllm==9.9.9", "--run", "--python", sys.executable, "--caps", caps, env={"STAND_IN_SELECTOR": selector}
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads((out / "vllm" / "9.9.9.ran.json").read_text())


@pytest.fixture(scope="module")
def ran_folder(tmp_path_factory):
    """The folder `--run` wrote a stand-in release's files into (facts, ran tables, the selector's picks)."""
    out = tmp_path_factory.mktemp("ran")
    facts = {"engine": "vllm", "release": "9.9.9", "sha256": None, "tables": {"architectures": {"method": "read"}}}
    (out / "vllm").mkdir()
    (out / "vllm" / "9.9.9.json").write_text(json.dumps(facts))
    proc = _run(out, "vllm==9.9.9", "--run", "--python", sys.executable, "--caps", "75,90,100")
    assert proc.returncode == 0, proc.stderr
    return out / "vllm"


@pytest.fixture(scope="module")
def ran(ran_folder):
    return json.loads((ran_folder / "9.9.9.json").read_text()), json.loads((ran_folder / "9.9.9.ran.json").read_text())


@pytest.fixture(scope="module")
def picks(ran, ran_folder):
    """The run's side file of picks per case, named by the facts file."""
    name = ran[0]["tables"]["attention_selector"]["selected_file"]
    assert name == "9.9.9.selected.json"
    return json.loads((ran_folder / name).read_text())


def _case(tables, cap, **want):
    found = [
        c
        for c in tables["attention_selector"]["cases"]
        if c["capability"] == cap and all(c.get(k) == v for k, v in want.items())
    ]
    assert len(found) == 1, (cap, want, len(found))
    case = dict(found[0])
    reasons = tables["attention_selector"]["reasons"]
    case["rejected"] = {b: [reasons[i] for i in why] for b, why in case.get("rejected", {}).items()}
    return case


def test_the_facts_file_names_both_ran_tables_and_keeps_the_read_ones(ran):
    facts, tables = ran
    assert facts["tables"]["architectures"] == {"method": "read"}
    for name in ("attention_selector", "quantization"):
        entry = facts["tables"][name]
        assert (entry["method"], entry["file"], entry["ran_on"]) == ("ran", "9.9.9.ran.json", "2026-12-02")
        assert entry["capabilities"] == [75, 90, 100]
    assert tables["method"] == "ran" and tables["release"] == "9.9.9" and tables["libcuda"] == "not needed"
    assert "ran_failed" not in facts and "case_errors" not in facts["tables"]["attention_selector"]


def test_torch_cuda_answers_for_the_simulated_gpu_in_the_whole_probe(ran):
    """A backend that asks torch.cuda itself while validating (0.16.0's FLASH_ATTN) gets the simulated GPU, not
    "Found no NVIDIA driver"; the device each capability stood for is recorded with the tables."""
    _, tables = ran
    assert tables["attention_selector"]["case_errors"] == {"count": 0, "reasons": {}}
    hopper = _case(tables, 90, shape="gqa", variant="sinks", head_size=128, kv="auto")
    assert "sink setting not supported" not in hopper["rejected"].get("FLASH_ATTN", [])
    device = tables["simulated_devices"]["90"]
    assert (device["major"], device["minor"], device["multi_processor_count"]) == (9, 0, 132)
    assert device["total_memory"] == 80 << 30 and device["name"] == "NVIDIA simulated sm_90"


def test_valid_backends_in_priority_order_the_choice_and_the_release_s_reasons(ran):
    _, tables = ran
    hopper = _case(tables, 90, shape="gqa", variant="plain", head_size=128, kv="fp8")
    assert hopper["valid"] == ["FLASH_ATTN", "TRITON_ATTN"] and hopper["selected"] == "FLASH_ATTN"
    # a backend that cannot import is the selector's own reason, as vLLM reports it
    assert hopper["rejected"]["MISSING_ATTN"][0].startswith("ModuleNotFoundError: No module named")
    turing = _case(tables, 75, shape="gqa", variant="sinks", head_size=128, kv="fp8")
    assert turing["valid"] == [] and turing["selected"] is None
    assert turing["rejected"]["FLASH_ATTN"] == [
        "compute capability not supported",
        "kv_cache_dtype not supported",
        "sink setting not supported",
    ]
    assert "No valid attention backend found for simulated sm_75" in turing["selection_error"]
    odd = _case(tables, 90, shape="gqa", variant="plain", head_size=80, kv="auto")
    assert odd["valid"] == ["TRITON_ATTN"] and odd["rejected"]["FLASH_ATTN"] == ["head_size not supported"]


def test_a_backend_that_allocates_on_the_gpu_at_import_still_answers(ran):
    _, tables = ran
    assert "CUTLASS_MLA" in tables["attention_selector"]["imports"]["100"]
    dense = _case(tables, 100, shape="mla", head_size=576, kv="auto", profile="none")
    assert dense["valid"] == ["CUTLASS_MLA", "TRITON_MLA"]
    # the model's own dims reach the backends that read them (a stand-in model config)
    glm = _case(tables, 100, shape="mla", head_size=576, kv="auto", profile="glm5_sparse_nope192")
    assert glm["valid"] == ["CUTLASS_MLA"] and glm["rejected"]["TRITON_MLA"] == ["qk_nope_head_dim 192 not supported"]


def test_quantization_minimums_and_kernels_per_capability(ran):
    _, tables = ran
    quant = tables["quantization"]
    assert quant["methods"]["fp8"] == {
        "class": "Fp8Config",
        "module": "model_executor/layers/quantization/fp8.py",
        "min_capability": 75,
        "deprecated": False,
    }
    assert quant["methods"]["fbgemm_fp8"]["deprecated"] is True
    assert quant["schemes"] == {
        "model_executor/layers/quantization/compressed_tensors/schemes/compressed_tensors_w8a8_fp8.py:"
        "CompressedTensorsW8A8Fp8": 89
    }
    fp8 = quant["linear_kernels"]["fp8_w8a8"]
    assert fp8["candidates"] == ["CutlassFP8ScaledMMLinearKernel", "MarlinFP8ScaledMMLinearKernel"]
    # each capability in a fresh interpreter: a module that freezes the GPU at import sees each one
    assert fp8["first_supported"] == {
        "75": "MarlinFP8ScaledMMLinearKernel",
        "90": "CutlassFP8ScaledMMLinearKernel",
        "100": "CutlassFP8ScaledMMLinearKernel",
    }
    assert fp8["by_capability"]["75"]["CutlassFP8ScaledMMLinearKernel"].startswith("no: requires capability 89")
    assert quant["linear_kernels"]["wna16"]["by_capability"]["75"] == {"MarlinLinearKernel": "supported"}
    assert quant["moe_kernels"]["fp8"]["DEEPGEMM"] == {"DeepGemmExperts": {"75": False, "90": True, "100": True}}


def test_an_int8_table_named_as_the_wna16_one_is_read_as_int8(tmp_path):
    """0.14.0's scaled_mm keeps its INT8 W8A8 kernels in `_POSSIBLE_KERNELS`, the name the wNa16 table has in the
    mixed-precision module: each family gets its own table."""
    linear = _stand_in_run(tmp_path, "0.14.0", "90")["quantization"]["linear_kernels"]
    assert linear["int8_w8a8"]["candidates"] == ["CutlassScaledMMLinearKernel"]
    assert linear["wna16"]["candidates"] == ["MarlinLinearKernel"]


def test_a_capability_whose_probe_fails_is_left_out_of_its_table_with_the_reason(tmp_path):
    (tmp_path / "vllm").mkdir()
    facts = {"engine": "vllm", "release": "9.9.9", "sha256": None, "tables": {}}
    (tmp_path / "vllm" / "9.9.9.json").write_text(json.dumps(facts))
    proc = _run(tmp_path, "vllm==9.9.9", "--run", "--python", sys.executable, "--caps", "61,90")
    assert proc.returncode == 0, proc.stderr
    assert "attention_selector: 147 cases in" in proc.stderr and "failed on sm_61" in proc.stderr
    written = json.loads((tmp_path / "vllm" / "9.9.9.json").read_text())
    selector = written["tables"]["attention_selector"]
    assert selector["capabilities"] == [90] and list(selector["failed_capabilities"]) == ["61"]
    assert "NotImplementedError: no CUDA attention backends below 7.0" in selector["failed_capabilities"]["61"]
    assert written["tables"]["quantization"]["capabilities"] == [61, 90]  # its kernel tables answered on both
    # asked only where it fails everywhere: no selector table, the reason in the facts file instead
    proc = _run(tmp_path, "vllm==9.9.9", "--run", "--python", sys.executable, "--caps", "61")
    assert proc.returncode == 1 and "attention_selector: FAILED: sm_61: probe --cap 61" in proc.stderr
    written = json.loads((tmp_path / "vllm" / "9.9.9.json").read_text())
    assert "attention_selector" not in written["tables"] and written["tables"]["quantization"]["method"] == "ran"
    failure = written["ran_failed"]["attention_selector"]
    assert (failure["method"], failure["tried_on"]) == ("ran", "2026-12-02")
    assert "no CUDA attention backends below 7.0" in failure["reason"]
    assert "attention_selector" not in json.loads((tmp_path / "vllm" / "9.9.9.ran.json").read_text())


def test_an_install_that_fails_is_recorded_for_both_tables(tmp_path):
    (tmp_path / "vllm").mkdir()
    facts = {"engine": "vllm", "release": "9.9.9", "sha256": None, "tables": {"flags": {"method": "read"}}}
    (tmp_path / "vllm" / "9.9.9.json").write_text(json.dumps(facts))
    env = {"HARVEST_PYTHON": str(tmp_path / "no-such-python")}
    proc = _run(tmp_path, "vllm==9.9.9", "--run", "--venv", str(tmp_path / "venv"), env=env)
    assert proc.returncode == 1 and "FAILED" in proc.stderr
    written = json.loads((tmp_path / "vllm" / "9.9.9.json").read_text())
    assert written["tables"] == {"flags": {"method": "read"}}
    assert set(written["ran_failed"]) == {"attention_selector", "quantization"}
    assert "no-such-python" in written["ran_failed"]["quantization"]["reason"]


def test_run_without_a_read_harvest_or_for_another_engine_is_refused_in_one_line(tmp_path):
    proc = _run(tmp_path, "vllm==9.9.9", "--run", "--python", sys.executable)
    assert proc.returncode == 2
    assert proc.stderr.strip().endswith("does not exist: run python scripts/harvest vllm==9.9.9 first")
    proc = _run(tmp_path, "vllm", "--run")
    assert (proc.returncode, proc.stderr.strip()) == (
        2,
        "vllm: --run asks the release's own code: expected vllm==VERSION or sglang==VERSION",
    )


def test_an_interpreter_of_another_release_fails_naming_both(tmp_path):
    (tmp_path / "vllm").mkdir()
    (tmp_path / "vllm" / "1.0.0.json").write_text(json.dumps({"engine": "vllm", "release": "1.0.0", "tables": {}}))
    proc = _run(tmp_path, "vllm==1.0.0", "--run", "--python", sys.executable, "--caps", "90")
    assert proc.returncode == 1
    assert "imports vllm 9.9.9, not 1.0.0" in proc.stderr
    assert not (tmp_path / "vllm" / "1.0.0.ran.json").exists()


def test_probe_builds_no_stand_in_driver_library_where_none_is_linked(tmp_path):
    sys.path.insert(0, str(ROOT / "scripts" / "harvest"))
    try:
        import vllm_probe
    finally:
        sys.path.pop(0)
    assert vllm_probe.ensure_libcuda(str(tmp_path / "stub")) in ("system", "not needed")
    assert not (tmp_path / "stub").exists()


@pytest.mark.skipif(not all(shutil.which(t) for t in ("gcc", "nm", "readelf")), reason="needs gcc, nm and readelf")
def test_the_stand_in_driver_library_serves_the_release_put_before_the_venv(tmp_path):
    """A release installed with `pip install --target DIR` and put first on PYTHONPATH (a wrapper given as --python)
    shadows the venv's copy: the driver entry points its extension modules import are the ones the stand-in must
    export, or they fail to load (SGLang 0.5.13's sgl_kernel 0.4.3 imports cuMemAddressFree, 0.5.14's 0.4.4 not)."""
    driver, overlay = tmp_path / "driver", tmp_path / "overlay" / "sgl_kernel"
    driver.mkdir()
    overlay.mkdir(parents=True)
    (driver / "cuda.c").write_text("int cuMemAddressFree(void) { return 0; }\n")
    cc = ["gcc", "-shared", "-fPIC"]
    subprocess.run([*cc, "-o", driver / "libcuda.so.1", driver / "cuda.c", "-Wl,-soname,libcuda.so.1"], check=True)
    (overlay / "ops.c").write_text("int cuMemAddressFree(void);\nint op(void) { return cuMemAddressFree(); }\n")
    link = [f"-L{driver}", "-l:libcuda.so.1"]
    subprocess.run([*cc, "-o", overlay / "common_ops.abi3.so", overlay / "ops.c", *link], check=True)
    (overlay / "__init__.py").write_text("")
    code = (
        f"import sys; sys.path.insert(0, {str(ROOT / 'scripts' / 'harvest')!r}); import simulated_gpu as s; "
        "print(sorted(s._driver_symbols(('sgl_kernel',))))"
    )
    env = {**os.environ, "PYTHONPATH": str(overlay.parent)}
    env.pop("TRITON_LIBCUDA_PATH", None)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "['cuMemAddressFree']"
    # the stand-in built for it is also where Triton 3.3 (vLLM 0.10.x) looks for the driver library
    stub = tmp_path / "stub"
    code = (
        f"import os, sys; sys.path.insert(0, {str(ROOT / 'scripts' / 'harvest')!r}); import simulated_gpu as s; "
        f"print(s.ensure_libcuda({str(stub)!r}), os.environ['TRITON_LIBCUDA_PATH'])"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == [str(stub / "libcuda.so.1"), str(stub)]


@pytest.mark.skipif(not all(shutil.which(t) for t in ("gcc", "nm", "readelf")), reason="needs gcc, nm and readelf")
def test_triton_s_launcher_helper_links_and_loads_against_the_stand_in(tmp_path):
    """Triton 3.3 (vLLM 0.10.0/0.10.1) builds its launcher helper with `gcc -lcuda -L$TRITON_LIBCUDA_PATH` as soon as a
    module defines its kernels, and Python loads it with every symbol bound: the stand-in answers to the unversioned
    name and exports the entry points the helper's source (triton/backends/nvidia/driver.c) calls."""
    overlay = tmp_path / "overlay"
    (overlay / "vllm").mkdir(parents=True)
    (overlay / "triton" / "backends" / "nvidia").mkdir(parents=True)
    for package in ("vllm", "triton"):
        (overlay / package / "__init__.py").write_text("")
    helper = "int cuInit(int);\nint cuModuleLoadData(void **, const void *);\n"
    helper += "int launch(void) { cuInit(0); return cuModuleLoadData(0, 0); }\n"
    (overlay / "triton" / "backends" / "nvidia" / "driver.c").write_text(helper)
    # the release's extension links the driver library by its versioned name, importing one entry point
    driver = tmp_path / "driver"
    driver.mkdir()
    (driver / "cuda.c").write_text("int cuInit(int f) { return f; }\n")
    cc = ["gcc", "-shared", "-fPIC"]
    subprocess.run([*cc, "-o", driver / "libcuda.so.1", driver / "cuda.c", "-Wl,-soname,libcuda.so.1"], check=True)
    (overlay / "vllm" / "ops.c").write_text("int cuInit(int);\nint op(void) { return cuInit(0); }\n")
    ops = overlay / "vllm" / "ops.c"
    subprocess.run([*cc, "-o", overlay / "vllm" / "_C.so", ops, f"-L{driver}", "-l:libcuda.so.1"], check=True)
    stub, built = tmp_path / "stub", tmp_path / "cuda_utils.so"
    code = (
        f"import ctypes, os, subprocess, sys; sys.path.insert(0, {str(ROOT / 'scripts' / 'harvest')!r}); "
        f"import simulated_gpu as s; s.ensure_libcuda({str(stub)!r}); d = os.environ['TRITON_LIBCUDA_PATH']; "
        f"subprocess.run(['gcc', '-shared', '-fPIC', '-o', {str(built)!r}, "
        f"{str(overlay / 'triton' / 'backends' / 'nvidia' / 'driver.c')!r}, '-lcuda', '-L' + d], check=True); "
        f"ctypes.CDLL({str(built)!r}); print('loaded')"
    )
    env = {**os.environ, "PYTHONPATH": str(overlay)}
    env.pop("TRITON_LIBCUDA_PATH", None)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "loaded"
    assert os.readlink(stub / "libcuda.so") == "libcuda.so.1"


def test_a_selector_without_a_sliding_window_input_answers_windowed_layers_as_plain_ones(tmp_path):
    """0.16.0's selector takes no sliding-window input: a windowed layer gets the plain layer's backends, marked so."""
    tables = _stand_in_run(tmp_path, "0.16.0", "90")
    assert tables["attention_selector"]["case_errors"] == {"count": 0, "reasons": {}}
    windowed = _case(tables, 90, shape="gqa", variant="sliding_window", head_size=128, kv="auto")
    plain = _case(tables, 90, shape="gqa", variant="plain", head_size=128, kv="auto")
    assert windowed["not_selector_input"] == ["has_sliding_window"] and "not_selector_input" not in plain
    assert windowed["valid"] == plain["valid"] and windowed["selected"] == plain["selected"] == "FLASH_ATTN"


def test_a_selector_without_a_config_is_asked_with_each_input_as_its_own_keyword(ran, tmp_path):
    """0.12.0 and 0.11.1 have no AttentionSelectorConfig: get_valid_backends takes head_size, kv_cache_dtype, use_mla …
    and attn_type (the decoder's) as keywords and returns (backend, priority) pairs and reasons per backend; the
    probe asks it so and gets the answers the config-shaped selector gives for the same backends."""
    _, by_config = ran
    tables = _stand_in_run(tmp_path, "0.12.0", "75,90,100")
    assert tables["attention_selector"]["case_errors"] == {"count": 0, "reasons": {}}
    hopper = _case(tables, 90, shape="gqa", variant="plain", head_size=128, kv="fp8")
    assert hopper["valid"] == ["FLASH_ATTN", "TRITON_ATTN"] and hopper["selected"] == "FLASH_ATTN"
    assert hopper["rejected"] == {"MISSING_ATTN": ["ImportError"]}  # that release's own words for it
    turing = _case(tables, 75, shape="gqa", variant="sinks", head_size=128, kv="fp8")
    assert turing["valid"] == [] and "No valid attention backend found for simulated sm_75" in turing["selection_error"]
    windowed = _case(tables, 90, shape="gqa", variant="sliding_window", head_size=128, kv="auto")
    assert windowed["not_selector_input"] == ["has_sliding_window"]
    mine, theirs = _expanded(tables)[0], _expanded(by_config)[0]
    assert len(mine) == len(theirs)
    for a, b in zip(mine, theirs, strict=True):
        assert (a["valid"], a["selected"]) == (b["valid"], b["selected"]), a
        assert {k: v for k, v in a["rejected"].items() if k != "MISSING_ATTN"} == {
            k: v for k, v in b["rejected"].items() if k != "MISSING_ATTN"
        }, a


def test_a_kv_cache_dtype_no_backend_takes_is_named_in_the_facts_file(ran, tmp_path):
    """vLLM 0.14.0 and older offer `--kv-cache-dtype bfloat16` but none of their backends takes it (each wants `auto`
    for a 16-bit cache): the facts file, which a plan reads, names the value the selector refused on every GPU and
    shape; a selector that takes it somewhere names none."""
    facts, _ = ran
    assert "kv_cache_dtypes_no_backend_takes" not in facts["tables"]["attention_selector"]
    tables = _stand_in_run(tmp_path, "0.14.0", "90,100")
    refused = [c for c in tables["attention_selector"]["cases"] if c["kv"] == "bfloat16"]
    assert refused and all(c["valid"] == [] for c in refused)
    entry = json.loads((tmp_path / "vllm" / "9.9.9.json").read_text())["tables"]["attention_selector"]
    assert entry["kv_cache_dtypes_no_backend_takes"] == ["bfloat16"]


def _expanded(tables):
    reasons = tables["attention_selector"]["reasons"]
    cases = [
        {**c, "rejected": {b: [reasons[i] for i in why] for b, why in c.get("rejected", {}).items()}}
        for c in tables["attention_selector"]["cases"]
    ]
    return cases, {k: v for k, v in tables["attention_selector"].items() if k not in ("reasons", "cases")}


def test_merge_adds_capabilities_to_the_committed_run_as_one_run_of_all_of_them_would(ran, tmp_path):
    _, whole = ran
    (tmp_path / "vllm").mkdir()
    facts = {"engine": "vllm", "release": "9.9.9", "sha256": None, "tables": {"architectures": {"method": "read"}}}
    (tmp_path / "vllm" / "9.9.9.json").write_text(json.dumps(facts))
    first = _run(tmp_path, "vllm==9.9.9", "--run", "--python", sys.executable, "--caps", "75,100")
    assert first.returncode == 0, first.stderr
    proc = _run(tmp_path, "vllm==9.9.9", "--run", "--python", sys.executable, "--caps", "90", "--merge")
    assert proc.returncode == 0, proc.stderr
    merged = json.loads((tmp_path / "vllm" / "9.9.9.ran.json").read_text())
    assert merged["attention_selector"]["capabilities"] == merged["quantization"]["capabilities"] == [75, 90, 100]
    assert _expanded(merged) == _expanded(whole)
    assert merged["quantization"] == whole["quantization"] and merged["simulated_devices"] == whole["simulated_devices"]
    written = json.loads((tmp_path / "vllm" / "9.9.9.json").read_text())
    assert written["tables"]["attention_selector"]["count"] == len(whole["attention_selector"]["cases"])
    # without --merge a run replaces the committed one
    proc = _run(tmp_path, "vllm==9.9.9", "--run", "--python", sys.executable, "--caps", "90")
    assert json.loads((tmp_path / "vllm" / "9.9.9.ran.json").read_text())["quantization"]["capabilities"] == [90]


def test_merge_of_a_capability_already_in_the_table_replaces_its_cases(ran, tmp_path):
    """A capability rerun after a probe fix (0.26.0's SM90 MLA cases that errored): its cases, errors and
    kernel verdicts are this run's, the other capabilities stay as they were."""
    facts_before, whole = ran
    (tmp_path / "vllm").mkdir()
    (tmp_path / "vllm" / "9.9.9.json").write_text(json.dumps(facts_before))
    stale = json.loads(json.dumps(whole))
    selector = stale["attention_selector"]
    selector["reasons"].append("AttributeError: stand-in has no hf_config")
    broken = 0
    for case in selector["cases"]:
        if case["capability"] == 90 and case["shape"] != "gqa":
            for key in ("order", "valid", "selected", "rejected"):
                case.pop(key, None)
            case["error"] = "AttributeError: stand-in has no hf_config"
            broken += 1
    selector["case_errors"] = {"count": broken, "reasons": {"AttributeError: stand-in has no hf_config": broken}}
    stale["quantization"]["linear_kernels"]["fp8_w8a8"]["first_supported"]["90"] = "stale"
    stale["ran_on"] = "2026-12-01"
    (tmp_path / "vllm" / "9.9.9.ran.json").write_text(json.dumps(stale))
    proc = _run(tmp_path, "vllm==9.9.9", "--run", "--python", sys.executable, "--caps", "90", "--merge")
    assert proc.returncode == 0 and "unanswered" not in proc.stderr, proc.stderr
    merged = json.loads((tmp_path / "vllm" / "9.9.9.ran.json").read_text())
    assert broken > 0 and _expanded(merged) == _expanded(whole)
    assert merged["quantization"] == whole["quantization"]
    assert merged["earlier_run"] == [{"ran_on": "2026-12-01", "capabilities": [75, 100]}]
    written = json.loads((tmp_path / "vllm" / "9.9.9.json").read_text())
    assert "case_errors" not in written["tables"]["attention_selector"]


def test_a_release_merged_on_several_days_keeps_the_day_each_capability_ran(ran, tmp_path):
    """0.26.0: sm_80/100/120 ran one day, sm_90 the next, the rest a third: a merge keeps each kept capability's
    own day instead of stamping all of them with the committed run's last one."""
    facts_before, whole = ran
    (tmp_path / "vllm").mkdir()
    (tmp_path / "vllm" / "9.9.9.json").write_text(json.dumps(facts_before))
    twice = {**whole, "ran_on": "2026-12-01", "earlier_run": {"ran_on": "2026-11-30", "capabilities": [75, 90]}}
    (tmp_path / "vllm" / "9.9.9.ran.json").write_text(json.dumps(twice))
    proc = _run(tmp_path, "vllm==9.9.9", "--run", "--python", sys.executable, "--caps", "90", "--merge")
    assert proc.returncode == 0, proc.stderr
    merged = json.loads((tmp_path / "vllm" / "9.9.9.ran.json").read_text())
    assert merged["ran_on"] == "2026-12-02"
    assert merged["earlier_run"] == [
        {"ran_on": "2026-11-30", "capabilities": [75]},
        {"ran_on": "2026-12-01", "capabilities": [100]},
    ]


def test_merge_refuses_a_run_from_other_packages_in_one_line(tmp_path):
    (tmp_path / "vllm").mkdir()
    facts = {"engine": "vllm", "release": "9.9.9", "sha256": None, "tables": {}}
    (tmp_path / "vllm" / "9.9.9.json").write_text(json.dumps(facts))
    assert _run(tmp_path, "vllm==9.9.9", "--run", "--python", sys.executable, "--caps", "75").returncode == 0
    committed = tmp_path / "vllm" / "9.9.9.ran.json"
    before = json.loads(committed.read_text())
    committed.write_text(json.dumps({**before, "packages": {"torch": "0.0.1"}}))
    proc = _run(tmp_path, "vllm==9.9.9", "--run", "--python", sys.executable, "--caps", "90", "--merge")
    assert proc.returncode == 1
    assert "--merge: the committed run has packages {'torch': '0.0.1'}, this one" in proc.stderr
    assert json.loads(committed.read_text())["quantization"]["capabilities"] == [75]


def _ran_module():
    sys.path.insert(0, str(ROOT / "scripts" / "harvest"))
    try:
        import ran as module
    finally:
        sys.path.pop(0)
    return module


def test_merge_takes_a_package_the_committed_run_did_not_stamp_only_at_the_version_the_release_pins(tmp_path):
    """A run stamped before PACKAGES named xformers lacks it; the release pins xformers==V, so pip installed V for that
    run too: a new run with V merges (and says so), one with another version or without the pin is refused."""
    module = _ran_module()
    before = {"release": "9.9.9", "python": "3.11.7", "packages": {"torch": "2.8.0"}, "ran_on": "2026-12-01"}
    now = {**before, "packages": {"torch": "2.8.0", "xformers": "0.0.32.post1"}, "ran_on": "2026-12-07"}
    now |= {"simulated_devices": {}, **{t: {"failed": "not asked here"} for t in module.RAN_TABLES}}
    merged = module.merge(before, now, (70,), {"torch": "2.8.0", "xformers": "0.0.32.post1"})
    assert merged["packages_pinned_not_stamped"]["packages"] == {"xformers": "0.0.32.post1"}
    for pins in ({"xformers": "0.0.33"}, None):
        with pytest.raises(RuntimeError, match="the committed run has packages"):
            module.merge(before, now, (70,), pins)
    # the release's own pins, read in its interpreter: exact `==` pins whose marker holds, no extras
    site = tmp_path / "site" / "fake-1.0.dist-info"
    site.mkdir(parents=True)
    requires = ["xformers==0.0.32.post1", "torch>=2.8", 'flashinfer-python==0.3.1; extra == "flashinfer"']
    requires += ['winonly==1.0; sys_platform == "win32"']
    lines = ["Metadata-Version: 2.1", "Name: fake", "Version: 1.0", *(f"Requires-Dist: {r}" for r in requires)]
    (site / "METADATA").write_text("\n".join(lines) + "\n")
    wrapper = tmp_path / "python"
    wrapper.write_text(f'#!/bin/sh\nPYTHONPATH={site.parent} exec {sys.executable} "$@"\n')
    wrapper.chmod(0o755)
    assert module.pinned(wrapper, "fake") == {"xformers": "0.0.32.post1"}


def test_a_selector_that_walks_an_if_else_chain_records_its_choice_per_block_size(tmp_path):
    """0.10.x/0.11.0 have no candidate list: get_attn_backend_cls walks an if/else chain and returns one class path.
    A case records the backend it chose at the block size the release sets for the model (check_and_update_config)
    and at each block size a user may pass, under the name the class gives itself; no valid list and no rejection
    reason is made up, and the table says the release states none."""
    tables = _stand_in_run(tmp_path, "0.10.2", "80,100")
    selector = tables["attention_selector"]
    assert "if/else chain" in selector["from"]
    assert selector["chain"]["rejections"].startswith("not stated by the release")
    assert selector["chain"]["use_v1"] is True
    assert selector["chain"]["backends"] == [
        "CUTLASS_MLA",
        "FLASHMLA",
        "FLASH_ATTN",
        "TRITON_ATTN",
        "TRITON_MLA",
        "XFORMERS",
    ]
    for case in selector["cases"]:
        assert not {"order", "valid", "rejected"} & set(case), case
    blackwell = _case(tables, 100, shape="mla", head_size=576, kv="auto", profile="deepseek_v3_dense")
    assert (blackwell["block_size"], blackwell["selected"]) == (128, "CUTLASS_MLA")
    by_block = {"16": "TRITON_MLA", "32": "TRITON_MLA", "64": "TRITON_MLA", "128": "CUTLASS_MLA"}
    assert blackwell["by_block_size"] == by_block
    ampere = _case(tables, 80, shape="mla", head_size=576, kv="auto", profile="deepseek_v3_dense")
    assert (ampere["block_size"], ampere["selected"]) == (16, "TRITON_MLA")
    # the release's env write on SM 10.0 (VLLM_ATTENTION_BACKEND=CUTLASS_MLA) does not leak into the next case
    assert _case(tables, 100, shape="mla", head_size=512, kv="auto", profile="none")["block_size"] == 128
    assert _case(tables, 100, shape="gqa", variant="sinks", head_size=128, kv="auto")["selected"] == "TRITON_ATTN"
    assert _case(tables, 80, shape="gqa", variant="plain", head_size=128, kv="auto")["selected"] == "FLASH_ATTN"
    odd = _case(tables, 80, shape="gqa", variant="plain", head_size=80, kv="auto")
    assert odd["selected"] is None and odd["selection_error"] == "ValueError: head size 80 is not supported"
    windowed = _case(tables, 80, shape="gqa", variant="sliding_window", head_size=128, kv="fp8")
    assert windowed["not_selector_input"] == ["has_sliding_window"] and windowed["selected"] == "TRITON_ATTN"
    # a shape the chain has no input for is not asked: 0.10.2 takes no use_sparse
    sparse = _case(tables, 100, shape="sparse_mla", head_size=576, kv="auto", heads_per_rank=16, profile="none")
    assert sparse["error"] == "get_attn_backend_cls has no use_sparse" and "selected" not in sparse
    assert selector["case_errors"]["reasons"] == {"get_attn_backend_cls has no use_sparse": 100}
    assert "CUTLASS_MLA" in selector["imports"]["100"]  # its module allocates on the GPU at import


def test_a_chain_whose_default_engine_is_v0_is_asked_for_v0(tmp_path):
    """0.7.x runs its V0 engine unless VLLM_USE_V1=1 (envs.py default "0"), and its chain answers V1 with
    FlashAttention whatever the GPU: the run asks the engine a user gets, so a Turing GPU and an FP8 KV cache get
    XFORMERS, and the table says which engine was asked."""
    tables = _stand_in_run(tmp_path, "0.7.3", "75,80")
    chain = tables["attention_selector"]["chain"]
    assert chain["use_v1"] is False and "use_v1=False" in chain["asked"] and "V0" in chain["asked"]
    assert _case(tables, 80, shape="gqa", variant="plain", head_size=128, kv="auto")["selected"] == "FLASH_ATTN"
    assert _case(tables, 80, shape="gqa", variant="plain", head_size=128, kv="fp8")["selected"] == "XFORMERS"
    assert _case(tables, 80, shape="gqa", variant="plain", head_size=80, kv="auto")["selected"] == "XFORMERS"
    assert _case(tables, 75, shape="gqa", variant="plain", head_size=128, kv="auto")["selected"] == "XFORMERS"
    mla = _case(tables, 80, shape="mla", head_size=576, kv="auto", profile="deepseek_v3_dense")
    assert mla["selected"] == "TRITON_MLA"


def test_the_side_file_keeps_the_backend_selected_per_case(ran, picks):
    """What the catalog reads when a plan asks which kernel the release picks: the selected backend per case,
    compact, beside the facts file (which every request touching the release reads, so it does not carry them)."""
    facts, tables = ran
    assert "selected" not in facts["tables"]["attention_selector"]
    selected = picks["selected"]
    asked = [c for c in tables["attention_selector"]["cases"] if "valid" in c and c.get("selected")]
    assert asked
    for case in asked:
        which = case.get("variant", "plain") if case["shape"] == "gqa" else case["head_size"]
        key = f"{case['shape']}/{which}/{case['head_size']}/{case.get('profile') or '-'}"
        got = selected[key][case["kv"]][str(case["capability"])]
        heads = case.get("heads_per_rank")
        assert (got if heads is None else got[str(heads)]) == case["selected"]


def test_summaries_are_recomputed_from_the_committed_run_without_rerunning(ran, picks, tmp_path):
    """A facts file from before the picks moved (inline `selected`, no side file), as a merged run may bring:
    --summaries moves them beside it."""
    facts, tables = ran
    (tmp_path / "vllm").mkdir()
    old = json.loads(json.dumps(facts))
    entry = old["tables"]["attention_selector"]
    entry.pop("selected_file")
    entry["selected"] = picks["selected"]
    (tmp_path / "vllm" / "9.9.9.json").write_text(json.dumps(old))
    (tmp_path / "vllm" / "9.9.9.ran.json").write_text(json.dumps(tables))
    proc = _run(tmp_path, "vllm==9.9.9", "--summaries")
    assert proc.returncode == 0 and "summaries rewritten" in proc.stderr, proc.stderr
    assert json.loads((tmp_path / "vllm" / "9.9.9.json").read_text()) == facts
    assert json.loads((tmp_path / "vllm" / "9.9.9.selected.json").read_text()) == picks


def test_a_v0_selector_records_the_backend_its_selector_module_chooses_per_block_size(tmp_path):
    """0.6.6 and older run the V0 engine only: the platform chooses nothing, vllm/attention/selector.py's
    get_attn_backend does (its inputs differ per release) and returns one class, decided by which_attn_to_use. A case
    records that choice by the release's `_Backend` name (not the class's display name) at EngineArgs' default block
    size and at each size a user may pass; the module bound the platform 0.6.x resolved at `import vllm` (not CUDA
    here), and the platform module asks NVML as it loads (no driver here: pynvml then answers for the simulated GPU),
    and the selector answers for the simulated GPU all the same."""
    tables = _stand_in_run(tmp_path, "0.6.3", "75,80")
    selector = tables["attention_selector"]
    assert selector["from"].startswith("vllm/attention/selector.py: get_attn_backend")
    chain = selector["chain"]
    assert chain["default_block_size_from"] == "vllm/engine/arg_utils.py: EngineArgs.block_size"
    assert chain["backends"] == ["FLASHINFER", "FLASH_ATTN", "XFORMERS"]
    assert chain["layer"] == {"sliding_window": 4096}
    ampere = _case(tables, 80, shape="gqa", variant="plain", head_size=128, kv="auto")
    assert (ampere["block_size"], ampere["selected"]) == (16, "FLASH_ATTN")
    assert ampere["by_block_size"] == {"16": "FLASH_ATTN", "32": "FLASH_ATTN", "64": "FLASH_ATTN", "128": "FLASH_ATTN"}
    assert _case(tables, 75, shape="gqa", variant="plain", head_size=128, kv="auto")["selected"] == "XFORMERS"
    assert _case(tables, 80, shape="gqa", variant="plain", head_size=128, kv="fp8")["selected"] == "XFORMERS"
    assert _case(tables, 80, shape="gqa", variant="plain", head_size=96, kv="auto")["selected"] == "XFORMERS"
    # a sliding window is this release's input, and it turns FlashAttention down
    windowed = _case(tables, 80, shape="gqa", variant="sliding_window", head_size=128, kv="auto")
    assert windowed["selected"] == "XFORMERS" and "not_selector_input" not in windowed
    # the choice is kept when the class it names fails to load, with the error
    odd = _case(tables, 80, shape="gqa", variant="plain", head_size=512, kv="auto")
    assert odd["selected"] == "XFORMERS" and odd["selection_error"].startswith("ImportError: xformers has no head")
    # shapes the selector has no input for are not asked
    assert _case(tables, 80, shape="gqa", variant="sinks", head_size=128, kv="auto")["error"] == (
        "get_attn_backend has no has_sink"
    )
    mla = _case(tables, 80, shape="mla", head_size=576, kv="auto", profile="deepseek_v3_dense")
    assert mla["error"] == "get_attn_backend has no use_mla" and "selected" not in mla
    assert tables["quantization"]["methods"]
