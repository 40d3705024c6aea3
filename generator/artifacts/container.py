"""The container a plan runs in, as one typed value: launch.sh, docker-compose.yml, plan.json and
`recipegen up` all read it, so the three ways to start the engine cannot disagree.

Pure: no Docker here. `dockerhost` turns a spec into docker SDK calls; the templates print it.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import field
from typing import Any

from ..errors import InternalError
from ..frozen import frozen
from ..plan.flags import CONTAINER_MODELS, local_image
from ..plan.types import Flag, Plan, Resolution

HEALTH_INTERVAL_S = 30
HEALTH_TIMEOUT_S = 10
HEALTH_RETRIES = 5
START_PERIOD_S = 30 * 60  # loading hundreds of GB and compiling kernels takes minutes
DEFAULT_SHM = "16g"
LABEL = "io.recipegen.folder"  # every container recipegen starts carries it; `down` removes only those


@frozen
class Arg:
    token: str
    expand: bool = False  # holds ${VAR} references the shell / Compose fill in (multi-node addresses)


@frozen
class NodeSpec:
    role: str  # single, head, worker
    rank: int
    service: str  # the compose service name
    args: tuple[Arg, ...]  # after the image's entrypoint (engine command prefix included when needed)
    rank_arg: int | None = None  # the index in args of this node's rank value (one worker template serves all ranks)


@frozen
class ContainerSpec:
    name: str
    image: str
    built_locally: bool  # a fork: the folder's Dockerfile builds it
    port: int  # the engine's port inside the container
    health_path: str
    healthcheck: tuple[str, ...]
    ipc_host: bool
    shm_size: str
    env: tuple[tuple[str, str], ...]
    host_network: bool  # multi-node: engines talk across machines on the host network
    nodes: tuple[NodeSpec, ...] = field(default_factory=tuple)
    served_name: str = ""
    model_path: str = ""  # the weights folder inside the container
    model_dir: str = ""  # the same folder under the host's MODEL_DIR
    weights_folder: str | None = None  # a local checkpoint folder (absolute), mounted at model_folder instead
    weights_blobs: str | None = None  # its cache blobs/ folder (a Hugging Face cache snapshot), mounted beside it
    weights_file: str | None = None  # GGUF: the one file to load
    weights_mmproj: str | None = None  # GGUF of a vision model: its vision projector file, downloaded beside it
    weights_bytes: int | None = None
    weights_revision: str | None = None  # the Hub revision the download pins
    driver_min: str | None = None
    reasoning_parser: str | None = None
    tool_parser: str | None = None

    def container_name(self, rank: int) -> str:
        return f"{self.name}-{rank}"

    @property
    def model_folder(self) -> str:
        """The checkpoint folder inside the container (a GGUF plan loads one file in it)."""
        return posixpath.join(CONTAINER_MODELS, self.model_dir)

    def volumes(self) -> list[dict[str, Any]]:
        """The bind mounts: MODEL_DIR at /models, or a local checkpoint folder at its own path there (and,
        for a cache snapshot, its blobs/ where the snapshot's relative links land inside the container)."""
        if self.weights_folder is None:
            return [{"host": "${MODEL_DIR}", "container": CONTAINER_MODELS, "read_only": True}]
        out = [{"host": self.weights_folder, "container": self.model_folder, "read_only": True}]
        if self.weights_blobs is not None:
            up = posixpath.relpath(self.weights_blobs, self.weights_folder)  # ../../blobs
            out.append(
                {
                    "host": self.weights_blobs,
                    "container": posixpath.normpath(posixpath.join(self.model_folder, up)),
                    "read_only": True,
                }
            )
        return out

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "image": self.image,
            "built_locally": self.built_locally,
            "port": self.port,
            "health_path": self.health_path,
            "healthcheck": {
                "test": list(self.healthcheck),
                "interval_s": HEALTH_INTERVAL_S,
                "timeout_s": HEALTH_TIMEOUT_S,
                "retries": HEALTH_RETRIES,
                "start_period_s": START_PERIOD_S,
            },
            "ipc_host": self.ipc_host,
            "shm_size": self.shm_size,
            "gpus": "all",
            "volumes": self.volumes(),
            "env": [{"name": n, "value": v} for n, v in self.env],
            "host_network": self.host_network,
            "served_name": self.served_name,
            "model_path": self.model_path,
            "model_dir": self.model_dir,
            "weights_folder": self.weights_folder,
            "weights_blobs": self.weights_blobs,
            "weights_file": self.weights_file,
            "weights_mmproj": self.weights_mmproj,
            "weights_bytes": self.weights_bytes,
            "weights_revision": self.weights_revision,
            "driver_min": self.driver_min,
            "reasoning_parser": self.reasoning_parser,
            "tool_parser": self.tool_parser,
            "nodes": [
                {
                    "role": n.role,
                    "rank": n.rank,
                    "service": n.service,
                    "container": self.container_name(n.rank),
                    "args": [a.token for a in n.args],
                    "expand": [i for i, a in enumerate(n.args) if a.expand],
                    "rank_arg": n.rank_arg,
                }
                for n in self.nodes
            ],
        }


