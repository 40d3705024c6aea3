"""A shared recipe folder cannot run code on the machine of whoever runs what recipegen wrote.

Hostile strings (line breaks, quotes, `$(…)`, backticks, `{{ }}`, `${IFS}`, NUL, Unicode line
separators, very long text) go into string fields of every recipe kind through a user `--recipes`
folder. Either `validate` refuses the folder with one-line problems, or the artifacts parse
(bash -n, shellcheck, the Compose schema, YAML, the Dockerfile's exec forms) and running
`launch.sh` (with `docker` and `hf` stand-ins first on PATH that record their argv), `launch.sh
build` and `verify.sh` (against a loopback HTTP server) never creates the canary file — and the
engine receives exactly the planned argv.
"""

from __future__ import annotations

import copy
import functools
import json
import re
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from recipegen.catalog.index import KINDS, builtin_root
from recipegen.catalog.schema import Build
from recipegen.catalog.schema.records import Check, field_types, is_record, validate
from recipegen.catalog.schema.release import BuildChange
from tests.support.cli import run_cli
from tests.support.data import COMPOSE_SPEC

# (kind, file under the kind's folder without .yaml): the recipes a scenario's plan is made of
SCENARIOS: dict[str, tuple[list[str], list[tuple[str, str]]]] = {
    # a curated recipe on a community image (vLLM), the image's build written as a change of a release
    "glm52-a100": (
        ["--gpu", "sm80", "--model", "glm-5.2"],
        [
            ("hardware", "a100-80gb"),
            ("engines", "vllm"),
            ("engines", "vllm/vllm-glm52-sm80-pr38476"),
            ("models", "glm-5.2"),
            ("deployments", "glm-5.2-nvfp4-8xa100-vllm-sm80"),
        ],
    ),
    # a fork built from source (Dockerfile, git clone/checkout) loading one GGUF file of a repo
    "dsv4-a100": (
        ["--gpu", "a100", "--model", "deepseek-v4-flash", "--gpus", "8"],
        [
            ("hardware", "a100-80gb"),
            ("engines", "llama.cpp"),
            ("engines", "llama.cpp/llama.cpp-nisparks-dsv4"),
            ("models", "deepseek-v4-flash"),
            ("deployments", "deepseek-v4-flash-8xa100-llamacpp-fork"),
        ],
    ),
    # two nodes: one compose profile and one launch.sh role per node, ${HEAD_ADDR} expanded on purpose
    "glm53-spark": (
        ["--gpu", "gb10", "--model", "glm-5.3-flash", "--nodes", "2"],
        [
            ("hardware", "gb10"),
            ("engines", "sglang"),
            ("engines", "sglang/sglang-glm53-flash-arm64"),
            ("models", "glm-5.3-flash"),
            ("deployments", "glm-5.3-flash-nvfp4-2xgb10-sglang"),
        ],
    ),
}

PAYLOADS = [
    "x\n) ; touch {canary} ; args_0=( #",
    "$(touch {canary})",
    "`touch {canary}`",
    "'; touch {canary}; echo '",
    '"; touch {canary}; echo "',
    "${{IFS}}touch${{IFS}}{canary}",
    "{{{{ 7 * 7 }}}}$(touch {canary})",
    "a\rb$(touch {canary})",
    "a\u2028$(touch {canary})\u0085b",
    "x\x00$(touch {canary})",
    "wip/x && touch {canary}",
    "privileged: true\nX",
    '", "-c", "touch {canary}',
    "\\\nRUN touch {canary}",
    "<img src=x onerror=alert(1)> [x](javascript:alert(1)) | a | *b*",
    "-oProxyCommand=touch {canary}",
    "../../etc",
    "x" * 2500 + "$(touch {canary})",
]

STANDIN = """#!/bin/sh
log="$RECORD/$(basename "$0").$$"
for a in "$@"; do printf '%s\\0' "$a"; done > "$log"
"""
SCRIPT_PATH = "/usr/local/bin:/usr/bin:/bin"
COMPOSE = json.loads(COMPOSE_SPEC.read_text())


