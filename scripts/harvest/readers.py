"""Readers shared by the engines: names a registry decorator registers, a dict's keys, argparse options."""

from __future__ import annotations

import ast
from typing import Any

from pyread import UNREADABLE, calls, classes, literal, module_tables, parse
from tree import Tree


def registered_names(tree: Tree, folder: str, method: str, every_arg: bool = False) -> list[str]:
    """Names given to `X.<method>("name")` / `X.<method>(["a", "b"])` / `name=` in every module of `folder`."""
    names: list[str] = []
    for path in tree.names(folder):
        text = tree.read(path) or ""
        if method not in text:
            continue
        for call in calls(parse(text, path), method):
            arg: Any = UNREADABLE
            if call.args:
                arg = [literal(a) for a in call.args] if every_arg else literal(call.args[0])
            for kw in call.keywords:
                if kw.arg in ("name", "names", "module_name"):
                    arg = literal(kw.value)
            if isinstance(arg, str):
                names.append(arg)
            elif isinstance(arg, (list, tuple)):
                names.extend(a for a in arg if isinstance(a, str))
    return names


def table_keys(text: str, name: str, target: str) -> list[str] | None:
    """The literal keys of the dict assigned to `target` anywhere in the module (values may be classes)."""
    for node in ast.walk(parse(text, name)):
        value: ast.AST | None = None
        if (isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == target for t in node.targets)) or (
            isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.target.id == target
        ):
            value = node.value
        if isinstance(value, ast.Dict):
            keys = [literal(k) for k in value.keys if k is not None]
            return [k for k in keys if isinstance(k, str)]
    return None


def _json_safe(value: Any) -> Any:
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    if isinstance(value, (list, tuple)) and all(isinstance(v, (str, int, float, bool)) for v in value):
        return list(value)
    return UNREADABLE


def _dataclass_defaults(tree: ast.Module) -> dict[str, dict[str, Any]]:
    """Class -> field -> literal default, for `default=Class.field` in add_argument calls."""
    out: dict[str, dict[str, Any]] = {}
    for name, cls in classes(tree).items():
        fields: dict[str, Any] = {}
        for stmt in cls.body:
            if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.value is not None:
                fields[stmt.target.id] = literal(stmt.value)
        out[name] = fields
    return out


def argparse_options(text: str, name: str, defaults_from: ast.Module | None = None) -> dict[str, dict[str, Any]]:
    """Every `add_argument("--x", ...)` with its literal choices and default (absent key: not readable)."""
    tree = parse(text, name)
    env = module_tables(tree)
    dataclass_defaults = _dataclass_defaults(defaults_from or tree)
    options: dict[str, dict[str, Any]] = {}
    for call in calls(tree, "add_argument"):
        strings = [literal(a) for a in call.args]
        flags = [s for s in strings if isinstance(s, str) and s.startswith("-")]
        if not flags:
            continue
        entry: dict[str, Any] = {}
        if len(flags) > 1:
            entry["aliases"] = flags[1:]
        for kw in call.keywords:
            if kw.arg == "choices":
                value = _json_safe(literal(kw.value, env))
                if value is not UNREADABLE:
                    entry["choices"] = value
                elif isinstance(kw.value, ast.BinOp) and isinstance(kw.value.op, ast.Add):
                    # `["auto"] + registry_names()`: the literal part is a choice the registry does not hold
                    extra = _json_safe(literal(kw.value.left, env))
                    if isinstance(extra, list):
                        entry["choices_extra"] = extra
            elif kw.arg == "default":
                value = literal(kw.value, env)
                if value is UNREADABLE and isinstance(kw.value, ast.Attribute) and isinstance(kw.value.value, ast.Name):
                    value = dataclass_defaults.get(kw.value.value.id, {}).get(kw.value.attr, UNREADABLE)
                value = _json_safe(value)
                if value is not UNREADABLE:
                    entry["default"] = value
            elif (
                kw.arg == "action"
                and isinstance(kw.value, ast.Constant)
                and kw.value.value in ("store_true", "store_false")
            ):
                entry["takes_value"] = False
        long_flags = [f for f in flags if f.startswith("--")] or flags
        options.setdefault(long_flags[0], entry)
    return options


def dataclass_options(text: str, name: str, class_names: tuple[str, ...]) -> dict[str, dict[str, Any]]:
    """`--field-name` for each field of these dataclasses (vLLM builds its newer CLIs from them)."""
    tree = parse(text, name)
    options: dict[str, dict[str, Any]] = {}
    found = classes(tree)
    for cls_name in class_names:
        cls = found.get(cls_name)
        if cls is None:
            continue
        for stmt in cls.body:
            if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
                field = stmt.target.id
                if field.startswith("_"):
                    continue
                entry: dict[str, Any] = {}
                if stmt.value is not None:
                    value = _json_safe(literal(stmt.value))
                    if value is not UNREADABLE:
                        entry["default"] = value
                options.setdefault("--" + field.replace("_", "-"), entry)
    return options
