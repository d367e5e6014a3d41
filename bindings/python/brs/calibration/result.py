"""The cost model of the timed rows: time fitted as c0 + a*bs*L + b*bs*L^2 gives alpha and the
intercept, the peaks fitted the same way give max_tokens for the budget."""

from . import extension as _extension
from ..cost_model import CostModel, from_seconds

#: A budget that holds more padded tokens than this by the memory fit caps nothing.
MAX_TOKENS_CAP = 2**53


def cost_model(rows, data, budget, budget_rule, memory_method, name, device, timing,
               reserved=None):
    """The calibrated CostModel of the rows; ValueError when the time did not grow per token.

    ``reserved`` (CUDA: PeakProbe.reserved_record) turns the fitted allocated peaks into the
    caching allocator's reserved bytes before the cap is derived."""
    from . import fit as _fit

    bs = [r["batch_size"] for r in rows]
    length = [r["length"] for r in rows]
    fit = _fit.fit_timings(rows)  # the fastest repeats, or the median ones where more consistent
    timing = dict(timing, estimator=fit["estimator"], estimator_residuals=fit["residuals"])
    a = fit["c1"]  # the seconds of one padded token's linear work
    for i in fit["outliers"]:
        rows[i]["outlier"] = True  # left out of the time fit (see fit.fit_three_terms)
    if a <= 0:
        ratio, low, high = _extension.growth(rows)
        raise ValueError(f"calibrate: the fit found no time per padded token (a = 0): the time "
                         f"grew {ratio:.2f}x from {low} to {high} padded tokens, so the device "
                         "is launch-bound (or the timings too noisy) over this grid; give larger "
                         "batch_sizes or seq_lens (unset batch_sizes extends the grid itself)")
    memory, max_tokens = _memory_fit(rows, bs, length, int(data.max()), budget, budget_rule,
                                     memory_method, reserved or {})
    alpha, intercept, seconds_per_unit = from_seconds((fit["c0"], fit["c1"], fit["c2"]))
    return CostModel(alpha, intercept, max_tokens, r2=fit["r2"], worst_residual=fit["worst"],
                     source="calibrated", model=name, device=_device_name(device),
                     seconds_per_unit=seconds_per_unit, memory=memory, timings=rows,
                     timing=timing, first_shape_seconds=first_shape_seconds(rows))


def first_shape_seconds(rows):
    """The median over the shapes whose first run was timed of (first run - fastest warm run),
    at least 0; 0 when no first run was timed."""
    extra = sorted(r["first_seconds"] - r["seconds"] for r in rows
                   if r.get("first_seconds") is not None)
    if not extra:
        return 0.0
    middle = len(extra) // 2
    median = extra[middle] if len(extra) % 2 else (extra[middle - 1] + extra[middle]) / 2
    return max(0.0, median)


def _memory_fit(rows, bs, length, longest, budget, budget_rule, method, reserved):
    from . import fit as _fit

    peaks = [r["peak_bytes"] for r in rows]
    info = {"method": method, "budget_bytes": budget, "budget_rule": budget_rule,
            "longest_length": longest, **reserved}
    if any(p is None for p in peaks) or budget is None:
        info["note"] = "peak memory not measurable here: max_tokens left unset"
        return info, None
    scale = reserved.get("reserved_over_allocated", 1.0)
    fit = _fit.fit_three_terms(bs, length, [max(p * scale, 1) for p in peaks], relative=False)
    m0, m1, m2 = fit["c0"], fit["c1"], fit["c2"]
    info.update(base_bytes=m0, bytes_per_token=m1, bytes_per_token_length=m2, r2=fit["r2"],
                worst_residual=fit["worst"])
    per_token = m1 + m2 * longest  # a micro-batch of the longest samples is the worst case
    if per_token <= 0:
        info["note"] = "peak memory did not grow with the shapes: max_tokens left unset"
        return info, None
    tokens = (budget - m0) / per_token
    if tokens > MAX_TOKENS_CAP:  # peaks flat to the byte (a model allocating nothing per token)
        info["note"] = "peak memory barely grew with the shapes: max_tokens left unset"
        return info, None
    tokens = int(tokens)
    if tokens < longest:
        raise ValueError(f"calibrate: memory_budget {budget} bytes ({budget_rule}) holds "
                         f"{max(tokens, 0)} padded tokens by the fit, less than one sample of "
                         f"the longest length {longest}; raise memory_budget")
    return info, tokens


def _device_name(device):
    import torch

    if device.type == "cuda":
        return f"cuda:{torch.cuda.get_device_name(device)}"
    return "cpu"
