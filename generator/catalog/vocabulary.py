"""Check an engine argv against the engine's real flag vocabulary (data/engine-cli/*.json).

The vocabularies were extracted from the engines' own parsers and ship with the package (see
data/engine-cli/PROVENANCE.md); a build's `cli_reference` names one of them. A flag must exist under its full
name (no prefix abbreviations: they are fragile), a switch must not take a value, and a value
must be one the parser (or its registry) accepts.
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
from collections.abc import Sequence
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any, Literal

from ..frozen import frozen

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
    return dataclasses.replace(Vocabulary.parse(json.loads(node.read_text(encoding="utf-8"))), reference=reference)


@frozen
class Vocabulary:
    engine: str
    version: str
    options: dict[str, dict[str, Any]]  # every spelling -> its spec
    negations: frozenset[str]
    dotted: dict[str, dict[str, Any]]  # --xxx-config -> {field: spec}
    underscores: bool = False  # --tensor_parallel_size is read as --tensor-parallel-size
    abbreviations: bool = False  # argparse allow_abbrev: an unambiguous prefix is accepted
    reference: str = ""  # the shipped file it was read from (data/engine-cli/<reference>.json)

    def key(self, flag: str) -> str | None:
        """One name per option whatever the spelling (-tp, --tensor-parallel-size): its first option string."""
        spec = self.options.get(flag)
        if spec is None:
            return None
        strings = spec.get("option_strings") or [flag]
        return str(strings[0])

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
        # the extraction records the parser's behaviour as sentences; two of them change how a flag is read
        behaviour = " ".join(data.get("parser_behaviour") or []).lower()
        underscores = "underscores in option names are accepted" in behaviour or "underscores are accepted" in behaviour
        abbreviations = "allow_abbrev" in behaviour
        return cls(data["engine"], data["version"], options, frozenset(negations), dotted, underscores, abbreviations)


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


IssueKind = Literal["unknown", "ambiguous", "abbreviation", "bad-choice", "switch-value", "missing-value", "positional"]


@frozen
class ArgIssue:
    kind: IssueKind
    flag: str
    value: str | None
    message: str
    suggestion: str | None = None  # the full spelling, or the closest accepted values


@frozen
class ParsedArgs:
    """An engine command line read the way the engine's parser reads it."""

    values: dict[str, str | None]  # an option's first spelling (its key) -> the last value given (None: a switch)
    spellings: dict[str, str]  # key -> the spelling the user wrote
    positionals: tuple[str, ...]
    issues: tuple[ArgIssue, ...]

    def get(self, vocab: Vocabulary, flag: str | None) -> str | None:
        key = vocab.key(flag) if flag else None
        return self.values.get(key) if key else None

    def given(self, vocab: Vocabulary, flag: str | None) -> bool:
        key = vocab.key(flag) if flag else None
        return key is not None and key in self.values


def parse_args(vocab: Vocabulary, args: Sequence[str]) -> ParsedArgs:
    """Read `args` (without the engine command) like the engine does, keeping every problem with its flag."""
    import difflib  # only lint needs suggestions; generate's self-check stays light

    values: dict[str, str | None] = {}
    spellings: dict[str, str] = {}
    positionals: list[str] = []
    issues: list[ArgIssue] = []
    index = 0
    while index < len(args):
        token = args[index]
        index += 1
        if not token.startswith("-") or token == "-":
            positionals.append(token)
            if vocab.engine != "vllm" or len(positionals) > 1:
                issues.append(ArgIssue("positional", token, None, f"unexpected positional argument {token!r}"))
            continue
        name, eq, inline = token.partition("=")
        base, dot, field_name = name.partition(".")
        if vocab.underscores and base.startswith("--"):
            base = "--" + base[2:].replace("_", "-")
            name = base + dot + field_name
        if dot and base in vocab.dotted:
            value = inline if eq else (args[index] if index < len(args) else None)
            index += 0 if eq else 1
            if field_name.rstrip("+") not in vocab.dotted[base]:
                issues.append(ArgIssue("unknown", name, value, f"{base} has no key {field_name!r}"))
            values[f"{base}.{field_name}"] = value
            spellings[f"{base}.{field_name}"] = name
            continue
        spec = vocab.options.get(name)
        written = name
        if spec is None and vocab.abbreviations and name.startswith("--"):
            matches = {vocab.key(o) for o in vocab.options if o.startswith(name) and o.startswith("--")}
            matches.discard(None)
            if len(matches) == 1:
                full = matches.pop()
                assert full is not None
                issues.append(
                    ArgIssue(
                        "abbreviation",
                        name,
                        None,
                        f"{name} is read as {full} only because no other option starts with it",
                        full,
                    )
                )
                name, spec = full, vocab.options[full]
            elif len(matches) > 1:
                issues.append(
                    ArgIssue(
                        "ambiguous", name, None, f"{name} matches {', '.join(sorted(m for m in matches if m))}", None
                    )
                )
        if spec is None:
            value = None
            if not eq and index < len(args) and not args[index].startswith("-"):
                value = args[index]
                index += 1
            elif eq:
                value = inline
            if not any(i.flag == name and i.kind == "ambiguous" for i in issues):
                close = difflib.get_close_matches(
                    name, [o for o in vocab.options if o.startswith("--")], n=1, cutoff=0.75
                )
                issues.append(
                    ArgIssue(
                        "unknown",
                        name,
                        value,
                        f"{name} is not a {vocab.engine} {vocab.version} option",
                        close[0] if close else None,
                    )
                )
            continue
        key = vocab.key(name) or name
        takes_value = bool(spec.get("takes_value", spec.get("nargs") not in (0, "0")))
        if name in vocab.negations:
            takes_value = False
        if not takes_value:
            if eq:
                issues.append(ArgIssue("switch-value", name, inline, f"{name} is a switch and takes no value"))
            values[key] = None
            spellings[key] = written
            continue
        if eq:
            given: str | None = inline
        elif index < len(args):
            given = args[index]
            index += 1
        else:
            issues.append(ArgIssue("missing-value", name, None, f"{name} needs a value"))
            continue
        allowed = _allowed(spec)
        if allowed is not None and given not in allowed:
            close = difflib.get_close_matches(given or "", allowed, n=3, cutoff=0.5)
            issues.append(
                ArgIssue(
                    "bad-choice",
                    name,
                    given,
                    f"{name} {given!r} is not one of the {len(allowed)} values {vocab.engine} {vocab.version} accepts",
                    ", ".join(close) if close else None,
                )
            )
        values[key] = given
        spellings[key] = written
    return ParsedArgs(values, spellings, tuple(positionals), tuple(issues))
