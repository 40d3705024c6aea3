"""Find the engine invocation in what a user already has: a command line, a shell script (launch.sh),
a `docker run` line or a docker-compose.yml.

No shell is run. shell.py reads the script (line continuations, comments, `export`/inline environment
variables, variables with ${VAR:-default} defaults, bash arrays); this module finds the engine's
entrypoint in its commands, through `docker run … IMAGE`, `bash -c '…'` and compose services; inside a
shell function `"$@"` stands for the script's first argument array (the layout of recipegen's own
launch.sh).
"""

from __future__ import annotations

import csv
import datetime as dt
import re
import shlex
from dataclasses import field

import yaml

from ..catalog.buildversions import BuildResolution
from ..catalog.index import Catalog
from ..catalog.recipe_files import RecipeFileError, compose, construct
from ..catalog.schema import Engine
from ..catalog.schema.engine import Build
from ..errors import RecipegenError
from ..frozen import frozen
from .shell import ASSIGN, Shell, split

# The other spellings of each engine's server entrypoint (the catalog's `command` is the first).
ENTRYPOINTS: dict[str, tuple[tuple[str, ...], ...]] = {
    "vllm": (("vllm", "serve"), ("-m", "vllm.entrypoints.openai.api_server")),
    "sglang": (("-m", "sglang.launch_server"), ("sglang", "serve")),
    "llama.cpp": (("llama-server",),),
}
_PREFIXES = {"exec", "nohup", "sudo", "env", "time", "command"}
_DOCKER = {"docker", "podman", "nvidia-docker"}
# docker run options that take a value (the others are switches)
_DOCKER_VALUE_OPTS = {
    "-e", "--env", "--env-file", "-v", "--volume", "-p", "--publish", "--name", "--gpus", "--ipc", "--shm-size",
    "--entrypoint", "-w", "--workdir", "--network", "--net", "--runtime", "--ulimit", "--device", "--mount", "-u",
    "--user", "-l", "--label", "--cpus", "-m", "--memory", "--memory-swap", "--restart", "--pull", "--platform",
    "-h", "--hostname", "--add-host", "--cap-add", "--cap-drop", "--security-opt", "--log-driver", "--log-opt",
    "--cpuset-cpus", "--pid", "--uts", "--tmpfs", "--stop-signal", "--stop-timeout", "--health-cmd",
    "--health-interval", "--health-retries", "--health-timeout", "--health-start-period", "--group-add",
    "--dns", "--expose", "--cgroupns", "--userns", "--volumes-from", "--link", "--cidfile", "--oom-score-adj",
}  # fmt: skip


@frozen
class Invocation:
    engine: Engine
    args: tuple[str, ...]  # the engine's arguments, without its command
    env: dict[str, str] = field(default_factory=dict)
    image: str | None = None
    build: Build | None = None  # the catalog build the image tag names
    where: str = ""  # line or service it came from
    build_how: str = ""  # how the image was understood as a build
    mounts: tuple[tuple[str, str], ...] = ()  # bind mounts (host path, container path) of a docker run / service
    resolution: BuildResolution | None = None  # how the image (or --build) was understood as a build

    def host_path(self, path: str) -> str | None:
        """The host path a container path lies at through a bind mount, or None."""
        for host, target in sorted(self.mounts, key=lambda m: -len(m[1])):  # the deepest mount wins
            inside = target.rstrip("/")
            if path == inside or path.startswith(inside + "/"):
                return host.rstrip("/") + path[len(inside) :]
        return None

    def command(self) -> str:
        return " ".join(shlex.quote(t) for t in (*self.engine.command, *self.args))


class NoInvocation(RecipegenError):
    def __init__(self, source: str) -> None:
        super().__init__(
            f"no engine invocation found in {source}",
            "lint reads `vllm serve …`, `python -m sglang.launch_server …`, `llama-server …`, a `docker run … IMAGE` "
            "of an engine image, or a docker-compose.yml service",
        )


def _image_build(catalog: Catalog, image: str) -> tuple[Engine | None, Build | None, str, BuildResolution | None]:
    """The engine and catalog build an image reference names, and how it was understood."""
    from ..catalog.imagetags import split_image
    from ..catalog.names import resolve_user_build
    from ..plan.flags import local_image

    repo = split_image(image)[0]
    found_engine = None
    for engine, build in catalog.builds():
        if build.source_build is not None and repo == split_image(local_image(build))[0]:
            return (
                engine,
                build,
                f"the local image of {build.id}",
                None,
            )  # what recipegen's Dockerfile builds for a fork
        if any(split_image(ref)[0] == repo for ref in build.images.values()):
            found_engine = engine
    try:
        choice = resolve_user_build(catalog, image, on=dt.date.today(), option="the image")
    except RecipegenError:
        return found_engine, None, "", None
    engine, build = catalog.build(choice.build_id)
    return engine, build, choice.how, choice


