"""The Docker engine, through the docker SDK: the one module that talks to it.

Containers are created from the folder's container spec (plan.json "container"), the same value
launch.sh and docker-compose.yml print, and carry a label naming the folder so that `down`
removes only what `up` started.
"""

from __future__ import annotations

import os
import string
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from ..artifacts.container import HEALTH_INTERVAL_S, HEALTH_RETRIES, HEALTH_TIMEOUT_S, LABEL, START_PERIOD_S
from ..errors import RecipegenError

NS = 1_000_000_000


class DockerUnavailable(RecipegenError):
    pass


def connect() -> Any:
    """A pinged docker client, or one precise sentence about why there is none."""
    import docker  # the SDK loads only for the commands that need it
    import docker.errors

    where = os.environ.get("DOCKER_HOST") or "the default socket (/var/run/docker.sock)"
    try:
        client = docker.from_env(timeout=30)
        client.ping()
    except docker.errors.DockerException as exc:
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise DockerUnavailable(
            f"cannot reach the Docker daemon at {where}: {reason[:200]}",
            "start Docker (e.g. `sudo systemctl start docker`) or point DOCKER_HOST at it",
        ) from None
    return client


def try_connect() -> tuple[Any | None, str]:
    try:
        client = connect()
    except DockerUnavailable as exc:
        return None, exc.message
    version = client.version().get("Version", "unknown")
    return client, f"Docker {version} answers"


def nvidia_runtime(client: Any) -> bool:
    info = client.info()
    return "nvidia" in (info.get("Runtimes") or {}) or any(
        "nvidia.com/gpu" in str(d) for d in (info.get("DiscoveredDevices") or [])
    )


def image_id(client: Any, image: str) -> str | None:
    import docker.errors

    try:
        return str(client.images.get(image).id)
    except docker.errors.APIError:  # not here, or a name this daemon cannot look up
        return None


def registry_state(client: Any, image: str) -> tuple[bool | None, str]:
    """(True, …) pullable; (False, …) the registry says it does not exist; (None, …) cannot tell."""
    import docker.errors

    try:
        client.images.get_registry_data(image)
    except docker.errors.NotFound as exc:
        return False, f"the registry has no {image} ({exc.explanation or exc})"
    except docker.errors.APIError as exc:
        text = str(exc.explanation or exc)
        if "not found" in text.lower() and "manifest" in text.lower():
            return False, f"the registry has no {image}"
        return None, f"the registry cannot be reached from here ({text[:160]})"
    return True, f"{image} is pullable"


def pull(client: Any, image: str, echo: Callable[[str], None]) -> None:
    """Pull with a progress line per layer milestone: layers done, bytes fetched of the known total."""
    repo, _, tag = image.rpartition(":") if ":" in image.rsplit("/", 1)[-1] else (image, "", "latest")
    status: dict[str, str] = {}
    sizes: dict[str, tuple[int, int]] = {}
    last = ""
    try:
        for event in client.api.pull(repo, tag=tag, stream=True, decode=True):
            if "error" in event:
                raise RecipegenError(f"pulling {image} failed: {event['error']}", "check the image name and network")
            layer = event.get("id")
            if not layer or "status" not in event:
                continue
            status[layer] = event["status"]
            detail = event.get("progressDetail") or {}
            if event["status"] == "Downloading" and detail.get("total"):
                sizes[layer] = (int(detail.get("current", 0)), int(detail["total"]))
            if event["status"] in {"Download complete", "Pull complete"} and layer in sizes:
                sizes[layer] = (sizes[layer][1], sizes[layer][1])
            done = sum(1 for s in status.values() if s in {"Pull complete", "Already exists"})
            got, total = sum(c for c, _ in sizes.values()), sum(t for _, t in sizes.values())
            line = f"pull {image}: {done}/{len(status)} layers"
            if total:
                line += f", {got / 1e9:.1f} of {total / 1e9:.1f} GB fetched"
            mark = f"{done}/{len(status)}:{int(10 * got / total) if total else 0}"  # each layer, each tenth
            if mark != last:
                echo(line)
                last = mark
    except RecipegenError:
        raise
    except Exception as exc:
        raise RecipegenError(
            f"pulling {image} failed: {str(exc)[:200]}", "check the network and registry login"
        ) from None


