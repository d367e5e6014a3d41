"""Resuming a sampler state saved with another number of data-parallel ranks (elastic resume).

The sample stream of an epoch depends only on the lengths, the global batch
B = per_device_batch_size x grad_accum x dp_size, the seed and the options (docs/design.md):
how B is split into ranks and micro-steps only decides which rank trains which samples of a
step. So a state saved at an optimizer-step boundary on R ranks resumes on R' ranks at the
same step, provided B is the same; the fingerprints differ (they cover the split), so the
library's stream fingerprint, which leaves the split out, is compared instead. A state saved
before it recorded one ("stream_fingerprint", libbrs 1.3) resumes only with the same split.
"""

import logging

logger = logging.getLogger("brs")

SPLIT = ("dp_size", "per_device_batch_size", "grad_accum")
# The same split under the library's option names, as a state's "options" dict spells them.
_OPTION_NAMES = {"dp_size": "dp_size", "per_device_batch_size": "batch_size",
                 "grad_accum": "grad_accum"}


def split_of(sampler):
    """What state_dict records of the split, so that another split can recognise the stream."""
    return {"dp_size": sampler.dp_size, "per_device_batch_size": sampler.per_device_batch_size,
            "grad_accum": sampler.grad_accum}


def accepts(sampler, state):
    """True when ``state`` is this sampler's stream saved with another split (logged).

    False when it is not, or records no stream fingerprint (saved before libbrs 1.3: only the
    same split resumes it), and the caller reports the fingerprint mismatch; ValueError when it is
    the same stream but cannot be resumed here (another global batch, a position inside a step).
    """
    saved = _saved_split(state)
    current = split_of(sampler)
    if None in saved.values() or saved == current:
        return False
    saved_batch, batch = _global_batch(saved), _global_batch(current)
    if state.get("stream_fingerprint") != sampler.stream_fingerprint:
        return False
    if saved_batch != batch:
        raise ValueError(
            f"cannot resume a state saved with global batch {saved_batch} ({_describe(saved)}) "
            f"with global batch {batch} ({_describe(current)}): keep per_device_batch_size x "
            f"grad_accum x dp_size = {saved_batch}{_grad_accum_hint(saved_batch, current)}")
    if state.get("micro", 0) != 0:
        raise ValueError(
            f"the state was saved inside optimizer step {state.get('step')} (micro-step "
            f"{state.get('micro')}) with {_describe(saved)}: a resume on another number of ranks "
            "starts at an optimizer-step boundary; save the state after an optimizer step")
    logger.warning("brs: resuming a state saved with %s on %s (same global batch %d): "
                   "epoch %s continues at optimizer step %s", _describe(saved),
                   _describe(current), batch, state.get("epoch"), state.get("step"))
    return True


def _saved_split(state):
    """The split a state records: its own keys, else its "options" (library option names)."""
    options = state.get("options") if isinstance(state.get("options"), dict) else {}
    return {key: state.get(key, options.get(_OPTION_NAMES[key])) for key in SPLIT}


def _global_batch(split):
    return split["dp_size"] * split["per_device_batch_size"] * split["grad_accum"]


def _grad_accum_hint(saved_batch, current):
    per_micro_step = current["per_device_batch_size"] * current["dp_size"]
    if saved_batch % per_micro_step:
        return ""
    return f", e.g. grad_accum={saved_batch // per_micro_step}"


def _describe(split):
    return (f"dp_size={split['dp_size']}, per_device_batch_size="
            f"{split['per_device_batch_size']}, grad_accum={split['grad_accum']}")
