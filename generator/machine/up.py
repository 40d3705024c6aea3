"""`recipegen up`: preflight, image, container, the engine's log until healthy, then verify.

Every way it can fail ends in one sentence: a blocking preflight check, a failed pull or build,
the container exiting or the health check timing out (after diagnose's explanation of the log,
naming the known failure or else the line that made it exit), or a verify check failing.
"""

from __future__ import annotations

import re
import shlex
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..artifacts.folder import Folder
from ..errors import ChecksFailedError, ExitCode, RecipegenError
from ..frozen import frozen
from . import dockerhost, preflight, verify

if TYPE_CHECKING:
    from ..check.diagnose import Diagnosis

TAIL = 40
_FATAL = re.compile(r"(?i)(error|exception|fatal|failed|traceback|abort)")


class Interrupted(RecipegenError):
    exit_code = ExitCode.INTERRUPTED


@frozen
class UpOptions:
    preflight: preflight.Options
    name: str | None = None  # container name prefix; default the plan's
    timeout_s: float = 30 * 60
    poll_s: float = 1.0
    verify: bool = True


def exit_line(lines: list[str]) -> str:
    """The line that most likely made the engine exit: the last one that names an error."""
    for line in reversed(lines):
        if _FATAL.search(line):
            return line.strip()
    return lines[-1].strip() if lines else "(the container printed nothing)"


def explain(folder: Folder, lines: list[str]) -> Diagnosis:
    """diagnose on the engine's log; the folder's plan says the model, GPU and count the log may not."""
    from ..catalog.load import load
    from ..check.diagnose import MAX_CHARS, diagnose_log
    from ..check.log_facts import Hints

    request = folder.plan.get("request") or {}
    hints = Hints(gpu=request.get("hardware"), model=request.get("model"), gpus=request.get("gpus_per_node"))
    return diagnose_log(load([]), "\n".join(lines)[-MAX_CHARS:], hints)


def _healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2):
            return True
    except (urllib.error.URLError, OSError, ValueError):
        return False


def _fail(folder: Folder, container: Any, what: str, echo: Callable[[str], None]) -> ChecksFailedError:
    from ..check.diagnose_output import format_diagnosis

    lines = dockerhost.log_lines(container)
    tail = lines[-TAIL:]
    echo(f"last {len(tail)} log line(s) of {container.name}:")
    for line in tail:
        echo(f"  | {line}")
    diagnosis = explain(folder, lines)
    echo(format_diagnosis(diagnosis).rstrip("\n"))
    cause = exit_line(tail)
    if diagnosis.known:
        cause = f"{diagnosis.matches[0].fingerprint.title} ({_short(diagnosis.matches[0].line)})"
    return ChecksFailedError(
        f"{container.name} {what}: {cause}",
        "the diagnosis above says why and what runs; `recipegen down DIR` removes the container",
    )


def _short(line: str, width: int = 160) -> str:
    return line if len(line) <= width else line[: width - 1] + "…"


def up(folder: Folder, opts: UpOptions, echo: Callable[[str], None]) -> list[verify.Check]:
    pf = opts.preflight
    checks = preflight.run_checks(folder, pf)
    echo(preflight.text(checks))
    bad = preflight.blocking(checks)
    if bad:
        first = bad[0]
        raise ChecksFailedError(f"preflight: {first.detail}", first.fix or "see the checks above")
    c = folder.container | ({"image": pf.image} if pf.image else {})
    client = dockerhost.connect()
    existing = dockerhost.ours(client, folder.path)
    if existing:
        names = ", ".join(x.name for x in existing)
        raise RecipegenError(f"{folder.path} is already started ({names})", "run `recipegen down` on it first")
    if dockerhost.image_id(client, c["image"]) is None:
        if c["built_locally"] and not pf.image:
            dockerhost.build(client, folder.path, c["image"], echo)
        else:
            dockerhost.pull(client, c["image"], echo)
    node = folder.node(pf.rank)
    name = f"{opts.name or c['name']}-{pf.rank}"
    values = {"HEAD_ADDR": pf.head_addr or "", "DIST_PORT": str(pf.dist_port)}
    container = dockerhost.run(
        client,
        c,
        node,
        name=name,
        folder=folder.path,
        model_dir=pf.model_dir,
        host_port=pf.port,
        gpus=pf.gpus,
        values=values,
    )
    echo(f"started {name} from {c['image']}; waiting for {c['health_path']} (the engine's log follows)")
    port = c["port"] if c["host_network"] else pf.port
    base = f"http://127.0.0.1:{port}"
    if node["role"] == "worker":
        echo(f"{name} is a worker: the head serves the API; check it with `recipegen status`")
        return []
    try:
        _wait(folder, container, base, opts, echo)
    except KeyboardInterrupt:
        raise Interrupted(
            f"interrupted while waiting for {name}; it keeps running",
            "`recipegen logs -f DIR` follows it, `recipegen down DIR` removes it",
        ) from None
    results: list[verify.Check] = []
    if opts.verify:
        results = verify.run_checks(
            base, c["served_name"], c["health_path"], verify.checks_for_container(c), timeout=opts.timeout_s
        )
        echo(verify.table(results))
        failed = [r for r in results if not r.ok]
        if failed:
            raise ChecksFailedError(f"verify: {failed[0].name}: {failed[0].detail}", "see the table above")
    where = shlex.quote(str(folder.path))
    follow, stop = f"recipegen logs {where} -f", f"recipegen down {where}"
    echo(f"{name} serves {c['served_name']} at {base}/v1 — log: `{follow}`, stop: `{stop}`")
    return results


def _wait(folder: Folder, container: Any, base: str, opts: UpOptions, echo: Callable[[str], None]) -> None:
    """Follow the engine's log until its health endpoint answers, it exits, or the time is up."""
    health = base + folder.container["health_path"]
    start = time.monotonic()
    seen = 0
    while True:
        container.reload()
        new = dockerhost.log_lines(container, seen)
        seen += len(new)
        elapsed = time.monotonic() - start
        for line in new:
            echo(f"  [{elapsed:5.0f}s] {line}")
        if container.status in {"exited", "dead"}:
            code = container.attrs.get("State", {}).get("ExitCode")
            raise _fail(folder, container, f"exited with code {code}", echo)
        if _healthy(health):
            for line in dockerhost.log_lines(container, seen):  # the daemon may hand the last lines over late
                echo(f"  [{elapsed:5.0f}s] {line}")
            echo(f"healthy after {elapsed:.0f}s at {base}")
            return
        if elapsed > opts.timeout_s:
            raise _fail(folder, container, f"did not become healthy within {opts.timeout_s:.0f}s", echo)
        time.sleep(opts.poll_s)
