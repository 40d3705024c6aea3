"""The catalog: coverage, validation errors as users see them, user directories, name resolution."""

from __future__ import annotations

import os
import textwrap
from pathlib import Path

import pytest
import yaml

from recipegen.catalog.index import KINDS, builtin_root
from recipegen.catalog.names import resolve_gpu, resolve_model
from recipegen.catalog.schema.records import to_data, validate

HARDWARE = """\
id: test-gpu
name: Test GPU
vendor: nvidia
family: ampere
compute_capability: "8.0"
memory_gib: 80
memory_kind: HBM
fp8_tensor_cores: false
fp4_tensor_cores: false
host_arch: [x86_64]
interconnect: {kind: nvlink}
gpus_per_node: [8]
bandwidth_gbs: 2039
smem_per_block_optin: 166912
sources:
  - url: https://example.org/datasheet
host_link: {kind: pcie, pcie_gen: 4, lanes: 16}
tensor_tflops: {bf16: 312}
role: datacenter
"""


def write(root: Path, rel: str, text: str) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))
    return path


def test_builtin_catalog_validates(cli):
    result = cli("validate")
    assert result.code == 0, result.err
    assert result.out.startswith("catalog ok: ")


REQUIRED_HARDWARE = {
    "v100-32gb",
    "t4",
    "a10",
    "a100-40gb",
    "a100-80gb",
    "a800-80gb",
    "l4",
    "l20",
    "l40s",
    "rtx-3090",
    "rtx-4090",
    "rtx-5090",
    "rtx-pro-6000",
    "h100-sxm",
    "h100-pcie",
    "h20",
    "h200",
    "h800",
    "gh200",
    "b200",
    "gb200",
    "b300",
    "gb10",
}
REQUIRED_MODELS = {
    "deepseek-v3",
    "deepseek-v3.1",
    "deepseek-r1",
    "deepseek-v3.2",
    "deepseek-v4-flash",
    "glm-5",
    "glm-5.1",
    "glm-5.2",
    "glm-4.5",
    "glm-4.6",
    "kimi-k2",
    "qwen3-235b-a22b",
    "qwen3-32b",
    "qwen3-14b",
    "llama-3.1-405b",
    "llama-4-scout",
    "llama-4-maverick",
    "mistral-large-2",
    "mistral-small-24b",
    "minimax-m1",
    "minimax-m2",
    "qwen2.5-7b",
    "glm-5.3-flash",
    "gpt-oss-120b",
    "gpt-oss-20b",
}
SEED_DEPLOYMENTS = {
    "deepseek-v4-flash-0731-8xh200-vllm": ("deepseek-v4-flash", "vllm"),
    "glm-5.2-int4-int8mix-8xh200-vllm": ("glm-5.2", "vllm"),
    "glm-5.2-nvfp4-8xa100-vllm-sm80": ("glm-5.2", "vllm"),
    "deepseek-v4-flash-8xa100-llamacpp-fork": ("deepseek-v4-flash", "llama.cpp"),
    "glm-5.3-flash-nvfp4-2xgb10-sglang": ("glm-5.3-flash", "sglang"),
}


def test_catalog_covers_the_required_entries(cli):
    hardware = {row["id"] for row in cli("list", "hardware", "--format", "json").json()}
    models = {row["id"] for row in cli("list", "models", "--format", "json").json()}
    engines = {row["engine"] for row in cli("list", "engines", "--format", "json").json()}
    deployments = {
        row["id"]: (row["model"], row["engine"]) for row in cli("list", "deployments", "--format", "json").json()
    }
    assert hardware >= REQUIRED_HARDWARE
    assert models >= REQUIRED_MODELS
    assert {"vllm", "sglang", "llama.cpp", "ktransformers"} <= engines
    for dep_id, expected in SEED_DEPLOYMENTS.items():
        assert deployments.get(dep_id) == expected


def test_every_shipped_file_round_trips():
    root = builtin_root()
    count = 0
    for kind, model in KINDS.items():
        for path in sorted((root / kind).glob("*.yaml")):
            entry = validate(model, yaml.safe_load(path.read_text()))
            again = validate(model, to_data(entry))
            assert again == entry, path
            assert path.stem == entry.id, f"{path.name}: file name must be the id"  # type: ignore[attr-defined]
            count += 1
    assert count > 50


