"""`recipegen history`: per engine, the verdict across its builds in date order and what flipped it."""

from __future__ import annotations

import json

import typer

from .options import (
    AsOf,
    EngineOpt,
    Format,
    FormatOpt,
    Gpu,
    GpuMemory,
    Gpus,
    ModelOpt,
    Nodes,
    Recipes,
    VariantOpt,
    load_catalog,
)
from .request import Selectors, build_request

commands = typer.Typer()


@commands.command("history")
def history_command(
    gpu: Gpu = None,
    model: ModelOpt = None,
    gpus: Gpus = None,
    nodes: Nodes = 1,
    gpu_memory: GpuMemory = None,
    engine: EngineOpt = None,
    variant: VariantOpt = None,
    as_of: AsOf = None,
    fmt: FormatOpt = Format.text,
    recipes: Recipes = [],  # noqa: B006
) -> None:
    """Since when a model runs on a GPU: per engine, each build's verdict in date order and what flipped it."""
    from ..report.history import history, history_json, history_text

    catalog = load_catalog(recipes)
    sel = Selectors(gpu, model, gpus, nodes, gpu_memory, engine, None, variant, as_of=as_of)
    request = build_request(catalog, sel)
    found = history(catalog, request)
    if fmt is Format.json:
        document = {
            "request": {
                "model": request.model.id,
                "hardware": request.hardware.id,
                "gpus": gpus,
                "nodes": nodes,
                "as_of": str(request.as_of) if request.as_of else None,
            },
            "engines": history_json(found),
        }
        typer.echo(json.dumps(document, indent=2, ensure_ascii=False))
    else:
        typer.echo(f"understood: {request.target_note}\n")
        typer.echo(history_text(found), nl=False)