def leaves(node: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """The path of every string value in a YAML document (dict keys are not values)."""
    if isinstance(node, dict):
        for key, value in node.items():
            yield from leaves(value, (*path, key))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from leaves(value, (*path, index))
    elif isinstance(node, str):
        yield path


@functools.cache
def _parsed(kind: str, entry: str) -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load((builtin_root() / kind / f"{entry}.yaml").read_text(encoding="utf-8"))
    return data


def original(kind: str, entry: str) -> dict[str, Any]:
    """A fresh copy of a built-in recipe."""
    return copy.deepcopy(_parsed(kind, entry))


def set_at(document: Any, path: tuple[Any, ...], value: str) -> None:
    for part in path[:-1]:
        document = document[part]
    document[path[-1]] = value


def get_at(document: Any, path: tuple[Any, ...]) -> Any:
    for part in path:
        document = document[part]
    return document


def schema_of(kind: str, entry: str, document: dict[str, Any]) -> Any:
    """The model a recipe file is validated with (a build file under engines/<engine>/ is a build)."""
    if "/" not in entry:
        return KINDS[kind]
    return BuildChange if "extends" in document else Build


def write_recipe(root: Path, kind: str, entry: str, document: dict[str, Any]) -> Path:
    path = root / kind / f"{entry}.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(document, sort_keys=False, allow_unicode=True), encoding="utf-8")
    return path


# every string field of the recipes each scenario uses, grouped by recipe so that the kinds are drawn
# equally often (an engine file has twenty times the fields of a deployment)
FIELDS = {
    (scenario, kind, entry): [(scenario, kind, entry, path) for path in leaves(original(kind, entry))]
    for scenario, (_, entries) in SCENARIOS.items()
    for kind, entry in entries
}


@pytest.fixture(scope="module")
def server() -> Iterator[tuple[str, list[str]]]:
    """A loopback server answering every request with an empty JSON object; records the paths."""
    seen: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def _reply(self) -> None:
            seen.append(self.path)
            if self.command == "POST":
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
            answer: dict[str, Any] = {"data": []} if self.path == "/v1/models" else {}
            if self.path == "/v1/chat/completions":
                answer = {"choices": [{"message": {"role": "assistant", "content": "391"}}]}
            body = json.dumps(answer).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        do_GET = do_POST = _reply

        def log_message(self, *args: Any) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}", seen
    httpd.shutdown()


def covers(loc: tuple[Any, ...], path: tuple[Any, ...]) -> bool:
    """An error at `loc` is about the value at `path` (or a whole list holding it, e.g. a capability set)."""
    return loc[: len(path)] == path or path[: len(loc)] == loc


def refused_paths(model: Any, document: dict[str, Any]) -> list[tuple[Any, ...]]:
    """The field paths the schema refuses in `document`."""
    try:
        validate(model, document)
    except ValidationError as exc:
        return [tuple(error["loc"]) for error in exc.errors()]
    return []


def accepting(kind: str, entry: str, value: str) -> tuple[dict[str, Any], int]:
    """The recipe with `value` in every string field whose grammar accepts it (ids and references kept)."""
    document = original(kind, entry)
    # ids, references, kernel names (the keys build files edit built-in builds by) and required engine
    # arguments (typed against the vocabulary, reported on the merged build list) stay as they are
    keys = ("id", "model", "variant", "engine", "build")
    paths = [
        p
        for p in leaves(document)
        if p[-1] not in keys
        and not (p[-1] == "name" and "kernels" in p)
        and "requires_args" not in p
        and "required_args" not in p
    ]
    for path in paths:
        set_at(document, path, value)
    pristine = original(kind, entry)
    schema = schema_of(kind, entry, document)
    for _ in range(5):
        refused = refused_paths(schema, document)
        if not refused:
            break
        for path in paths:
            if any(covers(loc, path) for loc in refused):
                set_at(document, path, get_at(pristine, path))
    assert not refused_paths(schema, document)
    kept = sum(1 for p in paths if get_at(document, p) == value)
    return document, kept


def refused_cleanly(result: Any, user_file: Path) -> None:
    assert result.code == 2, result.err
    assert "Traceback" not in result.err
    lines = result.err.splitlines()
    assert lines and all(line.strip() for line in lines)
    assert any(line.startswith(f"{user_file}:") for line in lines), result.err


