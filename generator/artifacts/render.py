"""Render one resolved Plan into the artifact folder: launch.sh, docker-compose.yml, README.md,
verify.sh, plan.json (and a Dockerfile for source builds).

Everything a template prints is decided here; templates only lay values out, each through the
filter of encode.py for the syntax it lands in (shell word, comment, YAML, Dockerfile exec form,
Markdown), so hostile text in a recipe or on the command line cannot break out.
"""

from __future__ import annotations

import json
import posixpath
import re
from importlib import resources
from typing import Any

from jinja2 import BaseLoader, StrictUndefined, TemplateNotFound
from jinja2.sandbox import SandboxedEnvironment

from .. import __version__
from ..catalog.vocabulary import command_problems
from ..checkpoint.gguf import download_pattern
from ..errors import InternalError, RecipegenError
from ..frozen import frozen
from ..plan.checkpoint_size import checkpoint_bytes
from ..plan.describe import budget_table, candidate_title, slow_words, speed_lines, target_line
from ..plan.flags import container_model_path, model_dir
from ..plan.types import Flag, Resolution
from .container import START_PERIOD_S, ContainerSpec, container_spec, docker_mounts, node_flags
from .contract import resolution_json
from .encode import FILTERS, shell_expand, shell_word, yaml_expand, yaml_value


class _PackageLoader(BaseLoader):
    """Loads templates only from the package's templates/ folder (confined, no filesystem paths)."""

    def get_source(self, environment: Any, template: str) -> tuple[str, str, Any]:
        if "/" in template or "\\" in template or template.startswith("."):
            raise TemplateNotFound(template)
        node = resources.files("recipegen.templates") / template
        if not node.is_file():
            raise TemplateNotFound(template)
        return node.read_text(encoding="utf-8"), template, lambda: True


