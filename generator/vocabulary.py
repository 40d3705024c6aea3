"""Check an engine argv against the engine's real flag vocabulary (data/engine-cli/*.json).

The vocabularies were extracted from the engines' own parsers and ship with the package (see
data/engine-cli/PROVENANCE.md); a build's `cli_reference` names one of them. A flag must exist under its full
name (no prefix abbreviations: they are fragile), a switch must not take a value, and a value
must be one the parser (or its registry) accepts.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

VOCABULARY_PACKAGE = "recipegen.data"
VOCABULARY_FOLDER = "engine-cli"


def shipped() -> list[str]:
    """The vocabularies that ship with recipegen, by reference name (file name without .json)."""
    folder = resources.files(VOCABULARY_PACKAGE) / VOCABULARY_FOLDER
    return sorted(p.name.removesuffix(".json") for p in folder.iterdir() if p.name.endswith(".json"))


@cache
def vocabulary(reference: str) -> Vocabulary:
    """The shipped vocabulary a build's `cli_reference` names (parsed once per process)."""
    if reference not in shipped():
        raise KeyError(reference)
    node = resources.files(VOCABULARY_PACKAGE) / VOCABULARY_FOLDER / f"{reference}.json"
    return Vocabulary.parse(json.loads(node.read_text(encoding="utf-8")))


@dataclass(frozen=True)
class Vocabulary:
    engine: str
    version: str
    options: dict[str, dict[str, Any]]  # every spelling -> its spec
    negations: frozenset[str]
    dotted: dict[str, dict[str, Any]]  # --xxx-config -> {field: spec}

    @classmethod
    def load(cls, path: Path) -> Vocabulary:
        return cls.parse(json.loads(path.read_text(encoding="utf-8")))

    @classmethod
    def parse(cls, data: dict[str, Any]) -> Vocabulary:
        raw = data["options"]
        items = raw if isinstance(raw, list) else list(raw.items())
        options: dict[str, dict[str, Any]] = {}
        negations: set[str] = set()
        for _, spec in items:
            for spelling in spec.get("option_strings") or []:
                options[spelling] = spec
            for spelling in spec.get("negation_option_strings") or []:
                options[spelling] = spec
                negations.add(spelling)
        dotted = {name: info.get("fields", {}) for name, info in (data.get("config_json_options") or {}).items()}
        return cls(data["engine"], data["version"], options, frozenset(negations), dotted)


def _allowed(spec: dict[str, Any]) -> list[str] | None:
    for key in ("choices", "valid_values", "declared_literal_values"):
        values = spec.get(key)
        if values:
            return [str(v) for v in values]
    return None


_INT = re.compile(r"[+-]?[0-9]+")
_HUMAN_INT = re.compile(r"[0-9]+(?:\.[0-9]+)?[kKmMgGtT]?")


def _value_type(spec: dict[str, Any]) -> tuple[str, bool]:
    """The parser's type for an option's value (int, float, human_readable_int …) and whether it is optional."""
    raw = str(spec.get("type") or "")
    optional = raw.startswith("optional_type")
    return (raw.rsplit("(", 1)[-1].rstrip(")") if optional else raw), optional


def value_problem(spec: dict[str, Any], name: str, value: str) -> str | None:
    """What the engine's parser would refuse in `value` for option `name`, or None when it accepts it."""
    allowed = _allowed(spec)
    if allowed is not None and value not in allowed:
        return f"{name} {value!r} is not one of the accepted values"
    kind, optional = _value_type(spec)
    if optional and value in ("", "None"):
        return None
    if kind == "int" and not _INT.fullmatch(value):
        return f"{name} takes a whole number, not {value!r}"
    if kind == "float":
        try:
            number = float(value)
        except ValueError:
            return f"{name} takes a number, not {value!r}"
        if not math.isfinite(number):
            return f"{name} takes a finite number, not {value!r}"
    if kind.startswith("human_readable_int"):
        auto = kind.endswith("_or_auto") and value in ("auto", "-1")
        if not auto and not _HUMAN_INT.fullmatch(value):
            return f"{name} takes a whole number (or 25.6k, 1M …), not {value!r}"
    return None


def lookup(vocab: Vocabulary, flag: str) -> tuple[dict[str, Any] | None, str | None]:
    """The spec of `flag` (None for a known `--xxx-config.key`) and the problem when the flag does not exist."""
    base, dot, key = flag.partition(".")
    if dot and base in vocab.dotted:
        return None, (None if key in vocab.dotted[base] else f"{base} has no key {key!r}")
    spec = vocab.options.get(flag)
    if spec is None:
        return None, f"{flag} is not a {vocab.engine} {vocab.version} option"
    return spec, None


def takes_value(vocab: Vocabulary, flag: str, spec: dict[str, Any]) -> bool:
    if flag in vocab.negations:
        return False
    return bool(spec.get("takes_value", spec.get("nargs") not in (0, "0")))


def check_arg(vocab: Vocabulary, flag: str, value: str | None) -> tuple[str, str] | None:
    """What the engine refuses in one flag and its value (None for a switch): ("flag" or "value", message)."""
    spec, problem = lookup(vocab, flag)
    if problem is not None:
        return "flag", problem
    if spec is None:  # a known key of a JSON-config option: any value
        return None if value is not None else ("value", f"{flag} needs a value")
    if not takes_value(vocab, flag, spec):
        return ("value", f"{flag} is a switch and takes no value") if value is not None else None
    if value is None:
        return "value", f"{flag} needs a value"
    problem = value_problem(spec, flag, value)
    return None if problem is None else ("value", problem)


def check_argv(vocab: Vocabulary, args: list[str]) -> list[str]:
    """Problems with `args` (the engine's arguments, without the command). Empty: all good."""
    problems: list[str] = []
    index = 0
    positional_seen = False
    while index < len(args):
        token = args[index]
        index += 1
        if not token.startswith("-"):
            if vocab.engine == "vllm" and not positional_seen:
                positional_seen = True  # the model tag
                continue
            problems.append(f"unexpected positional argument {token!r}")
            continue
        name, eq, inline = token.partition("=")
        spec, problem = lookup(vocab, name)
        if problem is not None:
            problems.append(problem)
            if not eq and spec is None and "." not in name and index < len(args) and not args[index].startswith("-"):
                index += 1  # its value
            continue
        if spec is None:  # a known key of a JSON-config option
            if not eq:
                index += 1
            continue
        if not takes_value(vocab, name, spec):
            if eq:
                problems.append(f"{name} is a switch and takes no value")
            continue
        if eq:
            value = inline
        elif index < len(args):
            value = args[index]
            index += 1
        else:
            problems.append(f"{name} needs a value")
            continue
        problem = value_problem(spec, name, value)
        if problem is not None:
            problems.append(problem)
    return problems


def command_problems(cli_reference: str | None, command: Sequence[str], argv: Sequence[str]) -> list[str]:
    """Problems of a full engine command line (`command` is the server command it starts with)."""
    if cli_reference is None:
        return []
    return check_argv(vocabulary(cli_reference), list(argv[len(command) :]))
