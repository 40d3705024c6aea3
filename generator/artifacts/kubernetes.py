"""Kubernetes manifests for a plan, written into the folder's k8s/: a Deployment and a Service on one node, a
LeaderWorkerSet across nodes, the weights on a PersistentVolumeClaim that a Job fills once, and a
kustomization.yaml, so `kubectl apply -k k8s/` deploys it.

Everything comes from plan.json's container spec, the value launch.sh and docker-compose.yml print, so the
pods run the same argv. The manifests are data dumped by PyYAML (every string quoted as YAML needs it);
Kubernetes then expands `$(NAME)` in command and args, so every `$` of a literal is doubled and only the
LeaderWorkerSet's own variables are left to expand.
"""

from __future__ import annotations

import hashlib
import math
import re
import shlex
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..checkpoint.gguf import download_pattern
from ..errors import RecipegenError
from ..frozen import frozen
from ..plan.flags import CONTAINER_MODELS

FOLDER = "k8s"
LWS_API = "leaderworkerset.x-k8s.io/v1"
GPU_RESOURCE = "nvidia.com/gpu"  # the NVIDIA device plugin's (and GPU Operator's) resource name
DOWNLOAD_IMAGE = "python:3.12-slim"
HUB_CLI = "huggingface_hub>=0.34,<2"  # the release line whose CLI is `hf download`
TOKEN_SECRET = "hf-token"  # created by the user (README); never written by recipegen
DOWNLOADED = ".recipegen-downloaded"  # the Job's last step; the engine pods wait for it
PVC_MARGIN = 1.10  # file-system overhead and a partial second copy while `hf download` replaces a file
PROBE_PERIOD_S = 10
STARTUP_FIXED_S = 900  # kernel JIT/autotune and CUDA-graph capture, on top of reading the weights
STARTUP_LOAD_FACTOR = 3  # the load estimate assumes a local NVMe SSD; a network volume is slower
DIST_PORT = "20000"  # the same default as launch.sh and compose
# compose's ${…} references, as the LeaderWorkerSet spells them
_LWS_REFERENCES = {"${HEAD_ADDR}": "$(LWS_LEADER_ADDRESS)", "${DIST_PORT}": "$(DIST_PORT)"}
LABEL_NAME = "app.kubernetes.io/name"
LABEL_ROLE = "io.recipegen/role"


@frozen
class KubeInput:
    """What the manifests need: plan.json's validated container spec and a few facts of its first plan."""

    container: dict[str, Any]
    repo: str
    gpus_per_node: int
    nodes: int
    load_seconds: float | None
    plan_label: str  # build/variant of the plan
    version: str  # recipegen's
    claim: str | None = None  # an existing PersistentVolumeClaim holding the weights (no download Job)
    weights_bytes: int | None = None  # the checkpoint's size, or the plan's memory figures when it is unknown
    weights_estimated: bool = False


def check_claim(name: str) -> None:
    """A PersistentVolumeClaim name the user gives: a DNS-1123 subdomain."""
    if len(name) > 253 or not re.fullmatch(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*", name):
        raise RecipegenError(
            f"--claim {name!r} is not a Kubernetes object name",
            "give the claim's name as `kubectl get pvc` lists it (lower-case letters, digits, '-', '.')",
        )


def literal(value: str) -> str:
    """A string Kubernetes passes through unexpanded in command/args/env values: `$` doubled."""
    return value.replace("$", "$$")


def as_launched(arg: str, rank: int) -> str:
    """A pod's container arg spelled as plan.json's container spec spells it: LWS's variables back to compose's
    references, the worker index to the rank, `$$` to `$`. The inverse of what the manifests write."""
    arg = arg.replace("$$", "\0").replace("$(LWS_WORKER_INDEX)", str(rank))
    for compose, lws in _LWS_REFERENCES.items():
        arg = arg.replace(lws, compose)
    return arg.replace("\0", "$")


def _expanded(value: str) -> str:
    out = literal(value)
    for compose, lws in _LWS_REFERENCES.items():
        out = out.replace(literal(compose), lws)
    return out


def dns_label(text: str, limit: int = 40) -> str:
    """A DNS-1035 label (lower-case letters, digits, '-'; starts with a letter), short enough that the pod names
    a LeaderWorkerSet derives from it stay within 63 characters; a shortened name keeps a hash of the whole."""
    name = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
    if not name or not name[0].isalpha():
        name = "m-" + name
    if len(name) > limit:
        digest = hashlib.sha256(text.encode("utf-8")).hexdigest()[:6]
        name = name[: limit - 7].rstrip("-") + "-" + digest
    return name.strip("-")


def label_value(text: str) -> str:
    """A label value: at most 63 of [A-Za-z0-9._-], starting and ending with a letter or digit."""
    value = re.sub(r"[^A-Za-z0-9._-]+", "-", text)
    if len(value) > 63:
        value = value[:56] + "-" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:6]
    return re.sub(r"^[^A-Za-z0-9]+|[^A-Za-z0-9]+$", "", value)