def test_every_fact_file_has_sources():
    root = builtin_root()
    for kind in KINDS:
        for path in (root / kind).glob("*.yaml"):
            data = yaml.safe_load(path.read_text())
            cited = [e.get("sources") for e in data["entries"]] if kind == "surveys" else [data.get("sources")]
            assert all(cited), f"{kind}/{path.name} has no sources"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            HARDWARE.replace("memory_kind: HBM", "memory_kind: HBM\ncolour: red"),
            "{path}:8: colour: unknown key (not in the schema; check the spelling)",
        ),
        (
            HARDWARE.replace("memory_gib: 80", "memory_gib: lots"),
            "{path}:6: memory_gib: Input should be a valid number, unable to parse string as a number",
        ),
        (
            HARDWARE.replace("memory_kind: HBM", "memory_kind: SRAM"),
            "{path}:7: memory_kind: 'SRAM' is not one of 'HBM', 'GDDR' or 'unified'",
        ),
        (
            HARDWARE.replace('compute_capability: "8.0"', 'compute_capability: "eight"'),
            "{path}:5: compute_capability: not a compute capability: 'eight' (write 8.0, 12.1, sm80 or sm_121)",
        ),
        (HARDWARE.replace("vendor: nvidia\n", ""), "{path}:1: vendor: required field is missing"),
        (HARDWARE.replace("name: Test GPU", "name: Test GPU\nname: Again"), "{path}:3: name: duplicate key"),
        (
            HARDWARE.replace("gpus_per_node: [8]", "gpus_per_node: [8"),
            "{path}:13: (yaml): malformed YAML: …",
        ),
    ],
    ids=["unknown-key", "wrong-type", "unknown-enum", "bad-capability", "missing", "duplicate-key", "malformed"],
)
def test_bad_hardware_file_is_reported_precisely(cli, tmp_path, text, expected):
    path = write(tmp_path, "hardware/test-gpu.yaml", text)
    result = cli("validate", str(tmp_path))
    assert result.code == 2
    assert result.out == ""
    lines = result.err.splitlines()
    assert len(lines) == 1
    if expected.endswith("…"):  # the parser's own wording follows (libyaml and PyYAML differ)
        assert lines[0].startswith(expected.format(path=path).removesuffix("…")) and "']'" in lines[0]
    else:
        assert lines == [expected.format(path=path)]


def test_dangling_reference_and_duplicate_alias(cli, tmp_path):
    dep = yaml.safe_load((builtin_root() / "deployments" / "glm-5.2-nvfp4-8xa100-vllm-sm80.yaml").read_text())
    dep["id"] = "my-recipe"
    dep["build"] = "vllm-9.9"
    path = write(tmp_path, "deployments/my-recipe.yaml", yaml.safe_dump(dep, sort_keys=False))
    line = next(n for n, text in enumerate(path.read_text().splitlines(), 1) if text.startswith("build:"))
    hw = write(tmp_path, "hardware/test-gpu.yaml", HARDWARE + "aliases: [a100]\n")
    result = cli("validate", str(tmp_path))
    assert result.code == 2
    assert sorted(result.err.splitlines()) == sorted(
        [
            f"{hw}:{len(HARDWARE.splitlines()) + 1}: aliases[0]: name 'a100' is already used by 'a100-80gb'",
            f"{path}:{line}: build: engine 'vllm' has no build 'vllm-9.9'",
        ]
    )


def test_three_mistakes_give_three_lines(cli, tmp_path):
    a = write(
        tmp_path,
        "hardware/a.yaml",
        HARDWARE.replace("id: test-gpu", "id: a").replace("memory_kind: HBM", "memory_kind: SRAM"),
    )
    b = write(
        tmp_path,
        "hardware/b.yaml",
        HARDWARE.replace("id: test-gpu", "id: b").replace(
            "fp4_tensor_cores: false", "fp4_tensor_cores: false\nfp6_tensor_cores: true"
        ),
    )
    c = write(
        tmp_path,
        "hardware/c.yaml",
        HARDWARE.replace("id: test-gpu", "id: c").replace("memory_gib: 80", "memory_gib: -1"),
    )
    result = cli("validate", str(tmp_path))
    assert result.code == 2
    assert result.err.splitlines() == [
        f"{a}:7: memory_kind: 'SRAM' is not one of 'HBM', 'GDDR' or 'unified'",
        f"{b}:10: fp6_tensor_cores: unknown key (not in the schema; check the spelling)",
        f"{c}:6: memory_gib: Input should be greater than 0",
    ]


def test_user_directory_overrides_a_builtin_entry(cli, tmp_path):
    original = yaml.safe_load((builtin_root() / "hardware" / "a100-80gb.yaml").read_text())
    original["memory_gib"] = 79.0
    write(tmp_path, "hardware/a100-80gb.yaml", yaml.safe_dump(original))
    listed = {row["id"]: row for row in cli("list", "hardware", "--format", "json", "--recipes", str(tmp_path)).json()}
    assert listed["a100-80gb"]["memory_gib"] == "79"
    validated = cli("validate", str(tmp_path))
    assert "hardware/a100-80gb overridden by" in validated.out
    via_env = cli("list", "hardware", "--format", "json", env={"RECIPEGEN_RECIPES": str(tmp_path)}).json()
    assert {row["id"]: row for row in via_env}["a100-80gb"]["memory_gib"] == "79"


