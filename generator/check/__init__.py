"""Checking what a user already has: lint (a command against the engine's flag vocabulary and the gates),
its rules over the command's own flags (flag_rules) and against the named release's harvested flags
(release_flags), its findings and the gate-derived ones (findings), its
text and JSON (lint_output); invocation (the engine command found in a shell script, `docker run` line or
compose file, with shell reading the script); and diagnose (an engine log against the known failure
fingerprints), with what the log says about the engine, build, model and GPU (log_facts) and its text and
JSON (diagnose_output).

May import: artifacts, plan, checkpoint, catalog, errors, frozen. Never report: check and report are
siblings.
"""
