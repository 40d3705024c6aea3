"""Check an engine argv against the engine's real flag vocabulary (data/engine-cli/*.json).

The vocabularies were extracted from the engines' own parsers and ship with the package (see
data/engine-cli/PROVENANCE.md); a build's `cli_reference` names one of them. A flag must exist under its full
name (no prefix abbreviations: they are fragile), a switch must not take a value, and a value
must be one the parser (or its registry) accepts.
"""

from __future__ import annotations

import json
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
        base, dot, key = name.partition(".")
        if dot and base in vocab.dotted:
            fields = vocab.dotted[base]
            if key not in fields:
                problems.append(f"{base} has no key {key!r}")
            elif not eq:
                index += 1
            continue
        spec = vocab.options.get(name)
        if spec is None:
            problems.append(f"{name} is not a {vocab.engine} {vocab.version} option")
            if not eq and index < len(args) and not args[index].startswith("-"):
                index += 1  # its value
            continue
        takes_value = bool(spec.get("takes_value", spec.get("nargs") not in (0, "0")))
        if name in vocab.negations:
            takes_value = False
        if not takes_value:
            if eq:
                problems.append(f"{name} is a switch and takes no value")
            continue
        if eq:
            value: str | None = inline
        elif index < len(args):
            value = args[index]
            index += 1
        else:
            problems.append(f"{name} needs a value")
            continue
        allowed = _allowed(spec)
        if allowed is not None and value not in allowed:
            problems.append(f"{name} {value!r} is not one of the accepted values")
    return problems


def command_problems(cli_reference: str | None, command: Sequence[str], argv: Sequence[str]) -> list[str]:
    """Problems of a full engine command line (`command` is the server command it starts with)."""
    if cli_reference is None:
        return []
    return check_argv(vocabulary(cli_reference), list(argv[len(command) :]))
