"""The second SM12x pass, fixing releases (issue 28): llama.cpp b9333's garbled text with a quantized KV cache is the
race of the new Walsh-Hadamard rotation kernel under programmatic dependent launch, which PR #23690 fixed "on
Blackwell" the day after, as b9334. Through the CLI: a quantized-cache plan on b9333 names the defect on every Blackwell
class and carries GGML_CUDA_PDL=0 into the files it writes, Hopper and f16 plans do not; history shows the defect on
b9333 and not from b9334 on; lint is quiet once the command sets the variable; the coverage table counts the defect
fixed. The defect has no log line (the server logs nothing while it garbles), so diagnose has nothing to match."""

from __future__ import annotations

from pathlib import Path

from tests.support.release_history import defect_ids, explain, history_of, lint, verdicts

GARBLED = "llama.cpp-b9333-sm120-quantized-kv-fa-garbled"
QWEN = ("--model", "qwen3-8b", "--engine", "llama.cpp", "--build", "llama.cpp-b9333")
QUANTIZED = ("--kv-cache-dtype", "q8_0")
SERVER = ("llama-server", "-m", "/models/Qwen_Qwen3-8B-Q6_K.gguf", "-ngl", "99", "-fa", "on", "-c", "32768")


def top_plan(cli, *args):
    plans = explain(cli, *args)["plans"]
    assert plans, args
    return plans[0]


def pdl_env(plan):
    return [e for e in plan["env"] if e["name"] == "GGML_CUDA_PDL"]


def defect_findings(doc):
    return [f for f in doc["findings"] if f["code"] == "defect"]


def test_a_quantized_cache_plan_on_b9333_names_the_defect_and_turns_pdl_off_on_every_blackwell_class(cli):
    for gpu in ("rtx-5090", "rtx-pro-6000", "b200", "gb10"):
        plan = top_plan(cli, "--gpu", gpu, *QWEN, *QUANTIZED)
        assert plan["build"] == "llama.cpp-b9333" and GARBLED in defect_ids(plan), gpu
        (env,) = pdl_env(plan)
        assert env["value"] == "0" and GARBLED in env["reason"], gpu
        (note,) = [n for n in plan["notes"] if GARBLED in n]
        assert "fixed in llama.cpp-b9334" in note and "GGML_CUDA_PDL=0" in note, gpu


def test_hopper_and_f16_plans_on_b9333_carry_neither_the_defect_nor_the_variable(cli):
    hopper = top_plan(cli, "--gpu", "h100", *QWEN, *QUANTIZED)
    assert GARBLED not in defect_ids(hopper) and not pdl_env(hopper)
    f16 = top_plan(cli, "--gpu", "rtx-pro-6000", *QWEN)
    assert GARBLED not in defect_ids(f16) and not pdl_env(f16)


def test_the_files_generate_writes_set_the_variable_for_the_quantized_cache(cli, tmp_path: Path):
    out = tmp_path / "qwen3-8b"
    result = cli("generate", "--gpu", "rtx-pro-6000", *QWEN, *QUANTIZED, "--out", str(out))
    assert result.code == 0, result.err
    assert "--env 'GGML_CUDA_PDL=0'" in (out / "launch.sh").read_text()
    assert '"GGML_CUDA_PDL": "0"' in (out / "docker-compose.yml").read_text()


def test_history_with_a_quantized_cache_shows_the_defect_arrive_at_b9333_and_leave_at_b9334(cli):
    for gpu in ("rtx-pro-6000", "b200", "gb10"):
        builds = verdicts(history_of(cli, "llama.cpp", gpu, "qwen3-8b", 1, *QUANTIZED))
        assert GARBLED in builds["llama.cpp-b9333"]["defects"], gpu
        assert GARBLED not in builds["llama.cpp-b8036"]["defects"], gpu
        assert GARBLED not in builds["llama.cpp-b9334"]["defects"], gpu
        assert GARBLED not in builds["llama.cpp-b9840"]["defects"], gpu
    hopper = verdicts(history_of(cli, "llama.cpp", "h100", "qwen3-8b", 1, *QUANTIZED))
    assert GARBLED not in hopper["llama.cpp-b9333"]["defects"]


def test_lint_flags_the_quantized_cache_until_the_command_turns_pdl_off(cli):
    quantized = (*SERVER, "-ctk", "q8_0", "-ctv", "q8_0")
    (finding,) = defect_findings(lint(cli, "--gpu", "b200", "--build", "llama.cpp-b9333", "--", *quantized))
    assert finding["flag"] == "--cache-type-k" and "GGML_CUDA_PDL=0" in finding["fix"]
    inline = lint(cli, "--gpu", "b200", "--build", "llama.cpp-b9333", "--", "GGML_CUDA_PDL=0", *quantized)
    assert not defect_findings(inline)
    docker = (
        "docker",
        "run",
        "--gpus",
        "all",
        "-e",
        "GGML_CUDA_PDL=0",
        "ghcr.io/ggml-org/llama.cpp:server-cuda-b9333",
        *quantized[1:],
    )
    assert not defect_findings(lint(cli, "--gpu", "rtx-5090", "--build", "llama.cpp-b9333", "--", *docker))
    other = lint(cli, "--gpu", "b200", "--build", "llama.cpp-b9333", "--", "GGML_CUDA_PDL=1", *quantized)
    assert [f["flag"] for f in defect_findings(other)] == ["--cache-type-k"]


def test_coverage_counts_the_defect_fixed_in_the_blackwell_cells_and_absent_on_hopper(cli):
    result = cli("coverage", "--format", "json")
    assert result.code == 0, result.err
    cells = {(c["family"], c["gpu_class"]): c for c in result.json()["cells"]}
    for gpu_class in ("sm100", "sm120", "sm121"):
        cell = cells[("qwen3-8b", gpu_class)]
        # closed (on an older release only) and, of those, fixed: its fixing build is named
        assert GARBLED in cell["defects_fixed"] and GARBLED not in cell["defects_open"], gpu_class
    hopper = cells[("qwen3-8b", "sm90")]
    assert GARBLED not in hopper["defects_fixed"] + hopper["defects_open"] + hopper["defects_closed"]
