"""Human-readable answers: explain (the decision trace), summary (what `generate` prints), matrix (verdicts
of models × targets), history (verdicts across an engine's releases) and listing (the rows of `recipegen list`).

May import: artifacts, plan, checkpoint, catalog, errors, frozen. Never check: they are siblings.
"""