def environment() -> SandboxedEnvironment:
    env = SandboxedEnvironment(
        loader=_PackageLoader(),
        undefined=StrictUndefined,
        autoescape=False,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(FILTERS)
    return env


@frozen
class ArgLine:
    comment: str | None
    tokens: tuple[str, ...]  # already quoted for the target (shell or YAML)


def _shell_lines(flags: tuple[Flag, ...]) -> list[ArgLine]:
    lines: list[ArgLine] = []
    for flag in flags:
        tokens: list[str] = []
        if flag.flag:
            tokens.append(shell_word(flag.flag))
        if flag.value is not None:
            tokens.append(shell_expand(flag.value) if flag.expand else shell_word(flag.value))
        lines.append(ArgLine(flag.reason, tuple(tokens)))
    return lines


DIST_PORT = 20000  # launch.sh's and compose's default for DIST_PORT
# Compose interpolates a command from the host's environment, not the service's `environment:`, so its
# references carry the defaults launch.sh sets in the script (and fail clearly without HEAD_ADDR).
_COMPOSE_REFERENCES = {
    "${DIST_PORT}": f"${{DIST_PORT:-{DIST_PORT}}}",
    "${HEAD_ADDR}": "${HEAD_ADDR:?set HEAD_ADDR to the head node address}",
}


def _compose_references(value: str) -> str:
    for plain, with_default in _COMPOSE_REFERENCES.items():
        value = value.replace(plain, with_default)
    return value


def folder_name(resolution: Resolution) -> str:
    layout = resolution.layout
    count = layout.gpus if layout.nodes == 1 else layout.nodes
    raw = f"{resolution.request.model.id}-{count}x{resolution.request.hardware.id}"
    return re.sub(r"[^A-Za-z0-9._-]+", "-", raw)


def _yaml_args(spec: ContainerSpec, rank: int) -> list[str]:
    node = next(n for n in spec.nodes if n.rank == rank)
    return [yaml_expand(_compose_references(a.token)) if a.expand else yaml_value(a.token) for a in node.args]


def _build_shown(source: Any, cuda_arch: str, build_file: str | None) -> list[str]:
    """What `./launch.sh build` prints before docker build runs a recipe's own commands: the argv of
    each step and the recipe file they came from (a shared recipe folder is a trust point)."""
    import shlex

    configure = [t.replace("{cuda_arch}", cuda_arch) for t in source.configure]
    return [
        f"docker build runs these commands from the recipe {build_file or 'file of this build'}:",
        f"  configure: {shlex.join(configure)}",
        f"  build:     {shlex.join(source.build)}",
    ]


def context_for(resolution: Resolution, command_line: str, build_file: str | None = None) -> dict[str, Any]:
    plan = resolution.plans[0]
    cand = plan.candidate
    engine, build, variant, model, hw = (
        cand.engine,
        cand.build,
        cand.variant,
        resolution.request.model,
        resolution.request.hardware,
    )
    spec = container_spec(resolution)
    nodes = node_flags(plan)
    prefix = [] if engine.image_entrypoint else list(engine.command)
    source = build.source_build
    port = spec.port
    budget = cand.budget
    tool, reasoning = plan.settings.tool_parser, plan.settings.reasoning_parser
    size = variant.size_bytes
    sized = checkpoint_bytes(model, size, variant.quant, variant.quant_groups, variant.file)
    estimate = sized[0] if sized is not None and size is None else None
    return {
        "version": __version__,
        "command_line": command_line,
        "title": target_line(resolution),
        "verdict": resolution.verdict + slow_words(cand),
        "plan": plan,
        "plan_title": candidate_title(cand),
        "why_first": plan.why_first,
        "engine": engine,
        "build": build,
        "variant": variant,
        "model": model,
        "hardware": hw,
        "layout": cand.layout,
        "image": spec.image,
        "built_locally": spec.built_locally,
        "source": source,
        "cuda_arch": f"{hw.compute_capability.major}{hw.compute_capability.minor}",
        "nodes": [
            {
                "role": n.role,
                "rank": n.rank,
                "service": "engine" if n.role == "single" else ("head" if n.rank == 0 else f"worker-{n.rank}"),
                "shell": _shell_lines(n.flags),
                "yaml": _yaml_args(spec, n.rank),
            }
            for n in nodes
        ],
        "name": spec.name,
        "ipc_host": spec.ipc_host,
        "clone": ["git", "clone", source.repo, "/src"] if source else [],
        "checkout": ["git", "checkout", source.ref] if source else [],
        "configure": [
            t.replace("{cuda_arch}", f"{hw.compute_capability.major}{hw.compute_capability.minor}")
            for t in source.configure
        ]
        if source
        else [],
        "build_cmd": list(source.build) if source else [],
        "build_shown": _build_shown(source, f"{hw.compute_capability.major}{hw.compute_capability.minor}", build_file)
        if source
        else [],
        "entrypoint": [posixpath.join("/opt/llama", posixpath.basename(source.binary))] if source else [],
        "multi_node": cand.layout.nodes > 1,
        "command_prefix": [shell_word(t) for t in prefix],
        "env": [{"name": n, "value": v, "reason": r} for n, v, r in plan.env],
        "port": port,
        "served_name": spec.served_name,
        "repo": variant.repo,
        "model_dir": model_dir(variant),
        "weights_folder": spec.weights_folder,
        "weights_mounts": docker_mounts(spec) if spec.weights_folder else [],
        "weights_volumes": spec.volumes() if spec.weights_folder else [],
        "weights_blobs": spec.weights_blobs,
        "weights_check": variant.file or "config.json",
        "container_model_folder": spec.model_folder,
        "container_model_path": container_model_path(variant),
        # only the chosen quantization's files: a split set's every part, or the one file
        "download_pattern": download_pattern(variant.file) if variant.file else None,
        "download_revision": variant.revision,
        "download_mmproj": variant.mmproj if not spec.weights_folder else None,
        "size_gb": f"{size / 1e9:.0f}" if size else (f"~{estimate / 1e9:.0f}" if estimate else "unknown"),
        "size_estimated": estimate is not None,
        "disk_gb": f"{size * 1.05 / 1e9:.0f}" if size else (f"~{estimate * 1.05 / 1e9:.0f}" if estimate else "unknown"),
        "shm_size": spec.shm_size,
        "gpus_per_node": cand.layout.gpus_per_node,
        "healthcheck": [yaml_value(t) for t in spec.healthcheck],
        "health_path": engine.health_path,
        "tool_parser": tool,
        "reasoning_parser": reasoning,
        "budget_lines": budget_table(budget, indent="") if budget else ["(no memory plan: size unknown)"],
        "speed_lines": speed_lines(cand, indent=""),
        "speed_line": cand.speed.speed_line() if cand.speed is not None else None,
        "gates": cand.gates,
        "flags": plan.flags,
        "notes": plan.notes,
        "sources": plan.sources,
        "rejected": resolution.rejected(),
        "rejected_groups": rejected_groups(resolution.rejected()),
        "container_name": spec.container_name(0),
        "changes": resolution.changes,
        "driver_min": build.driver_min or "unknown",
        "start_period": f"{START_PERIOD_S // 60}m",
        "dist_port": DIST_PORT,
        "container": spec,
    }


def rejected_groups(rejected: Any) -> list[dict[str, Any]]:
    """The rejected paths grouped by reason: one entry per distinct (gate, outcome, reason), most paths first."""
    groups: dict[tuple[str, str, str], list[str]] = {}
    for r in rejected:
        key = (str(getattr(r.gate, "value", r.gate)), str(getattr(r.outcome, "value", r.outcome)), str(r.reason))
        groups.setdefault(key, []).append(f"{r.engine} {r.build} · {r.variant}")
    ordered = sorted(groups.items(), key=lambda item: (-len(item[1]), item[0]))
    return [{"gate": g, "outcome": o, "reason": why, "paths": paths} for (g, o, why), paths in ordered]


def kubernetes_files(plan: dict[str, Any], claim: str | None = None) -> dict[str, str]:
    """k8s/'s files from plan.json's content: the same path for a new folder and for one written earlier."""
    from .folder import container_from_json  # both validate with pydantic, which a plain generate never loads
    from .kubernetes import kube_input, manifests, readme_context

    container = container_from_json(plan.get("container"), "plan.json")
    inp = kube_input(plan, container, __version__, claim)
    files = manifests(inp)
    files["k8s/README.md"] = environment().get_template("k8s-README.md.j2").render(readme_context(inp, plan))
    return files


def render(
    resolution: Resolution, command_line: str, build_file: str | None = None, k8s: bool = False
) -> dict[str, str]:
    """All artifact files for the top plan, as name → content (k8s/… too when asked); `build_file` names the
    recipe file of a source build (launch.sh shows it with the argv it runs)."""
    if not resolution.plans:
        raise RecipegenError("nothing to render: the request is blocked", "run `recipegen explain` for the reasons")
    plan = resolution.plans[0]
    problems = command_problems(plan.build.cli_reference, plan.engine.command, plan.argv)
    if problems:
        raise InternalError(
            f"internal error: the plan for {plan.build.id} fails {plan.build.cli_reference}'s own flag vocabulary "
            f"({'; '.join(problems)}); nothing written",
            "please report this with the command you ran",
        )
    env = environment()
    ctx = context_for(resolution, command_line, build_file) | {"k8s": k8s}
    files = {
        "launch.sh": env.get_template("launch.sh.j2").render(ctx),
        "docker-compose.yml": env.get_template("docker-compose.yml.j2").render(ctx),
        "README.md": env.get_template("README.md.j2").render(ctx),
        "REJECTED.md": env.get_template("REJECTED.md.j2").render(ctx),
        "verify.sh": env.get_template("verify.sh.j2").render(ctx),
        "plan.json": json.dumps(
            resolution_json(resolution) | {"container": ctx["container"].to_json()}, indent=2, ensure_ascii=False
        )
        + "\n",
    }
    if ctx["source"] is not None:
        files["Dockerfile"] = env.get_template("Dockerfile.j2").render(ctx)
    if k8s:
        files |= kubernetes_files(json.loads(files["plan.json"]))
    return files