def test_user_directory_must_exist(cli, tmp_path):
    result = cli("validate", str(tmp_path / "nope"))
    assert result.code == 2
    assert "not a directory" in result.err


@pytest.mark.parametrize("name", ["glm-5.2", "GLM-5.2", "glm5.2", "zai-org/GLM-5.2"])
def test_model_names_resolve(catalog, name):
    assert resolve_model(catalog, name).model.id == "glm-5.2"


def test_variant_repo_id_resolves_to_model_and_variant(catalog):
    choice = resolve_model(catalog, "NVIDIA/glm-5.2-nvfp4")
    assert (choice.model.id, choice.variant) == ("glm-5.2", "nvfp4")


@pytest.mark.parametrize("name", ["sm80", "sm_80", "8.0", "a100", "A100"])
def test_capability_names_resolve_to_the_usual_part(catalog, name):
    assert resolve_gpu(catalog, name).hardware.id == "a100-80gb"


def test_capability_with_memory_picks_the_matching_part(catalog):
    assert resolve_gpu(catalog, "sm80", 40).hardware.id == "a100-40gb"
    assert resolve_gpu(catalog, "sm90", 80).hardware.id == "h100-sxm"


def test_memory_override_changes_the_part_and_says_so(catalog):
    choice = resolve_gpu(catalog, "rtx-4090", 48)
    assert choice.hardware.memory_gib == 48
    assert "overridden to 48 GiB" in choice.how


def test_unknown_names_list_the_closest(cli):
    result = cli("explain", "--gpu", "a100", "--model", "glm-5.22")
    assert result.code == 2
    assert result.err.startswith("error: unknown model 'glm-5.22' for --model — did you mean ")
    assert "glm-5.2" in result.err
    gpu = cli("explain", "--gpu", "rtx-4009", "--model", "glm-5.2")
    assert gpu.code == 2 and "rtx-4090" in gpu.err


def test_duplicate_id_in_one_directory(cli, tmp_path):
    write(tmp_path, "hardware/first.yaml", HARDWARE.replace("id: test-gpu", "id: first"))
    second = write(tmp_path, "hardware/second.yaml", HARDWARE.replace("id: test-gpu", "id: first"))
    result = cli("validate", str(tmp_path))
    assert result.code == 2
    assert result.err.splitlines() == [
        f"{second}:1: id: duplicate id 'first' (also in {tmp_path / 'hardware/first.yaml'})"
    ]


def test_cached_catalog_notices_an_edited_recipe(cli, tmp_path):
    path = write(tmp_path, "hardware/test-gpu.yaml", HARDWARE)
    assert cli("validate", str(tmp_path)).code == 0
    assert cli("validate", str(tmp_path)).code == 0  # served from the cache
    path.write_text(HARDWARE.replace("memory_gib: 80", "memory_gib: lots"))
    os.utime(path, ns=(path.stat().st_atime_ns, path.stat().st_mtime_ns + 1_000_000))
    result = cli("validate", str(tmp_path))
    assert result.code == 2 and "memory_gib" in result.err


def test_cached_catalog_notices_a_recipe_added_beside_the_others(cli, tmp_path):
    """The cache key lists each kind folder's files: a new one (here a second GPU under the same id) is read."""
    write(tmp_path, "hardware/test-gpu.yaml", HARDWARE)
    assert cli("validate", str(tmp_path)).code == 0
    assert cli("validate", str(tmp_path)).code == 0  # served from the cache
    write(tmp_path, "hardware/again.yaml", HARDWARE)
    result = cli("validate", str(tmp_path))
    assert result.code == 2 and "duplicate id 'test-gpu'" in result.err


NATIVE_OUTSIDE = """id: vllm-0.26.0-native
extends: vllm-0.26.0
version: 0.26.0
released: '2026-08-01'
provenance: community
origin: a test image
images: {x86_64: example/vllm:native, aarch64: null}
weight_formats:
  replace:
  - quant: fp8_block
    native: ['>=9.0']
    native_kernels:
    - kernel: TritonFp8BlockScaledMMKernel
      sm: ['8.9']
      sources: [{url: 'https://example.com/kernel', date: '2026-08-02', note: a table}]
sources: [{url: 'https://example.com/image', date: '2026-08-01', note: the image}]
"""


def test_a_native_kernel_named_where_the_format_is_not_native_is_refused(cli, tmp_path):
    """Naming the kernel for a GPU the format does not run natively on would contradict the format itself."""
    write(tmp_path, "engines/vllm/vllm-0.26.0-native.yaml", NATIVE_OUTSIDE)
    result = cli("validate", str(tmp_path))
    text = result.out + result.err
    assert result.code == 2 and "Traceback" not in text and len(result.err.splitlines()) == 1
    assert "vllm-0.26.0-native.yaml" in text and "native kernel 'TritonFp8BlockScaledMMKernel' is named on sm89" in text
    assert "(native: >=9.0)" in text