def dockerfile_instructions(text: str) -> list[tuple[str, str]]:
    """The Dockerfile's instructions as (keyword, arguments), continuation lines joined."""
    out: list[tuple[str, str]] = []
    pending = ""
    for line in text.splitlines():
        if not pending and (not line.strip() or line.lstrip().startswith("#")):
            continue
        if line.rstrip().endswith("\\"):
            pending += line.rstrip()[:-1]
            continue
        keyword, _, rest = (pending + line).strip().partition(" ")
        out.append((keyword, rest))
        pending = ""
    return out


def run_artifacts(out: Path, scratch: Path, base_url: str, seen: list[str]) -> None:
    """Parse every artifact with its real reader, then run the scripts with recording stand-ins."""
    plan = json.loads((out / "plan.json").read_text())["plans"][0]
    for script in ("launch.sh", "verify.sh"):
        proc = subprocess.run(["bash", "-n", str(out / script)], capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr
    if shutil.which("shellcheck"):
        proc = subprocess.run(
            ["shellcheck", "--severity=style", str(out / "launch.sh"), str(out / "verify.sh")],
            capture_output=True,
            text=True,
        )
        assert proc.returncode == 0, proc.stdout
    compose = yaml.safe_load((out / "docker-compose.yml").read_text(encoding="utf-8"))
    jsonschema.Draft7Validator(COMPOSE).validate(compose)
    assert set(compose) == {"name", "services"}
    for service in compose["services"].values():
        assert "privileged" not in service and "cap_add" not in service
    if (out / "Dockerfile").exists():
        instructions = dockerfile_instructions((out / "Dockerfile").read_text(encoding="utf-8"))
        assert [k for k, _ in instructions] == [
            "FROM", "RUN", "RUN", "WORKDIR", "RUN", "RUN", "RUN", "FROM", "RUN", "COPY", "ENV", "EXPOSE", "ENTRYPOINT",
        ]  # fmt: skip
        for keyword, rest in instructions[2:7] + instructions[-1:]:
            if keyword in ("RUN", "ENTRYPOINT"):
                assert isinstance(json.loads(rest), list)

    container = json.loads((out / "plan.json").read_text())["container"]
    kube = [d for d in yaml.safe_load_all((out / "k8s" / "engine.yaml").read_text(encoding="utf-8")) if d]
    templates = (
        [kube[0]["spec"]["template"]]
        if kube[0]["kind"] == "Deployment"
        else [kube[0]["spec"]["leaderWorkerTemplate"][t] for t in ("leaderTemplate", "workerTemplate")]
    )
    for node, template in zip(container["nodes"], templates, strict=False):
        engine = template["spec"]["containers"][0]
        assert [kube_launched(a, node["rank"]) for a in engine["args"]] == node["args"]
        for var in engine.get("env", []):
            assert re.fullmatch(r"(?:[^$]|\$\$)*", var["value"]), var  # Kubernetes expands nothing in it

    stand_ins, record, models = scratch / "bin", scratch / "record", scratch / "models"
    for folder in (stand_ins, record, models):
        folder.mkdir()
    for tool in ("docker", "hf"):
        (stand_ins / tool).write_text(STANDIN)
        (stand_ins / tool).chmod(0o755)
    env = {
        "PATH": f"{stand_ins}:{SCRIPT_PATH}",
        "HOME": str(scratch),
        "MODEL_DIR": str(models),
        "RECORD": str(record),
        "DOCKER_GPUS": "",
        "BASE_URL": base_url,
        "TIMEOUT": "5",
    }
    services = compose["services"]
    modes = [["head"], ["worker", "1"]] if len(services) > 1 else [["start"]]
    if (out / "Dockerfile").exists():
        modes.append(["build"])
    env["HEAD_ADDR"] = "10.0.0.1"
    for mode in modes:
        proc = subprocess.run(
            ["bash", str(out / "launch.sh"), *mode], capture_output=True, text=True, env=env, timeout=60
        )
        assert proc.returncode == 0, proc.stderr
    runs = [p.read_bytes().decode().split("\0")[:-1] for p in record.glob("docker.*")]
    started = [argv for argv in runs if argv[:1] == ["run"]]
    assert len(started) == len(services)
    for argv in started:
        rank = int(argv[argv.index("--name") + 1].rsplit("-", 1)[1])
        service = services["engine"] if len(services) == 1 else services["head" if rank == 0 else f"worker-{rank}"]
        engine_argv = argv[argv.index(service["image"]) + 1 :]
        assert engine_argv == [interpolated(token, env) for token in service["command"]]
        if len(services) == 1:
            assert plan["argv"][len(plan["argv"]) - len(engine_argv) :] == engine_argv
            assert len(engine_argv) >= len(plan["argv"]) - 3  # at most the engine command precedes them

    del seen[:]
    proc = subprocess.run(["bash", str(out / "verify.sh")], capture_output=True, text=True, env=env, timeout=60)
    assert "Traceback" not in proc.stderr
    assert seen and seen[0] == urlpath_of(out)


def kube_launched(arg: str, rank: int) -> str:
    """A pod's arg as its process gets it (`$$` is `$`; only the LeaderWorkerSet's variables expand)."""
    env = {"LWS_WORKER_INDEX": str(rank), "LWS_LEADER_ADDRESS": "${HEAD_ADDR}", "DIST_PORT": "${DIST_PORT}"}

    def one(m: re.Match[str]) -> str:
        assert m[0] == "$$" or m[1] in env, f"{arg!r} would be expanded by Kubernetes"
        return "$" if m[0] == "$$" else env[m[1]]

    return re.sub(r"\$\$|\$\((\w+)\)", one, arg)


def interpolated(token: str, env: dict[str, str]) -> str:
    """A compose value as Compose reads it: `$$` is a literal `$`, ${VAR} and ${VAR:-default} expand."""
    token = token.replace("$$", "\0")
    token = re.sub(r"\$\{(\w+)(?::[-?]([^}]*))?\}", lambda m: env.get(m[1]) or (m[2] or ""), token)
    return token.replace("\0", "$")


def urlpath_of(out: Path) -> str:
    """The health path verify.sh must request: the engine's, from the recipe the plan used."""
    match = re.search(r"^HEALTH_PATH='([^']*)'$", (out / "verify.sh").read_text(encoding="utf-8"), re.M)
    assert match is not None
    return match.group(1)


def attempt(scenario: str, kind: str, entry: str, path: tuple[Any, ...], value: str, base_url: str, seen: list[str]):
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        canary = root / "canary"
        value = value.format(canary=canary)
        document = original(kind, entry)
        set_at(document, path, value)
        user = root / "recipes"
        user_file = write_recipe(user, kind, entry, document)
        result = run_cli("validate", str(user))
        if result.code != 0:
            refused_cleanly(result, user_file)
            return "refused"
        args, _ = SCENARIOS[scenario]
        out = root / "out"
        result = run_cli(*args, "--recipes", str(user), "--out", str(out), "--k8s")
        assert "Traceback" not in result.err
        assert result.code in (0, 3), result.err  # what validate accepts, generate writes (or says blocked)
        if result.code == 3:
            assert not out.exists()
            return "blocked"
        scratch = root / "scratch"
        scratch.mkdir()
        run_artifacts(out, scratch, base_url, seen)
        assert not canary.exists(), f"{kind}/{entry} {path}: the payload ran"
        assert not any(root.glob("**/canary"))
        return "written"


# no shrinking: one run of the artifacts takes about a second, and the failing field and payload say enough
@settings(
    max_examples=10,
    deadline=None,
    phases=[Phase.explicit, Phase.reuse, Phase.generate],
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    field=st.sampled_from(sorted(FIELDS)).flatmap(lambda key: st.sampled_from(FIELDS[key])),
    payload=st.sampled_from(PAYLOADS),
    mode=st.sampled_from(["replace", "append"]),
    filler=st.text(max_size=4),
)
def test_hostile_value_in_any_field_is_refused_or_inert(server, field, payload, mode, filler):
    scenario, kind, entry, path = field
    base_url, seen = server
    # the original value and the filler are literal text: braces in them are escaped for str.format
    prefix = str(get_at(original(kind, entry), path)) + filler
    value = payload if mode == "replace" else prefix.replace("{", "{{").replace("}", "}}") + payload
    attempt(scenario, kind, entry, path, value, base_url, seen)


@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_payloads_in_every_field_that_accepts_them_at_once(server, scenario):
    """Each payload in all fields of the scenario's four recipes that accept it, then the whole run."""
    base_url, seen = server
    args, entries = SCENARIOS[scenario]
    for template in ("$(touch {canary})`touch {canary}`'\"${{IFS}}{{{{ x }}}} | *y* <b>", "-- --x=$(id) &&"):
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            canary = root / "canary"
            value = template.format(canary=canary)
            user = root / "recipes"
            documents: dict[tuple[str, str], dict[str, Any]] = {}
            placed = 0
            for kind, entry in entries:
                document, kept = accepting(kind, entry, value)
                documents[kind, entry] = document
                placed += kept
            assert placed > 20
            # the cross-checks refuse a flag value of the wrong type: put those few back as they were
            for _ in range(3):
                files = {key: write_recipe(user, *key, doc) for key, doc in documents.items()}
                result = run_cli("validate", str(user))
                if result.code == 0:
                    break
                for line in result.err.splitlines():
                    file, _, field = line.split(": ", 2)[0].rpartition(":")[0], None, line.split(": ", 2)[1]
                    key = next((k for k, f in files.items() if file == str(f)), None)
                    assert key is not None, result.err
                    parts = tuple(int(p) if p.isdigit() else p for p in re.split(r"[.\[\]]+", field) if p)
                    set_at(documents[key], parts, get_at(original(*key), parts))
            assert result.code == 0, result.err
            out = root / "out"
            result = run_cli(*args, "--recipes", str(user), "--out", str(out), "--k8s")
            assert result.code == 0, result.err
            scratch = root / "scratch"
            scratch.mkdir()
            run_artifacts(out, scratch, base_url, seen)
            plan = json.loads((out / "plan.json").read_text(encoding="utf-8"))
            assert any(value in get_at(plan, p) for p in leaves(plan)), "the payload never reached the plan"
            assert not canary.exists()


@pytest.mark.parametrize("kind", list(KINDS))
def test_a_line_break_is_refused_in_every_string_field(kind):
    """The schema refuses a newline and a U+2028 in every string field of every built-in recipe of the kind."""
    folder = builtin_root() / kind
    for source in sorted(folder.glob("*.yaml")) + sorted(folder.glob("*/*.yaml")):
        entry = str(source.relative_to(folder).with_suffix(""))
        for breaker in ("\n", "\u2028"):
            document = yaml.safe_load(source.read_text(encoding="utf-8"))
            paths = list(leaves(document))
            for path in paths:
                set_at(document, path, f"a{breaker}$(touch /tmp/x)")
            refused = refused_paths(schema_of(kind, entry, document), document)
            accepted = [p for p in paths if not any(covers(loc, p) for loc in refused)]
            assert not accepted, f"{source.name} accepts a line break in {accepted[:5]}"


def test_the_issue_payloads_are_refused_by_validate(tmp_path):
    """The escapes and bad values of issue 8, each in the field it was found in; validate names each one."""
    dep = "glm-5.2-nvfp4-8xa100-vllm-sm80"
    folders = [
        [  # schema problems
            ("deployments", dep, ("args", 0, "reason"), "x\n) ; touch /tmp/P ; args_0=( #"),
            ("deployments", dep, ("env",), [{"name": "A: b\n  privileged: true", "value": "1", "reason": "r"}]),
            ("models", "glm-5.2", ("name",), "GLM\n) ; touch /tmp/P ; args_0=( #"),
            ("models", "glm-5.2", ("variants", 0, "repo"), "evil/.."),
            ("models", "glm-5.2", ("id",), "../../etc"),
            ("engines", "vllm", ("health_path",), "/health$(touch /tmp/P)"),
            ("engines", "llama.cpp/llama.cpp-nisparks-dsv4", ("source_build", "ref"), "main && touch /tmp/P"),
            ("engines", "llama.cpp", ("builds", 0, "source_build", "ref"), "main\ntouch /tmp/P"),
        ],
        [  # values the engine's parser or the planner would not take
            ("deployments", dep, ("args", 1, "value"), "eight"),
            ("deployments", dep, ("args", 6, "value"), "7.5"),
        ],
        [("deployments", dep, ("args", 1, "value"), "0"), ("deployments", dep, ("args", 6, "value"), "lots")],
    ]
    for number, cases in enumerate(folders):
        user = tmp_path / str(number)
        documents: dict[tuple[str, str], dict[str, Any]] = {}
        for kind, entry, path, value in cases:
            document = documents.setdefault((kind, entry), original(kind, entry))
            if path[:2] == ("args", 1):
                assert document["args"][1]["flag"] == "--tensor-parallel-size"
            if path[:2] == ("args", 6):
                assert document["args"][6]["flag"] == "--gpu-memory-utilization"
            set_at(document, path, value)
        files = {key: write_recipe(user, *key, document) for key, document in documents.items()}
        result = run_cli("validate", str(user))
        assert result.code == 2 and "Traceback" not in result.err
        lines = result.err.splitlines()
        for kind, entry, path, _ in cases:
            field = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path).lstrip(".")
            assert any(line.startswith(f"{files[kind, entry]}:") and f": {field}" in line for line in lines), (
                field,
                result.err,
            )


