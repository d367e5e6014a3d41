"""sync="auto": the synchronisation model a training framework really runs.

libbrs plans a step for one of two models (docs/design.md, section 3; the library's option
``sync``). "micro_step": the ranks wait for each other at every micro-step (FSDP's and ZeRO-3's
parameter all-gathers, ZeRO-2's gradient reduction, DDP all-reducing every backward), so a step
lasts the sum over micro-steps of the slowest rank. "step": the ranks meet once per optimizer
step (DDP accumulating under ``no_sync``, ZeRO-0/1), so a step lasts the slowest rank's sum of
its micro-steps. Each integration names the model its framework runs and why; ``choose`` keeps
the library's default where the two models are the same (one rank or one micro-step: the plans
are identical, and the fingerprint stays a plain sampler's), and ``resolve`` stores the choice
in a sampler whose ``sync`` the user left unset or "auto" (BatchRebalanceSampler.fill_unset_sync),
logged once on the "brs" logger.
"""

import logging
from typing import NamedTuple, Optional

logger = logging.getLogger("brs")

STEP, MICRO_STEP = "step", "micro_step"  # the library's names of its BRS_OPT_SYNC values


class Choice(NamedTuple):
    sync: Optional[str]  # "step" or "micro_step"; None: the library's default
    reason: str


def choose(model, why, dp_size, grad_accum):
    """The Choice for a framework that runs sync ``model`` (None: unknown), for ``why``."""
    if dp_size == 1 or grad_accum == 1:
        return Choice(None, f"{dp_size} data-parallel rank(s) x {grad_accum} micro-step(s): "
                            "both sync models plan alike, so the library's default is kept")
    if model is None:
        return Choice(None, f"{why}; the library's default is kept (pass sync='step' or "
                            "sync='micro_step' to say how the loop synchronises)")
    return Choice(model, why)


def explicit_sync(sampler):
    """The sync the user gave the sampler, or None when it is unset or "auto"."""
    return sampler.sync if sampler.was_given("sync") else None


def resolve(sampler, framework, model, why):
    """Sets ``sampler``'s sync from the job unless the user gave one; returns the Choice."""
    given = explicit_sync(sampler)
    if given is not None:
        return Choice(given, "given")
    choice = choose(model, why, sampler.dp_size, sampler.grad_accum)
    if choice.sync is not None:
        sampler.fill_unset_sync(choice.sync)
    log(framework, choice, sampler)
    return choice


def log(framework, choice, sampler):
    """Logs ``choice`` once it is in ``sampler`` (whose sync reads back the library's value)."""
    logger.info("brs: sync='auto' under %s: planning for sync=%r: %s", framework, sampler.sync,
                choice.reason)


# -- what each framework runs ------------------------------------------------------------------

FSDP_WHY = ("FSDP all-gathers the parameters in every micro-step's forward and backward "
            "(no_sync only defers the gradient reduction)")

# accelerate's DistributedTypes that wrap the model in torch DDP (Accelerator.prepare_model:
# multi_device, or MULTI_CPU); XLA and MEGATRON_LM synchronise their own way.
_DDP_TYPES = ("MULTI_CPU", "MULTI_GPU", "MULTI_MLU", "MULTI_SDAA", "MULTI_MUSA", "MULTI_NPU",
              "MULTI_XPU", "MULTI_HPU", "MULTI_NEURON")


def accelerate_model(accelerator, deferral):
    """(model, why) of a loop on ``accelerator``.

    ``deferral``: how the loop keeps DDP from all-reducing before a step's last micro-step
    (None: brs cannot see whether it does). Under DDP, ``sync_each_batch=True`` (accelerate's
    GradientAccumulationPlugin) all-reduces every backward whatever the loop does.
    """
    kind = _distributed_type(accelerator)
    if kind == "DEEPSPEED":
        return deepspeed_model(accelerator.state.deepspeed_plugin.zero_stage)
    if kind == "FSDP":
        return MICRO_STEP, FSDP_WHY
    if kind not in _DDP_TYPES or _tensor_parallel(accelerator):
        return None, f"brs does not know how accelerate's {kind} setup synchronises"
    if accelerator.gradient_state.plugin_kwargs.get("sync_each_batch", False):
        return MICRO_STEP, "DDP with sync_each_batch=True all-reduces the gradients every backward"
    if deferral is None:
        return None, ("DDP, and the loop accumulates by hand: brs cannot see whether it runs "
                      "micro-steps under no_sync")
    return STEP, f"DDP: {deferral}, so the gradients are all-reduced once per optimizer step"


def deepspeed_model(zero_stage):
    """(model, why) of DeepSpeed's engine, which accumulates by itself.

    DeepSpeedEngine.allreduce_gradients: ZeRO stage 2 reduces the gradients at every micro-step
    ("communicates during non gradient accumulation boundaries as well"), stage 3 also gathers
    the parameters each forward; stages 0 and 1 communicate only at the accumulation boundary.
    """
    if zero_stage >= 2:
        return MICRO_STEP, f"DeepSpeed ZeRO-{zero_stage} communicates at every micro-step"
    return STEP, (f"DeepSpeed ZeRO-{zero_stage} reduces the gradients only at the gradient "
                  "accumulation boundary")


def _distributed_type(accelerator):
    kind = accelerator.distributed_type
    return getattr(kind, "value", str(kind))


def _tensor_parallel(accelerator):
    # accelerate does not wrap a tensor-parallel model in DDP (Accelerator.prepare_model).
    config = getattr(accelerator, "parallelism_config", None)
    return bool(config is not None and getattr(config, "tp_enabled", False))
