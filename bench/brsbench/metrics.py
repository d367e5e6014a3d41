"""Score an epoch plan with one cost model, the same for every sampler (docs/design.md).

Every step of every sampler is loaded into libbrs (brs_plan_load) and described by the library's
plan queries: micro-batch costs, padded tokens, both synchronised step times. The library holds the
cost model (alpha and intercept at their defaults, upstream's fixed model) and the sync formulas;
nothing here restates them.
"""

import ctypes
from dataclasses import dataclass, field

from .library import shared
from .peers import EpochPlan


def alpha() -> float:
    """The library's default alpha (upstream's QUADRATIC_COST_COEF), for peers that need it."""
    lib = shared()
    out = ctypes.c_double()
    lib.lib.brs_option_default_double(ctypes.byref(out), lib.key("alpha"))
    return out.value


@dataclass
class Score:
    name: str
    steps: int
    peak_tokens: int = 0
    padded_tokens: int = 0
    real_tokens: int = 0
    micro_sync: float = 0.0
    step_sync: float = 0.0
    cap_violations: int = 0  # micro-batches above the cap
    micro_batches: int = 0
    max_cost: list[float] = field(default_factory=list)  # per step
    micro_sync_steps: list[float] = field(default_factory=list)
    step_sync_steps: list[float] = field(default_factory=list)
    peak_tokens_steps: list[int] = field(default_factory=list)

    @property
    def efficiency(self) -> float:
        return self.real_tokens / self.padded_tokens if self.padded_tokens else 0.0


_samplers: dict = {}


def _sampler(lengths: list[int], dp: int, ga: int, packed: bool):
    """A library sampler over `lengths` with the step's shape (cached: converting N lengths costs)."""
    key = (id(lengths), dp, ga, packed)
    if key not in _samplers:
        _samplers[key] = (lengths, shared().sampler(
            lengths, {"batch_size": 1, "grad_accum": ga, "dp_size": dp, "packed": int(packed)}))
    return _samplers[key][1]


def score(name: str, plan: EpochPlan, lengths: list[int], *, packed: bool = False,
          cap: int | None = None) -> Score:
    s = Score(name, len(plan))
    if not plan:
        return s
    lib = shared()
    n = lib.n
    dp, ga = len(plan[0]), len(plan[0][0])
    sampler = _sampler(lengths, dp, ga, packed)
    described = lib.NativePlan()
    for t, step in enumerate(plan):
        lib.load(described, sampler, step, t)
        peak = described.get_int(n.PLAN_MAX_PADDED_TOKENS)
        micro = described.get_double(n.PLAN_MICRO_SYNC_TIME)
        whole = described.get_double(n.PLAN_STEP_SYNC_TIME)
        s.padded_tokens += described.get_int(n.PLAN_TOTAL_PADDED_TOKENS)
        s.real_tokens += described.get_int(n.PLAN_TOTAL_REAL_TOKENS)
        s.micro_batches += dp * ga
        if cap is not None and peak > cap:
            s.cap_violations += sum(described.micro_batch(r, m).padded_tokens > cap
                                    for r in range(dp) for m in range(ga))
        s.max_cost.append(described.get_double(n.PLAN_MAX_COST))
        s.micro_sync_steps.append(micro)
        s.step_sync_steps.append(whole)
        s.peak_tokens_steps.append(peak)
        s.micro_sync += micro
        s.step_sync += whole
        s.peak_tokens = max(s.peak_tokens, peak)
    return s


def steps_worse(ours: list[float], theirs: list[float], rel: float = 1e-9) -> int:
    """How many steps `ours` is above `theirs` beyond float noise (both from metrics.score)."""
    return sum(a > b * (1 + rel) for a, b in zip(ours, theirs))


def check_coverage(plan: EpochPlan, n: int) -> str | None:
    """Every index at most once per epoch, no empty micro-batch: a sanity check on each run."""
    seen = set()
    for t, step in enumerate(plan):
        for r, rank in enumerate(step):
            for m, mb in enumerate(rank):
                if not mb:
                    return f"step {t} rank {r} micro {m} is empty"
                for i in mb:
                    if i in seen or not 0 <= i < n:
                        return f"index {i} repeated or out of range at step {t}"
                    seen.add(i)
    return None
