"""plan_batch: plan one step whose samples exist only now (RL rollouts, a window of a stream).

An epoch sampler plans a dataset whose lengths are known up front. GRPO / PPO rollouts and
streamed data have no epoch: each step's lengths are known only when the step is there. The
library's step planner is a function of one step's lengths (brs_plan_compute_batch), and this is
its Python face: the same objective, exactness, cap, packed mode and sync model as the sampler's
plans, with the micro-batches given as positions into ``lengths``.
"""

from . import _native as n, _options, cost_model as _cost_model
from ._encoder import image_table
from ._handles import NativePlan, NativeSampler
from ._lengths import as_uint32


def plan_batch(lengths, *, dp_size, grad_accum=None, max_tokens=None, packed=None, sync=None,
               cost_model=None, encoder_loads=None, encoder_weight=None, encoder_alpha=None,
               encoder_intercept=None, max_encoder_tokens=None):
    """Split one step of ``lengths`` into dp_size x grad_accum balanced micro-batches.

    Returns ``plan[rank][micro_step]``: a list over ranks of lists over micro-steps of lists of
    positions into ``lengths`` (every position exactly once; longest sample first in each
    micro-batch). Deterministic: every rank that calls it with the same lengths and options gets
    the same plan, so ranks need not talk to each other; each takes ``plan[rank]``.

    Every option left None takes the library's default (its option table: ``grad_accum`` 1,
    ``packed`` False, no cap). ``max_tokens`` caps a micro-batch's padded tokens (its token sum
    when ``packed``); ``sync`` is "micro_step" or "step"; ``cost_model`` is a brs.CostModel
    (or its dict / file path) giving alpha, intercept (and encoder_weight, encoder_alpha,
    encoder_intercept) and, unless given here, max_tokens (and max_encoder_tokens).
    Raises ValueError when the batch has fewer samples than micro-batches, a sample is longer
    than max_tokens, or no dp_size x grad_accum micro-batches meet max_tokens (the message names
    the micro-batches or the max_tokens that would do).

    ``encoder_loads`` gives each sample's images as patch counts (vision-language batches, see
    docs/python.md): their encoder cost (``encoder_alpha``, ``encoder_intercept``) adds to the
    text cost (a patch costs ``encoder_weight`` padded tokens) and ``max_encoder_tokens`` caps a
    micro-batch's patches.

    ``grad_accum="auto"`` (with ``max_tokens``) takes the least number of micro-steps per rank,
    the same on every rank, whose micro-batches all meet the cap, with no empty micro-batch; the
    plan says which (``len(plan[0])``, and ``plan.grad_accum``). A sample over the cap is refused
    naming the longest sample and the least max_tokens that plans the whole batch.
    """
    settings = dict(dp_size=dp_size, max_tokens=max_tokens, packed=packed, sync=sync,
                    cost_model=cost_model, encoder_weight=encoder_weight,
                    encoder_alpha=encoder_alpha, encoder_intercept=encoder_intercept,
                    max_encoder_tokens=max_encoder_tokens)
    images = None if encoder_loads is None else image_table(encoder_loads, len(lengths))
    if isinstance(grad_accum, str):
        return _least_grad_accum(lengths, grad_accum, settings, images)
    return BatchPlan(_planned(lengths, _config(grad_accum=grad_accum, **settings), images=images))


class BatchPlan(list):
    """plan[rank][micro] (a list, as before), and the layout it took: ``dp_size`` and
    ``grad_accum``, the micro-steps per rank (what grad_accum="auto" chose)."""

    @property
    def dp_size(self):
        return len(self)

    @property
    def grad_accum(self):
        return len(self[0]) if self else 0


def _least_grad_accum(lengths, word, settings, images):
    """plan_batch's grad_accum="auto": the least micro-steps per rank that meet max_tokens.

    More micro-batches never make the cap harder to meet (a split of one is a split of more), so
    the least count is found by bisection over 1 .. n // dp_size (the most that leave no
    micro-batch empty), planning each candidate with the library."""
    if word != "auto":
        raise ValueError(f"grad_accum must be an integer >= 1 or \"auto\", got {word!r}")
    if settings["max_tokens"] is None and _cost_model.resolve(settings["cost_model"], None, None,
                                                              None)[2] is None:
        raise ValueError('grad_accum="auto" needs max_tokens: the least micro-steps that meet it')
    dp_size = settings["dp_size"]
    most = len(lengths) // dp_size if isinstance(dp_size, int) and dp_size > 0 else 1
    if most < 1:
        raise ValueError(f"the batch of {len(lengths)} samples cannot give each of dp_size = "
                         f"{dp_size} ranks a sample")
    plan = NativePlan()
    # the most micro-steps first: a sample over the cap, or a cap no split meets, is refused
    # there, with the least max_tokens that plans the batch at all
    best = _planned(lengths, _config(grad_accum=most, **settings), plan, images)
    low, high = 1, most
    while low < high:
        middle = (low + high) // 2
        try:
            best = _planned(lengths, _config(grad_accum=middle, **settings), plan, images)
            high = middle
        except ValueError as exc:
            if getattr(exc, "status", None) != n.ERR_CAP_INFEASIBLE:
                raise
            low = middle + 1
    if len(best[0]) != low:
        best = _planned(lengths, _config(grad_accum=low, **settings), plan, images)
    return BatchPlan(best)


def _config(*, dp_size, grad_accum, max_tokens, packed, sync, cost_model, strategy=None,
            **encoder):
    """A configuration handle (a sampler without lengths) for brs_plan_compute_batch."""
    alpha, intercept, max_tokens = _cost_model.resolve(cost_model, None, None, max_tokens)
    names = _cost_model.ENCODER_OPTIONS
    encoder = dict(zip(names, _cost_model.resolve_encoder(
        cost_model, *(encoder.get(name) for name in names))))
    given = _options.given_options(dict(dp_size=dp_size, grad_accum=grad_accum,
                                        max_tokens=max_tokens, packed=packed, sync=sync,
                                        alpha=alpha, intercept=intercept, strategy=strategy,
                                        **encoder))
    config = NativeSampler(None)
    for name, value in given.items():
        config.set(_options.BY_NAME[name], value)
    return config


def _planned(lengths, config, plan=None, images=None):
    """The micro-batches of one step of ``lengths`` under ``config``, [rank][micro] positions;
    ``images`` an _encoder.ImageTable of the samples, or None."""
    if hasattr(lengths, "__len__") and len(lengths) == 0:
        raise ValueError("lengths is empty: a batch needs at least dp_size x grad_accum samples")
    buffer = as_uint32(lengths)
    plan = plan or NativePlan()
    plan.compute_batch(config.handle, buffer, images)
    dp_size, grad_accum = plan.get_int(n.PLAN_DP_SIZE), plan.get_int(n.PLAN_GRAD_ACCUM)
    return [[plan.indices(rank, micro) for micro in range(grad_accum)]
            for rank in range(dp_size)]