def build(client: Any, folder: Path, tag: str, echo: Callable[[str], None]) -> None:
    try:
        for chunk in client.api.build(path=str(folder), tag=tag, rm=True, decode=True):
            if "error" in chunk:
                raise RecipegenError(
                    f"building {tag} failed: {chunk['error'].strip()}", "see the Dockerfile's step above"
                )
            text = str(chunk.get("stream", "")).strip()
            if text.startswith("Step "):
                echo(f"build {tag}: {text}")
    except RecipegenError:
        raise
    except Exception as exc:
        raise RecipegenError(f"building {tag} failed: {str(exc)[:200]}", "run `./launch.sh build` to see it") from None


def expand(args: list[str], expand_at: list[int], values: dict[str, str]) -> list[str]:
    """Fill ${HEAD_ADDR}-style references the way the shell and Compose do, nothing else."""
    out = []
    for i, arg in enumerate(args):
        if i in expand_at:
            try:
                arg = string.Template(arg).substitute(values)
            except (KeyError, ValueError) as exc:
                raise RecipegenError(
                    f"plan.json: argument {arg!r} refers to {exc}, which `up` cannot fill",
                    f"only {', '.join('${' + k + '}' for k in values)} are filled in; regenerate the folder",
                ) from None
        out.append(arg)
    return out


def run(
    client: Any,
    container: dict[str, Any],
    node: dict[str, Any],
    *,
    name: str,
    folder: Path,
    model_dir: Path,
    host_port: int,
    gpus: bool,
    values: dict[str, str],
) -> Any:
    from docker.types import DeviceRequest, Mount

    hc = container["healthcheck"]
    env = {e["name"]: e["value"] for e in container["env"]}
    if container["host_network"]:
        env |= {k: values[k] for k in ("HEAD_ADDR", "DIST_PORT") if k in values}
    kwargs: dict[str, Any] = {
        "name": name,
        "detach": True,
        "labels": {LABEL: str(folder.resolve()), "io.recipegen.rank": str(node["rank"])},
        "shm_size": container["shm_size"],
        "environment": env,
        "healthcheck": {
            "test": hc["test"],
            "interval": hc.get("interval_s", HEALTH_INTERVAL_S) * NS,
            "timeout": hc.get("timeout_s", HEALTH_TIMEOUT_S) * NS,
            "retries": hc.get("retries", HEALTH_RETRIES),
            "start_period": hc.get("start_period_s", START_PERIOD_S) * NS,
        },
    }
    volume = container["volumes"][0]
    if container.get("weights_folder"):  # a local checkpoint: a bind mount takes any path (the SDK's
        # volumes= would join host:container:mode and split a path holding a colon)
        kwargs["mounts"] = [Mount(v["container"], v["host"], type="bind", read_only=True) for v in container["volumes"]]
    else:
        kwargs["volumes"] = {str(model_dir): {"bind": volume["container"], "mode": "ro"}}
    if container["ipc_host"]:
        kwargs["ipc_mode"] = "host"
    if container["host_network"]:
        kwargs["network_mode"] = "host"
    else:
        kwargs["ports"] = {f"{container['port']}/tcp": host_port}
    if gpus:
        kwargs["device_requests"] = [DeviceRequest(count=-1, capabilities=[["gpu"]])]
    command = expand(node["args"], node["expand"], values)
    try:
        return client.containers.run(container["image"], command, **kwargs)
    except Exception as exc:
        text = str(getattr(exc, "explanation", None) or exc)
        raise RecipegenError(
            f"docker could not start {name}: {text[:240]}", "run `recipegen preflight` on the folder"
        ) from None


def ours(client: Any, folder: Path) -> list[Any]:
    return list(client.containers.list(all=True, filters={"label": f"{LABEL}={folder.resolve()}"}))


def log_lines(container: Any, since: int = 0) -> list[str]:
    text = container.logs(stdout=True, stderr=True).decode("utf-8", "replace")
    lines: list[str] = text.splitlines()[since:]
    return lines


def follow(container: Any) -> Iterator[str]:
    for chunk in container.logs(stream=True, follow=True):
        yield chunk.decode("utf-8", "replace")
