"""`recipegen matrix`, `list` and `validate`: the catalog as a grid of verdicts, as tables, and checked."""

import json
from typing import Annotated, Any

import typer

from ..catalog.kinds import KIND_NAMES
from . import values as cli_values
from .options import Format, Gpus, HostBandwidth, HostMemory, MatrixFormat, Recipes, load_catalog

commands = typer.Typer()


GPU_HELP = "GPU id or alias, a column (repeatable; default: a100-80gb rtx-4090 h100-sxm h200 rtx-pro-6000 gb10)"
TARGET_HELP = "a box to fit into, COUNTxGPU (8xa100-80gb): the full 8 first, then 4, 2, 1 (repeatable)"


def _names(flag: str, metavar: str, help_text: str) -> Any:  # typer.Option is typed Any
    """A repeatable option of names (a matrix row or column)."""
    return typer.Option(flag, metavar=metavar, callback=cli_values.name, help=help_text, show_default=False)


@commands.command("matrix")
def matrix(
    model: Annotated[list[str], _names("--model", "MODEL", "model (repeatable; default: every model)")] = [],  # noqa: B006
    gpu: Annotated[list[str], _names("--gpu", "GPU", GPU_HELP)] = [],  # noqa: B006
    gpus: Gpus = None,
    target: Annotated[list[str], _names("--target", "COUNTxGPU", TARGET_HELP)] = [],  # noqa: B006
    host_memory: HostMemory = None,
    host_bandwidth: HostBandwidth = None,
    fmt: Annotated[
        MatrixFormat, typer.Option("--format", metavar="md|json|html", help="md, json or html (a page to open)")
    ] = MatrixFormat.md,
    verbose: Annotated[
        bool,
        typer.Option(
            "--verbose",
            help="md: every ◐ and ? cell's reasons whole, with sources, and the ✓ cells whose BF16/FP16 size is counted"
            " from the parameters (default: one line per reason)",
        ),
    ] = False,
    recipes: Recipes = [],  # noqa: B006
) -> None:
    """Per model × GPU, the smallest layout that runs: ✓ runs, ◐ runs with a caveat (named), ? unknown, ✗ blocked.

    Example: recipegen matrix --model qwen3-14b --model gpt-oss-120b --gpu h100 --gpu h200
    """
    from ..catalog.targets import MATRIX_GPUS, fleet_column, gpu_column
    from ..checkpoint.anymodel import resolve_any
    from ..report.matrix import build_matrix, to_json, to_markdown
    from .request import Selectors, host_facts

    catalog = load_catalog(recipes)
    models = [resolve_any(catalog, m).model for m in model] or sorted(catalog.models.values(), key=lambda m: m.id)
    columns = [gpu_column(catalog, g, gpus) for g in gpu] + [fleet_column(catalog, t) for t in target]
    targets = columns or [gpu_column(catalog, g, gpus) for g in MATRIX_GPUS]
    host = host_facts(Selectors(gpu=None, model=None, host_memory=host_memory, host_bandwidth=host_bandwidth))
    cells = build_matrix(catalog, models, targets, host=host)
    if fmt is MatrixFormat.json:
        typer.echo(json.dumps(to_json(cells, targets), indent=2, ensure_ascii=False))
    elif fmt is MatrixFormat.html:
        from ..report.matrix_html import to_html

        typer.echo(to_html(cells, targets), nl=False)
    else:
        typer.echo(to_markdown(cells, targets, verbose), nl=False)


_LIST_SYNONYMS = {"gpus": "hardware", "gpu": "hardware", "model": "models", "engine": "engines", "builds": "engines"}


@commands.command("list")
def list_(
    kind: Annotated[str, typer.Argument(metavar="|".join(KIND_NAMES), hidden=True, show_default=False)],
    fmt: Annotated[Format, typer.Option("--format", metavar="text|json", help="text table or json")] = Format.text,
    verbose: Annotated[
        bool,
        typer.Option(
            "--verbose",
            help="every cell whole (default: cut to fit 160 columns); gpus: a row per GPU (default: grouped)",
        ),
    ] = False,
    recipes: Recipes = [],  # noqa: B006
) -> None:
    """List the catalog: models, hardware, engines (one row per build), deployments, fingerprints or surveys."""
    from ..errors import RecipegenError
    from ..report.listing import hardware_groups, rows, table_lines

    name = _LIST_SYNONYMS.get(kind.strip().casefold(), kind.strip().casefold())
    if name not in KIND_NAMES:
        raise RecipegenError(
            f"cannot list {kind!r}",
            f"list one of: {', '.join(KIND_NAMES)} (gpus lists hardware); see `recipegen list --help`",
        )
    catalog = load_catalog(recipes)
    if name == "hardware" and fmt is Format.text and not verbose and catalog.hardware:
        typer.echo("\n".join(hardware_groups(catalog)))
        return
    table = rows(catalog, name, detail=fmt is Format.json)
    if fmt is Format.json:
        typer.echo(json.dumps(table, indent=2, ensure_ascii=False))
        return
    if not table:
        typer.echo(f"no {name} in the catalog")
        return
    typer.echo("\n".join(table_lines(table, whole=verbose)))


@commands.command("validate")
def validate(
    dirs: Annotated[
        list[str],
        typer.Argument(metavar="DIR", callback=cli_values.path, hidden=True, show_default=False),
    ] = [],  # noqa: B006
    recipes: Recipes = [],  # noqa: B006
) -> None:
    """Validate the built-in catalog plus each recipe folder DIR given; every problem on its own line."""
    catalog = load_catalog([*recipes, *dirs])
    counts = ", ".join(
        f"{len(catalog.kind(k))} {k}" for k in ("hardware", "engines", "models", "deployments", "surveys")
    )
    builds = sum(1 for _ in catalog.builds())
    typer.echo(f"catalog ok: {counts}, {builds} engine builds")
    for kind, entry_id, origin in catalog.overridden:
        typer.echo(f"  {kind}/{cli_values.printable(entry_id)} overridden by {cli_values.printable(origin.path, 2000)}")


@commands.command("coverage")
def coverage(
    fmt: Annotated[Format, typer.Option("--format", metavar="text|json", help="markdown table or json")] = Format.text,
    recipes: Recipes = [],  # noqa: B006
) -> None:
    """Where the catalog is thin: per model family × GPU class, the official release a path runs on since, the
    community paths, and the known defects (the README's coverage table)."""
    from ..report.coverage import coverage as cells_of
    from ..report.coverage import to_json, to_markdown

    cells = cells_of(load_catalog(recipes))
    if fmt is Format.json:
        typer.echo(json.dumps(to_json(cells), indent=2, ensure_ascii=False))
    else:
        typer.echo(to_markdown(cells), nl=False)
