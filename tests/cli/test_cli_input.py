"""What the command line refuses, and how: one line naming the option, exit 2, never a traceback."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

GLM = ("--gpu", "sm80", "--model", "glm-5.2")
HUGE = "1" + "0" * 400


def one_line_error(result) -> str:  # type: ignore[no-untyped-def]
    lines = result.err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.err
    return lines[0]


@pytest.mark.parametrize("option", ["--context", "--concurrency", "--gpus", "--nodes"])
@pytest.mark.parametrize("value", [HUGE, "0", "-1", "1" + "0" * 5000, "2.5", "eight"])
def test_counts_are_bounded(cli, tmp_path, option, value):
    result = cli(*GLM, option, value, "--out", str(tmp_path / "o"))
    assert result.code == 2
    line = one_line_error(result)
    assert option in line and len(line) < 400
    assert not (tmp_path / "o").exists()


def test_count_errors_state_the_range(cli):
    line = one_line_error(cli(*GLM, "--context", HUGE))
    assert "--context" in line and "a 401-digit number is out of range; use 1 to 100,000,000" in line


@pytest.mark.parametrize("value", ["inf", "-inf", "nan", "1e308", "1e-310", "-8", "0", "1e5"])
def test_gpu_memory_is_finite_and_sane(cli, tmp_path, value):
    result = cli(*GLM, "--gpu-memory", value, "--out", str(tmp_path / "o"))
    assert result.code == 2
    assert "--gpu-memory" in one_line_error(result) and "1 to 4096" in result.err
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("option", ["--gpu", "--model", "--engine", "--build", "--variant", "--out", "--recipes"])
def test_empty_values_are_errors_not_ignored(cli, option):
    args = {"--gpu": "sm80", "--model": "glm-5.2"} | {option: ""}
    result = cli(*[t for pair in args.items() for t in pair])
    assert result.code == 2 and option in one_line_error(result) and "empty" in result.err


@pytest.mark.parametrize("value", ["glm-5.2\nrm -rf ~", "sm80\r", "a\x1b[31mred", "x\u202etxt.exe", "a\x00b", "\udcff"])
def test_control_characters_are_refused_and_never_echoed_raw(cli, value):
    for option in ("--model", "--gpu", "--engine"):
        args = {"--gpu": "sm80", "--model": "glm-5.2"} | {option: value}
        result = cli(*[t for pair in args.items() for t in pair])
        assert result.code == 2
        line = one_line_error(result)
        assert option in line and "control character" in line
        assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f\u202e\udcff]", result.err)


def test_options_before_a_subcommand_are_not_silently_ignored(cli):
    result = cli("--recipes", "/nonexistent", "list", "models")
    assert result.code == 2 and "--recipes" in one_line_error(result) and "after the command" in result.err
    assert cli("list", "models", "--recipes", "/nonexistent").code == 2  # applied where it belongs
    assert cli("--gpu", "sm80", "explain", "--model", "glm-5.2").code == 2


def test_hints_name_only_commands_that_exist(cli):
    hints = [
        one_line_error(cli(*GLM, "--build", "zzzz-qqqq-xxxx")),
        one_line_error(cli(*GLM, "--variant", "zzzz-qqqq-xxxx")),
        one_line_error(cli(*GLM, "--engine", "zzzz-qqqq-xxxx")),
        one_line_error(cli("--gpu", "zzzz-qqqq-xxxx", "--model", "glm-5.2")),
        one_line_error(cli("--gpu", "sm80", "--model", "zzzz-qqqq-xxxx")),
    ]
    for hint in hints:
        for command in re.findall(r"`recipegen ([^`]+)`", hint):
            assert cli(*command.split()).code == 0, (hint, command)


def test_version(cli):
    from recipegen import __version__

    for args in (("--version",), ("--version", "list", "models"), ("generate", "--version")):
        result = cli(*args)
        assert result.code == 0 and result.out == f"recipegen {__version__}\n"


def test_help_shows_plain_metavars(cli):
    for command in ((), ("generate",), ("explain",), ("matrix",), ("list",), ("validate",)):
        text = cli(*command, "--help").out
        assert "Usage:" in text
        assert not re.search(r"<(list|int|float|str|path)[^>]*>|\brange>", text), text


def test_usage_errors_stay_exit_2_on_one_line(cli):
    for args in (("--no-such-option",), ("list",), ("list", "gpuz"), ("explain", "--format", "xml"), ("nonsense",)):
        result = cli(*args)
        assert result.code == 2, args
        assert "help" in one_line_error(result)


def test_an_unexpected_error_is_one_line_with_its_own_exit_code(cli, monkeypatch):
    import recipegen.plan.resolve as resolver

    def broken(*args, **kwargs):  # type: ignore[no-untyped-def]
        raise ZeroDivisionError("division by zero\nsecond line")

    monkeypatch.setattr(resolver, "resolve", broken)
    result = cli("explain", *GLM)
    assert result.code == 70
    line = result.err.strip()
    assert len(result.err.splitlines()) == 1
    assert line.startswith("internal error: ZeroDivisionError: division by zero\\nsecond line")
    assert "RECIPEGEN_DEBUG=1" in line and "\n" not in line
    debug = cli("explain", *GLM, env={"RECIPEGEN_DEBUG": "1"})
    assert debug.code == 70 and "Traceback (most recent call last)" in debug.err


def test_ctrl_c_exits_130_quietly(cli, monkeypatch):
    import recipegen.plan.resolve as resolver

    def interrupted(*args, **kwargs):  # type: ignore[no-untyped-def]
        raise KeyboardInterrupt

    monkeypatch.setattr(resolver, "resolve", interrupted)
    result = cli("explain", *GLM)
    assert result.code == 130 and "Traceback" not in result.err and result.err.strip() == ""


def test_a_closed_pipe_is_not_an_error():
    proc = subprocess.Popen(
        [sys.executable, "-m", "recipegen", "list", "engines"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    proc.stdout.close()  # the reader is gone before the first line is written
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 1 and err == ""  # click's code for a closed pipe, quietly


def test_diagnose_refuses_logs_it_cannot_read(cli, tmp_path):
    import os

    os.mkfifo(tmp_path / "fifo.log")
    for log in ("/proc/self/mem", str(tmp_path / "fifo.log"), str(tmp_path), "x" * 300, "/dev/zero"):
        result = cli("diagnose", log, "--model", "glm-5.2")
        assert result.code == 2, (log, result.err)
        one_line_error(result)
