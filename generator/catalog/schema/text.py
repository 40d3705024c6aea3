"""The string types of the catalog: every string field of every recipe kind is one of these.

Recipe folders are shared, so their text is untrusted. Each type is the narrowest grammar the
field needs, checked at load, so `recipegen validate` refuses a value before `generate` could
write it into a script. Rendering still encodes every value for the syntax it lands in
(encode.py); these grammars are the first of two walls, not the only one.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Callable
from typing import Annotated

from .records import Check

# Characters that end a line for some reader of the artifacts (bash: \n; YAML 1.1 and Python:
# also \r, \x85, U+2028, U+2029), invisible format characters (bidi overrides, zero-width),
# every other control character, and unassigned code points (U+FFFE/U+FFFF stop a YAML reader).
_FORBIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})


_CONTROL_NAMES = {"\n": "newline", "\r": "carriage return", "\t": "tab", "\x00": "NUL", "\x1b": "escape"}


def _invisible(value: str) -> str | None:
    # str.isprintable() is False for every forbidden category (and for spaces other than ' '), so
    # the usual all-visible string skips the per-character loop, which was most of a catalog load.
    if value.isprintable():
        return None
    for index, char in enumerate(value):
        if unicodedata.category(char) in _FORBIDDEN_CATEGORIES:
            name = _CONTROL_NAMES.get(char, unicodedata.name(char, "control character"))
            return f"U+{ord(char):04X} ({name.lower()}) at position {index}"
    return None


def _shown(value: str) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "…'"


def _single_line(limit: int) -> Callable[[str], str]:
    def check(value: str) -> str:
        found = _invisible(value)
        if found is not None:
            raise ValueError(f"must be one line of visible text: found {found}")
        if len(value) > limit:
            raise ValueError(f"longer than {limit} characters ({len(value)})")
        return value

    return check


def _grammar(
    pattern: str, what: str, limit: int, extra: Callable[[str], str | None] | None = None
) -> Callable[[str], str]:
    def check(value: str) -> str:
        if len(value) > limit:
            raise ValueError(f"{what}: longer than {limit} characters")
        if not _compiled(pattern).fullmatch(value):
            raise ValueError(f"{_shown(value)} is not {what}")
        problem = extra(value) if extra else None
        if problem:
            raise ValueError(f"{_shown(value)} is not {what}: {problem}")
        return value

    return check


@functools.cache
def _compiled(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)  # on first use: most commands read a cached catalog and check nothing


def _no_dot_dot(value: str) -> str | None:
    return "'..' is not allowed" if ".." in value else None


def _repo_id(value: str) -> str | None:
    for part in value.split("/"):
        if ".." in part or "--" in part:
            return "'..' and '--' are not allowed"
        if part[0] in "-." or part[-1] in "-.":
            return "a part may not start or end with '-' or '.'"
    return None


def _relative_path(value: str) -> str | None:
    for part in value.split("/"):
        if part in (".", ".."):
            return f"no {part!r} path parts"
        if part.startswith("-"):
            return "a path part may not start with '-'"
    return None


def _git_ref(value: str) -> str | None:
    # the parts of `git check-ref-format` a conservative grammar does not already exclude
    if ".." in value or "//" in value or "/." in value or "@{" in value:
        return "no '..', '//', '/.' or '@{'"
    if value.endswith((".", "/", ".lock")):
        return "may not end with '.', '/' or '.lock'"
    return None


# Human text: names, reasons, titles, notes, source references. One line, visible characters.
Text = Annotated[str, Check(_single_line(2000))]
Name = Annotated[str, Check(_single_line(200))]

# Catalog ids (hardware, engines, models, variants, builds, deployments): letters, digits, . _ + -
id_check = _grammar(r"[A-Za-z0-9][A-Za-z0-9._+-]*", "an id (letters, digits, '.', '_', '+', '-')", 128, _no_dot_dot)
Id = Annotated[str, Check(id_check)]
# Other names users type for an entry: ids, repo ids, spaced names ("a100 80gb"), ollama tags.
Alias = Annotated[
    str,
    Check(
        _grammar(
            r"[A-Za-z0-9][A-Za-z0-9 ._+/:-]*",
            "an alias (letters, digits, spaces, '.', '_', '+', '/', ':', '-')",
            128,
            _no_dot_dot,
        )
    ),
]
# A word of the engine's vocabulary: parser names, KV dtype spellings, model_type, architectures, origin.
Word = Annotated[
    str, Check(_grammar(r"[A-Za-z0-9][A-Za-z0-9._+-]*", "a word (letters, digits, '.', '_', '+', '-')", 100))
]
# A Python class name as in config.json `architectures`.
ClassName = Annotated[str, Check(_grammar(r"[A-Za-z_][A-Za-z0-9_]*", "a class name", 200))]
# Versions of CUDA and drivers: 12.9, 575.51.03.
Version = Annotated[str, Check(_grammar(r"[0-9][0-9A-Za-z.+_-]*", "a version number", 50))]
RepoId = Annotated[
    str,
    Check(
        _grammar(
            r"[A-Za-z0-9._-]{1,96}/[A-Za-z0-9._-]{1,96}",
            "a Hugging Face repo id (org/name: letters, digits, '-', '_', '.')",
            200,
            _repo_id,
        )
    ),
]
# A file inside a repo (GGUF): relative, no '.'/'..' parts.
RepoFile = Annotated[
    str,
    Check(
        _grammar(
            r"[A-Za-z0-9_+=@,.-]+(?:/[A-Za-z0-9_+=@,.-]+)*",
            "a relative file path (letters, digits, '_', '+', '=', '@', ',', '.', '-', '/')",
            255,
            _relative_path,
        )
    ),
]
EnvName = Annotated[
    str,
    Check(_grammar(r"[A-Za-z_][A-Za-z0-9_]*", "an environment variable name ([A-Za-z_][A-Za-z0-9_]*)", 128)),
]
Commit = Annotated[str, Check(_grammar(r"[0-9a-f]{7,40}", "a git commit (7 to 40 lowercase hex digits)", 40))]
GitRef = Annotated[
    str,
    Check(
        _grammar(
            r"[A-Za-z0-9_][A-Za-z0-9._/+-]*", "a git ref (letters, digits, '.', '_', '/', '+', '-')", 200, _git_ref
        )
    ),
]
HttpsUrl = Annotated[
    str,
    Check(
        _grammar(
            r"https://[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?(?::[0-9]{1,5})?(?:/[A-Za-z0-9._~%+-]+)*/?",
            "an https URL without user, query or fragment",
            500,
            _no_dot_dot,
        )
    ),
]
UrlPath = Annotated[
    str,
    Check(_grammar(r"/[A-Za-z0-9._~/-]*", "a URL path (/ then letters, digits, '.', '_', '~', '/', '-')", 200)),
]
# The reference grammar of distribution/reference (regexp.go): [domain[:port]/]path[:tag][@digest].
_LABEL = r"(?:[A-Za-z0-9]|[A-Za-z0-9][A-Za-z0-9-]*[A-Za-z0-9])"
_DOMAIN = rf"{_LABEL}(?:\.{_LABEL})*(?::[0-9]+)?"
_COMPONENT = r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*"
IMAGE_REFERENCE = (
    rf"(?:{_DOMAIN}/)?{_COMPONENT}(?:/{_COMPONENT})*(?::[A-Za-z0-9_][A-Za-z0-9_.-]{{0,127}})?"
    r"(?:@[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,})?"
)
ImageRef = Annotated[str, Check(_grammar(IMAGE_REFERENCE, "a docker image reference (name[:tag][@digest])", 255))]
ShmSize = Annotated[
    str, Check(_grammar(r"[1-9][0-9]{0,9}[bkmgBKMG]?", "a memory size such as 16g, 512m or 1073741824", 12))
]
# An engine flag as written on its command line: -x, -ngl, --long-name, --config.key
EngineFlag = Annotated[
    str,
    Check(
        _grammar(
            r"--?[A-Za-z0-9][A-Za-z0-9_-]*(?:\.[A-Za-z0-9_-]+)*", "an engine flag (-x, --long-name, --name.key)", 100
        )
    ),
]
# A flag value or any other word of an argv: one line, passed as a single argument.
ArgWord = Annotated[str, Check(_single_line(4000))]
# A value with ${VAR} references the shell and compose expand (e.g. ${HEAD_ADDR}:${DIST_PORT}); a default
# (${VAR:-...}) may name one more ${VAR}.
# Only the variables the generated files define or document may be expanded (never HF_TOKEN).
EXPANDABLE_VARS = ("HEAD_ADDR", "DIST_PORT", "PORT", "MODEL_DIR", "HOME")
_NAME = "(?:" + "|".join(EXPANDABLE_VARS) + ")"
_VAR = rf"\$\{{{_NAME}\}}"
EXPANDABLE = rf"(?:[A-Za-z0-9_.:/-]|{_VAR}|\$\{{{_NAME}:[-?](?:[A-Za-z0-9_.:/ -]|{_VAR})*\}})*"
Expandable = Annotated[
    str,
    Check(_grammar(EXPANDABLE, f"plain text with ${{VAR}} references to {', '.join(EXPANDABLE_VARS)}", 200)),
]
