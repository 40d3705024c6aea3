"""`recipegen lint [--gpu G] [--gpus N] [--nodes K] -- COMMAND…` and `recipegen lint FILE|-`."""

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from ..errors import RecipegenError
from . import values as cli_values
from .options import BuildOpt, Format, FormatOpt, GpuMemory, Pulled, Recipes, load_catalog

if TYPE_CHECKING:
    from ..catalog.index import Catalog
    from ..check.invocation import Invocation

commands = typer.Typer()

MAX_FILE_BYTES = 1024 * 1024  # a launch script or compose file; anything bigger is not one


@commands.command(
    "lint",
    context_settings={"ignore_unknown_options": True},
)
def lint(
    command: Annotated[
        list[str] | None, typer.Argument(metavar="FILE_OR_COMMAND", hidden=True, show_default=False)
    ] = None,
    gpu: Annotated[
        str | None,
        typer.Option("--gpu", metavar="GPU", callback=cli_values.name, help="the GPU it runs on (for the gate checks)"),
    ] = None,
    gpus: Annotated[
        int | None,
        typer.Option("--gpus", metavar="N", callback=cli_values.count, help="GPUs per node (default: from TP × PP)"),
    ] = None,
    nodes: Annotated[
        int | None,
        typer.Option("--nodes", metavar="N", callback=cli_values.count, help="nodes (default: from the command)"),
    ] = None,
    gpu_memory: GpuMemory = None,
    build: BuildOpt = None,
    pulled: Pulled = None,
    container: Annotated[
        str | None,
        typer.Option(
            "--container",
            metavar="NAME",
            callback=cli_values.name,
            help="lint the engine command of a running container (its image, argv and labels, via Docker)",
        ),
    ] = None,
    fmt: FormatOpt = Format.text,
    recipes: Recipes = [],  # noqa: B006
) -> None:
    """Check a command you already have — a FILE (launch.sh, a script, docker-compose.yml), - for stdin, or the
    command itself after -- — against the engine's own flag vocabulary and the gates, run on its own choices."""
    from ..check.invocation import find_invocation, from_argv
    from ..check.lint import lint as run_lint
    from ..check.lint_output import dumps, format_lint

    command = command or []
    catalog = load_catalog(recipes)
    if container is not None:
        if command:
            raise RecipegenError("--container and a command or file were both given", "give one of the two")
        from ..machine.containers import container_invocation
        from ..machine.dockerhost import connect

        invocation = container_invocation(catalog, connect(), container)
    elif command == ["-"]:
        data = sys.stdin.buffer.read(MAX_FILE_BYTES + 1) if hasattr(sys.stdin, "buffer") else sys.stdin.read().encode()
        if len(data) > MAX_FILE_BYTES:
            raise RecipegenError(f"stdin is larger than {MAX_FILE_BYTES // 1024} KiB", "lint a script or compose file")
        invocation = find_invocation(catalog, data.decode("utf-8", errors="replace"), "stdin")
    elif len(command) == 1 and _is_file(command[0]):
        path = Path(command[0])
        try:
            with path.open("rb") as handle:
                data = handle.read(MAX_FILE_BYTES + 1)
        except OSError as exc:
            raise RecipegenError(f"cannot read {command[0]!r}: {exc.strerror or exc}", "lint a script file") from None
        if len(data) > MAX_FILE_BYTES:
            raise RecipegenError(f"{path} is larger than {MAX_FILE_BYTES // 1024} KiB", "lint a script or compose file")
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            raise RecipegenError(f"{path} is not UTF-8 text", "lint a launch script or compose file") from None
        invocation = find_invocation(catalog, text, str(path))
    elif len(command) == 1 and " " not in command[0].strip() and not _exists(command[0]):
        raise RecipegenError(f"no such file {command[0]!r}", "give a file, or the command after --")
    else:
        invocation = from_argv(catalog, command)
    if build is not None:
        invocation = _with_build(catalog, invocation, build, pulled)
    result = run_lint(catalog, invocation, gpu, gpus, nodes, gpu_memory)
    typer.echo(dumps(result) if fmt is Format.json else format_lint(result), nl=fmt is Format.json)
    if result.failing:
        raise typer.Exit(1)


def _is_file(name: str) -> bool:
    try:
        return Path(name).is_file()
    except OSError:  # a name too long, a folder we may not read
        return False


def _exists(name: str) -> bool:
    try:
        return Path(name).exists()
    except OSError:
        return False


def _with_build(catalog: "Catalog", invocation: "Invocation", build: str, pulled: str | None) -> "Invocation":
    """--build overrides the build the command's image names (or the newest, when it names none)."""
    from dataclasses import replace

    from ..catalog.names import resolve_user_build
    from .request import parse_date

    on = parse_date(pulled, "--pulled") if pulled else None
    found = resolve_user_build(catalog, build, on=on)
    engine, chosen = catalog.build(found.build_id)
    if engine.id != invocation.engine.id:
        raise RecipegenError(
            f"--build {build} is {chosen.id}, a {engine.name} build, but the command runs {invocation.engine.name}",
            f"give a {invocation.engine.name} build",
        )
    how = f"--build {build} → {found.how}"
    return replace(invocation, build=chosen, build_how=how, resolution=found)
