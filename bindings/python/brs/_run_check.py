"""The whole run checked before its first step: does max_tokens plan every epoch it trains?

A sampler checks one epoch when it starts (construction, set_epoch): a cap that epoch 0 keeps
may still fail epoch 3, after three epochs of training. A run that knows its epoch count checks
them all up front, with the library's one-pass check per epoch (O(N) each, no plan kept), and
the message names the cap that works for the whole run as well as each failing epoch's.

Packed mode: the library's one-pass check does not cover it (a packed cap is bin packing, which
only planning a step settles), so every step of every epoch is planned here instead; the error
then names the first step that fails and, in the library's message, the least max_tokens with
which that step plans (found by planning), not one for the whole run. The same holds for
max_encoder_tokens on samples with images: a step's patches fit the cap only as planned.
"""

from . import _native as n
from ._handles import NativePlan

# Failing epochs named one by one in a message; the rest are counted.
_SHOWN = 8


def check(sampler, epochs, feasibility, planning_handle):
    """The least max_tokens that plans every step of epochs 0 .. epochs-1 (None in packed mode,
    where only planning settles a cap); raises ValueError naming it when the set cap does not.

    ``feasibility(epoch)`` is the library's one-pass check of the sampler's handle (status,
    least cap, micro-batches needed); ``planning_handle(epoch, step)`` the handle that plans a
    step (the sampler's, or a twin with the cost model before a switch)."""
    cap = sampler.max_tokens
    caps, failing, needed = [], [], 0
    for epoch in range(epochs):
        status, least, micro_batches = feasibility(epoch)
        if status == n.ERR_UNSUPPORTED:
            plan_every_step(sampler, epochs, planning_handle)
            return None
        caps.append(least)
        if status != n.OK:
            failing.append(epoch)
            needed = max(needed, micro_batches)
    if failing:
        raise ValueError(_message(sampler, cap, caps, failing, needed))
    return max(caps)


def _message(sampler, cap, caps, failing, needed):
    run_cap = max(caps)
    shown = ", ".join(f"epoch {epoch} needs {caps[epoch]}" for epoch in failing[:_SHOWN])
    if len(failing) > _SHOWN:
        shown += f" and {len(failing) - _SHOWN} more epochs fail"
    micro_batches = sampler.dp_size * sampler.grad_accum
    advice = [f"Raise max_tokens to {run_cap} (the least that plans every step of epochs 0 .. "
              f"{len(caps) - 1}; per epoch: {_per_epoch(caps)})"]
    # needed is 0 when a sample alone is longer than the cap: more micro-batches cannot help.
    if needed > micro_batches:
        grad_accum = -(-needed // sampler.dp_size)
        advice.append(f"raise grad_accum to {grad_accum} so that dp_size x grad_accum >= "
                      f"{needed}")
    advice.append("or lower per_device_batch_size")
    return (f"max_tokens {cap} cannot plan every epoch of this run ({len(caps)} epochs, "
            f"dp_size x grad_accum = {micro_batches} micro-batches a step): {shown}. "
            + ", ".join(advice))


def _per_epoch(caps):
    if len(caps) <= 2 * _SHOWN:
        return ", ".join(str(value) for value in caps)
    return ", ".join(str(value) for value in caps[:_SHOWN]) + f", ... ({len(caps)} epochs)"


def plan_every_step(sampler, epochs, planning_handle, cap="max_tokens"):
    """Plan every step of epochs 0 .. epochs-1; raises ValueError naming ``cap`` (the option
    only planning settles) and the first step that fails."""
    plan, steps = NativePlan(), sampler.steps_per_epoch
    what = (f"max_tokens {sampler.max_tokens} (packed)" if cap == "max_tokens"
            else f"max_encoder_tokens {sampler.max_encoder_tokens}")
    for epoch in range(epochs):
        for step in range(steps):
            try:
                plan.compute(planning_handle(epoch, step), epoch, step)
            except ValueError as exc:
                raise ValueError(f"{what} cannot plan all {epochs} epochs of this run: "
                                 f"{exc}") from None
