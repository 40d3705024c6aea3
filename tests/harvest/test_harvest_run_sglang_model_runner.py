"""scripts/harvest sglang==X --run on a stand-in of SGLang 0.5.3 and older (tests/harvest/data/sglang-run-tree-053:
no engine, no GPU, no nvidia-smi): ServerArgs leaves the default attention backend to the model runner, so the probe
runs the release's own ModelRunner.__init__ up to the end of model_specific_adjustment for each case."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.harvest.test_harvest_run_sglang import _case

ROOT = Path(__file__).resolve().parents[2]
TREE = Path(__file__).parent / "data" / "sglang-run-tree-053"


@pytest.fixture(scope="module")
def ran(tmp_path_factory):
    out = tmp_path_factory.mktemp("ran")
    facts = {"engine": "sglang", "release": "9.9.9", "sha256": None, "tables": {"flags": {"method": "read"}}}
    (out / "sglang").mkdir()
    (out / "sglang" / "9.9.9.json").write_text(json.dumps(facts))
    # no nvidia-smi on PATH, as on this host: the release's ServerArgs raises "nvidia-smi not found" without one
    path = os.pathsep.join(d for d in os.environ["PATH"].split(os.pathsep) if not Path(d, "nvidia-smi").exists())
    env = {**os.environ, "PYTHONPATH": str(TREE), "PATH": path}
    command = [sys.executable, str(ROOT / "scripts" / "harvest"), "sglang==9.9.9", "--run", "--python", sys.executable]
    command += ["--caps", "80,90,100", "--out", str(out), "--today", "2026-12-07"]
    proc = subprocess.run(command, capture_output=True, text=True, timeout=120, env=env)
    assert proc.returncode == 0, proc.stderr
    assert "attention_selector: 378 cases in" in proc.stderr  # 6 shapes x 3 KV dtypes x 7 asks x 3 GPUs
    return json.loads((out / "sglang" / "9.9.9.json").read_text()), json.loads(
        (out / "sglang" / "9.9.9.ran.json").read_text()
    )


def test_the_table_names_the_model_runner_as_where_the_release_chose(ran):
    facts, tables = ran
    said = facts["tables"]["attention_selector"]["from"]
    assert said.startswith("sglang/srt/server_args.py: ServerArgs.__post_init__ (")
    assert "model_runner.py: ModelRunner.__init__ up to the end of model_specific_adjustment" in said
    assert "case_errors" not in facts["tables"]["attention_selector"], tables["attention_selector"]["case_errors"]


def test_the_default_backend_is_the_one_the_model_runner_picked_per_gpu(ran):
    """ServerArgs leaves it unset for Llama and DeepSeek-V3 here: without the model-runner step these cases would
    read no backend at all."""
    _, tables = ran
    assert [_case(tables, cap, "gqa")["resolved"]["attention_backend"] for cap in (80, 90, 100)] == [
        "flashinfer",
        "fa3",
        "flashinfer",
    ]
    assert [_case(tables, cap, "mla")["resolved"]["attention_backend"] for cap in (80, 90, 100)] == [
        "triton",
        "fa3",
        "flashinfer",
    ]
    # what ServerArgs already chose (gpt-oss) the model runner keeps
    assert _case(tables, 100, "sinks")["resolved"]["attention_backend"] == "trtllm_mha"


def test_the_model_runner_s_own_refusal_is_the_reason(ran):
    _, tables = ran
    assert (
        _case(tables, 90, "mla", asked="trtllm_mha")["refused"]
        == "ValueError: Invalid attention backend for MLA: trtllm_mha"
    )
    assert _case(tables, 90, "gqa", asked="trtllm_mha")["resolved"]["attention_backend"] == "trtllm_mha"
    # ServerArgs' refusal comes first, as at launch
    assert _case(tables, 90, "mla", asked="trtllm_mla")["refused"].startswith("ValueError: TRTLLM MLA backend is only")


def test_the_step_stops_before_the_runner_needs_a_gpu(ran):
    """The stand-in's ModelRunner calls init_torch_distributed right after the adjustment, which raises "Found no
    NVIDIA driver": no case may carry that, or the probe ran past the decision."""
    _, tables = ran
    assert not any("NVIDIA driver" in r for r in tables["attention_selector"]["reasons"])
    assert all("error" not in c for c in tables["attention_selector"]["cases"])


