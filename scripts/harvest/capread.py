"""Compute-capability checks as written in an engine's code, read as data (AST, never run).

The forms the engines use: `has_device_capability(80)`, `get_device_capability()[0] < 8`,
`capability < 89`, `capability.major != 9`, `device_capability.to_int() >= 80`. Each is read as a
threshold (a capability times ten, 80 = 8.0) or a single major (9 = Hopper only).
"""

from __future__ import annotations

import ast
import re
import struct
from collections import Counter
from dataclasses import dataclass
from typing import Literal

from pyread import dotted, parse
from tree import Tree

CAPABILITY_CALLS = ("get_device_capability", "has_device_capability", "is_device_capability")


@dataclass(frozen=True)
class Check:
    kind: Literal["at_least", "major", "exactly"]  # capability x10 (80) at least / exactly; major: the major (9)
    value: int


def _is_capability(node: ast.AST) -> bool:
    """An expression that is (part of) the device's compute capability."""
    text = ast.unparse(node)
    return "capability" in text.lower() or any(c in text for c in CAPABILITY_CALLS)


def _int(node: ast.AST) -> int | None:
    """An int literal, negative ones included (`return -1`: a method that runs on no CUDA GPU, e.g. ipex)."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        value = _int(node.operand)
        return None if value is None else -value
    return node.value if isinstance(node, ast.Constant) and type(node.value) is int else None


def checks(node: ast.AST) -> list[Check]:
    """Every capability check inside an expression, in source order."""
    found: list[Check] = []
    for sub in ast.walk(node):
        if isinstance(sub, ast.Call) and (dotted(sub.func) or "").endswith("has_device_capability") and sub.args:
            value = _int(sub.args[0])
            if value is not None:
                found.append(Check("at_least", value))
        if isinstance(sub, ast.Call) and (dotted(sub.func) or "").endswith("is_device_capability") and sub.args:
            value = _int(sub.args[0])
            if value is not None:
                found.append(Check("exactly", value))
        if not (isinstance(sub, ast.Compare) and len(sub.ops) == 1):
            continue
        left, right = sub.left, sub.comparators[0]
        value = _int(right)
        if value is None or not _is_capability(left):
            continue
        major = (isinstance(left, ast.Subscript) and _int(left.slice) == 0) or (
            isinstance(left, ast.Attribute) and left.attr == "major"
        )
        if isinstance(left, ast.Subscript) and _int(left.slice) == 1:
            continue  # a minor compared alone says nothing without its major
        if major and isinstance(sub.ops[0], (ast.Eq, ast.NotEq)):
            found.append(Check("major", value))
        elif major:
            found.append(Check("at_least", value * 10 + (1 if isinstance(sub.ops[0], (ast.Gt, ast.LtE)) else 0) * 10))
        elif value >= 10:
            bump = 1 if isinstance(sub.ops[0], (ast.Gt, ast.LtE)) else 0
            found.append(Check("at_least", value + bump))
    return found


def strings(node: ast.AST) -> str:
    """Every string constant inside a node, joined (log messages, error texts)."""
    parts: list[str] = []
    for sub in ast.walk(node):
        if isinstance(sub, ast.Constant) and isinstance(sub.value, str):
            parts.append(sub.value)
    return " ".join(parts)


_OTHER_PLATFORM = re.compile(r"hip|rocm|tpu|xpu|cpu|neuron", re.I)


def cuda_nodes(tree: ast.AST) -> list[ast.AST]:
    """Every node outside the branches taken on another platform (`if is_hip():`, `if current_platform.is_rocm()`)."""
    out: list[ast.AST] = []
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        out.append(node)
        if isinstance(node, ast.If) and _OTHER_PLATFORM.search(ast.unparse(node.test)):
            stack.extend(node.orelse)  # the body runs elsewhere; the else branch is CUDA's
            stack.append(node.test)
            continue
        stack.extend(ast.iter_child_nodes(node))
    return out


def guarded(tree: ast.AST, says: re.Pattern[str]) -> list[tuple[Check, ast.If]]:
    """Capability checks of every `if` (on CUDA) whose own test checks a capability and whose body says
    something matching `says` (a log line, an error, an assert message)."""
    out: list[tuple[Check, ast.If]] = []
    for node in cuda_nodes(tree):
        if isinstance(node, ast.If):
            found = checks(node.test)
            if found and says.search(strings(ast.Module(body=node.body, type_ignores=[]))):
                out.extend((c, node) for c in found)
        elif isinstance(node, ast.Assert) and node.msg is not None and says.search(strings(node.msg)):
            out.extend((c, node) for c in checks(node.test))  # type: ignore[misc]
    return out


def function(module: ast.Module, name: str) -> ast.FunctionDef | None:
    """The first function or method of that name anywhere in the module."""
    for node in ast.walk(module):
        if isinstance(node, ast.FunctionDef) and node.name == name:
            return node
    return None


def returned_list(fn: ast.FunctionDef | None) -> list[object] | None:
    """The literal list/tuple a function returns (`return [32, 64, 128]`), else None."""
    if fn is None:
        return None
    for node in ast.walk(fn):
        if isinstance(node, ast.Return) and isinstance(node.value, (ast.List, ast.Tuple)):
            values = [n.value if isinstance(n, ast.Constant) else dotted(n) for n in node.value.elts]
            if all(v is not None for v in values):
                return values
    return None


def returned_int(fn: ast.FunctionDef | None) -> int | None:
    """The int a function returns when its every return is that one literal (`return 80`)."""
    if fn is None:
        return None
    values = {_int(n.value) if n.value is not None else None for n in ast.walk(fn) if isinstance(n, ast.Return)}
    return values.pop() if len(values) == 1 and None not in values else None


def module(tree: Tree, path: str) -> ast.Module | None:
    text = tree.read(path)
    return parse(text, path) if text is not None else None


# ---------------------------------------------------------------------------------------------
# The GPU code a wheel ships: the cubins (CUDA ELF images) inside its compiled extensions

_ELF = re.compile(rb"\x7fELF\x02\x01")
EM_CUDA = 190
# A fat binary container (.nv_fatbin): magic 0xBA55ED50, version 1, a 16-byte header, then the size of its entries.
# NVIDIA does not document the layout; cuobjdump reads it, and public readings agree (n-eiling/cuda-fatbin-
# decompression for the LZ4 entries before CUDA 12.8, GrigoryEvko/nvopen-tools fatbin/FORMAT_SPECIFICATION.md for
# the ZSTD ones that `nvcc --compress-mode` writes since): each entry is a header (kind 1 PTX, 2 cubin; its own
# size; the payload's size, padded to 8; the target architecture at byte 28; flags at byte 40, 0x2000 LZ4- and
# 0x8000 ZSTD-compressed) followed by its payload.
_FATBIN = re.compile(rb"\x50\xed\x55\xba\x01\x00\x10\x00")
FATBIN_CUBIN = 2
MAX_ENTRIES = 1 << 16  # per container: a bound on what a corrupt size field can make the walk do


def _fatbin_cubins(data: bytes) -> tuple[Counter[int], list[tuple[int, int]]]:
    """The target architecture of every cubin entry of every fat binary container in a shared object, compressed
    or not (an entry's header names it; for the ZSTD entries of the CUDA 13 wheels it equals the e_flags of the
    cubin inside, checked on vLLM 0.20.1's), and the byte spans the containers cover."""
    found: Counter[int] = Counter()
    spans: list[tuple[int, int]] = []
    for match in _FATBIN.finditer(data):
        start = match.start()
        end = start + 16 + struct.unpack_from("<Q", data, start + 8)[0]
        if end > len(data):
            continue  # not a container: its size runs past the file
        at = start + 16
        entries: Counter[int] = Counter()
        for _ in range(MAX_ENTRIES):
            if at + 64 > end:
                break
            kind, _version, header, payload = struct.unpack_from("<HHIQ", data, at)
            if header < 64 or at + header + payload > end:
                break
            arch = struct.unpack_from("<I", data, at + 28)[0]
            if kind == FATBIN_CUBIN and 30 <= arch <= 200:
                entries[arch] += 1
            at += header + payload
        found.update(entries)
        spans.append((start, end))
    return found, spans


def cubin_archs(data: bytes) -> Counter[int]:
    """How many cubins embedded in a shared object target each architecture (x10: 80, 90, 100).

    Cubins inside fat binary containers are counted from their entry headers, so the compressed ones (LZ4, or the
    ZSTD every cubin of a CUDA 13 wheel is) count as well; an ELF image outside any container is read from its
    own header, whose e_flags name the architecture: the low byte before CUDA 12.8's ABI version 8, the second
    byte since.
    """
    found, spans = _fatbin_cubins(data)
    for match in _ELF.finditer(data):
        at = match.start()
        if any(start <= at < end for start, end in spans):
            continue  # counted from its container's entry header
        if len(data) < at + 52 or struct.unpack_from("<H", data, at + 18)[0] != EM_CUDA:
            continue
        abi_version = data[at + 8]
        flags = struct.unpack_from("<I", data, at + 48)[0]
        arch = (flags >> 8) & 0xFF if abi_version >= 8 else flags & 0xFF
        if 30 <= arch <= 200:
            found[arch] += 1
    return found
