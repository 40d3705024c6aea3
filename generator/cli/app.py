"""The command line. Thin: parse options, call the library, print. Heavy modules load per command.

Exit codes: 0 ok · 1 a check failed (preflight, verify, up), or the output pipe closed early
(`| head`) · 2 bad input (unknown name, invalid catalog, bad value, bad usage) · 3 blocked (no path
runs the request) · 4 the output folder exists with different content or is not recipegen's (use
--force / another --out) · 70 internal error (a bug: rerun with RECIPEGEN_DEBUG=1 for the traceback
and report it) · 130 interrupted (Ctrl-C).
"""

import copy
import functools
import os
import sys
from typing import Any

import typer
import typer.main

from ..errors import ExitCode, RecipegenError
from . import catalog, diagnose, history, inspect, kube, lint, machine, plan
from . import values as cli_values
from .examples import epilog

app = typer.Typer(
    add_completion=False,
    no_args_is_help=False,
    invoke_without_command=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    help="Can this open LLM run on these GPUs — why or why not, and exactly how.",
)
# The root command and `generate` are one function: `recipegen --gpu … --model …` needs no subcommand.
app.callback(epilog=epilog("recipegen"))(plan.generate)
for group in (plan, catalog, diagnose, history, inspect, lint, machine, kube):  # the order of `--help`
    app.registered_commands.extend(group.commands.registered_commands)
for info in app.registered_commands:  # each command's --help ends with its examples
    info.epilog = epilog(typer.main.get_command_name(info.name or info.callback.__name__))  # type: ignore[union-attr]


def main() -> None:
    """Run the CLI: every outcome is an exit code and, on failure, one line per problem on stderr."""
    # typer may bundle its own copy of click: take the exception classes from the one it uses
    click = sys.modules[typer.BadParameter.__module__]
    args = sys.argv[1:]
    sub = args[0] if args and args[0] in _subcommands() else None
    try:
        if sub is None:
            code = _command(None)(args=args, prog_name="recipegen", standalone_mode=False)
        else:  # the subcommand alone (see _command)
            code = _command(sub)(args=args[1:], prog_name=f"recipegen {sub}", standalone_mode=False)
    except RecipegenError as exc:
        _fail([cli_values.printable(line, 2000) for line in exc.lines()], exc.exit_code)
    except typer.Abort:  # click's name for Ctrl-C (KeyboardInterrupt) and EOF at a prompt
        sys.exit(ExitCode.INTERRUPTED)
    except click.ClickException as exc:
        where = exc.ctx.command_path if isinstance(exc, click.UsageError) and exc.ctx else "recipegen"
        message = " ".join(exc.format_message().split())
        _fail([f"error: {cli_values.printable(message)} — see `{where} --help`"], exc.exit_code)
    except KeyboardInterrupt:
        sys.exit(ExitCode.INTERRUPTED)
    except BrokenPipeError:  # the reader went away (`recipegen list models | head -1`), as click reports it
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(ExitCode.PIPE_CLOSED)
    except Exception as exc:
        if os.environ.get("RECIPEGEN_DEBUG"):
            import traceback

            traceback.print_exc()
        detail = cli_values.printable(f"{type(exc).__name__}: {exc}", 300)
        _fail([f"internal error: {detail} — {INTERNAL_HINT}"], ExitCode.INTERNAL)
    sys.exit(code if isinstance(code, int) else ExitCode.OK)


@functools.cache
def _subcommands() -> dict[str, Any]:
    return {
        typer.main.get_command_name(c.name or c.callback.__name__): c for c in app.registered_commands if c.callback
    }


@functools.cache
def _command(subcommand: str | None) -> Any:
    """The click command of `app` (None), or of one subcommand alone, built once per process.

    A command line that starts with a subcommand's name runs that command without the group: the group
    would build all the subcommands (a tenth of a start-up) and coerce each of the root's own options
    through a pydantic TypeAdapter only to find them unset, and nothing but the named command can run.
    Its name is `recipegen SUBCOMMAND` either way, so usage errors and --help read the same."""
    if subcommand is None:
        return typer.main.get_command(app)
    only = copy.copy(app)
    only.registered_callback = None
    only.registered_commands = [_subcommands()[subcommand]]
    return typer.main.get_command(only)


INTERNAL_HINT = "a bug in recipegen; please report it with the output of the same command run with RECIPEGEN_DEBUG=1"


def _fail(lines: list[str], code: int) -> None:
    for line in lines:
        print(line, file=sys.stderr)
    sys.exit(code)


if __name__ == "__main__":  # pragma: no cover
    main()
