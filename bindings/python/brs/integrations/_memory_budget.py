"""max_tokens from the memory the device has, when the user gave no cap.

Without a cap brs's budget is the peak of its least-total split, and a user whose device has
memory to spare would plan tighter than the sampler brs replaces. So an integration that knows
the model derives a cap from a memory budget: on CUDA by default (free memory plus torch's pool,
less a margin: brs.calibration.memory.default_budget), on any device when a budget is given; on
CPU nothing is derived by default, the planner's own default holds there.

From the budget it subtracts what the optimizer step will still allocate (a gradient per
trainable parameter, and AdamW's two fp32 moments: an estimate for other optimizers) and the
memory model's base, and divides by its bytes per padded token of a micro-batch of the longest
samples: the calibrated fit (CostModel.memory: base_bytes, bytes_per_token,
bytes_per_token_length) or the analytic activation bytes of the model's config
(CostModel.from_config). A CUDA calibration fits the caching allocator's reserved bytes (the
live ones times the reserved / allocated overhead it measured over changing shapes), the terms
the budget is in; the optimizer's pending bytes are scaled by the same overhead. The choice is
logged; memory_budget=None turns it off.
"""

import logging

from brs import CostModel
from brs.calibration import memory as _memory

logger = logging.getLogger("brs.integrations")

AUTO = "auto"


def check(name, value):
    """None, "auto", or a size (bytes or e.g. "40GiB"); raises at construction."""
    if value is None or value == AUTO:
        return
    _memory.parse_bytes(value, name)


def derive(memory_budget, model, cost_model, longest):
    """The max_tokens the budget holds, or None (off, CPU by default, or no memory model)."""
    if memory_budget is None:
        return None
    device = _device_of(model)
    if memory_budget == AUTO:
        if device is None or device.type != "cuda":
            return None
        budget, rule = _memory.default_budget(device)
    else:
        budget, rule = _memory.parse_bytes(memory_budget, "memory_budget"), "given"
    base, per_token, source = _memory_model(cost_model, model, longest)
    if per_token is None:
        logger.info("brs: no memory model for this model (%s): max_tokens not derived from the "
                    "%s memory budget; calibrate (brs.calibrate) or pass max_tokens", source, rule)
        return None
    pending = _optimizer_bytes(model) * _reserved_overhead(cost_model, source)
    tokens = int((budget - pending - base) / per_token)
    if tokens < longest:
        message = (f"brs: the memory budget ({budget / 2**30:.2f} GiB, {rule}) less "
                   f"{pending / 2**30:.2f} GiB for gradients and optimizer state holds "
                   f"{max(tokens, 0)} padded tokens by the {source} memory model, less than one "
                   f"sample of the longest length {longest}")
        if memory_budget != AUTO:
            raise ValueError(message + ": raise memory_budget, or set memory_budget=None")
        logger.warning("%s: planning without a cap", message)
        return None
    logger.info("brs: max_tokens=%d from a %.2f GiB memory budget (%s), %.2f GiB of it for "
                "gradients and optimizer state, %.0f bytes per padded token at length %d (%s "
                "memory model); RebalanceOptions(memory_budget=None) turns this off",
                tokens, budget / 2**30, rule, pending / 2**30, per_token, longest, source)
    return tokens


def _reserved_overhead(cost_model, source):
    """The calibration's reserved / allocated bytes (1 without one): live bytes the optimizer
    will allocate take this much more of the pool."""
    if source != "calibrated":
        return 1.0
    return float(cost_model.memory.get("reserved_over_allocated", 1.0))


def _device_of(model):
    try:
        return next(model.parameters()).device
    except (AttributeError, StopIteration, TypeError):
        return None


def _memory_model(cost_model, model, longest):
    """(base bytes, bytes per padded token at `longest`, source) of the cost model, else of the
    model's config; per_token None when neither has one."""
    memory = cost_model.memory if cost_model is not None else {}
    if "bytes_per_token" in memory:
        per_token = memory["bytes_per_token"] + memory.get("bytes_per_token_length", 0) * longest
        return memory.get("base_bytes", 0.0), per_token, "calibrated"
    if "activation_bytes_per_token" not in memory:
        try:
            memory = CostModel.from_config(getattr(model, "config", None)).memory
        except (ValueError, TypeError, AttributeError, ZeroDivisionError):
            return 0.0, None, "its config describes no decoder"
    return 0.0, memory["activation_bytes_per_token"], "analytic"


def _optimizer_bytes(model):
    """Gradients (the parameter's dtype) and AdamW's two fp32 moments per trainable parameter."""
    try:
        params = [p for p in model.parameters() if p.requires_grad]
    except (AttributeError, TypeError):
        return 0
    return sum(p.numel() * (p.element_size() + 8) for p in params)