def _engine_start(catalog: Catalog, tokens: list[str], prefer: Engine | None = None) -> tuple[Engine, int] | None:
    """The engine whose entrypoint starts at some position of tokens, and the index after it.

    Engines sharing an entrypoint (KTransformers runs SGLang's) resolve to the image's engine, else to the
    engine the entrypoint is named after."""
    engines = sorted(
        catalog.engines.values(),
        key=lambda e: (e is not prefer, e.id not in ENTRYPOINTS, e.id),
    )
    for index in range(len(tokens)):
        for engine in engines:
            for spelling in [tuple(engine.command), *ENTRYPOINTS.get(engine.id, ())]:
                size = len(spelling)
                window = tokens[index : index + size]
                if len(window) < size:
                    continue
                if spelling[0] == "-m":
                    if window == list(spelling) and index > 0 and re.match(r"python[\d.]*$", tokens[index - 1]):
                        return engine, index + size
                elif window[0].rsplit("/", 1)[-1] == spelling[0] and window[1:] == list(spelling[1:]):
                    return engine, index + size
    return None


def _from_tokens(
    catalog: Catalog, tokens: list[str], env: dict[str, str], where: str, depth: int = 0, prefer: Engine | None = None
) -> Invocation | None:
    env = dict(env)
    while tokens and (ASSIGN.match(tokens[0]) or tokens[0] in _PREFIXES):
        if ASSIGN.match(tokens[0]):
            name, _, value = tokens[0].partition("=")
            env[name] = value
        tokens = tokens[1:]
    if not tokens:
        return None
    if tokens[0].rsplit("/", 1)[-1] in _DOCKER and len(tokens) > 1:
        rest = tokens[2:] if tokens[1] == "run" else tokens[3:] if tokens[1:3] == ["container", "run"] else None
        if rest is not None:
            return _docker_run(catalog, rest, env, where, depth)
    if tokens[0].rsplit("/", 1)[-1] in ("bash", "sh") and "-c" in tokens[:3] and depth < 3:
        script = tokens[tokens.index("-c") + 1] if tokens.index("-c") + 1 < len(tokens) else ""
        found = _from_text(catalog, script, env, where, depth + 1, prefer)
        if found is not None:
            return found
    start = _engine_start(catalog, tokens, prefer)
    if start is None:
        return None
    engine, after = start
    return Invocation(engine, tuple(tokens[after:]), env, where=where)


def _bind(option: str, value: str) -> tuple[str, str] | None:
    """A bind mount of `docker run -v HOST:CONTAINER[:MODE]` or `--mount type=bind,source=…,target=…`."""
    if option in ("-v", "--volume"):
        parts = value.split(":")
        if len(parts) in (2, 3) and parts[0].startswith("/") and parts[1].startswith("/"):
            return parts[0], parts[1]
        return None
    if option == "--mount":
        fields = next(csv.reader([value]), [])
        spec = {k.strip(): v for k, _, v in (f.partition("=") for f in fields)}
        source = spec.get("source") or spec.get("src")
        target = spec.get("target") or spec.get("destination") or spec.get("dst")
        if spec.get("type") == "bind" and source and target and source.startswith("/"):
            return source, target
    return None


def _compose_binds(volumes: object) -> tuple[tuple[str, str], ...]:
    """A service's bind mounts whose host path Compose does not interpolate (`$$` is a literal `$`)."""
    out: list[tuple[str, str]] = []
    for item in volumes if isinstance(volumes, list) else []:
        if isinstance(item, str):
            found = _bind("--volume", item.replace("$$", "\0"))
        elif isinstance(item, dict) and item.get("type") == "bind":
            source, target = str(item.get("source") or ""), str(item.get("target") or "")
            found = (source.replace("$$", "\0"), target) if source.startswith("/") else None
        else:
            found = None
        if found is not None and "$" not in found[0]:  # a ${VAR} left for Compose: not a path here
            out.append((found[0].replace("\0", "$"), found[1]))
    return tuple(out)


