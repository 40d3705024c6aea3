"""`recipegen diagnose LOG|-`: which known failure a log shows, what it means and the plan that runs."""

import json
import sys
from pathlib import Path
from typing import Annotated

import typer

from ..errors import RecipegenError
from . import values as cli_values
from .options import Format, FormatOpt, Recipes, load_catalog

commands = typer.Typer()


def read_log(source: str) -> str:
    """The log text from a file or stdin ('-'); bytes that are not UTF-8 are replaced, never fatal."""
    from ..check.diagnose import MAX_CHARS

    if source == "-":
        data = sys.stdin.buffer.read() if hasattr(sys.stdin, "buffer") else sys.stdin.read().encode()
    else:
        path = Path(source)
        try:
            regular = path.is_file()
        except OSError:  # a name too long, a folder we may not read
            regular = False
        if not regular:
            raise RecipegenError(f"no log file {source!r}", "pass a file, or - to read the log from stdin")
        try:
            with path.open("rb") as handle:
                handle.seek(0, 2)
                size = handle.tell()
                handle.seek(max(0, size - MAX_CHARS))
                data = handle.read()
        except OSError as exc:  # e.g. /proc/self/mem: a "regular" file that cannot be read
            raise RecipegenError(f"cannot read log {source!r}: {exc.strerror or exc}", "pass a log file") from None
    return data[-MAX_CHARS:].decode("utf-8", errors="replace")


@commands.command("diagnose")
def diagnose(
    log: Annotated[str, typer.Argument(metavar="LOG", callback=cli_values.path, hidden=True, show_default=False)],
    gpu: Annotated[
        str | None,
        typer.Option("--gpu", metavar="GPU", callback=cli_values.name, help="the GPU, when the log does not say it"),
    ] = None,
    model: Annotated[
        str | None,
        typer.Option(
            "--model", metavar="MODEL", callback=cli_values.name, help="the model, when the log does not say it"
        ),
    ] = None,
    gpus: Annotated[
        int | None,
        typer.Option("--gpus", metavar="N", callback=cli_values.count, help="GPUs per node for the plan that runs"),
    ] = None,
    fmt: FormatOpt = Format.text,
    recipes: Recipes = [],  # noqa: B006
) -> None:
    """Match a failed engine LOG (a file, or - for stdin: docker logs … 2>&1 | recipegen diagnose -) against known
    failures: the stage, the gate, why, the fix, the plan that runs."""
    from ..check.diagnose import diagnose_log
    from ..check.diagnose_output import diagnosis_json, format_diagnosis
    from ..check.log_facts import Hints

    text = read_log(log)
    result = diagnose_log(load_catalog(recipes), text, Hints(gpu=gpu, model=model, gpus=gpus))
    if fmt is Format.json:
        typer.echo(json.dumps(diagnosis_json(result), indent=2, ensure_ascii=False))
    else:
        typer.echo(format_diagnosis(result), nl=False)
