"""What the command line accepts: bounds for numbers, a grammar for names and paths, printable errors.

Values are checked where click parses them, so a bad one is a usage error (exit 2) naming the
option, before any catalog is loaded. Kept free of heavy imports: the CLI builds its options from it.
"""

import math
import unicodedata
from typing import Any

import typer

from ..bounds import INT_BOUNDS, shown

GIB_BOUNDS = (1.0, 4096.0)
FLOAT_BOUNDS: dict[str, tuple[float, float, str]] = {  # option: (low, high, unit)
    "--host-memory": (1.0, 65536.0, "GiB"),
    "--host-bandwidth": (1.0, 10000.0, "GB/s"),
}
MAX_NAME = 256
MAX_PASTE = 4096  # a pasted `pip show` output
MAX_PATH = 4096
MAX_SHOWN = 300

# Bidirectional overrides and isolates reorder text on screen ("Trojan Source"); never accepted.
_BIDI = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


def printable(text: str, limit: int = MAX_SHOWN) -> str:
    """`text` safe for one terminal line: control and unpaired surrogate characters escaped, long text cut."""
    out = "".join(ch.encode("unicode_escape", "backslashreplace").decode("ascii") if _unsafe(ch) else ch for ch in text)
    return out if len(out) <= limit else out[: limit - 1] + "…"


def _unsafe(ch: str) -> bool:
    return unicodedata.category(ch) in ("Cc", "Cs") or ch in _BIDI


def _option(param: typer.CallbackParam) -> str:
    return str(param.opts[0]) if param.opts else (param.name or "value").upper()


def _text(value: str, option: str, limit: int) -> str:
    if not value or not value.strip():
        raise typer.BadParameter(f"must not be empty (leave {option} out instead)")
    if len(value) > limit:
        raise typer.BadParameter(f"{len(value)} characters long; at most {limit} are accepted")
    bad = next((ch for ch in value if _unsafe(ch)), None)
    if bad is not None:
        raise typer.BadParameter(
            f"{printable(value, 80)} holds the control character {printable(bad)}; type the value on one line"
        )
    return value


def name(ctx: typer.Context, param: typer.CallbackParam, value: Any) -> Any:
    """A catalog name (--gpu, --model, --engine …): one line, not empty, not huge."""
    if value is None:
        return None
    if isinstance(value, list | tuple):
        return [_text(v, _option(param), MAX_NAME) for v in value]
    return _text(value, _option(param), MAX_NAME)


def build_text(ctx: typer.Context, param: typer.CallbackParam, value: Any) -> Any:
    """--build: one name, or what `pip show vllm` printed (its lines are read as one)."""
    if value is None:
        return None
    folded = " ".join(str(value).split())
    return _text(folded, _option(param), MAX_PASTE) if folded else _text(value, _option(param), MAX_NAME)


def path(ctx: typer.Context, param: typer.CallbackParam, value: Any) -> Any:
    """A folder on the command line (--out, --recipes, validate DIR …)."""
    if value is None:
        return None
    if isinstance(value, list | tuple):
        return [_text(v, _option(param), MAX_PATH) for v in value]
    return _text(value, _option(param), MAX_PATH)


def count(ctx: typer.Context, param: typer.CallbackParam, value: int | None) -> int | None:
    """--gpus, --nodes, --context, --concurrency: whole numbers within INT_BOUNDS."""
    if value is None:
        return None
    option = _option(param)
    low, high = INT_BOUNDS[option]
    if not low <= value <= high:
        raise typer.BadParameter(f"{shown(value)} is out of range; use {low} to {high:,}")
    return value


def gib(ctx: typer.Context, param: typer.CallbackParam, value: float | None) -> float | None:
    """--gpu-memory: a finite number of GiB within GIB_BOUNDS (nan, inf and denormals are refused)."""
    if value is None:
        return None
    low, high = GIB_BOUNDS
    if not math.isfinite(value) or not low <= value <= high:
        raise typer.BadParameter(f"{value:g} is out of range; give GiB per GPU from {low:g} to {high:g}")
    return value


def quantity(ctx: typer.Context, param: typer.CallbackParam, value: float | None) -> float | None:
    """--host-memory, --host-bandwidth: a finite number within FLOAT_BOUNDS (nan and inf are refused)."""
    if value is None:
        return None
    low, high, unit = FLOAT_BOUNDS[_option(param)]
    if not math.isfinite(value) or not low <= value <= high:
        raise typer.BadParameter(f"{value:g} is out of range; give {unit} from {low:g} to {high:,.0f}")
    return value


def version(ctx: typer.Context, param: typer.CallbackParam, value: bool) -> None:
    if value and not ctx.resilient_parsing:
        from .. import __version__

        typer.echo(f"recipegen {__version__}")
        raise typer.Exit(0)
