"""The pure planner: a request in, ranked plans and reasoned rejections out. No I/O.

Owns: types (Request, Candidate, Plan, Resolution), gates (the six gates, one registry), resolve (gate
every path, rank the survivors), flags and hostflags (engine flags with their reasons), memory, offload,
speed and estimate (what fits and how fast), calibration (published speeds against the estimate),
advice (where else the model runs) and describe (a plan's facts as lines of text).

May import: catalog, errors, frozen. Not checkpoint: a derived model reaches the planner inside the Request.
"""
