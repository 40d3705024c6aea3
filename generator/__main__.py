"""`python -m recipegen` runs the CLI."""

from .cli.app import main

main()
