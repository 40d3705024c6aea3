"""What recipegen writes: the container spec (one value for launch.sh, compose and `up`), rendering through
the one Jinja environment, encoding for each target syntax, the JSON contract (plan.json), the output
folder with its manifest (output), and that folder read back (folder).

May import: plan, catalog, errors, frozen. Writes files only through output.py; never runs Docker.
"""
