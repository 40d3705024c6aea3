"""Engine containers running on this machine, read through the Docker engine: their image, labels and argv
named as a build (`recipegen detect`) and as the command `lint --container NAME` checks."""

from __future__ import annotations

import datetime as dt
from dataclasses import replace
from typing import Any

from ..catalog.index import Catalog
from ..catalog.names import resolve_user_build
from ..check.invocation import Invocation, from_argv
from ..errors import RecipegenError
from ..frozen import frozen

# image labels that carry the engine version (OCI's standard key first)
VERSION_LABELS = ("org.opencontainers.image.version", "version")


@frozen
class EngineContainer:
    name: str
    image: str
    status: str
    invocation: Invocation


def _tokens(attrs: dict[str, Any]) -> list[str]:
    """The container as the `docker run` line that would start it again (env, binds, entrypoint, image, args)."""
    config = attrs.get("Config") or {}
    host = attrs.get("HostConfig") or {}
    tokens = ["docker", "run"]
    for item in config.get("Env") or []:
        tokens += ["-e", str(item)]
    for bind in host.get("Binds") or []:
        tokens += ["-v", str(bind)]
    path = str(attrs.get("Path") or "")
    if path:
        tokens += ["--entrypoint", path]
    return [*tokens, str(config.get("Image") or ""), *((path and [path]) or []), *map(str, attrs.get("Args") or [])]


def _invocation(catalog: Catalog, attrs: dict[str, Any], where: str) -> Invocation | None:
    try:
        invocation = from_argv(catalog, _tokens(attrs))
    except RecipegenError:
        return None
    invocation = replace(invocation, where=where)
    if invocation.build is not None:
        return invocation
    labels = (attrs.get("Config") or {}).get("Labels") or {}
    for key in VERSION_LABELS:
        version = labels.get(key)
        if not version:
            continue
        try:
            found = resolve_user_build(catalog, f"{invocation.engine.id}=={version}", on=dt.date.today())
        except RecipegenError:
            continue
        how = f"label {key}={version}: {found.how}"
        build = catalog.build(found.build_id)[1]
        return replace(invocation, build=build, build_how=how, resolution=replace(found, how=how))
    return invocation


def engine_containers(catalog: Catalog, client: Any) -> list[EngineContainer]:
    """The running containers whose command starts an engine of the catalog."""
    out: list[EngineContainer] = []
    for container in client.containers.list():
        attrs = container.attrs
        name = str(attrs.get("Name") or container.name).lstrip("/")
        invocation = _invocation(catalog, attrs, f"container {name}")
        if invocation is not None:
            image = str((attrs.get("Config") or {}).get("Image") or "")
            out.append(EngineContainer(name, image, str(attrs.get("State", {}).get("Status", "")), invocation))
    return sorted(out, key=lambda c: c.name)


def container_invocation(catalog: Catalog, client: Any, name: str) -> Invocation:
    """The engine command of one container (by name or id), for lint."""
    import docker.errors

    try:
        attrs = client.containers.get(name).attrs
    except docker.errors.NotFound:
        raise RecipegenError(f"--container {name}: no such container", "see `docker ps` for the names") from None
    invocation = _invocation(catalog, attrs, f"container {name}")
    if invocation is None:
        command = " ".join([str(attrs.get("Path") or ""), *map(str, attrs.get("Args") or [])])[:200]
        raise RecipegenError(
            f"--container {name}: its command starts no engine the catalog knows ({command})",
            "lint reads vllm serve, python -m sglang.launch_server, llama-server …",
        )
    return invocation


def containers_json(found: list[EngineContainer]) -> list[dict[str, Any]]:
    return [
        {
            "name": c.name,
            "image": c.image,
            "status": c.status,
            "engine": c.invocation.engine.id,
            "build": c.invocation.build.id if c.invocation.build else None,
            "build_resolution": c.invocation.resolution.as_json() if c.invocation.resolution else None,
            "args": list(c.invocation.args),
        }
        for c in found
    ]


def containers_text(found: list[EngineContainer]) -> list[str]:
    if not found:
        return ["no engine container runs here"]
    lines = [f"{len(found)} engine container(s):"]
    for c in found:
        inv = c.invocation
        build = f"{inv.build.id} ({inv.build_how})" if inv.build else "a build the catalog does not know"
        lines.append(f"  {c.name}: {c.image} → {inv.engine.name} {build}")
        lines.append(f"    lint it: recipegen lint --container {c.name}")
    return lines
