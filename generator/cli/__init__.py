"""The command line, and the only package that imports typer. app.py builds the app and maps every outcome
to an exit code; options.py holds the options the commands share (commands import it, never app.py);
request.py turns the options into a Request; one module per command group (plan, catalog, diagnose,
history, inspect, lint, machine) parses, calls the library and prints; inprocess.py runs the command line
inside a Python process for the tests and scripts/. The command modules keep their annotations as objects (no
`from __future__ import annotations`): typer reads every command's and option callback's signature on each run,
and a string annotation costs a compile() there (~120 for explain).

May import: every package. Nothing imports cli.
"""
