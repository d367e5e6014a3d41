"""Properties of every plan, each checked over 10^4 random configurations (hypothesis).

The contract of docs/design.md: over an epoch no sample is lost or duplicated (drop_last drops
exactly the tail; a short last step is only topped up), every rank yields the same number of
micro-batches, a max_tokens cap is never exceeded (or the step is refused with the minimum
number of micro-batches that would meet it), the same inputs give the same plan in another
process, a resume from any position yields exactly the rest of the epoch, and the fingerprint
changes whenever an option that changes the plan changes.

Datasets are small (at most a few hundred samples) so that 10^4 configurations per property
stay within minutes; the planner's code paths do not depend on the size. The examples are
random each run (no example database is written): a failure prints the configuration.
"""

import collections
import hashlib
import json
import random
import subprocess
import sys

import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import (HealthCheck, Phase, assume, event, given, settings,  # noqa: E402
                        strategies as st)

from brs import BatchRebalanceSampler, _native  # noqa: E402
from brs_testing import TESTS, child_env  # noqa: E402

EXAMPLES = 10_000
# No example database and no explain phase: a run writes nothing into the tree (.hypothesis/).
PROPERTY = settings(max_examples=EXAMPLES, deadline=None, database=None,
                    phases=[Phase.explicit, Phase.generate, Phase.shrink],
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
CAP_ERRORS = (_native.ERR_CAP_INFEASIBLE, _native.ERR_SAMPLE_TOO_LONG)


# -- configurations ---------------------------------------------------------------------------

@st.composite
def configs(draw, capped=None):
    """Keyword arguments of a sampler plus its lengths ("lengths") and a rank-free dp_size."""
    batch, accum, dp = (draw(st.integers(1, 5)), draw(st.integers(1, 4)), draw(st.integers(1, 4)))
    k, b = accum * dp, batch * accum * dp
    n = draw(st.integers(k, 2 * b + k))  # fewer samples than micro-batches is an error
    rng = random.Random(draw(st.integers(0, 2**32)))
    longest = draw(st.sampled_from((1, 3, 40, 700)))
    lengths = [rng.randint(1, longest) for _ in range(n)]
    capped = draw(st.booleans()) if capped is None else capped
    cap = draw(st.integers(longest, 6 * longest)) if capped else None
    return dict(lengths=lengths, per_device_batch_size=batch, grad_accum=accum, dp_size=dp,
                seed=draw(st.integers(0, 2**63 - 1)), shuffle=draw(st.booleans()),
                drop_last=draw(st.booleans()), packed=draw(st.booleans()), max_tokens=cap,
                alpha=draw(st.sampled_from((0.0, 0.001, 0.05))),
                intercept=draw(st.sampled_from((0.0, 7.0))))


def build(config, rank=0, **changes):
    kwargs = {**config, **changes}
    return BatchRebalanceSampler(kwargs.pop("lengths"), rank=rank, **kwargs)


def build_or_none(config, **changes):
    """The sampler, or None where the configuration is refused for too few samples (drop_last
    with fewer than one global batch, or fewer samples than micro-batches)."""
    try:
        return build(config, **changes)
    except ValueError as exc:
        assert exc.status == _native.ERR_TOO_FEW_SAMPLES, exc
        return None


def global_batch(config):
    return config["per_device_batch_size"] * config["grad_accum"] * config["dp_size"]


def epoch_plans(sampler, epoch):
    """Every step's plan of ``epoch``; a step the cap cannot meet raises ValueError."""
    return [sampler.plan(step, epoch=epoch) for step in range(sampler.steps_per_epoch)]


def plan_key(plan):
    """What two plans must agree on, as plain values."""
    return [plan.num_samples, plan.max_padded_tokens, plan.total_real_tokens,
            [[mb.indices for mb in rank] for rank in plan.micro_batches]]


def uncapped(config):
    return {**config, "max_tokens": None}


# -- no sample lost or duplicated ---------------------------------------------------------------

@PROPERTY
@given(configs(capped=False), st.integers(0, 3))
def test_every_sample_once_per_epoch_and_only_the_tail_is_dropped_or_topped_up(config, epoch):
    n, b, k = len(config["lengths"]), global_batch(config), config["grad_accum"] * config["dp_size"]
    sampler = build_or_none(config)
    if sampler is None:  # refused: exactly when drop_last leaves no step
        assert config["drop_last"] and n < b
        event("refused: drop_last leaves no step")
        return
    event(f"drop_last={config['drop_last']}, short last step={bool(n % b)}")
    counts = collections.Counter(i for plan in epoch_plans(sampler, epoch)
                                 for rank in plan.micro_batches for mb in rank
                                 for i in mb.indices)
    assert all(0 <= i < n for i in counts)
    if config["drop_last"]:
        assert sampler.steps_per_epoch == n // b
        assert set(counts.values()) == {1} and len(counts) == n // b * b
    else:
        remainder = n % b
        assert sampler.steps_per_epoch == -(-n // b)
        assert len(counts) == n, "a sample was left out"
        assert sum(counts.values()) == n + (k - remainder if 0 < remainder < k else 0)


# -- every rank the same number of micro-batches ------------------------------------------------

@PROPERTY
@given(configs(capped=False), st.integers(0, 2))
def test_every_rank_yields_the_same_number_of_non_empty_micro_batches(config, epoch):
    assume(build_or_none(config) is not None)
    streams = []
    for rank in range(config["dp_size"]):
        sampler = build(config, rank=rank)
        sampler.set_epoch(epoch)
        stream = list(sampler)
        assert len(stream) == len(sampler) == sampler.steps_per_epoch * config["grad_accum"]
        assert all(stream), "an empty micro-batch"
        streams.append(stream)
    assert len({len(s) for s in streams}) == 1
    flat = [i for s in streams for mb in s for i in mb]
    plans = epoch_plans(build(config), epoch)
    assert sorted(flat) == sorted(i for p in plans for r in p.micro_batches for mb in r
                                  for i in mb.indices)


# -- the hard cap -------------------------------------------------------------------------------

def min_groups_under_cap(lengths, cap):
    """Fewest contiguous groups of the sorted lengths with size * longest <= cap (padded)."""
    groups, size, longest = 0, 0, 0
    for length in sorted(lengths, reverse=True):
        if size and (size + 1) * longest > cap:
            groups, size = groups + 1, 0
        longest = length if size == 0 else longest
        size += 1
    return groups + 1


def padded(config, lengths):
    return sum(lengths) if config["packed"] else len(lengths) * max(lengths)


@PROPERTY
@given(configs(capped=True), st.integers(0, 2))
def test_the_cap_is_never_exceeded_or_the_step_is_refused_with_the_minimum(config, epoch):
    cap, lengths = config["max_tokens"], config["lengths"]
    k = config["grad_accum"] * config["dp_size"]
    try:
        sampler = build(config)
    except ValueError as exc:
        assume(exc.status != _native.ERR_TOO_FEW_SAMPLES)
        # refused at construction: some step of epoch 0 needs more (padded: the check is exact)
        assert exc.status == _native.ERR_CAP_INFEASIBLE and not config["packed"], exc
        event("the cap refused at construction")
        steps = build(uncapped(config)).steps_per_epoch
        needed = max(min_groups_under_cap([lengths[i] for i in uncapped_step(config, 0, step)],
                                          cap) for step in range(steps))
        assert needed > k and f"{needed} micro-batches" in str(exc), (needed, str(exc))
        return
    for step in range(sampler.steps_per_epoch):
        try:
            plan = sampler.plan(step, epoch=epoch)
        except ValueError as exc:
            assert exc.status == _native.ERR_CAP_INFEASIBLE, exc
            assert "max_tokens" in str(exc)
            event("a step refused: the cap is infeasible")
            if not config["packed"]:  # padded: the greedy split is the exact minimum
                step_lengths = [lengths[i] for i in uncapped_step(config, epoch, step)]
                needed = min_groups_under_cap(step_lengths, cap)
                assert needed > k and str(needed) in str(exc), (needed, str(exc))
            continue
        for rank in plan.micro_batches:
            for mb in rank:
                tokens = padded(config, [lengths[i] for i in mb.indices])
                assert tokens == mb.padded_tokens and tokens <= cap
        assert plan.max_padded_tokens <= cap
        event("a step planned within the cap")


def uncapped_step(config, epoch, step):
    """The samples of a step do not depend on the cap: read them from an uncapped twin."""
    plan = build(uncapped(config)).plan(step, epoch=epoch)
    return [i for rank in plan.micro_batches for mb in rank for i in mb.indices]


# -- the same plan in another process -----------------------------------------------------------

DIGEST_SCRIPT = """
import json, sys
sys.path.insert(0, sys.argv[1])
import test_properties as t
print(json.dumps([t.digest(c) for c in json.load(sys.stdin)]))
"""


def digest(config):
    """A hash of epoch 1's plans of ``config`` (or of the error it raises)."""
    try:
        sampler = build(config)
        text = json.dumps([sampler.fingerprint] + [plan_key(p) for p in epoch_plans(sampler, 1)])
    except ValueError as exc:
        text = f"{exc.status}: {exc}"
    return hashlib.sha256(text.encode()).hexdigest()


def test_plans_are_identical_in_another_process():
    """10^4 configurations hashed here and in ONE fresh interpreter (another hash seed): one
    subprocess per configuration would spend the whole budget starting interpreters."""
    collected = []

    @PROPERTY
    @given(configs())
    def collect(config):
        collected.append((config, digest(config)))

    collect()
    assert len(collected) >= EXAMPLES
    done = subprocess.run([sys.executable, "-c", DIGEST_SCRIPT, str(TESTS)], text=True,
                          input=json.dumps([config for config, _ in collected]),
                          capture_output=True, timeout=1800, cwd=str(TESTS),
                          env=child_env(PYTHONHASHSEED="12345"))
    assert done.returncode == 0, done.stderr[-4000:]
    theirs = json.loads(done.stdout)
    assert len(theirs) == len(collected)
    differing = [config for (config, ours), other in zip(collected, theirs) if ours != other]
    assert not differing, f"{len(differing)} configurations planned differently: {differing[:2]}"


# -- resume from any position ---------------------------------------------------------------------

@PROPERTY
@given(configs(capped=False), st.integers(0, 3), st.integers(0, 3), st.data())
def test_resume_from_any_position_equals_the_uninterrupted_run(config, epoch, rank, data):
    assume(build_or_none(config) is not None)
    rank %= config["dp_size"]
    sampler = build(config, rank=rank)
    sampler.set_epoch(epoch)
    full = list(sampler)
    stop = data.draw(st.integers(0, len(full)), label="micro-batches before the interruption")
    first = build(config, rank=rank)
    first.set_epoch(epoch)
    it = iter(first)
    head = [next(it) for _ in range(stop)]
    state = first.state_dict()
    assert (state["epoch"], state["step"] * config["grad_accum"] + state["micro"]) == (epoch, stop)
    resumed = build(config, rank=rank)
    resumed.load_state_dict(json.loads(json.dumps(state)))  # as saved to disk
    resumed.set_epoch(epoch)
    assert head + list(resumed) == full


# -- the fingerprint ------------------------------------------------------------------------------

def changed(config, name, rng):
    """``config`` with option ``name`` set to another valid-looking value."""
    value = config[name]
    if name == "lengths":
        lengths = list(value)
        i = rng.randrange(len(lengths))
        lengths[i] = lengths[i] + 1 if lengths[i] < 2**31 else 1
        return {**config, name: lengths}
    if isinstance(value, bool):
        return {**config, name: not value}
    if name == "max_tokens":
        longest = max(config["lengths"])
        return {**config, name: None if value else 6 * longest}
    if isinstance(value, float):
        return {**config, name: value + rng.choice((0.25, 0.5, 1.0))}
    if name == "seed":
        return {**config, name: (value + rng.randint(1, 2**62)) % 2**63}
    return {**config, name: value + rng.choice((1, 2)) if value < 5 else value - 1}


def accepted(config):
    """The sampler, or None where the library refuses the configuration (too few samples, a
    sample above max_tokens, a max_tokens some step of epoch 0 cannot meet: the change made it
    invalid, so there is no plan to tell apart)."""
    try:
        return build(config)
    except ValueError as exc:
        assert exc.status in (_native.ERR_TOO_FEW_SAMPLES, *CAP_ERRORS), exc
        return None


PLAN_OPTIONS = ("lengths", "per_device_batch_size", "grad_accum", "dp_size", "seed", "shuffle",
                "drop_last", "packed", "max_tokens", "alpha", "intercept")


@PROPERTY
@given(configs(), st.sampled_from(PLAN_OPTIONS), st.integers(0, 2**32))
def test_the_fingerprint_changes_whenever_a_plan_option_changes(config, name, seed):
    other = changed(config, name, random.Random(seed))
    a, b = accepted(config), accepted(other)
    assume(a is not None and b is not None)
    assert a.fingerprint != b.fingerprint, f"{name}: {config[name]!r} -> {other[name]!r}"
    assert build(config, rank=config["dp_size"] - 1).fingerprint == a.fingerprint, \
        "the rank is not part of the plan"


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q"]))
