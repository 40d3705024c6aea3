"""The gates that read no layout: the build loads the checkpoint's architecture and weight format, has a
kernel for every need on this GPU, and has an image (or a source build) compiled for it. Predicates over
catalog facts, each returning a reason and sources; gates.py registers and runs them."""

from __future__ import annotations

import re
from typing import Literal

from ..catalog import diff_kv
from ..catalog.harvest import (
    compiled_source,
    registers,
    registry_source,
    removed_in,
    rope_refusal,
    rope_source,
    selector_source,
)
from ..catalog.schema import Deployment, Engine, Hardware, Kernel, Model, Source, Variant
from ..catalog.schema.common import KvDtype
from ..catalog.schema.engine import Build
from ..catalog.schema.model import Need
from ..catalog.selector_picks import SHAPES, Pick, heads_sources, is_pick, pick, reads_architecture, reads_heads
from ..frozen import evolve
from .types import Details, GateResult, KernelMiss

ATTENTION_OPS = (
    "attention.gqa",
    "attention.mla",
    "attention.sparse_mla",
    "attention.sparse_mla_nope",
    "attention.dsv4",
)


def srcs(*groups: list[Source] | tuple[Source, ...]) -> tuple[Source, ...]:
    """The sources a gate result cites: each once, in the order first seen."""
    # catalog objects are shared and immutable, so identity is enough to drop repeats (and cheap)
    seen: dict[int, Source] = {}
    for group in groups:
        for source in group:
            seen.setdefault(id(source), source)
    return tuple(seen.values())


def architecture(model: Model, variant: Variant, engine: Engine, build: Build) -> GateResult:
    if engine.loads == "gguf":
        if variant.quant != "gguf":
            return GateResult(
                "architecture",
                "fail",
                f"{engine.name} loads GGUF files; variant {variant.id} is {variant.quant} safetensors",
            )
        arch = model.gguf_arch
        if arch is None:
            return GateResult(
                "architecture", "unknown", f"the catalog does not know {model.name}'s GGUF architecture name"
            )
        label = f"GGUF architecture {arch!r}"
    else:
        if variant.quant == "gguf":
            return GateResult(
                "architecture",
                "fail",
                f"{engine.name} serves Hugging Face checkpoints here; {variant.id} is a GGUF file",
            )
        arch = model.architecture
        label = arch
    details = Details(operation=arch)
    sources = srcs(registry_source(build), build.sources)
    if registers(build, arch):
        if engine.loads == "gguf" and variant.file is None:  # llama-server --model takes one file
            return GateResult(  # unknown, not fail: the repo may well hold a quantization that fits
                "architecture",
                "unknown",
                f"{build.id} loads {label}, but the catalog names no file of {variant.repo} (variant {variant.id}) "
                f"and llama-server loads one: download one quantization (`hf download {variant.repo} --include "
                "'*Q4_K_M*' --local-dir DIR`, a quant the repo lists) and plan it with --model DIR",
                sources,
                details,
            )
        rope = model.rope_scaling if engine.loads != "gguf" else None
        refusal = rope_refusal(build, rope.type, tuple(rope.keys)) if rope is not None else None
        if rope is not None and refusal is not None:
            why = f"{build.id} loads {label}, but {model.name}'s rope_scaling is {rope.type!r}: {refusal}"
            return GateResult("architecture", "fail", why, srcs(rope_source(build), rope.sources), details)
        return GateResult("architecture", "pass", f"{build.id} loads {label}", sources, details)
    dropped = removed_in(build, arch)
    if dropped is not None:  # the release's own registry says when it stopped loading the class
        label += f" (its registry: supported until {dropped}, not since)"
    return GateResult("architecture", "fail", f"{build.id} does not load {label}", sources, details)


