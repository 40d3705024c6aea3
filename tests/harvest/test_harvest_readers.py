"""scripts/harvest read on fixture trees shaped like the engines' real files (no engine installed)."""

from __future__ import annotations

import json
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DATA = Path(__file__).parent / "data"


def _harvest(tmp_path: Path, spec: str, tree: Path) -> tuple[subprocess.CompletedProcess[str], dict]:
    command = [sys.executable, str(ROOT / "scripts" / "harvest"), spec, "--tree", str(tree), "--out", str(tmp_path)]
    proc = subprocess.run([*command, "--today", "2026-12-01"], capture_output=True, text=True, timeout=60)
    engine, _, version = spec.partition("==")
    out = tmp_path / engine / f"{version}.json"
    if not out.exists():
        return proc, {}
    data = json.loads(out.read_text())
    detail = json.loads((out.parent / data["detail"]).read_text())  # per-architecture facts and CLI options
    tables = data["tables"]
    if "architectures" in tables:
        assert tables["architectures"]["names"] == sorted(detail["architectures"])
        tables["architectures"]["entries"] = detail["architectures"]
    if "flags" in tables:
        assert tables["flags"]["count"] == len(detail["flags"])
        tables["flags"]["options"] = detail["flags"]
    return proc, data


@pytest.fixture(scope="module")
def vllm(tmp_path_factory):
    return _harvest(tmp_path_factory.mktemp("v"), "vllm==9.9.9", DATA / "vllm-tree")


@pytest.fixture(scope="module")
def sglang(tmp_path_factory):
    return _harvest(tmp_path_factory.mktemp("s"), "sglang==9.9.9", DATA / "sglang-tree")


def test_vllm_registry_union_with_kinds_and_traits(vllm):
    proc, data = vllm
    assert proc.returncode == 0, proc.stderr
    table = data["tables"]["architectures"]
    assert (table["method"], table["from"]) == ("read", "vllm/model_executor/models/registry.py")
    entries = table["entries"]
    assert sorted(entries) == [
        "AquilaForCausalLM",
        "JambaForCausalLM",
        "LlamaForCausalLM",
        "LlamaModel",
        "MistralForCausalLM",
        "Qwen3VLForConditionalGeneration",
        "Step5ForConditionalGeneration",
    ]
    # the comprehension over the text table puts every Llama-class entry in the embedding table too
    assert entries["AquilaForCausalLM"]["kinds"] == ["embedding", "text_generation"]
    assert entries["JambaForCausalLM"]["traits"] == ["hybrid", "inner_state", "lora", "pipeline_parallel"]
    # traits follow a class's bases into the module it imports them from
    assert entries["MistralForCausalLM"]["traits"] == ["eagle3", "lora", "pipeline_parallel"]
    assert "multimodal" in entries["Qwen3VLForConditionalGeneration"]["traits"]
    assert entries["Step5ForConditionalGeneration"]["traits"] is None  # its module is not in the tree: unknown
    assert table["removed"] == {"MiniMaxM1ForCausalLM": "0.23.0"}
    assert data["release"] == "9.9.9" and data["harvested_on"] == "2026-12-01"


def test_vllm_parsers_from_lazy_table_and_decorators(vllm):
    _, data = vllm
    assert data["tables"]["tool_parsers"]["names"] == ["deepseek_v3", "granite", "granite-20b-fc", "hermes"]
    assert data["tables"]["reasoning_parsers"]["names"] == ["deepseek_r1"]


def test_vllm_flags_from_argparse_and_frontend_dataclass(vllm):
    _, data = vllm
    options = data["tables"]["flags"]["options"]
    assert options["--kv-cache-dtype"] == {"choices": ["auto", "fp8", "fp8_e4m3"], "default": "auto"}
    assert options["--quantization"] == {"aliases": ["-q"]}
    assert options["--enforce-eager"] == {"takes_value": False}
    assert options["--port"] == {"default": 8000}
    assert "--tool-call-parser" in options and "--private" not in options and "---private" not in options


