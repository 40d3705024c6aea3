"""`python -m recipegen` runs the CLI."""

from .cli import main

main()
