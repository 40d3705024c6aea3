"""Encode a value for the syntax it lands in: one function per target, registered as the Jinja
filters of the one template environment (render.environment).

Catalog strings are validated at load (schema/text.py), but recipe folders are shared and the
command line is typed by anyone, so every value a template prints goes through the function for
where it lands; nothing is printed raw. A value that cannot be written safely raises
RecipegenError instead of being written.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Iterable

from ..catalog.schema.text import EXPANDABLE, IMAGE_REFERENCE
from ..errors import RecipegenError

# Every character some reader treats as a line end or that is invisible: bash ends a comment
# at \n; YAML 1.1, Python and editors also at \r, \x0b, \x0c, \x1c-\x1e, \x85, U+2028, U+2029.
_BREAKING = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})
_EXPAND = re.compile(EXPANDABLE)
_SHELL_SPECIAL = re.compile(r"(['$`])")
_IMAGE = re.compile(IMAGE_REFERENCE)


def one_line(value: object) -> str:
    """The text with every line break, control and format character replaced by a space."""
    return "".join(" " if unicodedata.category(c) in _BREAKING else c for c in str(value))


# --- shell (bash) -----------------------------------------------------------------------------


def shell_word(value: object) -> str:
    """One shell word: single-quoted runs, and a quote, `$` or backtick backslash-escaped between them
    (never split, globbed or expanded; shellcheck sees no expansion in single quotes either)."""
    text = str(value)
    if "\x00" in text:
        raise RecipegenError("refusing to write a NUL character into a shell script", "remove it from the value")
    word = "".join(
        "\\" + part if part in ("'", "$", "`") else f"'{part}'" for part in _SHELL_SPECIAL.split(text) if part
    )
    return word or "''"


def shell_comment(value: object) -> str:
    """Text after `# ` on one line of a shell, YAML or Dockerfile comment: it cannot end the line."""
    return one_line(value)


def shell_expand(value: object) -> str:
    """A double-quoted word whose ${VAR} references the shell expands; anything else is refused."""
    text = str(value)
    if not _EXPAND.fullmatch(text):
        raise RecipegenError(
            f"refusing to write {text!r} into a double-quoted shell string",
            "only letters, digits, '_.:/-' and ${VAR} references may be expanded",
        )
    return f'"{text}"'


# --- Dockerfile -------------------------------------------------------------------------------


def dockerfile_exec(argv: Iterable[object]) -> str:
    """The JSON (exec) form of RUN/ENTRYPOINT: no shell parses it and Docker substitutes nothing."""
    words = [str(word) for word in argv]
    if not words:
        raise RecipegenError("refusing to write an empty command into the Dockerfile", "check the build's source_build")
    return json.dumps(words, ensure_ascii=True)


def docker_image(value: object) -> str:
    """An image reference for FROM or `docker run`; the reference grammar leaves nothing to expand."""
    text = str(value)
    if not _IMAGE.fullmatch(text):
        raise RecipegenError(f"{text!r} is not a docker image reference", "write name[:tag][@digest]")
    return text


# --- YAML (Compose) ---------------------------------------------------------------------------

# What YAML does not allow unescaped (non-printable) or reads as a line break inside a scalar.
_YAML_UNSAFE = re.compile("[^\t\n\r\x20-\x7e\xa0-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]|[\x85\u2028\u2029]")


def _yaml_quoted(text: str) -> str:
    quoted = json.dumps(text, ensure_ascii=False)  # a JSON string is a YAML double-quoted scalar
    return _YAML_UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", quoted)


def yaml_value(value: object) -> str:
    """A double-quoted YAML scalar with `$` doubled, so Compose reads it back unchanged."""
    return _yaml_quoted(str(value)).replace("$", "$$")


def yaml_expand(value: object) -> str:
    """A YAML scalar whose ${VAR} references Compose interpolates (same whitelist as the shell)."""
    shell_expand(value)
    return _yaml_quoted(str(value))


def yaml_key(value: object) -> str:
    """A double-quoted YAML mapping key (Compose does not interpolate keys)."""
    return _yaml_quoted(str(value))


# --- Markdown ---------------------------------------------------------------------------------

_MD_SPECIAL = re.compile(r"([\\`*\[\]<|~])")  # `<` opens HTML and autolinks; a lone `>` is text
_MD_UNDERSCORE = re.compile(r"(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])")
_MD_ENTITY = re.compile(r"&(?=#?[A-Za-z0-9]+;)")
# list items, headings, setext underlines and ordered items start a line; the value may start one
_MD_LINE_START = re.compile(r"^([-+=#>])|^(\d{1,9})([.)])(?=\s|$)")


def md_text(value: object) -> str:
    """Inline Markdown text that renders as the literal characters: no markup, links, HTML or lines."""
    text = _MD_SPECIAL.sub(r"\\\1", one_line(value).strip())
    text = _MD_UNDERSCORE.sub(r"\\_", text)
    text = _MD_ENTITY.sub("&amp;", text)
    return _MD_LINE_START.sub(lambda m: f"\\{m[1]}" if m[1] else f"{m[2]}\\{m[3]}", text)


def md_code(value: object, table: bool = True) -> str:
    """An inline code span holding the value verbatim on one line; in a table `|` is escaped (GFM)."""
    text = one_line(value)
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    if not text:
        return ""
    # CommonMark strips one space from each end when both are spaces, and needs them around backticks
    pad = " " if text.strip(" ") and (text[0] in "` " or text[-1] in "` ") else ""
    if table:
        text = text.replace("|", "\\|")
    return f"{fence}{pad}{text}{pad}{fence}"


def md_pre(value: object) -> str:
    """One line inside a fenced code block: indented when it would otherwise close the fence."""
    text = one_line(value)
    return "    " + text if re.match(r"\s{0,3}(`{3,}|~{3,})", text) else text


FILTERS = {
    "sh": shell_word,
    "comment": shell_comment,
    "sh_expand": shell_expand,
    "dockerfile_exec": dockerfile_exec,
    "docker_image": docker_image,
    "yq": yaml_value,
    "yq_expand": yaml_expand,
    "yaml_key": yaml_key,
    "md": md_text,
    "md_code": md_code,
    "md_pre": md_pre,
}
