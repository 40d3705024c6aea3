"""One error root for everything recipegen reports to a user, with documented exit codes.

Every error carries a message that names what was wrong and a next step; the CLI prints it on
stderr as one line (or one line per problem for catalog errors) and exits with ``exit_code``.
"""

from __future__ import annotations

from .frozen import frozen


class ExitCode:
    OK = 0
    PIPE_CLOSED = 1  # stdout's reader went away (`recipegen list models | head -1`); click's own code
    CHECKS_FAILED = 1  # preflight blocks, verify failed, or the engine did not come up healthy
    USAGE = 2  # bad input: unknown name, malformed catalog, bad option value
    BLOCKED = 3  # the request resolved, but no path can run it
    CONFLICT = 4  # the output folder exists with different content (use --force) or is not recipegen's
    INTERNAL = 70  # a bug: an unexpected exception, or a plan recipegen must not hand out (nothing written)
    INTERRUPTED = 130  # Ctrl-C (128 + SIGINT, as shells report it)


class RecipegenError(Exception):
    """Root of every error shown to a user."""

    exit_code: int = ExitCode.USAGE

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def lines(self) -> list[str]:
        text = self.message if self.hint is None else f"{self.message} — {self.hint}"
        return [f"error: {text}"]


@frozen
class CatalogProblem:
    """One validation problem, located as precisely as the YAML allows."""

    path: str
    line: int | None
    field: str
    message: str

    def render(self) -> str:
        where = f"{self.path}:{self.line}" if self.line is not None else self.path
        return f"{where}: {self.field}: {self.message}"


class CatalogError(RecipegenError):
    """The catalog (built-in or a user's recipe directory) failed validation."""

    def __init__(self, problems: list[CatalogProblem]) -> None:
        super().__init__(f"{len(problems)} problem(s) in the recipe catalog")
        self.problems = problems

    def lines(self) -> list[str]:
        return [p.render() for p in self.problems]


# The `recipegen list` table that shows each kind of name (builds are rows of `list engines`,
# variants a column of `list models`).
LISTED_IN = {"builds": "engines", "variants": "models"}


class UnknownNameError(RecipegenError):
    """A --model/--gpu/--engine/... value that names nothing in the catalog."""

    def __init__(self, kind: str, value: str, suggestions: list[str], option: str) -> None:
        listing = LISTED_IN.get(kind, kind)
        hint = (
            f"did you mean {', '.join(suggestions)}?"
            if suggestions
            else f"run `recipegen list {listing}` to see the known names"
        )
        super().__init__(f"unknown {kind[:-1] if kind.endswith('s') else kind} {value!r} for {option}", hint)


class BlockedError(RecipegenError):
    """Raised by `generate` when nothing can run the request; the explanation is printed first."""

    exit_code = ExitCode.BLOCKED


class OutputConflictError(RecipegenError):
    exit_code = ExitCode.CONFLICT


class ChecksFailedError(RecipegenError):
    """A preflight check blocks, a verify check failed, or the engine exited / never became healthy."""

    exit_code = ExitCode.CHECKS_FAILED


class InternalError(RecipegenError):
    """recipegen caught its own bug before it reached the user (e.g. a plan its engine would refuse)."""

    exit_code = ExitCode.INTERNAL