def weight_format(model: Model, variant: Variant, build: Build, hw: Hardware) -> GateResult:
    cc = hw.compute_capability
    base = Details(capability=cc.sm, operation=variant.quant)

    def result(outcome: Literal["pass", "fail"], reason: str, sources: tuple[Source, ...]) -> GateResult:
        return GateResult("weight-format", outcome, reason, sources, base)

    if variant.min_capability is not None and cc < variant.min_capability:
        reason = f"{variant.id} needs {variant.min_capability.sm}+: {variant.min_capability_reason}"
        return result("fail", reason, srcs(variant.sources))
    if variant.only_builds is not None and build.id not in variant.only_builds:
        reason = f"{variant.id} loads only in {', '.join(variant.only_builds)}: {variant.only_builds_reason}"
        return result("fail", reason, srcs(variant.sources))
    fmt = next((w for w in build.weight_formats if w.quant == variant.quant), None)
    if fmt is None:
        # a format the release names only to say why it refuses it (native none, no fallback) is not one it loads
        known = ", ".join(w.quant for w in build.weight_formats if w.native is not None or w.fallbacks)
        return result("fail", f"{build.id} has no {variant.quant} loader (it loads {known})", srcs(build.sources))
    if fmt.unverified:
        reason = (
            f"{build.id}'s {variant.quant} loader is an unverified fact "
            f"({'; '.join(s.note or s.url for s in fmt.sources)})"
        )
        return GateResult("weight-format", "unknown", reason, srcs(fmt.sources), base)
    if fmt.native is not None and cc in fmt.native:
        named = next((k for k in fmt.native_kernels if cc in k.sm), None)
        if named is None:
            return result("pass", f"{variant.quant} runs on native kernels on {cc.sm}", srcs(fmt.sources))
        reason = f"{variant.quant} runs natively on {cc.sm}: {named.kernel}"
        reason += f" ({named.note})" if named.note else ""
        details = evolve(base, kernels=(("weights." + variant.quant, named.kernel),))
        return GateResult("weight-format", "pass", reason, srcs(named.sources, fmt.sources), details)
    for fallback in fmt.fallbacks:
        if cc in fallback.sm:
            if fallback.dense_only and model.moe is not None:
                reason = (
                    f"{variant.quant} on {cc.sm} only has the {fallback.kernel} fallback for dense layers; "
                    "the MoE experts have no kernel"
                )
                return result("fail", reason, srcs(fallback.sources, fmt.sources))
            if fallback.ahead_of:
                reason = (
                    f"{variant.quant} on {cc.sm}: {build.id} runs it through {fallback.kernel} ({fallback.cost}),"
                    f" which its kernel order lists ahead of {fallback.ahead_of}, a native kernel that also supports"
                    f" {cc.sm}"
                )
            else:
                reason = (
                    f"{variant.quant} has no native kernel on {cc.sm}; runs through {fallback.kernel} ({fallback.cost})"
                )
            chosen = (("weights." + variant.quant, fallback.kernel),)
            details = evolve(
                base,
                kernels=chosen,
                via_fallback=True,
                weight_only_fallback=fallback.weight_only,
                args=tuple(fallback.args),
            )
            if fallback.unverified:
                reason += f", an unverified fact ({'; '.join(s.note or s.url for s in fallback.sources)})"
                return GateResult("weight-format", "unknown", reason, srcs(fallback.sources, fmt.sources), details)
            return GateResult("weight-format", "pass", reason, srcs(fallback.sources, fmt.sources), details)
    native = str(fmt.native) if fmt.native else "none"
    fallbacks = "; ".join(f"{f.kernel} on {f.sm}" for f in fmt.fallbacks) or "none"
    why = f": {fmt.refused}" if fmt.refused else ""
    reason = f"no {variant.quant} kernel for {cc.sm} in {build.id}{why} (native: {native}; fallbacks: {fallbacks})"
    return result("fail", reason, srcs(fmt.sources))


def _kernel_misfit(kernel: Kernel, need: Need, model: Model, hw: Hardware, kv: tuple[KvDtype, ...]) -> list[str]:
    """Why this kernel cannot serve the need on this GPU (empty: it can)."""
    reasons: list[str] = []
    cc = hw.compute_capability
    if cc not in kernel.sm:
        reasons.append(f"needs {kernel.sm}")
    if kernel.head_sizes is not None and need.head_size is not None and need.head_size not in kernel.head_sizes:
        reasons.append(f"head size {need.head_size} not in {kernel.head_sizes}")
    if (
        kernel.qk_nope_head_dims is not None
        and need.qk_nope_head_dim is not None
        and need.qk_nope_head_dim not in kernel.qk_nope_head_dims
    ):
        reasons.append(f"qk_nope_head_dim {need.qk_nope_head_dim} not in {kernel.qk_nope_head_dims}")
    if kernel.index_topks is not None and need.index_topk is not None and need.index_topk not in kernel.index_topks:
        reasons.append(f"index_topk {need.index_topk} not in {kernel.index_topks}")
    if kernel.architectures is not None and model.architecture not in kernel.architectures:
        reasons.append(f"limited to {', '.join(kernel.architectures)}")
    if kernel.smem_bytes is not None and kernel.smem_bytes > hw.smem_per_block_optin:
        reasons.append(
            f"needs {kernel.smem_bytes:,} B shared memory per block, {hw.name} has {hw.smem_per_block_optin:,} B"
        )
    if kv and kernel.kv_dtypes is not None and not set(kv) & set(kernel.kv_dtypes):
        reasons.append(f"KV cache {'/'.join(kv)} not accepted ({', '.join(kernel.kv_dtypes)})")
    return reasons