@pytest.mark.parametrize(
    ("flag", "value"),
    [
        ("--tensor-parallel-size", "eight"),
        ("--tensor-parallel-size", "0"),
        ("--tensor-parallel-size", "1e400"),
        ("--max-model-len", "-5"),
        ("--max-num-seqs", "٣"),  # a digit to str.isdigit, not to int()
        ("--gpu-memory-utilization", "lots"),
        ("--gpu-memory-utilization", "7.5"),
        ("--gpu-memory-utilization", "nan"),
        ("--gpu-memory-utilization", None),
    ],
)
def test_the_planner_reads_a_value_that_does_not_fit_its_knob_as_unset(catalog, flag, value):
    """validate refuses these; the planner, handed one anyway, falls back to its defaults instead of crashing."""
    from recipegen.catalog.schema import Deployment
    from recipegen.plan.flags import settings_from_deployment
    from recipegen.plan.types import Layout

    document = original("deployments", "glm-5.2-nvfp4-8xa100-vllm-sm80")
    document["args"] = [{"flag": flag, "value": value, "reason": "hostile"}]
    dep = validate(Deployment, document)
    settings = settings_from_deployment(catalog.engines["vllm"], dep, Layout(8, 1))
    assert settings.tp == 8 and settings.context is None and settings.concurrency is None
    assert settings.fraction is None


