"""vLLM: the RoPE scaling a release builds, read from `get_rope` and the config code that feeds it.

A checkpoint's `rope_scaling` names its type under `type` (the older spelling) or `rope_type` (what
transformers writes since 4.43, e.g. Llama 3.1's `llama3`). A release whose code reads one key with no
fallback fails on a config that has only the other (`KeyError: 'type'`, vllm#6689), and `get_rope` raises
"Unknown RoPE scaling type" for a type it has no branch for. Read here, per release:
- `types`: every scaling type `get_rope` compares its type against;
- `requires`: the keys read without a fallback, by `get_rope` or by the max-length check in config.py
  (none: either spelling is taken);
- `renamed`: types the config patch maps onto others before `get_rope` sees them (`su` → `longrope`);
- `fills_rope_type`: the patch copies `type` into `rope_type` when only `type` is given.
"""

from __future__ import annotations

import ast
from typing import Any

from pyread import parse
from tree import Tree

ROPE_FILES = (
    "vllm/model_executor/layers/rotary_embedding/__init__.py",
    "vllm/model_executor/layers/rotary_embedding.py",
)
CONFIG_FILES = ("vllm/config.py", "vllm/config/model.py", "vllm/config/__init__.py")
PATCH_FILES = ("vllm/transformers_utils/config.py",)
KEYS = ("type", "rope_type")


def _function(module: ast.Module, name: str) -> ast.FunctionDef | None:
    return next((n for n in ast.walk(module) if isinstance(n, ast.FunctionDef) and n.name == name), None)


def _strings(node: ast.AST) -> list[str]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, (ast.Set, ast.List, ast.Tuple)):
        return [s for e in node.elts for s in _strings(e)]
    return []


def _subscript_key(node: ast.AST) -> str | None:
    """`x["type"]` → "type" where x's name mentions rope (rope_scaling, rope_parameters)."""
    if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load):
        owner = ast.unparse(node.value)
        key = node.slice
        if "rope" in owner and isinstance(key, ast.Constant) and key.value in KEYS:
            return str(key.value)
    return None


def _required_keys(function: ast.AST) -> set[str]:
    """Keys the function subscripts when it never tests for either spelling (a membership test or a `.get`
    of one is a fallback between the two: `x["type"] if "type" in x else x["rope_type"]`)."""
    read = {k for n in ast.walk(function) if (k := _subscript_key(n))}
    guarded: set[str] = set()
    for node in ast.walk(function):
        if isinstance(node, ast.Compare) and any(isinstance(op, (ast.In, ast.NotIn)) for op in node.ops):
            guarded.update(s for s in _strings(node.left) if s in KEYS)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get":
            guarded.update(s for a in node.args[:1] for s in _strings(a) if s in KEYS)
    return set() if guarded else read


def _scaling_types(function: ast.FunctionDef) -> list[str]:
    """Every string `get_rope` compares its scaling-type variable against."""
    names = {"scaling_type", "rope_type"}
    found: set[str] = set()
    for node in ast.walk(function):
        if isinstance(node, ast.Compare) and isinstance(node.left, ast.Name) and node.left.id in names:
            for comparator in node.comparators:
                found.update(_strings(comparator))
    return sorted(found)


def _patch(module: ast.Module) -> tuple[dict[str, str], bool]:
    """The config patch's renames (`d["rope_type"] = "longrope"` under `if d["rope_type"] == "su"`) and
    whether it fills `rope_type` from `type`."""
    renamed: dict[str, str] = {}
    fills = False
    for node in ast.walk(module):
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and _subscript_store(node.targets[0]) == "rope_type"
            and _subscript_key(node.value) == "type"
        ):
            fills = True
        if isinstance(node, ast.If) and isinstance(node.test, ast.Compare) and _subscript_key(node.test.left):
            old = [s for c in node.test.comparators for s in _strings(c)]
            new = [
                s
                for stmt in node.body
                if isinstance(stmt, ast.Assign)
                and len(stmt.targets) == 1
                and _subscript_store(stmt.targets[0]) == "rope_type"
                for s in _strings(stmt.value)
            ]
            if len(old) == 1 and len(new) == 1 and isinstance(node.test.ops[0], ast.Eq):
                renamed[old[0]] = new[0]
    return renamed, fills


def _subscript_store(node: ast.AST) -> str | None:
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) and "rope" in ast.unparse(node.value):
        return str(node.slice.value)
    return None


def rope(tree: Tree) -> dict[str, Any]:
    """The release's RoPE scaling table; LookupError when it has no `get_rope` to read."""
    path = tree.first(*ROPE_FILES)
    text = tree.read(path) if path else None
    module = parse(text, path or "") if text else None
    get_rope = _function(module, "get_rope") if module else None
    if get_rope is None or path is None:
        raise LookupError(f"no get_rope in {' or '.join(ROPE_FILES)}")
    read_from = [path]
    required = _required_keys(get_rope)
    config_path = tree.first(*CONFIG_FILES)
    config_text = tree.read(config_path) if config_path else None
    if config_path and config_text:
        check = _function(parse(config_text, config_path), "_get_and_verify_max_len")
        if check is not None:
            required |= _required_keys(check)
            read_from.append(f"{config_path}:_get_and_verify_max_len")
    renamed: dict[str, str] = {}
    fills = False
    patch_path = tree.first(*PATCH_FILES)
    patch_text = tree.read(patch_path) if patch_path else None
    if patch_path and patch_text:
        renamed, fills = _patch(parse(patch_text, patch_path))
        if renamed or fills:
            read_from.append(patch_path)
    if fills:  # the patch writes rope_type from type before anything reads it
        required.discard("rope_type")
    return {
        "from": read_from,
        "types": _scaling_types(get_rope),
        "requires": sorted(required),
        "renamed": dict(sorted(renamed.items())),
        "fills_rope_type": fills,
    }