def _docker_run(catalog: Catalog, tokens: list[str], env: dict[str, str], where: str, depth: int) -> Invocation | None:
    entrypoint: list[str] = []
    mounts: list[tuple[str, str]] = []
    index = 0
    while index < len(tokens) and tokens[index].startswith("-"):
        option, eq, inline = tokens[index].partition("=")
        index += 1
        if option in _DOCKER_VALUE_OPTS and not eq:
            inline = tokens[index] if index < len(tokens) else ""
            index += 1
        elif option not in _DOCKER_VALUE_OPTS:
            continue
        if option in ("-e", "--env") and "=" in inline:
            name, _, value = inline.partition("=")
            env[name] = value
        elif option == "--entrypoint":
            entrypoint = [inline]
        elif (bind := _bind(option, inline)) is not None:
            mounts.append(bind)
    if index >= len(tokens):
        return None
    image, rest = tokens[index], [*entrypoint, *tokens[index + 1 :]]
    engine, build, how, res = _image_build(catalog, image)
    inner = _from_tokens(catalog, rest, env, where, depth, engine) if rest else None
    if inner is not None:
        return Invocation(inner.engine, inner.args, inner.env, image, build, where, how, tuple(mounts), res)
    if engine is not None and engine.image_entrypoint and not entrypoint:
        return Invocation(engine, tuple(rest), env, image, build, where, how, tuple(mounts), res)
    return None


def _from_text(
    catalog: Catalog, text: str, env: dict[str, str], where: str, depth: int = 0, prefer: Engine | None = None
) -> Invocation | None:
    shell = Shell(text)
    for number, words in shell.commands:
        tokens = shell.expand_all(words)
        found = _from_tokens(catalog, tokens, {**env}, where or f"line {number}", depth, prefer)
        if found is not None:
            return found
    return None


def _from_compose(catalog: Catalog, document: dict[str, object], source: str) -> Invocation | None:
    services = document.get("services")
    if not isinstance(services, dict):
        return None
    for name, service in services.items():
        if not isinstance(service, dict):
            continue

        def words(value: object) -> list[str]:
            if isinstance(value, str):
                return split(value)
            if isinstance(value, list):
                return [str(v) for v in value]
            return []

        raw_env = service.get("environment") or {}
        env = (
            {str(k): str(v) for k, v in raw_env.items()}
            if isinstance(raw_env, dict)
            else dict(str(item).partition("=")[::2] for item in raw_env if isinstance(raw_env, list))
        )
        entrypoint, command = words(service.get("entrypoint")), words(service.get("command"))
        image = str(service.get("image") or "")
        where = f"service {name}"
        engine, build, how, res = _image_build(catalog, image) if image else (None, None, "", None)
        inner = _from_tokens(catalog, [*entrypoint, *command], env, where, prefer=engine)
        mounts = _compose_binds(service.get("volumes"))
        if inner is not None:
            return Invocation(inner.engine, inner.args, inner.env, image or None, build, where, how, mounts, res)
        if engine is not None and engine.image_entrypoint and not entrypoint:
            return Invocation(engine, tuple(command), env, image, build, where, how, mounts, res)
    return None


def find_invocation(catalog: Catalog, text: str, source: str) -> Invocation:
    """The first engine invocation in a command line, shell script or compose file."""
    stripped = text.lstrip()
    if re.search(r"^services\s*:", text, re.MULTILINE) and not stripped.startswith(("#!", "docker ", "vllm ")):
        try:  # nesting and alias expansion bounded as in a recipe file, before a tree is built
            node = compose(text)
            document = construct(node) if node is not None else None
        except RecipeFileError as exc:
            where = f" (line {exc.line})" if exc.line else ""
            raise RecipegenError(f"{source}{where}: {exc.message}", "check the compose file") from None
        except yaml.YAMLError as exc:
            first = str(exc).split("\n")[0]
            raise RecipegenError(f"{source} is not valid YAML: {first}", "check the compose file") from None
        if isinstance(document, dict):
            found = _from_compose(catalog, document, source)
            if found is not None:
                return found
    found = _from_text(catalog, text, {}, "")
    if found is None:
        raise NoInvocation(source)
    return found


def from_argv(catalog: Catalog, argv: list[str]) -> Invocation:
    """`recipegen lint -- COMMAND…`: the tokens as the shell passed them (one quoted string is split again)."""
    if len(argv) == 1 and (" " in argv[0] or "\n" in argv[0]):
        return find_invocation(catalog, argv[0], "the command")
    found = _from_tokens(catalog, list(argv), {}, "the command")
    if found is None:
        raise NoInvocation("the command")
    return found