def test_sglang_entry_classes_parsers_and_flags(sglang):
    proc, data = sglang
    assert proc.returncode == 0, proc.stderr
    tables = data["tables"]
    assert sorted(tables["architectures"]["entries"]) == ["LlamaForCausalLM", "Phi3ForCausalLM", "Qwen3NextForCausalLM"]
    assert tables["tool_parsers"]["names"] == ["deepseekv3", "llama3", "qwen25"]
    assert tables["tool_parsers"]["cli_extra"] == ["auto"]  # `choices=["auto"] + names()`
    assert tables["reasoning_parsers"]["names"] == ["deepseek-r1", "qwen3"]
    options = tables["flags"]["options"]
    assert options["--tp-size"] == {"aliases": ["--tensor-parallel-size"], "default": 1}  # default=ServerArgs.tp_size
    assert options["--mem-fraction-static"] == {"default": None}


def test_a_tree_without_a_registry_fails_naming_the_table(tmp_path):
    empty = tmp_path / "empty"
    (empty / "vllm").mkdir(parents=True)
    proc, data = _harvest(tmp_path, "vllm==1.0.0", empty)
    assert proc.returncode == 1
    assert "no model registry" in data["failed"]["architectures"]
    assert data["tables"]["tool_parsers"] == {
        "method": "read",
        "from": None,
        "names": [],
        "note": "no parser registry in this release",
    }


def test_a_malformed_spec_is_refused_in_one_line(tmp_path):
    proc = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "harvest"), "tgi==1.0"], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 2
    assert proc.stderr.strip() == "tgi==1.0: expected ENGINE==VERSION with ENGINE one of vllm, sglang, llama.cpp"


def test_llama_cpp_gguf_names_converter_classes_and_server_options(tmp_path):
    proc, data = _harvest(tmp_path, "llama.cpp==abc1234", DATA / "llama.cpp-tree")
    assert proc.returncode == 0, proc.stderr
    table = data["tables"]["architectures"]
    assert sorted(table["entries"]) == ["(unknown)", "deepseek2", "glm4moe", "llama"]  # clip: the file's dummy
    assert table["converter"] == ["LlamaForCausalLM", "MistralForCausalLM"]
    assert data["tables"]["flags"]["options"]["--gpu-layers"] == {"aliases": ["-ngl", "--n-gpu-layers"]}
    assert data["tables"]["tool_parsers"]["names"] == []  # llama-server reads the format from the chat template


def test_llama_cpp_deprecated_options_name_the_replacement_value_their_handler_sets(tmp_path):
    proc, data = _harvest(tmp_path, "llama.cpp==abc1234", DATA / "llama.cpp-tree")
    assert proc.returncode == 0, proc.stderr
    options = data["tables"]["flags"]["options"]
    assert options["--mmap"]["negations"] == ["--no-mmap"]
    # the bool handler sets the field --load-mode's value table sets: each spelling maps to its own value
    assert options["--mmap"]["deprecated"]["replaced_by"] == {
        "--mmap": "--load-mode mmap",
        "--no-mmap": "--load-mode none",
    }
    assert options["--mlock"]["deprecated"] == {
        "warning": "--mlock is deprecated. use --load-mode mlock instead",
        "replaced_by": {"--mlock": "--load-mode mlock"},
    }
    assert "deprecated" not in options["--load-mode"]
    assert options["--draft"] == {"aliases": ["--draft-max"], "removed": "use --spec-draft-n-max"}


