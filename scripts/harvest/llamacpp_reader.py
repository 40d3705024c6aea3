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
ARG = re.compile(r"common_arg\(\s*\{([^}]*)\}")
QUOTED = re.compile(r'"([^"]+)"')


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


def flags(tree: Tree) -> tuple[dict[str, Any], list[str]]:
    path = _root(tree) + "common/arg.cpp"
    text = tree.read(path)
    if text is None:
        raise LookupError(f"no {path}")
    options: dict[str, Any] = {}
    for group in ARG.findall(text):
        strings = [s for s in QUOTED.findall(group) if s.startswith("-")]
        if not strings:
            continue
        long = [s for s in strings if s.startswith("--")] or strings
        entry = {"aliases": [s for s in strings if s != long[0]]} if len(strings) > 1 else {}
        options.setdefault(long[0], entry)
    if not options:
        raise LookupError(f"{path}: no common_arg option lists")
    return dict(sorted(options.items())), [path]


__all__ = ["flags", "parse", "reasoning_parsers", "registry", "tool_parsers"]
