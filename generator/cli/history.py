"""`recipegen history`: per engine, the verdict across its builds in date order and what flipped it."""

import json
from dataclasses import replace
from typing import Annotated

import typer

from .options import (
    AsOf,
    BuildOpt,
    Concurrency,
    Dcp,
    Eager,
    EngineOpt,
    Format,
    FormatOpt,
    Gpu,
    GpuMemory,
    Gpus,
    HostMemory,
    KvCacheDtype,
    ModelOpt,
    Nodes,
    Pulled,
    Recipes,
    Speculative,
    SpeculativeTokens,
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
    build: BuildOpt = None,
    as_of: AsOf = None,
    pulled: Pulled = None,
    concurrency: Concurrency = None,
    kv_cache_dtype: KvCacheDtype = None,
    speculative: Speculative = None,
    speculative_tokens: SpeculativeTokens = None,
    dcp: Dcp = None,
    eager: Eager = False,
    host_memory: HostMemory = None,
    fmt: FormatOpt = Format.text,
    verbose: Annotated[
        bool,
        typer.Option("--verbose", help="every side path on its own line (default: the blocked ones grouped by reason)"),
    ] = False,
    recipes: Recipes = [],  # noqa: B006
) -> None:
    """Since when a model runs on a GPU: per engine, each build's verdict in date order and what flipped it."""
    from ..plan.describe import fit
    from ..report.history import history, history_json, history_text

    catalog = load_catalog(recipes)
    sel = Selectors(
        gpu,
        model,
        gpus,
        nodes,
        gpu_memory,
        engine,
        build,
        variant,
        concurrency=concurrency,
        as_of=as_of,
        pulled=pulled,
        kv_cache_dtype=kv_cache_dtype,
        speculative=speculative,
        speculative_tokens=speculative_tokens,
        dcp=dcp,
        eager=eager,
        host_memory=host_memory,
    )
    request = build_request(catalog, sel)
    if request.build is not None and request.engine is None:  # --build names the engine whose history it is in
        request = replace(request, engine=catalog.build(request.build)[0].id)
    found = history(catalog, request)
    yours = next((v for h in found for v in (*h.line, *h.side) if v.build.id == request.build), None)
    if fmt is Format.json:
        document = {
            "request": {
                "model": request.model.id,
                "hardware": request.hardware.id,
                "gpus": gpus,
                "nodes": nodes,
                "as_of": str(request.as_of) if request.as_of else None,
                "build": request.build,
                "build_resolution": request.build_resolution.as_json() if request.build_resolution else None,
            },
            "engines": history_json(found),
        }
        typer.echo(json.dumps(document, indent=2, ensure_ascii=False))
    else:
        understood = f"understood: {request.target_note}"
        typer.echo("\n".join([understood] if verbose else fit(understood, "  ", 3)) + "\n")
        if request.build is not None:
            typer.echo(f"your build {request.build}: {yours.detail if yours else 'no verdict on this request'}\n")
        typer.echo(history_text(found, verbose), nl=False)
