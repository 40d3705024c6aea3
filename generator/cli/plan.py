"""`recipegen [generate]` and `recipegen explain`: resolve a request, write its folder or explain the decision."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from ..errors import BlockedError, RecipegenError
from . import values as cli_values
from .options import (
    AsOf,
    BuildOpt,
    Concurrency,
    Context,
    EngineOpt,
    Format,
    FormatOpt,
    Gpu,
    GpuMemory,
    Gpus,
    HostBandwidth,
    HostMemory,
    ModelOpt,
    Nodes,
    Recipes,
    VariantOpt,
    Version,
    load_catalog,
)
from .request import Selectors, build_request

if TYPE_CHECKING:
    from ..catalog.index import Catalog
    from ..plan.types import Resolution

commands = typer.Typer()


def _explanation(catalog: Catalog, resolution: Resolution) -> str:
    from ..plan.advice import alternatives, faster_elsewhere
    from ..report.explain import explain_text

    alts = alternatives(catalog, resolution) if not resolution.plans else faster_elsewhere(catalog, resolution)
    return explain_text(resolution, alts)


def closest_rejections(resolution: Resolution, limit: int = 5) -> list[str]:
    """The rejected paths that came closest (fewest failing gates), one line each."""
    from ..plan.resolve import rank_key

    rejected = [c for c in resolution.candidates if not c.runnable and c.gate("architecture").outcome == "pass"]
    rejected.sort(key=lambda c: (len(c.failing()), rank_key(c)))
    if not rejected:
        return []
    out = [f"  closest rejected paths ({len(rejected)} in all; README.md lists every gate failure):"]
    for cand in rejected[:limit]:
        first = cand.failing()[0]
        gates = ", ".join(g.gate for g in cand.failing())
        out.append(f"    ✗ {cand.engine.id} {cand.build.id} · {cand.variant.id} [{gates}]: {first.reason[:140]}")
    return out


def generate_command(sel: Selectors, out: str | None, force: bool, fmt: Format, recipes: list[str]) -> None:
    from ..artifacts.contract import resolution_json
    from ..artifacts.output import write
    from ..artifacts.render import folder_name, render
    from ..plan.describe import candidate_title, target_line
    from ..plan.resolve import resolve

    catalog = load_catalog(recipes)
    request = build_request(catalog, sel)
    if request.weights_folder is not None:
        from ..checkpoint.folder import mountable_blobs

        request = replace(request, weights_blobs=mountable_blobs(Path(request.weights_folder)))
    resolution = resolve(catalog, request)
    if not resolution.plans:
        if fmt is Format.json:
            typer.echo(json.dumps(resolution_json(resolution), indent=2, ensure_ascii=False))
        else:
            typer.echo(_explanation(catalog, resolution))
        if resolution.undecided:
            raise BlockedError(
                "unknown: no path is known to run this request (a fact is missing, none fails); nothing written",
                "see the reasons above",
            )
        raise BlockedError("blocked: no path runs this request; nothing written", "see the reasons above")
    if sel.gpu is None or sel.gpu.casefold() == "auto":  # rerunning the artifacts' command needs no GPU here
        sel = replace(sel, gpu=request.hardware.id)
    typed = sel.model
    if request.weights_folder is not None:  # the artifacts name the absolute folder, so a rerun finds it anywhere
        sel = replace(sel, model=request.weights_folder)
    files = render(resolution, sel.command_line())
    target = Path(out) if out is not None else Path(folder_name(resolution))
    changed = write(files, target, force)
    if fmt is Format.json:  # the same object as plan.json, container spec included
        typer.echo(files["plan.json"], nl=False)
        return
    top = resolution.plans[0]
    lines = [
        f"{target_line(resolution)}: RUNNABLE",
        f"  understood: {request.target_note}",
        *(
            [f"  weights: the local folder {request.weights_folder}, mounted read-only; nothing is downloaded"]
            + (
                [f"    (a Hugging Face cache snapshot: its links point into {request.weights_blobs}, mounted too)"]
                if request.weights_blobs
                else []
            )
            + ([f"    (--model {typed} made absolute: the artifacts name this path)"] if typed != sel.model else [])
            if request.weights_folder is not None
            else []
        ),
        f"  layout: {resolution.layout_note}",
        f"  plan #1: {candidate_title(top.candidate)}",
        f"  why: {top.why_first}",
    ]
    if top.candidate.budget is not None:
        b = top.candidate.budget
        from ..plan.memory import ESTIMATED

        estimated = " (checkpoint size estimated from the parameter count; README.md says how)" * any(
            n.startswith(ESTIMATED) for n in b.notes
        )
        lines.append(
            f"  memory: {b.weights_gib:.1f} GiB weights/GPU{estimated}, context {b.context}, "
            f"concurrency {b.concurrency} ({b.limit})"
        )
    if top.candidate.offload is not None:
        lines.append(f"  offload: {top.candidate.offload.summary()}")
    if top.candidate.speed is not None:
        lines.append(f"  speed (estimate): {top.candidate.speed.headline()}")
    if top.candidate.offload is not None:  # what the same model does on hardware that holds it
        from ..plan.advice import faster_elsewhere

        faster = faster_elsewhere(catalog, resolution)
        lines.extend(["  faster without host offload, on other hardware:"] if faster else [])
        lines.extend(f"    • {alt.target}: {alt.summary}" for alt in faster)
    lines.extend(closest_rejections(resolution))
    verb = "wrote" if changed else "unchanged"
    shown = cli_values.printable(str(target) if out is not None else f"./{target}", 2000)
    lines.append(f"  {verb} {shown}/: " + ", ".join(sorted(files)))
    typer.echo("\n".join(lines))


def generate(
    ctx: typer.Context,
    gpu: Gpu = None,
    model: ModelOpt = None,
    gpus: Gpus = None,
    nodes: Nodes = 1,
    gpu_memory: GpuMemory = None,
    engine: EngineOpt = None,
    build: BuildOpt = None,
    variant: VariantOpt = None,
    context: Context = None,
    concurrency: Concurrency = None,
    as_of: AsOf = None,
    host_memory: HostMemory = None,
    host_bandwidth: HostBandwidth = None,
    out: Annotated[
        str | None,
        typer.Option(
            "--out", metavar="DIR", callback=cli_values.path, help="output folder (default: ./<model>-<count>x<gpu>)"
        ),
    ] = None,
    force: Annotated[
        bool,
        typer.Option("--force", help="replace the files recipegen wrote in --out earlier (other files are kept)"),
    ] = False,
    fmt: FormatOpt = Format.text,
    recipes: Recipes = [],  # noqa: B006 - typer reads the default, never mutates it
    version: Version = False,
) -> None:
    """Resolve a model on a GPU fleet and write launch.sh, docker-compose.yml, README.md, verify.sh and plan.json."""
    if ctx.invoked_subcommand is not None:  # as the root callback, before another command
        _refuse_options_before(ctx)
        return
    if gpu is None and model is None:
        typer.echo(ctx.get_help())
        raise typer.Exit(0)
    sel = Selectors(
        gpu,
        model,
        gpus,
        nodes,
        gpu_memory,
        engine,
        build,
        variant,
        context,
        concurrency,
        as_of,
        host_memory=host_memory,
        host_bandwidth=host_bandwidth,
    )
    generate_command(sel, out, force, fmt, recipes)


def _refuse_options_before(ctx: typer.Context) -> None:
    """Options typed before a subcommand belong to the root command and would be ignored: refuse them."""
    sources = {param.name: ctx.get_parameter_source(param.name) for param in ctx.command.params if param.name}
    given = [
        param.opts[0]
        for param in ctx.command.params
        if param.opts and getattr(sources.get(param.name or ""), "name", None) == "COMMANDLINE"
    ]
    if given:
        sub = ctx.invoked_subcommand
        raise RecipegenError(
            f"{', '.join(given)} given before `{sub}` would be ignored",
            f"put options after the command: recipegen {sub} … {given[0]} …",
        )


# The root command is `generate` too (app.py): `recipegen --gpu … --model …` needs no subcommand.
commands.command("generate")(generate)


@commands.command("explain")
def explain(
    gpu: Gpu = None,
    model: ModelOpt = None,
    gpus: Gpus = None,
    nodes: Nodes = 1,
    gpu_memory: GpuMemory = None,
    engine: EngineOpt = None,
    build: BuildOpt = None,
    variant: VariantOpt = None,
    context: Context = None,
    concurrency: Concurrency = None,
    as_of: AsOf = None,
    host_memory: HostMemory = None,
    host_bandwidth: HostBandwidth = None,
    fmt: FormatOpt = Format.text,
    recipes: Recipes = [],  # noqa: B006
) -> None:
    """Decision trace: every candidate path with a ✓/✗ per gate, the memory budget, and advice when blocked."""
    from ..plan.resolve import resolve

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
        context,
        concurrency,
        as_of,
        host_memory=host_memory,
        host_bandwidth=host_bandwidth,
    )
    resolution = resolve(catalog, build_request(catalog, sel))
    if fmt is Format.json:
        from ..artifacts.contract import resolution_json

        typer.echo(json.dumps(resolution_json(resolution), indent=2, ensure_ascii=False))
    else:
        from ..report.history import explain_lines

        typer.echo(_explanation(catalog, resolution), nl=False)
        typer.echo("\n".join(explain_lines(catalog, resolution)))
