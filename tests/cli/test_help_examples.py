"""Every command's --help ends with 1–3 examples, and each example is a command line its parser accepts."""

from __future__ import annotations

import re
import shlex

import pytest
import typer.main

from recipegen.cli.app import app
from tests.support.cli import run_cli


def commands() -> list[str]:
    """The commands `recipegen --help` lists."""
    out = run_cli("--help").out
    listed = out.split("\nCommands:\n", 1)[1].split("\n\n", 1)[0]
    return [m.group(1) for m in re.finditer(r"^  (\S+)\s", listed, re.M)]


def examples(help_text: str) -> list[str]:
    """The example lines after the help's "Examples:" heading: what follows "recipegen", up to a pipe or a
    redirection (the shell's part of the line)."""
    assert "Examples:" in help_text, "no Examples section"
    section = help_text.rsplit("Examples:", 1)[1]
    lines = [line.strip() for line in section.splitlines() if line.strip()]
    assert all("recipegen " in line for line in lines), lines  # the section ends the help: examples only
    return [re.split(r" [|>] ", "recipegen " + line.split("recipegen ", 1)[1])[0] for line in lines]


def test_help_lists_the_commands() -> None:
    assert {"generate", "explain", "matrix", "history", "lint", "diagnose", "inspect", "list", "detect"} <= set(
        commands()
    )


@pytest.mark.parametrize("command", [None, *commands()])
def test_every_help_ends_with_examples_its_parser_accepts(command: str | None) -> None:
    result = run_cli(*([command] if command else []), "--help")
    assert result.code == 0, result.err
    found = examples(result.out)
    assert 1 <= len(found) <= 3, found
    group = typer.main.get_command(app)
    for line in found:
        argv = shlex.split(line)
        assert argv[0] == "recipegen"
        if command is None:
            assert argv[1].startswith("-"), line  # the root's own example: no subcommand
            group.make_context("recipegen", argv[1:])
        else:
            assert argv[1] == command, line
            group.commands[command].make_context(f"recipegen {command}", argv[2:])  # type: ignore[attr-defined]


def test_an_example_with_an_unknown_option_is_refused() -> None:
    """The check above can fail: the parser refuses what the command does not have."""
    group = typer.main.get_command(app)
    with pytest.raises(Exception, match="No such option"):
        group.commands["explain"].make_context("recipegen explain", ["--gpu", "h200", "--no-such-option"])  # type: ignore[attr-defined]
