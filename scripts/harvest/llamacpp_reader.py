"""llama.cpp: the GGUF architectures llama-server loads (src/llama-arch.cpp LLM_ARCH_NAMES), the Hugging Face
classes its converter registers (`@ModelBase.register("…")`), and llama-server's options (common/arg.cpp).

A llama.cpp tree comes from a source archive that vendors it (llama-cpp-python's sdist) or a checkout.
"""

from __future__ import annotations

import re
from typing import Any

from pyread import parse
from readers import registered_names
from tree import Tree

ARCH_NAME = re.compile(r'\{\s*LLM_ARCH_(\w+)\s*,\s*"([^"]+)"\s*\}')
# an option's spellings, and its negative spellings where it has them: common_arg({"--mmap"}, {"--no-mmap"}, …)
ARG = re.compile(r"common_arg\(\s*\{([^}]*)\}(?:\s*,\s*\{([^}]*)\})?")
QUOTED = re.compile(r'"([^"]+)"')
# a deprecated option's help names the option that replaces it; its handler warns in the engine's own words and
# sets the same field the replacement's value table sets (so each spelling maps to one value of the replacement)
IN_FAVOUR = re.compile(r"DEPRECATED in favou?r of `(-[\w-]+)`")
WARNING = re.compile(r'LOG_WRN\("DEPRECATED: ((?:[^"\\]|\\.)*?)(?:\\n)?"')
VALUE_SETS = re.compile(r'value == "([^"]+)"\s*\)\s*\{\s*params\.(\w+)\s*=\s*(\w+)\s*;')
TERNARY = re.compile(r"params\.(\w+)\s*=\s*value\s*\?\s*(\w+)\s*:\s*(\w+)\s*;")
ASSIGN = re.compile(r"params\.(\w+)\s*=\s*(\w+)\s*;")
REMOVED = re.compile(r'arg_removed\("((?:[^"\\]|\\.)*)"\)')  # a spelling kept only to abort with this hint


def _root(tree: Tree) -> str:
    arch = max(tree.names(suffix="src/llama-arch.cpp"), key=len, default=None)  # the path as the archive has it
    if arch is None:
        raise LookupError("no src/llama-arch.cpp (LLM_ARCH_NAMES)")
    return arch[: -len("src/llama-arch.cpp")]


def registry(tree: Tree) -> tuple[dict[str, Any], str]:
    root = _root(tree)
    path = root + "src/llama-arch.cpp"
    text = tree.read(path) or ""
    block = text.split("LLM_ARCH_NAMES", 1)[1].split("};", 1)[0] if "LLM_ARCH_NAMES" in text else ""
    entries = {
        name: {"module": f"LLM_ARCH_{enum}", "class": None, "kinds": ["gguf"], "traits": None}
        for enum, name in ARCH_NAME.findall(block)
        if name != "clip"  # a dummy only llama-quantize uses (the file says so)
    }
    if not entries:
        raise LookupError(f"{path}: no LLM_ARCH_NAMES entries")
    converter = sorted(
        {
            n
            for folder in (root + "conversion/", root)
            for n in registered_names(_Sub(tree, folder), "", "register", every_arg=True)
            if n[:1].isupper()
        }
    )
    return {"entries": dict(sorted(entries.items())), "converter": converter}, path


class _Sub:
    """The .py files of one folder of a tree (the converter and its package), without descending elsewhere."""

    def __init__(self, tree: Tree, folder: str) -> None:
        self.tree, self.folder = tree, folder

    def names(self, prefix: str = "", suffix: str = ".py") -> list[str]:
        found = self.tree.names(self.folder + prefix, suffix)
        if self.folder.endswith("conversion/"):
            return found
        return [n for n in found if "/" not in n[len(self.folder) :] and "convert" in n]

    def read(self, name: str) -> str | None:
        return self.tree.read(name)


def tool_parsers(tree: Tree) -> tuple[list[str] | None, str | None]:
    return None, None  # llama-server picks the tool-call format from the chat template; no named parsers


def reasoning_parsers(tree: Tree) -> tuple[list[str] | None, str | None]:
    return None, None


def _dashed(group: str | None) -> list[str]:
    return [s for s in QUOTED.findall(group or "") if s.startswith("-")]


def _replaced_by(body: str, spellings: list[str], negations: list[str], bodies: dict[str, str]) -> dict[str, Any]:
    """What a deprecated option's code says replaces it: the option its help names, and per spelling the value of
    that option its handler sets the same field to (`--no-mmap` → `--load-mode none`), where the code shows it."""
    named = IN_FAVOUR.search(body)
    warned = WARNING.search(body)
    out: dict[str, Any] = {"warning": warned.group(1)} if warned else {}
    if named is None:
        return out
    target = named.group(1)
    values: dict[tuple[str, str], str] = {}
    for value, field, enum in VALUE_SETS.findall(bodies.get(target, "")):
        values.setdefault((field, enum), value)
    by: dict[str, str] = {}
    ternary = TERNARY.search(body)
    if ternary is not None:
        field, yes, no = ternary.groups()
        by |= {s: f"{target} {values[(field, yes)]}" for s in spellings if (field, yes) in values}
        by |= {s: f"{target} {values[(field, no)]}" for s in negations if (field, no) in values}
    else:
        for field, enum in ASSIGN.findall(body):
            if (field, enum) in values:
                by |= {s: f"{target} {values[(field, enum)]}" for s in spellings}
                break
    out["replaced_by"] = {s: by.get(s, target) for s in (*spellings, *negations)}
    return out


def flags(tree: Tree) -> tuple[dict[str, Any], list[str]]:
    path = _root(tree) + "common/arg.cpp"
    text = tree.read(path)
    if text is None:
        raise LookupError(f"no {path}")
    # one chunk per option: its registration up to the next one (its help, handler and setters)
    chunks = ["common_arg(" + c for c in text.split("common_arg(")[1:]]
    parsed: list[tuple[list[str], list[str], str]] = []
    bodies: dict[str, str] = {}
    for chunk in chunks:
        found = ARG.match(chunk)
        strings = _dashed(found.group(1)) if found else []
        if not found or not strings:
            continue
        parsed.append((strings, _dashed(found.group(2)), chunk))
        for s in strings:
            bodies.setdefault(s, chunk)
    options: dict[str, Any] = {}
    for strings, negations, chunk in parsed:
        long = [s for s in strings if s.startswith("--")] or strings
        entry: dict[str, Any] = {"aliases": [s for s in strings if s != long[0]]} if len(strings) > 1 else {}
        if negations:
            entry["negations"] = negations
        help_text = chunk.split("[](", 1)[0]
        body = chunk.split("add_opt(", 1)[0]
        if removed := REMOVED.search(body):
            entry["removed"] = removed.group(1)
        elif "DEPRECATED" in help_text or WARNING.search(body):
            entry["deprecated"] = _replaced_by(body, strings, negations, bodies)
        options.setdefault(long[0], entry)
    if not options:
        raise LookupError(f"{path}: no common_arg option lists")
    return dict(sorted(options.items())), [path]


__all__ = ["flags", "parse", "reasoning_parsers", "registry", "tool_parsers"]