def test_vllm_kernel_facts_read_from_an_old_release_tree(tmp_path):
    proc, data = _harvest(tmp_path, "vllm==9.0.0", DATA / "vllm-old-tree")
    assert proc.returncode == 0, proc.stderr
    table = data["tables"]["kernels"]
    assert table["method"] == "read" and "vllm/platforms/cuda.py" in table["from"]
    # the cubins' ELF headers: a single stray cubin (sm_52) is not a target; the CUDA major from libcudart
    assert table["compiled_for"] == {
        "sm": [70, 80, 86, 90],
        "stray": [52],
        "from": ["vllm/_C.abi3.so", "vllm/vllm_flash_attn/_vllm_fa2_C.abi3.so"],
        "cuda_major": 12,
    }
    assert table["dtypes"]["bfloat16"] == {
        "min": 80,
        "below": "float16",
        "from": "vllm/worker/worker.py:_check_if_gpu_supports_dtype",
    }
    methods = table["quantization"]["methods"]
    # a negative literal is read as one (ipex: -1, a method for no CUDA GPU)
    assert {n: m["min"] for n, m in methods.items()} == {
        "awq": 75,
        "fp8": 80,
        "gptq": 60,
        "gptq_marlin": None,
        "ipex": -1,
    }
    assert methods["gptq_marlin"]["unread"] == "get_min_capability() does not return one literal"
    assert methods["awq"]["act_dtypes"] == ["half"]
    assert table["fp8"]["marlin_below"] == 89 and table["fp8"]["block_quant"]
    assert not table["fp8"]["block_marlin"] and not table["fp8"]["moe_marlin"]
    # the V1 selector prefers FlashInfer on exactly 10.0 where that optional package imports; then FLASH_ATTN,
    # bounded by the families its vendored extension has cubins for
    assert [b["backend"] for b in table["attention"]["gqa"]] == ["FLASHINFER", "FLASH_ATTN", "XFORMERS"]
    gqa = {b["backend"]: b for b in table["attention"]["gqa"]}
    assert (gqa["FLASHINFER"]["exactly"], gqa["FLASHINFER"]["optional_package"]) == ([100], "flashinfer")
    assert gqa["FLASH_ATTN"]["compiled_majors"] == [8]
    # the ROCm branch's has_device_capability(90) is not FlashAttention's condition on CUDA
    assert (gqa["FLASH_ATTN"]["min"], gqa["FLASH_ATTN"]["head_sizes"]) == (80, [64, 128, 256])
    assert (gqa["XFORMERS"]["min"], gqa["XFORMERS"]["head_sizes"], gqa["XFORMERS"]["fp8_kv"]) == (
        None,
        [64, 80, 128],
        True,
    )
    mla = {b["backend"]: b for b in table["attention"]["mla"]}
    assert (mla["FLASHMLA"]["majors"], mla["FLASHMLA"]["fp8_kv"]) == ([9], False)
    assert mla["TRITON_MLA"]["fp8_kv"] and mla["TRITON_MLA"]["min"] is None
    assert table["kv_cache_dtypes"]["choices"] == ["auto", "fp8", "fp8_e5m2"]
    # the option built from that Literal (get_kwargs makes its values the choices) lists them in the flags table
    assert data["tables"]["flags"]["options"]["--kv-cache-dtype"]["choices"] == ["auto", "fp8", "fp8_e5m2"]
    assert "vllm/config.py" in data["tables"]["flags"]["from"]


def _fatbin(*entries: tuple[int, int, int, bytes]) -> bytes:
    """A fat binary container as nvcc writes one into a shared object: a 16-byte header (magic 0xBA55ED50, version
    1, header size 16, the entries' size), then per entry a 64-byte header (kind: 1 PTX, 2 cubin; its header size;
    the payload's size padded to 8; the architecture at byte 28; flags at byte 40, 0x8000 a ZSTD payload) and the
    payload."""
    body = b""
    for kind, arch, flags, payload in entries:
        padded = payload + b"\0" * (-len(payload) % 8)
        header = bytearray(64)
        struct.pack_into("<HHIQI", header, 0, kind, 0x0101, 64, len(padded), len(payload))
        struct.pack_into("<I", header, 28, arch)
        struct.pack_into("<Q", header, 40, flags)
        body += bytes(header) + padded
    return struct.pack("<IHHQ", 0xBA55ED50, 1, 16, len(body)) + body


def test_compressed_cubins_are_read_from_their_fat_binary_entry_headers(tmp_path):
    """A CUDA 13 wheel compresses every cubin (ZSTD), so no ELF header is left to read: each fat binary entry's own
    header names its architecture. PTX entries are not cubins, a lone cubin is a stray, and an uncompressed cubin
    inside a container counts once (from its entry, not again from its ELF header: sm_70 stays a stray)."""
    tree = tmp_path / "tree"
    shutil.copytree(DATA / "vllm-old-tree", tree)
    zstd = b"\x28\xb5\x2f\xfd" + b"compressed cubin"
    elf = (DATA / "vllm-old-tree" / "vllm" / "_C.abi3.so").read_bytes()[16:80]  # one sm_70 cubin's ELF header
    so = (
        b"\0" * 24
        + _fatbin((2, 75, 0x8011, zstd), (2, 120, 0x8011, zstd), (1, 90, 0x8011, zstd), (2, 70, 0x11, elf))
        + _fatbin((2, 75, 0x8011, zstd), (2, 120, 0x8011, zstd), (2, 86, 0x8011, zstd))
        + b"libcudart.so.13\0"
    )
    (tree / "vllm" / "_C.abi3.so").write_bytes(so)
    (tree / "vllm" / "vllm_flash_attn" / "_vllm_fa2_C.abi3.so").unlink()
    proc, data = _harvest(tmp_path, "vllm==9.0.1", tree)
    assert proc.returncode == 0, proc.stderr
    assert data["tables"]["kernels"]["compiled_for"] == {
        "sm": [75, 120],
        "stray": [70, 86],
        "from": ["vllm/_C.abi3.so"],
        "cuda_major": 13,
    }


