"""The pure planner: a request in, ranked plans and reasoned rejections out. No I/O.

Owns: types (Request, Candidate, Plan, Resolution); gates (the six gates, one registry, memoised runs) with
build_gates (the layout-free predicates: architecture, weight format, kernels, platform), layout_gates (memory,
topology) and defects (a build's known faults on a path); candidates (every path at a layout, each gated),
layout_search (which layout to report), ranking (the order of runnable paths, why the first) and resolve (a
ranking made into plans); flags and hostflags (engine flags with their reasons); checkpoint_size, footprint,
memory, offload, steptime, speed, speed_constants and estimate (what fits and how fast: the decode step's
terms, the fitted constants); fit and calibration (those constants fitted on published speeds, cross-validated
by source), advice (where else the model runs) and describe (a plan's facts as lines of text).

May import: catalog, errors, frozen. Not checkpoint: a derived model reaches the planner inside the Request.
"""