def docker_mounts(spec: ContainerSpec) -> list[str]:
    """`docker run --mount`'s values for a local checkpoint folder: CSV, the source field quoted (its
    quotes doubled), so a path with commas, colons, quotes or spaces reaches Docker whole."""
    out = []
    for volume in spec.volumes():
        source = '"source=' + volume["host"].replace('"', '""') + '"'
        out.append(f"type=bind,{source},target={volume['container']},readonly")
    return out


def served_name(plan: Plan) -> str:
    for f in plan.flags:
        if f.flag == plan.engine.flags.served_model_name and f.value:
            return f.value
    return plan.candidate.variant.repo


@frozen
class Node:
    role: str  # "single", "head", "worker"
    rank: int
    flags: tuple[Flag, ...]


def node_flags(plan: Plan) -> list[Node]:
    engine, layout = plan.engine, plan.candidate.layout
    base = [f for f in plan.flags]
    if layout.nodes == 1:
        return [Node("single", 0, tuple(base))]
    f = engine.flags
    nodes: list[Node] = []
    for rank in range(layout.nodes):
        extra: list[Flag] = []
        if f.nnodes:
            extra.append(Flag(f.nnodes, str(layout.nodes), f"{layout.nodes} machines form one engine"))
        if f.node_rank:
            extra.append(Flag(f.node_rank, str(rank), "this machine's rank; the head is 0"))
        if f.dist_init_addr:
            value = "${HEAD_ADDR}:${DIST_PORT}" if engine.id == "sglang" else "${HEAD_ADDR}"
            extra.append(
                Flag(f.dist_init_addr, value, "where the head listens for the other nodes (set HEAD_ADDR)", expand=True)
            )
        if rank > 0 and f.headless_worker:
            extra.append(Flag(f.headless_worker, None, "a worker runs its model shards only; the head serves the API"))
        nodes.append(Node("head" if rank == 0 else "worker", rank, tuple(base + extra)))
    return nodes


def container_spec(resolution: Resolution) -> ContainerSpec:
    from ..plan.flags import container_model_path, model_dir

    plan = resolution.plans[0]
    cand = plan.candidate
    engine = cand.engine
    port = engine.default_port
    health_url = f"http://localhost:{port}{engine.health_path}"
    if engine.health_probe == "curl":
        health: tuple[str, ...] = ("CMD", "curl", "-fsS", health_url)
    else:
        health = ("CMD", "python3", "-c", f"import urllib.request; urllib.request.urlopen({health_url!r})")
    prefix = () if engine.image_entrypoint else tuple(Arg(t) for t in engine.command)
    nodes = []
    for node in node_flags(plan):
        args: list[Arg] = list(prefix)
        rank_arg = None
        for flag in node.flags:
            if flag.flag:
                args.append(Arg(flag.flag))
            if flag.value is not None:
                if node.role != "single" and flag.flag == engine.flags.node_rank:
                    rank_arg = len(args)
                args.append(Arg(flag.value, flag.expand))
        service = "engine" if node.role == "single" else ("head" if node.rank == 0 else f"worker-{node.rank}")
        nodes.append(NodeSpec(node.role, node.rank, service, tuple(args), rank_arg))
    docker = cand.deployment.docker if cand.deployment else None
    folder = resolution.request.weights_folder
    if folder is not None and not cand.variant.repo.startswith("local/"):
        raise InternalError(
            f"internal error: the plan for the local folder {folder} names the Hub repo {cand.variant.repo}",
            "please report this with the command you ran",
        )
    return ContainerSpec(
        name=re.sub(r"[^a-z0-9_.-]+", "-", f"recipegen-{resolution.request.model.id}".lower()),
        image=plan.image or local_image(plan.build),
        built_locally=plan.image is None,
        port=port,
        health_path=engine.health_path,
        healthcheck=health,
        ipc_host=docker.ipc_host if docker else True,
        shm_size=docker.shm_size if docker and docker.shm_size else DEFAULT_SHM,
        env=tuple((n, v) for n, v, _ in plan.env),
        host_network=cand.layout.nodes > 1,
        nodes=tuple(nodes),
        served_name=served_name(plan),
        model_path=container_model_path(cand.variant),
        model_dir=model_dir(cand.variant),
        weights_folder=folder,
        weights_blobs=resolution.request.weights_blobs if folder is not None else None,
        weights_file=cand.variant.file,
        weights_mmproj=cand.variant.mmproj,
        weights_bytes=int(cand.variant.size_bytes) if cand.variant.size_bytes else None,
        weights_revision=cand.variant.revision,
        driver_min=cand.build.driver_min,
        reasoning_parser=plan.settings.reasoning_parser,
        tool_parser=plan.settings.tool_parser,
    )
