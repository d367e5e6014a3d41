"""Score an epoch plan with one cost model, the same for every sampler (DESIGN.md section 1).

padded micro-batch: tokens = bs * longest, cost = bs*L + alpha*bs*L^2 (intercept 0)
packed micro-batch: tokens = sum(L),      cost = sum(L) + alpha*sum(L^2)
per-micro-step sync (FSDP/ZeRO-3): step time = sum over micro-steps of the max over ranks
per-step sync (DDP + no_sync):     step time = max over ranks of the sum over micro-steps
"""

from dataclasses import dataclass, field

from .peers import EpochPlan

ALPHA = 0.001  # upstream's QUADRATIC_COST_COEF and brs's default alpha


def micro_batch(indices: list[int], lengths: list[int], packed: bool) -> tuple[int, int, float]:
    """(tokens the micro-batch occupies, its real tokens, its cost)."""
    ls = [lengths[i] for i in indices]
    real = sum(ls)
    if packed:
        return real, real, real + ALPHA * sum(x * x for x in ls)
    longest = max(ls)
    tokens = len(ls) * longest
    return tokens, real, tokens + ALPHA * tokens * longest


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


def score(name: str, plan: EpochPlan, lengths: list[int], *, packed: bool = False,
          cap: int | None = None) -> Score:
    s = Score(name, len(plan))
    for step in plan:
        costs = []  # costs[rank][micro]
        peak = 0
        for rank in step:
            row = []
            for mb in rank:
                tokens, real, cost = micro_batch(mb, lengths, packed)
                s.padded_tokens += tokens
                s.real_tokens += real
                s.micro_batches += 1
                s.cap_violations += cap is not None and tokens > cap
                peak = max(peak, tokens)
                row.append(cost)
            costs.append(row)
        ga = len(costs[0])
        micro = sum(max(row[m] for row in costs) for m in range(ga))
        whole = max(sum(row) for row in costs)
        s.max_cost.append(max(max(row) for row in costs))
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
