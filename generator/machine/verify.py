"""The smoke tests of verify.sh, in Python: health, models, a chat, the reasoning split and a tool
call, judged for the two silent failures of a wrong parser (reasoning leaking into `content`, a
tool call swallowed into `tool_calls: null` with empty content).
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

from ..frozen import frozen

CHAT = [{"role": "user", "content": "What is 17 * 23? Reply with the number."}]
TOOLS_MESSAGES = [{"role": "user", "content": "What is the weather in Beijing today?"}]
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Current weather of a city",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
        },
    }
]
ALL_CHECKS = ("health", "models", "chat", "reasoning", "tools")


@frozen
class Check:
    name: str
    ok: bool
    detail: str


def _get(url: str, timeout: float) -> Any:
    with urllib.request.urlopen(url, timeout=timeout) as resp:
        body = resp.read()
    return json.loads(body) if body.strip() else None


def _post(url: str, payload: dict[str, Any], timeout: float) -> Any:
    req = urllib.request.Request(
        url, data=json.dumps(payload).encode(), headers={"Content-Type": "application/json"}, method="POST"
    )
    with urllib.request.urlopen(req, timeout=timeout) as resp:
        return json.loads(resp.read())


def judge(check: str, reply: Any) -> str | None:
    """What is wrong with a chat completion for this check; None when it is right."""
    try:
        msg = reply["choices"][0]["message"]
    except (KeyError, IndexError, TypeError) as exc:
        return f"not a chat completion ({exc!r})"
    content = msg.get("content") or ""
    thinking = msg.get("reasoning_content") or msg.get("reasoning") or ""
    calls = msg.get("tool_calls") or []
    if check == "chat" and not (content.strip() or thinking.strip()):
        return "empty reply"
    if check == "reasoning":
        if "</think>" in content:
            return "a </think> leaked into content: the reasoning parser is missing or wrong"
        if not thinking:
            return "reasoning_content is empty: the reasoning parser did not split the thinking"
    if check == "tools" and not calls:
        if not content.strip():
            return "tool_calls is null and content is empty: the tool-call parser swallowed the call"
        return "no tool call, the model answered in text: check the tool-call parser"
    return None


def _failure(exc: Exception) -> str:
    if isinstance(exc, urllib.error.HTTPError):
        return f"HTTP {exc.code} {exc.reason}"
    if isinstance(exc, urllib.error.URLError):
        return f"cannot connect ({exc.reason})"
    return f"{type(exc).__name__}: {exc}"


def run_checks(
    url: str,
    model: str | None,
    health_path: str = "/health",
    checks: tuple[str, ...] = ALL_CHECKS,
    timeout: float = 600,
) -> list[Check]:
    base = url.rstrip("/")
    results: list[Check] = []
    if "health" in checks:
        try:
            _get(base + health_path, 10)
            results.append(Check("health", True, f"{base}{health_path} answered"))
        except Exception as exc:  # every way a request fails is one failed check
            results.append(Check("health", False, f"{base}{health_path}: {_failure(exc)} (still loading? see logs)"))
    listed: list[str] = []
    if "models" in checks or model is None:
        try:
            listed = [m["id"] for m in _get(base + "/v1/models", 10)["data"]]
            if model is None and listed:
                model = listed[0]
            ok = model in listed
            detail = f"{model} is listed" if ok else f"{model} is not listed by /v1/models (it lists {listed})"
        except Exception as exc:
            ok, detail = False, f"/v1/models: {_failure(exc)}"
        if "models" in checks:
            results.append(Check("models", ok, detail))
    for name in ("chat", "reasoning", "tools"):
        if name not in checks:
            continue
        payload: dict[str, Any] = {"model": model or "", "max_tokens": 2048, "messages": CHAT}
        if name == "tools":
            payload |= {"messages": TOOLS_MESSAGES, "tools": TOOLS}
        try:
            problem = judge(name, _post(base + "/v1/chat/completions", payload, timeout))
        except Exception as exc:
            problem = f"/v1/chat/completions: {_failure(exc)}"
        results.append(Check(name, problem is None, problem or "ok"))
    return results


def checks_for_container(container: dict[str, Any]) -> tuple[str, ...]:
    """verify.sh's choice: the reasoning and tool checks only where the plan sets those parsers."""
    names = ["health", "models", "chat"]
    if container.get("reasoning_parser"):
        names.append("reasoning")
    if container.get("tool_parser"):
        names.append("tools")
    return tuple(names)


def table(results: list[Check]) -> str:
    lines = [f"{'PASS' if r.ok else 'FAIL'}  {r.name:<9} {r.detail}" for r in results]
    failed = sum(1 for r in results if not r.ok)
    lines.append("all checks passed" if failed == 0 else f"{failed} check(s) failed")
    return "\n".join(lines)