def _gib(text: str) -> str:
    """docker's --shm-size spelling (16g, 512m) as a Kubernetes quantity."""
    m = re.fullmatch(r"(\d+)([kmg]?)b?", text.lower())
    if not m:
        raise RecipegenError(f"shm_size {text!r} is not a size", "regenerate the folder with recipegen")
    return m.group(1) + {"": "", "k": "Ki", "m": "Mi", "g": "Gi"}[m.group(2)]


def startup_budget_s(load_seconds: float | None, floor_s: int) -> int:
    if load_seconds is None:
        return floor_s
    return int(STARTUP_FIXED_S + STARTUP_LOAD_FACTOR * load_seconds)


def _weights_dir(c: dict[str, Any]) -> str:
    return f"{CONTAINER_MODELS}/{c['model_dir']}"


def _probe(c: dict[str, Any], **extra: int) -> dict[str, Any]:
    return {"httpGet": {"path": c["health_path"], "port": "http"}, "periodSeconds": PROBE_PERIOD_S} | extra


def _args(node: dict[str, Any], worker_template: bool) -> list[str]:
    out = []
    expand = set(node["expand"])
    for i, arg in enumerate(node["args"]):
        if worker_template and i == node.get("rank_arg"):
            out.append("$(LWS_WORKER_INDEX)")  # one template serves every worker; LWS numbers them from 1
        else:
            out.append(_expanded(arg) if i in expand else literal(arg))
    return out