def _release_pick(
    build: Build,
    need: Need,
    capability: int,
    valid: list[Kernel],
    kv: tuple[KvDtype, ...],
    gqa_head: int | None,
    heads_per_rank: int | None,
    architecture: str,
) -> tuple[list[Kernel], KvDtype | None, Pick]:
    """The kernels that fit, the one the release's own selector (run) picks for this need first, and the KV dtype it
    was asked with when the request fixes none: the catalog's preferred dtype (its first kernel's first), so the
    plan names what the release runs with the --kv-cache-dtype the plan writes; and how the pick was found."""
    lead = valid[0].kv_dtypes[0] if not kv and valid[0].kv_dtypes else None
    asked = kv or ((lead,) if lead is not None else ())
    found = pick(
        build,
        need.op,
        capability,
        need.head_size if need.head_size is not None else gqa_head,
        need.qk_nope_head_dim,
        asked,
        heads_per_rank,
        architecture,
    )
    first = next(
        (
            k
            for k in valid
            if found.backend is not None
            and is_pick(k.name, found.backend)
            and (lead is None or k.kv_dtypes is None or lead in k.kv_dtypes)
        ),
        None,
    )
    if first is None or first is valid[0]:
        return valid, lead, found
    return [first, *(k for k in valid if k is not first)], lead, found


def backend_name(kernel_name: str) -> str:
    """The engine's own name for a kernel (what --attention-backend takes): the catalog name's first word."""
    return kernel_name.split(" ", 1)[0]


