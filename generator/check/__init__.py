"""Checking what a user already has: lint (a command against the engine's flag vocabulary and the gates),
its findings, invocation (the engine command found in a shell script, `docker run` line or compose file),
and diagnose (an engine log against the known failure fingerprints).

May import: artifacts, plan, checkpoint, catalog, errors, frozen. Never report: check and report are
siblings.
"""