class Manifests:
    """The k8s/ files of one plan."""

    def __init__(self, inp: KubeInput) -> None:
        self.inp = inp
        self.c = inp.container
        self.name = dns_label(self.c["name"].removeprefix("recipegen-"))
        self.multi = inp.nodes > 1
        self.labels = {
            LABEL_NAME: self.name,
            "app.kubernetes.io/managed-by": "recipegen",
            "app.kubernetes.io/version": label_value(inp.version),
            "io.recipegen/plan": label_value(inp.plan_label),
        }

    @property
    def downloads(self) -> bool:
        """The weights come from the Hub through the download Job (not a local folder or the user's claim)."""
        return not (self.c.get("weights_folder") or self.inp.claim)

    @property
    def claim(self) -> str:
        return self.inp.claim or f"{self.name}-weights"

    def claim_size(self) -> str:
        return f"{math.ceil((self.inp.weights_bytes or 0) * PVC_MARGIN / 2**30)}Gi"

    def _meta(self, name: str) -> dict[str, Any]:
        return {"name": name, "labels": dict(self.labels)}

    def _weight_volumes(self) -> list[tuple[dict[str, Any], dict[str, Any]]]:
        """(volume, mount) pairs: the claim at /models, or a local checkpoint folder (and its cache blobs/) at
        the paths launch.sh binds them to; such a folder must exist at the same path on every GPU node."""
        if not self.c.get("weights_folder"):
            claim = {"claimName": self.claim, "readOnly": True}
            return [
                (
                    {"name": "weights", "persistentVolumeClaim": claim},
                    {"name": "weights", "mountPath": CONTAINER_MODELS, "readOnly": True},
                )
            ]
        pairs = []
        for i, v in enumerate(self.c["volumes"]):
            name = "weights" if i == 0 else f"weights-{i}"
            pairs.append(
                (
                    {"name": name, "hostPath": {"path": v["host"], "type": "Directory"}},
                    {"name": name, "mountPath": v["container"], "readOnly": True},
                )
            )
        return pairs

    def _wait_for_weights(self) -> list[dict[str, Any]]:
        if not self.downloads:
            return []
        marker = shlex.quote(f"{_weights_dir(self.c)}/{DOWNLOADED}")
        script = f"until [ -e {marker} ]; do echo 'waiting for the download Job'; sleep 15; done"
        return [
            {
                "name": "wait-for-weights",
                "image": self.c["image"],
                "command": ["sh", "-c", literal(script)],
                "volumeMounts": [{"name": "weights", "mountPath": CONTAINER_MODELS, "readOnly": True}],
            }
        ]

    def _pod(self, node: dict[str, Any], worker_template: bool) -> dict[str, Any]:
        c = self.c
        env = [{"name": e["name"], "value": literal(e["value"])} for e in c["env"]]
        if self.multi:
            env.append({"name": "DIST_PORT", "value": DIST_PORT})
        serves = node["role"] in ("single", "head")
        container: dict[str, Any] = {
            "name": "engine",
            "image": c["image"],
            "imagePullPolicy": "IfNotPresent",
            "args": _args(node, worker_template),
            "env": env,
            "ports": [{"name": "http", "containerPort": c["port"]}],
            "resources": {"limits": {GPU_RESOURCE: self.inp.gpus_per_node}},
            "volumeMounts": [m for _, m in self._weight_volumes()] + [{"name": "dshm", "mountPath": "/dev/shm"}],
        }
        if not env:
            del container["env"]
        if serves:
            budget = startup_budget_s(self.inp.load_seconds, c["healthcheck"]["start_period_s"])
            container["startupProbe"] = _probe(c, failureThreshold=math.ceil(budget / PROBE_PERIOD_S))
            container["readinessProbe"] = _probe(c, failureThreshold=3)
            container["livenessProbe"] = _probe(
                c, periodSeconds=c["healthcheck"]["interval_s"], failureThreshold=c["healthcheck"]["retries"]
            )
        if self.multi:  # RDMA memory registration (NCCL over InfiniBand/RoCE) pins pages
            container["securityContext"] = {"capabilities": {"add": ["IPC_LOCK"]}}
        spec: dict[str, Any] = {}
        if c["ipc_host"]:
            spec["hostIPC"] = True
        if c["host_network"]:
            spec["hostNetwork"] = True
            spec["dnsPolicy"] = "ClusterFirstWithHostNet"
        init = self._wait_for_weights()
        if init:
            spec["initContainers"] = init
        spec["containers"] = [container]
        spec["volumes"] = [v for v, _ in self._weight_volumes()] + [
            {"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": _gib(c["shm_size"])}}
        ]
        return spec

    def engine(self) -> list[dict[str, Any]]:
        nodes = self.c["nodes"]
        selector = {LABEL_NAME: self.name, LABEL_ROLE: "leader" if self.multi else "engine"}
        if not self.multi:
            workload: dict[str, Any] = {
                "apiVersion": "apps/v1",
                "kind": "Deployment",
                "metadata": self._meta(self.name),
                "spec": {
                    "replicas": 1,
                    "strategy": {"type": "Recreate"},  # the old pod must free its GPUs first
                    "selector": {"matchLabels": selector},
                    "template": {"metadata": {"labels": self.labels | selector}, "spec": self._pod(nodes[0], False)},
                },
            }
        else:
            head = next(n for n in nodes if n["rank"] == 0)
            worker = next(n for n in nodes if n["rank"] == 1)
            if worker.get("rank_arg") is None:
                raise RecipegenError(
                    "plan.json names no rank argument for the workers (written by an older recipegen)",
                    "regenerate the folder with this recipegen",
                )
            workload = {
                "apiVersion": LWS_API,
                "kind": "LeaderWorkerSet",
                "metadata": self._meta(self.name),
                "spec": {
                    "replicas": 1,
                    "leaderWorkerTemplate": {
                        "size": self.inp.nodes,
                        "restartPolicy": "RecreateGroupOnPodRestart",  # one engine: a lost node restarts all
                        "leaderTemplate": {
                            "metadata": {"labels": self.labels | selector},
                            "spec": self._pod(head, False),
                        },
                        "workerTemplate": {
                            "metadata": {"labels": self.labels | {LABEL_ROLE: "worker"}},
                            "spec": self._pod(worker, True),
                        },
                    },
                },
            }
        service = {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": self._meta(self.name),
            "spec": {
                "selector": selector,
                "ports": [{"name": "http", "port": self.c["port"], "targetPort": "http"}],
            },
        }
        return [workload, service]

    def weights(self) -> list[dict[str, Any]]:
        c = self.c
        if not self.downloads:
            return []
        size = self.inp.weights_bytes
        if not size:
            raise RecipegenError(
                f"the checkpoint size of {self.inp.repo} is unknown, so no volume can be sized for it",
                "give an existing claim that holds the weights with --claim NAME",
            )
        claim = {
            "apiVersion": "v1",
            "kind": "PersistentVolumeClaim",
            "metadata": self._meta(self.claim),
            "spec": {
                # every node of a multi-node engine mounts it at once
                "accessModes": ["ReadWriteMany" if self.multi else "ReadWriteOnce"],
                "resources": {"requests": {"storage": self.claim_size()}},
            },
        }
        target = _weights_dir(c)
        download = ["hf", "download", self.inp.repo, "--local-dir", target]
        if c.get("weights_revision"):
            download += ["--revision", c["weights_revision"]]
        projector = list(download)
        if c.get("weights_file"):
            download += ["--include", download_pattern(c["weights_file"])]  # every part of a split quant
        fetched = [shlex.join(download)]
        if c.get("weights_mmproj"):
            fetched.append(shlex.join([*projector, "--include", c["weights_mmproj"]]))
        script = " && ".join(
            [
                shlex.join(["pip", "install", "--quiet", "--no-cache-dir", HUB_CLI]),
                *fetched,
                shlex.join(["touch", f"{target}/{DOWNLOADED}"]),
            ]
        )
        job = {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": self._meta(f"{self.name}-download"),
            "spec": {
                "backoffLimit": 6,  # `hf download` resumes where a failed try stopped
                "template": {
                    "metadata": {"labels": dict(self.labels)},
                    "spec": {
                        "restartPolicy": "OnFailure",
                        "containers": [
                            {
                                "name": "download",
                                "image": DOWNLOAD_IMAGE,
                                "command": ["sh", "-c", literal(script)],
                                "env": [
                                    {
                                        "name": "HF_TOKEN",
                                        "valueFrom": {
                                            "secretKeyRef": {"name": TOKEN_SECRET, "key": "token", "optional": True}
                                        },
                                    }
                                ],
                                "volumeMounts": [{"name": "weights", "mountPath": CONTAINER_MODELS}],
                            }
                        ],
                        "volumes": [{"name": "weights", "persistentVolumeClaim": {"claimName": self.claim}}],
                    },
                },
            },
        }
        return [claim, job]

    def kustomization(self, files: list[str]) -> dict[str, Any]:
        return {
            "apiVersion": "kustomize.config.k8s.io/v1beta1",
            "kind": "Kustomization",
            "resources": files,
        }


