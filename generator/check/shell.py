"""Shell text read without running a shell: lines joined at their continuations, comments dropped,
`NAME=value` / `export` / `local` assignments and bash arrays kept, `${VAR}`, `${VAR:-default}` and
`${VAR:+text}` expanded, and each command split into words at `;`, `&` and `|`.
"""

from __future__ import annotations

import re
import shlex

from ..errors import RecipegenError

MAX_EXPANSION = 256 * 1024  # characters all of one word's variable expansions may produce
ASSIGN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-=])((?:[^{}]|\{[^{}]*\})*))?\}|\$([A-Za-z_][A-Za-z0-9_]*)")
_ALT = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*):\+((?:[^{}]|\{[^{}]*\})*)\}")
_ARRAY_USE = re.compile(r"^\$\{([A-Za-z_][A-Za-z0-9_]*)\[[@*]\]\}$")


class Shell:
    """Variables and arrays of a script, and the commands in it (tokenised, operators split off)."""

    def __init__(self, text: str) -> None:
        self.vars: dict[str, str] = {}
        self.arrays: dict[str, list[str]] = {}
        self.commands: list[tuple[int, list[str]]] = []
        self._budget = MAX_EXPANSION
        lines = text.replace("\r\n", "\n").split("\n")
        joined: list[tuple[int, str]] = []
        buffer, start = "", 0
        for number, line in enumerate(lines, 1):
            if not buffer:
                start = number
            if line.endswith("\\"):
                buffer += line[:-1] + " "
                continue
            joined.append((start, buffer + line))
            buffer = ""
        if buffer:
            joined.append((start, buffer))
        index = 0
        while index < len(joined):
            number, line = joined[index]
            index += 1
            array = re.match(r"^\s*(?:local\s+|declare\s+-a\s+)?([A-Za-z_]\w*)=\((.*)$", line)
            if array:
                parts, last = [array.group(2)], array.group(2)
                while ")" not in _strip_comment(last) and index < len(joined):  # only the new line: linear
                    last = joined[index][1]
                    parts.append(last)
                    index += 1
                inner = _strip_comment_lines("\n".join(parts)).rsplit(")", 1)[0]
                self.arrays[array.group(1)] = split(inner)
                continue
            words = split(self._alternatives(line))
            if not words:
                continue
            assign = len(words) == 1 or (len(words) == 2 and words[0] in ("export", "local", "readonly"))
            if assign and ASSIGN.match(words[-1]):
                name, _, value = words[-1].partition("=")
                self.vars[name] = value
                continue
            if words[0] == "export":
                words = words[1:]
            self.commands.extend((number, part) for part in _split_operators(words))

    def _alternatives(self, line: str) -> str:
        """${VAR:+text} is text when VAR is set and not empty (its default counts), else nothing."""

        def one(m: re.Match[str]) -> str:
            value = self.expand("${" + m.group(1) + "}")
            return m.group(2) if value and not value.startswith("${") else ""

        return _ALT.sub(one, line)

    def expand(self, word: str, depth: int = 0) -> str:
        """The word with its variables expanded, 8 levels deep at most and MAX_EXPANSION characters in all
        (a variable that doubles itself at every level would otherwise grow exponentially)."""
        if depth == 0:
            self._budget = MAX_EXPANSION
        if depth > 8:
            return word

        def one(m: re.Match[str]) -> str:
            out = _one(m)
            self._budget -= len(out)
            if self._budget < 0:
                raise RecipegenError(
                    f"the script's variables expand to more than {MAX_EXPANSION // 1024} KiB of text",
                    "lint the command itself: recipegen lint -- vllm serve …",
                )
            return out

        def _one(m: re.Match[str]) -> str:
            name = m.group(1) or m.group(4)
            default = m.group(3)
            value = self.vars.get(name)
            if value is not None and ("${" + name) not in value and ("$" + name) not in value:
                return self.expand(value, depth + 1)
            if value is not None:  # NAME="${NAME:-fallback}": the fallback is what runs by default
                inner = _VAR.search(value)
                if inner and inner.group(3) is not None:
                    return self.expand(inner.group(3), depth + 1)
            return self.expand(default, depth + 1) if default is not None else m.group(0)

        return _VAR.sub(one, word)

    def expand_all(self, tokens: list[str]) -> list[str]:
        out: list[str] = []
        first_array = next(iter(self.arrays.values()), [])
        for token in tokens:
            use = _ARRAY_USE.match(token)
            if use and use.group(1) in self.arrays:
                out.extend(self.expand(t) for t in self.arrays[use.group(1)])
            elif token in ("$@", "${@}", "$*"):
                out.extend(self.expand(t) for t in first_array)
            else:
                out.append(self.expand(token))
        return out


def _strip_comment(text: str) -> str:
    return re.sub(r"(^|\s)#.*$", "", text, flags=re.MULTILINE)


def _strip_comment_lines(text: str) -> str:
    return "\n".join(line for line in text.split("\n") if not line.strip().startswith("#"))


def split(text: str) -> list[str]:
    lexer = shlex.shlex(text, posix=True, punctuation_chars=";&|")
    lexer.whitespace_split = True
    lexer.commenters = "#"
    try:
        return list(lexer)
    except ValueError as exc:  # unbalanced quotes
        raise RecipegenError(f"cannot read the shell text: {exc}", "check the quoting of the command") from None


def _split_operators(words: list[str]) -> list[list[str]]:
    parts: list[list[str]] = [[]]
    for word in words:
        if word and set(word) <= set(";&|"):
            parts.append([])
        else:
            parts[-1].append(word)
    return [p for p in parts if p]
