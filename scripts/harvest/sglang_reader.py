"""SGLang: the model classes (each `sglang/srt/models/*.py`'s `EntryClass`), the parser maps, the CLI options."""

from __future__ import annotations

import ast
from typing import Any

from pyread import classes, dotted, parse
from readers import argparse_options, dataclass_options, real_replacements, table_keys, warned_in_code
from tree import Tree

MODELS = "sglang/srt/models/"
FIELDS = "sglang/srt/arg_groups/fields/"


def _entry_names(value: ast.AST) -> list[str]:
    items = value.elts if isinstance(value, (ast.List, ast.Tuple)) else [value]
    names = [(dotted(item) or "").split(".")[-1] for item in items]
    return [n for n in names if n]


def registry(tree: Tree) -> tuple[dict[str, Any], str]:
    """Class name -> {module}: SGLang's ModelRegistry keys every `EntryClass` class by its __name__."""
    out: dict[str, Any] = {}
    paths = tree.names(MODELS)
    if not paths:
        raise LookupError(f"no model modules ({MODELS}*.py)")
    for path in paths:
        text = tree.read(path) or ""
        if "EntryClass" not in text:
            continue
        module = path[len(MODELS) : -3].replace("/", ".")
        for stmt in parse(text, path).body:
            value: ast.AST | None = None
            if (
                isinstance(stmt, ast.Assign)
                and any(isinstance(t, ast.Name) and t.id == "EntryClass" for t in stmt.targets)
            ) or (
                isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Name) and stmt.target.id == "EntryClass"
            ):
                value = stmt.value
            if value is None:
                continue
            for name in _entry_names(value):
                out.setdefault(name, {"module": module, "class": name, "kinds": [], "traits": None})
    if not out:
        raise LookupError(f"no EntryClass in {MODELS}")
    return {"entries": dict(sorted(out.items()))}, MODELS + "*.py"


def _map_keys(tree: Tree, paths: tuple[str, ...], target: str) -> tuple[list[str] | None, str | None]:
    for path in paths:
        text = tree.read(path)
        if text is not None:
            keys = table_keys(text, path, target)
            if keys is not None:
                return sorted(set(keys)), path
    return None, None


def tool_parsers(tree: Tree) -> tuple[list[str] | None, str | None]:
    paths = ("sglang/srt/function_call/function_call_parser.py", "sglang/srt/function_call_parser.py")
    return _map_keys(tree, paths, "ToolCallParserEnum")


def reasoning_parsers(tree: Tree) -> tuple[list[str] | None, str | None]:
    paths = ("sglang/srt/parser/reasoning_parser.py", "sglang/srt/reasoning_parser.py")
    return _map_keys(tree, paths, "DetectorMap")


def flags(tree: Tree) -> tuple[dict[str, Any], list[str]]:
    path = "sglang/srt/server_args.py"
    text = tree.read(path)
    if text is None:
        raise LookupError(f"no {path}")
    actions_path = "sglang/srt/arg_groups/argparse_actions.py"  # newer releases keep their argparse actions here
    actions_text = tree.read(actions_path)
    actions = classes(parse(actions_text, actions_path)) if actions_text is not None else None
    options = argparse_options(text, path, actions=actions)
    read = [path]
    if "add_cli_args_from_dataclass" in text:  # newer releases build most options from ServerArgs' fields
        sources = [(path, text, ("ServerArgs",))]
        for field_path in tree.names(FIELDS):  # and later ones from the namespaces' field structs
            field_text = tree.read(field_path) or ""
            sources.append((field_path, field_text, tuple(classes(parse(field_text, field_path)))))
            read.append(field_path)
        for source_path, source_text, class_names in sources:
            for flag, entry in dataclass_options(source_text, source_path, class_names).items():
                options.setdefault(flag, entry)
    options.setdefault("--help", {"takes_value": False})  # argparse's own
    read += [p for p in warned_in_code(tree, (path, "sglang/srt/arg_groups/"), options) if p not in read]
    return dict(sorted(real_replacements(options).items())), read