def test_sglang_kernel_facts_read_from_an_old_release_tree(tmp_path):
    proc, data = _harvest(tmp_path, "sglang==9.0.0", DATA / "sglang-old-tree")
    assert proc.returncode == 0, proc.stderr
    table = data["tables"]["kernels"]
    assert table["dtypes"]["bfloat16"]["below"] == "float16-auto" and table["min_sm"]["min"] == 75
    gqa = [(b["backend"], b.get("majors"), b.get("min"), b["kv"]) for b in table["attention"]["gqa"]]
    # fa3 only where the default pick's Hopper check holds, and without fp8_e5m2 (its own warning says so)
    assert gqa[0] == ("fa3", [9], None, ["auto", "fp8_e4m3"])
    assert gqa[1:] == [
        ("flashinfer", None, 75, ["auto", "fp8_e5m2", "fp8_e4m3"]),
        ("triton", None, 75, ["auto", "fp8_e5m2", "fp8_e4m3"]),
    ]
    assert [b["backend"] for b in table["attention"]["mla"]] == ["fa3 (MLA)", "flashinfer (MLA)", "triton (MLA)"]
    assert {n: m["min"] for n, m in table["quantization"]["methods"].items()} == {"awq": 75, "fp8": 80}
    assert table["fp8"]["marlin_below"] is None  # only an environment variable turns Marlin on: not a capability
    # the FP8 GEMM's own test: `major == 8 and minor == 9` is its lowest true branch
    assert table["fp8"]["native_from"] == 89
    assert "compiled_for" in table["unread"]


def test_the_upload_day_is_read_from_the_json_simple_index_for_the_artifact_read():
    """`--uploaded` stamps the day the very artifact that was read went up on PyPI (PEP 691/700 upload-time)."""
    import runpy

    upload_time = runpy.run_path(str(ROOT / "scripts" / "harvest" / "__main__.py"), run_name="harvest")["upload_time"]
    index = {
        "files": [
            {"filename": "vllm-0.32.0.tar.gz", "upload-time": "2026-10-18T10:04:07.069791Z"},
            {"filename": "vllm-0.32.0-cp38-abi3-manylinux_2_28_x86_64.whl", "upload-time": "2026-10-18T10:03:52Z"},
            {"filename": "vllm-0.31.0-cp38-abi3-manylinux_2_28_x86_64.whl", "upload-time": "2026-10-05T07:40:41Z"},
        ]
    }
    assert upload_time(index, "vllm-0.32.0-cp38-abi3-manylinux_2_28_x86_64.whl") == "2026-10-18"
    assert upload_time(index, "vllm-0.32.0-cp39-abi3-manylinux_2_28_x86_64.whl") is None
    assert upload_time({"files": [{"filename": "x.whl"}]}, "x.whl") is None


def test_python_engines_retired_options_read_from_their_actions_help_and_warnings(tmp_path):
    proc, data = _harvest(tmp_path, "sglang==9.9.8", DATA / "sglang-retired-tree")
    assert proc.returncode == 0, proc.stderr
    options = data["tables"]["flags"]["options"]
    # an action that raises: kept only to stop the launch, with the option its text names
    assert options["--enable-flashinfer-mla"]["replaced_by"] == {
        "--enable-flashinfer-mla": "--attention-backend flashinfer"
    }
    assert "removed" in options["--enable-flashinfer-mla"]
    # an action that stops only when given an error message; the value after the option ends the sentence
    assert options["--enable-flashmla"]["removed"] == "--enable-flashmla was removed; use --attention-backend flashmla."
    assert options["--enable-flashmla"]["replaced_by"] == {"--enable-flashmla": "--attention-backend flashmla"}
    # the same action without one warns: deprecated, still accepted
    assert options["--prefill-round-robin-balance"]["deprecated"] == {
        "warning": "Note: --prefill-round-robin-balance is deprecated now."
    }
    assert options["--disable-cuda-graph"]["deprecated"]["replaced_by"] == {
        "--disable-cuda-graph": "--cuda-graph-backend=disabled"
    }
    # said only in the code that handles it, in another file
    grpc = options["--grpc-mode"]
    assert grpc["deprecated"]["replaced_by"] == {"--grpc-mode": "--smg-grpc-mode"}
    assert grpc["said_in"] == "sglang/srt/arg_groups/serving_hook.py"
    # a replacement the release has no option for is not kept; a value's deprecation is not the option's
    assert "replaced_by" not in options["--hybrid-kvcache-ratio"]["deprecated"]
    # nor one whose value is not among the option's choices (the release's own text misspells it)
    assert "replaced_by" not in options["--disable-flashinfer-sampling"]["deprecated"]
    assert "deprecated" not in options["--attention-backend"]
    # help that mentions deprecated things does not retire its own option
    assert options["--allow-deprecated-formats"] == {"takes_value": False}