def _bare_strings(annotation: Any, checked: bool) -> list[str]:
    """Where `str` appears in an annotation without one of schema/text.py's validators."""
    import typing

    from pydantic import BaseModel

    if annotation is str:
        return [] if checked else ["str"]
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        inner, *meta = typing.get_args(annotation)
        return _bare_strings(inner, checked or any(isinstance(m, Check) for m in meta))
    if is_record(annotation) or (isinstance(annotation, type) and issubclass(annotation, BaseModel)):
        return [f"{annotation.__name__}.{name}: {problem}" for name, problem in _model_strings(annotation)]
    if origin is typing.Literal:
        return []
    return [p for arg in typing.get_args(annotation) for p in _bare_strings(arg, checked)]


def _model_strings(model: Any) -> list[tuple[str, str]]:
    """Each field's bare strings: a record's field types, a pydantic model's fields (release diffs)."""
    if is_record(model):
        return [(name, problem) for name, kind in field_types(model).items() for problem in _bare_strings(kind, False)]
    out = []
    for name, info in model.model_fields.items():
        checked = any(isinstance(m, Check) for m in info.metadata)
        out.extend((name, problem) for problem in _bare_strings(info.annotation, checked))
    return out


@pytest.mark.parametrize("schema", [*KINDS.values(), BuildChange], ids=lambda m: m.__name__)
def test_every_string_field_of_every_kind_has_a_grammar(schema):
    """A new field typed plain `str` would bypass load-time validation: use a type from schema/text.py."""
    assert _bare_strings(schema, False) == []
