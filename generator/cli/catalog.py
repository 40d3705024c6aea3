"""`recipegen matrix`, `list` and `validate`: the catalog as a grid of verdicts, as tables, and checked."""

from __future__ import annotations

import json
from typing import Annotated

import typer

from ..catalog.kinds import KIND_NAMES
from . import values as cli_values
from .options import Format, Kind, MatrixFormat, Recipes, load_catalog

commands = typer.Typer()


@commands.command("matrix")
def matrix(
    model: Annotated[
        list[str],
        typer.Option(
            "--model",
            metavar="MODEL",
            callback=cli_values.name,
            help="model (repeatable; default: every model)",
            show_default=False,
        ),
    ] = [],  # noqa: B006
    target: Annotated[
        list[str],
        typer.Option(
            "--target",
            metavar="COUNTxGPU",
            callback=cli_values.name,
            help="COUNTxGPU, e.g. 8xa100-80gb (repeatable)",
            show_default=False,
        ),
    ] = [],  # noqa: B006
    fmt: Annotated[
        MatrixFormat, typer.Option("--format", metavar="md|json|html", help="md, json or html")
    ] = MatrixFormat.md,
    recipes: Recipes = [],  # noqa: B006
) -> None:
    """Verdict grid of models × targets: ✓ official, ◐ fallback/community/fork only, ✗ blocked, ? unknown."""
    from ..catalog.targets import DEFAULT_TARGETS, parse_target
    from ..checkpoint.anymodel import resolve_any
    from ..report.matrix import build_matrix, to_html, to_json, to_markdown

    catalog = load_catalog(recipes)
    models = [resolve_any(catalog, m).model for m in model] or sorted(catalog.models.values(), key=lambda m: m.id)
    targets = [parse_target(catalog, t) for t in (target or list(DEFAULT_TARGETS))]
    cells = build_matrix(catalog, models, targets)
    if fmt is MatrixFormat.json:
        typer.echo(json.dumps(to_json(cells, targets), indent=2, ensure_ascii=False))
    elif fmt is MatrixFormat.html:
        typer.echo(to_html(cells, targets), nl=False)
    else:
        typer.echo(to_markdown(cells, targets), nl=False)


@commands.command("list")
def list_(
    kind: Annotated[Kind, typer.Argument(metavar="|".join(KIND_NAMES), hidden=True, show_default=False)],
    fmt: Annotated[Format, typer.Option("--format", metavar="text|json", help="text table or json")] = Format.text,
    recipes: Recipes = [],  # noqa: B006
) -> None:
    """List the catalog: models, hardware, engines (one row per build), deployments or fingerprints."""
    from ..report.listing import rows

    catalog = load_catalog(recipes)
    table = rows(catalog, kind.value, detail=fmt is Format.json)
    if fmt is Format.json:
        typer.echo(json.dumps(table, indent=2, ensure_ascii=False))
        return
    if not table:
        typer.echo(f"no {kind.value} in the catalog")
        return
    columns = list(table[0])
    widths = {c: max(len(c), *(len(str(r[c])) for r in table)) for c in columns}
    typer.echo("  ".join(c.upper().ljust(widths[c]) for c in columns).rstrip())
    for row in table:
        typer.echo("  ".join(str(row[c]).ljust(widths[c]) for c in columns).rstrip())


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
    counts = ", ".join(f"{len(catalog.kind(k))} {k}" for k in ("hardware", "engines", "models", "deployments"))
    builds = sum(1 for _ in catalog.builds())
    typer.echo(f"catalog ok: {counts}, {builds} engine builds")
    for kind, entry_id, origin in catalog.overridden:
        typer.echo(f"  {kind}/{cli_values.printable(entry_id)} overridden by {cli_values.printable(origin.path, 2000)}")
