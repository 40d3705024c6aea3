"""The facts: recipe files (hardware, engines and their builds, models, deployments, fingerprints) read as
untrusted input, validated into frozen records, cross-checked, cached, and looked up by the names users type.

Owns: schema/ (the record types and their text grammars), recipe_files (bounded YAML reading), parse and
load (one file, then the whole catalog), cross_check, releases (build files that extend a parent),
parse_cache and cache (the parsed and the validated catalog), index (the Catalog), names and targets (what
users type), kinds, capability (compute capabilities), knobs, vocabulary and argcheck (the engines' flag
vocabularies and a deployment's arguments checked against them), harvest (each release's registry, parsers
and flags read from its own code by scripts/harvest, loaded per release on first use) and harvested_builds
(a build made on demand for a harvested release that has no hand-written file; harvested_kernels turns the
kernel facts read from that release's wheel into its kernels and weight formats); diff_kv (data/diff_kv.yaml:
how each release range runs attention whose V is narrower than its K, read from its own model file);
selector_picks (the attention backend a vLLM release's selector or an SGLang release's resolution, run, picks per
case; data/selector_heads.yaml: where a release's order turns on the heads per GPU, read from its code) and
kv_spelling (whether a release takes a --kv-cache-dtype spelling: the one rule the planner and lint share).

May import: errors, frozen. Nothing here plans, renders or touches the network, Docker or the GPU.
"""