def kernels(
    model: Model,
    build: Build,
    hw: Hardware,
    kv: tuple[KvDtype, ...],
    forced: str | None = None,
    recipe: Deployment | None = None,
    engine: str | None = None,
    heads_per_rank: int | None = None,
) -> GateResult:
    """Every need must be met by some kernel of the build on this GPU: the one the release's own selector picks
    there where it was run (selector_picks.py), else the first valid in the build's order.

    `forced`: an attention backend the user pinned (by the engine's name); only it may serve attention.
    `recipe`: a curated recipe of this very path; its own sources are the run report that vouches for
    kernel facts the catalog could not verify (elsewhere such a kernel leaves the gate unknown).
    `engine`: the engine's id, for how its release runs attention with V narrower than K (diff_kv).
    `heads_per_rank`: the attention heads each GPU holds, where the release's pick turns on it (sparse MLA)."""
    cc = hw.compute_capability
    gqa_head = next((n.head_size for n in model.needs if n.op == "attention.gqa"), None)
    chosen: list[tuple[str, str]] = []
    failures: list[str] = []
    open_needs: list[str] = []
    vouches: list[str] = []
    orders: list[str] = []  # needs whose kernel is the catalog's order where the release's pick was not read
    misses: list[KernelMiss] = []
    sources: list[Source] = []
    kv_options: list[KvDtype] | None = None
    for need in model.needs:
        candidates = [k for k in build.kernels if k.provides == need.op]
        if forced is not None and need.op in ATTENTION_OPS:
            pinned = [k for k in candidates if backend_name(k.name).lower() == forced.lower() or k.model_selected]
            if not pinned:
                offers = sorted({k.provides for k in build.kernels if backend_name(k.name).lower() == forced.lower()})
                what = f"provides {', '.join(offers)}" if offers else f"is not an attention backend of {build.id}"
                have = ", ".join(dict.fromkeys(backend_name(k.name) for k in candidates)) or "none"
                failures.append(f"{forced} {what}; {model.name} needs {need.op} ({need.why}); {build.id} has: {have}")
                misses.append(KernelMiss(need.op, need.why, ((forced, (what,)),)))
                continue
            candidates = pinned
        if not candidates:
            failures.append(f"{need.op} ({need.why}): {build.id} has no such kernel at all")
            misses.append(KernelMiss(need.op, need.why, ()))
            continue
        # with a fixed KV dtype, a kernel that rejects it does not count
        fixed = kv if need.op in ATTENTION_OPS else ()
        verdicts = [(k, _kernel_misfit(k, need, model, hw, fixed)) for k in candidates]
        fits = [k for k, reasons in verdicts if not reasons]
        # a kernel known only from unverified sources cannot carry a verdict: it leaves the need open
        vouched = recipe is not None and bool(recipe.sources) and not all(x.unverified for x in recipe.sources)
        valid = [k for k in fits if vouched or not k.unverified]
        if fits and not valid:
            open_needs.append(
                f"{need.op} ({need.why}): only {', '.join(k.name for k in fits)} of {build.id} would serve it on "
                f"{cc.sm}, and that kernel fact is unverified "
                f"({'; '.join(s.note or s.url for k in fits for s in k.sources)})"
            )
            for k in fits:
                sources.extend(k.sources)
            continue
        if need.head_size_v is not None and need.op == "attention.gqa" and not vouched:
            # V narrower than K: the harvested selector cases state one head size for both, so how the release
            # runs such a layer is read from its own model file (data/diff_kv.yaml)
            rule = diff_kv.rule(engine or "", build)
            if rule is not None and rule.mode == "padded":
                pass  # V is padded to K's width: the selector's kernels at K's head size decide, as for any layer
            elif rule is not None and (rule.mode == "backends" or (rule.mode == "server" and rule.backends)):
                served = diff_kv.served(rule, build, cc, forced)
                if served is not None and not (kv and not set(kv) & set(served.kv_dtypes)):
                    chosen.append((need.op, served.backend))
                    sources.extend(rule.sources)
                    takes = [d for d in served.kv_dtypes if not kv or d in kv]
                    kv_options = takes if kv_options is None else [d for d in kv_options if d in takes]
                    continue
                if forced is not None and forced.lower() in (r.lower() for r in rule.refuses):
                    failures.append(
                        f"{forced} cannot serve {need.op} ({need.why}): in {build.id}, {rule.decides}, and {forced} "
                        "holds K and V at one width"
                    )
                    misses.append(KernelMiss(need.op, need.why, ((forced, ("one width for K and V",)),)))
                    sources.extend(rule.sources)
                    continue
                where = rule.elsewhere or "no backend it names runs there"
                if served is not None:
                    where = f"{served.backend} takes no {'/'.join(kv)} KV cache ({', '.join(served.kv_dtypes)})"
                elif forced is not None and rule.mode == "server":
                    where = f"whether {forced} takes a V narrower than K was not read"
                open_needs.append(
                    f"{need.op} ({need.why}): in {build.id}, {rule.decides}; on {cc.sm}: {where}, "
                    "so whether it runs here is unknown"
                )
                sources.extend(rule.sources)
                continue
            else:
                what = f"in {build.id}, {rule.decides}" if rule is not None else f"{build.id}'s release was not read"
                open_needs.append(
                    f"{need.op} ({need.why}): the harvested kernel facts state no V width apart from K, and {what}; "
                    "which backend runs a V narrower than K there is not read, so whether it runs here is unknown"
                )
                sources.extend(rule.sources if rule is not None else ())
                continue
        lead: KvDtype | None = None
        if len(valid) > 1 and forced is None and need.op in SHAPES:
            before = valid[0]
            valid, lead, found = _release_pick(
                build, need, cc.major * 10 + cc.minor, valid, kv, gqa_head, heads_per_rank, model.architecture
            )
            if valid[0] is not before:  # named from the release's own run: cite it
                sources.extend(selector_source(build))
            if found.rule is not None and found.backend is not None:  # at a head count the run did not ask
                sources.extend(heads_sources(found.rule))
            elif found.unread:
                orders.append(
                    f"{need.op}: the {build.id} run picks by heads per GPU and did not ask {heads_per_rank}, "
                    "so this is the catalog's order"
                )
        if valid:
            chosen.append((need.op, valid[0].name))
            sources.extend(valid[0].sources)
            if valid[0].unverified and recipe is not None:
                vouches.append(
                    f"{valid[0].name} is unverified in the catalog; the {recipe.status} recipe {recipe.id} runs it"
                )
                sources.extend(recipe.sources)
            if need.op in ATTENTION_OPS:
                accepted: list[KvDtype] = []
                for k in valid:
                    for dtype in k.kv_dtypes or []:
                        if dtype not in accepted:
                            accepted.append(dtype)
                if kv:
                    accepted = [d for d in accepted if d in kv]
                elif lead is not None:  # the KV dtype the release's pick was asked with stays the plan's
                    accepted = [lead, *(d for d in accepted if d != lead)]
                kv_options = accepted if kv_options is None else [d for d in kv_options if d in accepted]
            continue
        detail = "; ".join(f"{k.name}: {', '.join(reasons)}" for k, reasons in verdicts)
        failures.append(f"no {need.op} kernel for {cc.sm} ({need.why}) — {detail}")
        misses.append(KernelMiss(need.op, need.why, tuple((k.name, tuple(r)) for k, r in verdicts)))
        for k, _ in verdicts:
            sources.extend(k.sources)
    details = Details(capability=cc.sm, kernels=tuple(chosen), misses=tuple(misses), kv_options=tuple(kv_options or ()))
    if failures:
        return GateResult("kernel", "fail", " | ".join(failures), srcs(sources), evolve(details, kv_options=()))
    if open_needs:
        reason = " | ".join(open_needs)
        return GateResult("kernel", "unknown", reason, srcs(sources), evolve(details, kv_options=()))
    if not model.needs:
        return GateResult("kernel", "unknown", f"the catalog lists no kernel needs for {model.name}", (), details)
    names = ", ".join(f"{name} ({op})" for op, name in chosen)
    vouched_for = f" ({'; '.join([*vouches, *orders])})" if vouches or orders else ""
    return GateResult("kernel", "pass", f"{cc.sm}: {names}{vouched_for}", srcs(sources), details)


