"""Builds as release lines: a build file under engines/<engine>/ states only what changed from the
build it `extends`; the loader merges it, and mistakes are catalog errors at the line that makes them."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from recipegen.catalog.index import builtin_root
from recipegen.catalog.load import load
from recipegen.catalog.schema.records import to_data

CHILD = """\
id: vllm-test-child
extends: vllm-0.33.0
version: 0.33.1
released: 2026-12-01
images:
  x86_64: example/vllm:child
  aarch64: null
architectures:
  add: [TestForCausalLM]
  remove: [MiniMaxM2ForCausalLM]
kernels:
  remove: [CUTLASS_MLA]
  replace:
  - name: TRITON_MLA
    provides: attention.mla
    sm: ['>=8.0']
    kv_dtypes: [bf16]
  add:
  - name: TEST_SPARSE
    provides: attention.sparse_mla
    sm: ['8.0']
    kv_dtypes: [bf16]
notes: [a child release]
"""

GRANDCHILD = """\
id: vllm-test-grandchild
extends: vllm-test-child
version: 0.33.2
released: 2026-12-02
cuda: '13.1'
kernels:
  remove: [TEST_SPARSE]
"""


def write(root: Path, name: str, text: str) -> Path:
    path = root / "engines" / "vllm" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def build(tmp_path: Path, build_id: str):  # type: ignore[no-untyped-def]
    return load([str(tmp_path)]).build(build_id)[1]


def test_child_adds_removes_and_replaces(tmp_path):
    write(tmp_path, "vllm-test-child.yaml", CHILD)
    parent = load().build("vllm-0.33.0")[1]
    child = build(tmp_path, "vllm-test-child")
    assert child.extends == "vllm-0.33.0" and child.version == "0.33.1"
    assert child.images == {"x86_64": "example/vllm:child"}
    assert "TestForCausalLM" in child.architectures and "MiniMaxM2ForCausalLM" not in child.architectures
    names = [k.name for k in child.kernels]
    assert "CUTLASS_MLA" not in names and names[-1] == "TEST_SPARSE"
    mla = [k for k in child.kernels if k.name == "TRITON_MLA"]
    assert len(mla) == 1 and [str(t) for t in mla[0].sm.terms] == [">=8.0"]
    # the replacement sits where the parent's TRITON_MLA entries began (kernel order is preference)
    assert names.index("TRITON_MLA") == [k.name for k in parent.kernels].index("TRITON_MLA") - 1
    # untouched fields are inherited
    assert child.cuda == parent.cuda and child.weight_formats == parent.weight_formats
    assert child.notes == ["a child release"]


def test_chain_of_extends_merges_in_order(tmp_path):
    write(tmp_path, "vllm-test-child.yaml", CHILD)
    write(tmp_path, "vllm-test-grandchild.yaml", GRANDCHILD)
    grand = build(tmp_path, "vllm-test-grandchild")
    assert grand.cuda == "13.1" and grand.images == {"x86_64": "example/vllm:child"}
    assert "TEST_SPARSE" not in [k.name for k in grand.kernels]
    assert "TestForCausalLM" in grand.architectures


def test_a_backend_the_parent_has_for_another_op_is_added_for_a_new_one(tmp_path):
    # vLLM 0.21.0's FLASHMLA_SPARSE takes the 512-wide sparse shape the releases it extends dropped
    child = CHILD.replace("name: TEST_SPARSE", "name: TRITON_MLA")
    write(tmp_path, "vllm-test-child.yaml", child)
    mine = [k.provides for k in build(tmp_path, "vllm-test-child").kernels if k.name == "TRITON_MLA"]
    assert mine == ["attention.mla", "attention.sparse_mla"]


def line_of(path: Path, text: str) -> int:
    return next(n for n, line in enumerate(path.read_text().splitlines(), 1) if text in line)


@pytest.mark.parametrize(
    ("edit", "needle", "field", "message"),
    [
        ("kernels:\n  remove: [NO_SUCH]\n", "NO_SUCH", "kernels.remove[0]", "'vllm-0.33.0' has no 'NO_SUCH' to remove"),
        (
            "architectures:\n  remove: [NoSuchArch]\n",
            "NoSuchArch",
            "architectures.remove[0]",
            "'vllm-0.33.0' has no 'NoSuchArch' to remove",
        ),
        (
            "weight_formats:\n  add:\n  - quant: fp8\n    native: ['9.0']\n",
            "- quant",
            "weight_formats.add[0]",
            "'fp8' is already in 'vllm-0.33.0'; use replace to change it",
        ),
        (
            "kernels:\n  add:\n  - name: TRITON_MLA\n    provides: attention.mla\n    sm: ['9.0']\n",
            "- name",
            "kernels.add[0]",
            "'TRITON_MLA' (attention.mla) is already in 'vllm-0.33.0'; use replace to change it",
        ),
    ],
)
def test_editing_what_the_parent_lacks_is_located(cli, tmp_path, edit, needle, field, message):
    path = write(tmp_path, "vllm-test-bad.yaml", CHILD.split("images:")[0].replace("child", "bad") + edit)
    result = cli("validate", str(tmp_path))
    assert result.code == 2
    assert f"{path}:{line_of(path, needle)}: {field}: {message}" in result.err.splitlines()[0]


def test_cycle_dangling_and_foreign_parents_are_errors(cli, tmp_path):
    a = write(tmp_path, "vllm-a.yaml", "id: vllm-a\nextends: vllm-b\nversion: a\nreleased: 2026-01-01\n")
    b = write(tmp_path, "vllm-b.yaml", "id: vllm-b\nextends: vllm-a\nversion: b\nreleased: 2026-01-02\n")
    c = write(tmp_path, "vllm-c.yaml", "id: vllm-c\nextends: vllm-9.9\nversion: c\nreleased: 2026-01-03\n")
    d = write(tmp_path, "vllm-d.yaml", "id: vllm-d\nextends: sglang-0.5.23\nversion: d\nreleased: 2026-01-04\n")
    result = cli("validate", str(tmp_path))
    assert result.code == 2
    lines = result.err.splitlines()
    assert f"{b}:2: extends: extends cycle: vllm-a → vllm-b → vllm-a" in lines
    assert any(line.startswith(f"{c}:2: extends: no build 'vllm-9.9' to extend (builds of vllm:") for line in lines)
    assert f"{d}:2: extends: 'sglang-0.5.23' is a build of 'sglang', not of 'vllm'" in lines
    assert not any(str(a) in line for line in lines)  # one cycle, said once
    assert len(lines) == 3


def test_a_merged_build_is_validated_like_a_whole_one(cli, tmp_path):
    path = write(
        tmp_path,
        "vllm-test-bad.yaml",
        "id: vllm-test-bad\nextends: vllm-0.33.0\nversion: x\nreleased: 2026-12-01\n"
        "provenance: community\nsources: []\n",
    )
    result = cli("validate", str(tmp_path))
    assert result.code == 2
    assert result.err.startswith(f"{path}:1: (file): a community build needs at least one source")


def test_file_name_and_engine_folder_are_checked(cli, tmp_path):
    write(tmp_path, "wrong-name.yaml", CHILD)
    other = tmp_path / "engines" / "nosuch" / "x.yaml"
    other.parent.mkdir(parents=True)
    other.write_text("id: x\nextends: vllm-0.33.0\nversion: x\nreleased: 2026-12-01\n")
    result = cli("validate", str(tmp_path))
    assert result.code == 2
    assert "file name must be the build id (vllm-test-child.yaml)" in result.err
    assert f"{other}: (file): folder 'nosuch' names no engine" in result.err


def test_shipped_release_files_are_short_and_every_build_loads(catalog):
    root = builtin_root() / "engines"
    files = sorted(root.glob("*/*.yaml"))
    assert files, "release files ship with the package"
    for path in files:
        data = yaml.safe_load(path.read_text())
        assert path.stem == data["id"]
        build_ = catalog.build(data["id"])[1]
        if "extends" in data:
            whole = len(yaml.safe_dump(to_data(build_)).splitlines())
            assert len(path.read_text().splitlines()) < whole / 2, f"{path.name} is not a short file of differences"


def test_a_defect_fixed_in_a_build_that_still_carries_it_is_an_error(cli, tmp_path):
    defect = (
        "defects:\n  add:\n  - id: d1\n    title: t\n    symptom: hang\n    gate: kernel\n"
        "    fixed_in: vllm-test-child\n"
        "    sources: [{url: 'https://example.org/1', date: 2026-12-01}]\n"
    )
    write(tmp_path, "vllm-test-bad.yaml", CHILD.split("images:")[0].replace("child", "bad") + defect)
    write(tmp_path, "vllm-test-child.yaml", CHILD.replace("extends: vllm-0.33.0", "extends: vllm-test-bad"))
    result = cli("validate", str(tmp_path))
    assert result.code == 2
    bad = tmp_path / "engines" / "vllm" / "vllm-test-bad.yaml"
    line = line_of(bad, "fixed_in:")
    assert f"{bad}:{line}: defects.add[0].fixed_in: 'vllm-test-child' still carries 'd1'" in result.err
    fixed = CHILD.replace("extends: vllm-0.33.0", "extends: vllm-test-bad") + "defects:\n  remove: [d1]\n"
    write(tmp_path, "vllm-test-child.yaml", fixed)
    assert cli("validate", str(tmp_path)).code == 0