def readme_context(inp: KubeInput, plan: dict[str, Any]) -> dict[str, Any]:
    """The values k8s/README.md lays out."""
    m = Manifests(inp)
    c = inp.container
    given = plan.get("request")
    request: dict[str, Any] = given if isinstance(given, dict) else {}
    hardware = str(request.get("hardware", "GPU"))
    model = str(request.get("model", inp.repo))
    downloads = m.downloads
    budget = startup_budget_s(inp.load_seconds, c["healthcheck"]["start_period_s"])
    return {
        "title": f"{model} on {inp.nodes} × {inp.gpus_per_node} × {hardware}"
        if inp.nodes > 1
        else f"{model} on {inp.gpus_per_node} × {hardware}",
        "version": inp.version,
        "name": m.name,
        "multi_node": m.multi,
        "nodes": inp.nodes,
        "gpus": inp.gpus_per_node,
        "hardware": hardware,
        "driver_min": c.get("driver_min") or "the image's CUDA needs",
        "between_nodes": "the network between them",
        "port": c["port"],
        "health_path": c["health_path"],
        "has_download": downloads,
        "claim": m.claim,
        "claim_given": inp.claim is not None,
        "claim_size": (m.claim_size() + (", sized from the plan's memory figures" if inp.weights_estimated else ""))
        if downloads
        else "",
        "access_mode": "ReadWriteMany" if m.multi else "ReadWriteOnce",
        "job": f"{m.name}-download",
        "model_dir": c["model_dir"],
        "weights_folder": c.get("weights_folder") or "",
        "built_locally": c["built_locally"],
        "image": c["image"],
        "startup_minutes": math.ceil(budget / 60),
    }