def test_backend_choices_come_from_the_release_s_own_parser_and_nvidia_smi_is_simulated(ran):
    _, tables = ran
    selector = tables["attention_selector"]
    assert selector["backend_choices"] == [
        "aiter",
        "flashinfer",
        "triton",
        "torch_native",
        "fa3",
        "flashmla",
        "trtllm_mla",
        "trtllm_mha",
    ]
    assert {c["asked"] for c in selector["cases"]} == {
        None,
        "triton",
        "flashinfer",
        "fa3",
        "trtllm_mha",
        "flashmla",
        "trtllm_mla",
    }
    assert "stand-in nvidia-smi" in tables["nvidia_smi"]["how"]  # how the release's queries were answered


def _sets_default_backend(source: str) -> bool:
    sys.path.insert(0, str(ROOT / "scripts" / "harvest"))
    try:
        import sglang_model_runner
    finally:
        sys.path.pop(0)
    namespace: dict[str, object] = {}
    exec(compile(source, "<model_runner>", "exec"), namespace)  # a method as the release writes it
    return bool(sglang_model_runner._sets_default_backend(namespace["model_specific_adjustment"]))


def test_only_a_release_whose_model_runner_fills_an_unset_backend_is_asked_there(monkeypatch):
    """0.5.4 and later keep a model_specific_adjustment that only swaps an asked backend (fa3 with an fp8_e5m2 cache ->
    triton): the probe must not run the model-runner step for them, only where the method picks the default."""
    import linecache

    picks = (
        "def model_specific_adjustment(self):\n"
        "    server_args = self.server_args\n"
        "    if server_args.attention_backend is None:\n"
        "        server_args.attention_backend = 'fa3'\n"
    )
    swaps = (
        "def model_specific_adjustment(self):\n"
        "    server_args = self.server_args\n"
        "    if server_args.attention_backend == 'fa3' and server_args.kv_cache_dtype == 'fp8_e5m2':\n"
        "        server_args.attention_backend = 'triton'\n"
        "    if server_args.attention_backend is None:\n"
        "        server_args.disable_cuda_graph = True\n"
    )
    for source in (picks, swaps):  # inspect.getsource reads a compiled string through linecache
        monkeypatch.setitem(
            linecache.cache, "<model_runner>", (len(source), None, source.splitlines(True), "<model_runner>")
        )
        assert _sets_default_backend(source) is (source is picks)


def _release_tree(root: Path, model_runner: str | None) -> None:
    """A stand-in `sglang` package whose model_runner module holds `model_runner` (None: no such module)."""
    folder = root / "sglang" / "srt" / "model_executor"
    folder.mkdir(parents=True)
    for package in (root / "sglang", root / "sglang" / "srt", folder):
        (package / "__init__.py").write_text("")
    if model_runner is not None:
        (folder / "model_runner.py").write_text(model_runner)


@pytest.mark.parametrize(
    ("model_runner", "expected"),
    [
        (None, False),  # a release without the module: nothing to ask there
        ("import compressed_tensors_newer_than_the_release\n", "compressed_tensors_newer_than_the_release"),
    ],
)
def test_a_model_runner_that_does_not_import_stops_the_probe_instead_of_skipping_the_step(
    tmp_path, monkeypatch, model_runner, expected
):
    """sglang 0.4.8 beside an unpinned compressed-tensors too new for its transformers: model_runner.py failed to
    import, the probe took that for a release that picks no default there and recorded every default case with no
    backend and gpt-oss's config as accepted. A library that does not import is the environment's fault: say so."""
    _release_tree(tmp_path, model_runner)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.syspath_prepend(str(ROOT / "scripts" / "harvest"))
    for name in [m for m in sys.modules if m == "sglang" or m.startswith("sglang.")]:
        monkeypatch.delitem(sys.modules, name)
    import sglang_model_runner

    try:
        if expected is False:
            assert sglang_model_runner.chooses_in_model_runner() is False
        else:
            with pytest.raises(sglang_model_runner.StepUnavailable, match=f"does not import here: .*{expected}"):
                sglang_model_runner.chooses_in_model_runner()
    finally:  # the stand-in's modules leave with it
        for name in [m for m in sys.modules if m == "sglang" or m.startswith("sglang.")]:
            del sys.modules[name]