def test_vllm_rope_table_from_get_rope_and_the_config_patch(vllm, tmp_path):
    """The RoPE scalings a release builds: get_rope's branches, the keys it reads with no fallback, the renames."""
    rope = vllm[1]["tables"]["rope"]
    assert rope["method"] == "read"
    assert rope["types"] == ["deepseek_yarn", "default", "llama3", "longrope", "yarn"]
    assert rope["requires"] == []  # .get("rope_type", "default"), and the patch fills rope_type from type
    assert rope["renamed"] == {"mrope": "default", "su": "longrope"}
    assert rope["fills_rope_type"] is True
    proc, old = _harvest(tmp_path, "vllm==9.0.0", DATA / "vllm-old-tree")
    assert proc.returncode == 0, proc.stderr
    early = old["tables"]["rope"]
    assert early["types"] == ["dynamic", "linear", "yarn"]
    assert early["requires"] == ["type"]  # rope_scaling["type"]: a config with only rope_type is a KeyError
    assert early["renamed"] == {} and early["fills_rope_type"] is False


V0_SELECTOR = """
from vllm.platforms import current_platform


def which_attn_to_use(head_size, sliding_window, dtype, kv_cache_dtype, block_size, is_attention_free):
    selected_backend = _Backend.FLASH_ATTN
    if selected_backend == _Backend.FLASH_ATTN:
        if not current_platform.has_device_capability(80):
            logger.info("Cannot use FlashAttention-2 backend for Volta and Turing GPUs.")
            selected_backend = _Backend.XFORMERS
        elif kv_cache_dtype is not None and kv_cache_dtype.startswith("fp8"):
            selected_backend = _Backend.XFORMERS
"""
WINDOW_CHECK = """        elif sliding_window is not None:
            selected_backend = _Backend.XFORMERS
"""


@pytest.mark.parametrize("windowed", [True, False])
def test_a_v0_selector_that_turns_flash_attention_down_for_a_sliding_window_is_read_so(tmp_path, windowed):
    """0.6.3 and older give a layer with a sliding window XFORMERS (`elif sliding_window is not None`), which their runs
    confirm; 0.6.6 dropped the check. The FLASH_ATTN entry says so only where the selector has it."""
    tree = tmp_path / "tree"
    files = {
        "vllm/attention/selector.py": V0_SELECTOR + (WINDOW_CHECK if windowed else ""),
        "vllm/attention/backends/flash_attn.py": "class FlashAttentionBackend:\n"
        "    @staticmethod\n    def get_supported_head_sizes():\n        return [64, 128, 256]\n",
        "vllm/attention/backends/xformers.py": "class XFormersBackend:\n    pass\n",
        "vllm/attention/ops/paged_attn.py": "class PagedAttention:\n"
        "    @staticmethod\n    def get_supported_head_sizes():\n        return [64, 80, 128]\n",
    }
    for path, text in files.items():
        (tree / path).parent.mkdir(parents=True, exist_ok=True)
        (tree / path).write_text(text)
    proc, data = _harvest(tmp_path / "out", "vllm==9.0.1", tree)  # no registry nor CLI here: those tables fail
    assert "kernels" in data["tables"], proc.stderr
    gqa = {b["backend"]: b for b in data["tables"]["kernels"]["attention"]["gqa"]}
    assert gqa["FLASH_ATTN"]["min"] == 80 and gqa["FLASH_ATTN"]["fp8_kv"] is False
    assert gqa["FLASH_ATTN"].get("sliding_window", True) is (not windowed)