def _dump(header: str, docs: list[dict[str, Any]]) -> str:
    body = yaml.safe_dump_all(docs, sort_keys=False, allow_unicode=True, width=2**16, default_flow_style=False)
    return header + body


def manifests(inp: KubeInput) -> dict[str, str]:
    """k8s/<file> → content."""
    m = Manifests(inp)
    header = f"# written by recipegen {inp.version} for {inp.plan_label}; regenerate rather than edit\n"
    files: dict[str, str] = {}
    weights = m.weights()
    if weights:
        files["weights.yaml"] = _dump(header, weights)
    files["engine.yaml"] = _dump(header, m.engine())
    kustomization = _dump(header, [m.kustomization(sorted(files))])
    if inp.container["built_locally"]:
        image = inp.container["image"].rpartition(":")[0] or inp.container["image"]
        kustomization += (
            "# the image is built by ../launch.sh build: push it, then point the pods at it with\n"
            f"# images: [{{name: {image}, newName: REGISTRY/{image.rpartition('/')[2]}}}]\n"
        )
    out = {f"{FOLDER}/{name}": text for name, text in files.items()}
    out[f"{FOLDER}/kustomization.yaml"] = kustomization
    return out


class _Speed(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)
    load_seconds: float = Field(ge=0, le=10**7)


class _Memory(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)
    weights_gib: float = Field(ge=0, le=10**6)


class _Offload(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)
    host_gib: float = Field(ge=0, le=10**6)
    host_weights_gib: float | None = Field(default=None, ge=0, le=10**6)  # host_gib less the CPU layers' KV cache

    @property
    def weights_gib(self) -> float:
        return self.host_gib if self.host_weights_gib is None else self.host_weights_gib


class _PlanHead(BaseModel):
    """The fields of plan.json's first plan that the manifests read, bounded like the rest of plan.json."""

    model_config = ConfigDict(extra="ignore", frozen=True)
    repo: str = Field(min_length=1, max_length=200, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.\-/]*$")
    build: str = Field(min_length=1, max_length=200)
    variant: str = Field(min_length=1, max_length=200)
    gpus: int = Field(ge=1, le=1024)
    nodes: int = Field(ge=1, le=1024)
    speed: _Speed | None = None
    memory: _Memory | None = None
    offload: _Offload | None = None

    def weights_bytes(self) -> int | None:
        """What the weights take in GPU (and host) memory by the plan: the checkpoint's size when it is unknown."""
        if self.memory is None:
            return None
        gib = self.memory.weights_gib * self.gpus * self.nodes + (self.offload.weights_gib if self.offload else 0)
        return int(gib * 2**30) or None


def kube_input(plan: dict[str, Any], container: dict[str, Any], version: str, claim: str | None = None) -> KubeInput:
    """The manifests' input from plan.json (its first plan) and its validated container spec."""
    plans = plan.get("plans")
    if not isinstance(plans, list) or not plans:
        raise RecipegenError("plan.json holds no plan", "regenerate the folder with recipegen")
    try:
        head = _PlanHead.model_validate(plans[0])
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in ("plans", 0, *err["loc"]))
        raise RecipegenError(f"plan.json: {where}: {err['msg']}", "regenerate the folder with recipegen") from None
    if head.nodes != len(container["nodes"]):
        raise RecipegenError(
            f"plan.json: the plan has {head.nodes} node(s), its container spec {len(container['nodes'])}",
            "regenerate the folder with recipegen",
        )
    known = container.get("weights_bytes")
    return KubeInput(
        weights_bytes=known or head.weights_bytes(),
        weights_estimated=not known,
        container=container,
        repo=head.repo,
        gpus_per_node=head.gpus,
        nodes=head.nodes,
        load_seconds=head.speed.load_seconds if head.speed else None,
        plan_label=f"{head.build}/{head.variant}",
        version=version,
        claim=claim,
    )