def kernel_facts(model: Model, build: Build, hw: Hardware, heads_per_rank: int | None) -> tuple[object, ...]:
    """What `kernels` reads of the model and the GPU where every need is met (a pass): the needs' shapes, not the
    text that says why; the architecture only where a kernel of the build is limited to it or SGLang's pick turns on
    it (every other architecture fares alike); the heads per GPU only where a release's pick may turn on them; the
    GPU's capability and shared memory, not its name. Models and GPUs with equal facts get equal passing verdicts; a
    verdict that is not a pass names the model's needs and the GPU, so it is the model's and the GPU's own."""
    needs = tuple((n.op, n.head_size, n.head_size_v, n.qk_nope_head_dim, n.index_topk) for n in model.needs)
    arch = model.architecture
    limited = reads_architecture(arch) or any(k.architectures and arch in k.architectures for k in build.kernels)
    heads = heads_per_rank if any(reads_heads(n.op) for n in model.needs) else None
    cc = hw.compute_capability
    return needs, arch if limited else None, heads, cc.major, cc.minor, hw.smem_per_block_optin


_SAYS_TARGETS = re.compile(r"cuda_archs|cubin|compiled (?:for|targets)|targets start|only supports sm", re.I)


def _targets_sources(build: Build) -> tuple[Source, ...]:
    """The sources of a build's GPU targets alone: its release's wheel where the harvest read the cubins, else its
    sources that speak of its targets (a wheel read by hand, a start-up check), else all of them."""
    said = tuple(s for s in build.sources if _SAYS_TARGETS.search(s.note or ""))
    return srcs(compiled_source(build), said) or srcs(build.sources)


def platform(build: Build, hw: Hardware) -> GateResult:
    cc = hw.compute_capability
    arch = hw.host_arch[0]
    if build.source_build is None and arch not in build.images:
        have = ", ".join(build.images) or "none"
        return GateResult(
            "platform", "fail", f"{build.id} has no {arch} image (images for: {have})", srcs(build.sources)
        )
    if cc not in build.cuda_archs:
        return GateResult(
            "platform",
            "fail",
            f"{build.id} (CUDA {build.cuda}) is not compiled for {cc.sm} (targets: {build.cuda_archs})",
            _targets_sources(build),
        )
    if build.unverified:
        return GateResult(
            "platform",
            "unknown",
            f"{build.id} is known only from unverified sources ({'; '.join(s.note or s.url for s in build.sources)})",
            srcs(build.sources),
        )
    if build.verified_sm is not None and cc not in build.verified_sm:
        return GateResult(
            "platform",
            "unknown",
            f"{build.id} is only reported working on {build.verified_sm}; {cc.sm} is untested",
            srcs(build.sources),
        )
    where = "built from source" if build.source_build is not None else f"{arch} image"
    driver = f", driver ≥ {build.driver_min}" if build.driver_min else ""
    covers = srcs(compiled_source(build), build.sources)  # the wheel's read targets first, where harvested
    return GateResult("platform", "pass", f"{where}, CUDA {build.cuda} covers {cc.sm}{driver}", covers)
