"""`recipegen k8s DIR`: Kubernetes manifests for a folder recipegen wrote, from its plan.json."""

from pathlib import Path
from typing import Annotated

import typer

from . import values as cli_values

commands = typer.Typer()


@commands.command("k8s")
def k8s(
    folder: Annotated[
        str,
        typer.Argument(metavar="DIR", callback=cli_values.path, help="a folder written by recipegen (holds plan.json)"),
    ],
    claim: Annotated[
        str | None,
        typer.Option(
            "--claim",
            callback=cli_values.name,
            help="an existing PersistentVolumeClaim that holds the weights (no volume or download Job is written)",
        ),
    ] = None,
) -> None:
    """Write DIR/k8s/ (kustomization, engine, weights volume and download Job) with the same argv as launch.sh.

    Example: recipegen k8s ./glm-5.3-flash-2xgb10 && kubectl apply -k ./glm-5.3-flash-2xgb10/k8s
    """
    from ..artifacts.folder import load
    from ..artifacts.kubernetes import FOLDER, check_claim
    from ..artifacts.output import add
    from ..artifacts.render import kubernetes_files

    if claim is not None:
        check_claim(claim)
    target = Path(folder)
    files = kubernetes_files(load(target).plan, claim)
    changed = add(files, target, FOLDER)
    shown = cli_values.printable(str(target / FOLDER), 2000)
    typer.echo(f"{'wrote' if changed else 'unchanged:'} {shown}/ ({', '.join(sorted(n.split('/')[1] for n in files))})")
    typer.echo(f"next: read {shown}/README.md, then kubectl apply -k {shown}")
