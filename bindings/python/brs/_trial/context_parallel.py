"""brs.trial with cp_size: brs's dynamic context parallelism against a fixed CP degree and
against megatron-core's BalancedCPScheduler, on the same samples, timed on a real group
(docs/trial.md, "Context parallelism").

One process per global rank (torchrun; gloo on CPU, nccl on CUDA). Every rank plans every step
of every strategy alike (cp_plans.py) and runs its own pieces with the reference CP attention
(brs/context_parallel.py) on a decoder that uses it; a step's time is the wall clock from a
barrier before it to a barrier after it, the slowest rank's (clocks.BarrierClock). The steps
timed are drawn over the epoch, the strategies interleaved in a fresh seeded order each round.
"""

import importlib
import json
import os
import statistics

from . import (clocks as _clocks, config as _config, cp_plans as _plans,
               distributed as _distributed, results as _results, stats as _stats)
from ..calibration import progress as _progress, record as _record


def trial(model, lengths, *, cp_size, max_tokens_per_rank=None, per_device_batch_size,
          grad_accum=1, steps=_config.DEFAULT_STEPS, device=None, out=None, seed=0,
          progress=True, command=None, cost_model=None):
    """The context-parallel trial's results dict (docs/trial.md's schema, "Context
    parallelism"); with ``out`` also results.json and report.md there (rank 0)."""
    config = _config.checked_context_parallel(
        model, lengths, cp_size=cp_size, max_tokens_per_rank=max_tokens_per_rank,
        per_device_batch_size=per_device_batch_size, grad_accum=grad_accum, steps=steps,
        device=device, seed=seed, progress=progress, command=command, cost_model=cost_model)
    cost = None
    if config.cost_model is not None:
        from ..cost_model import CostModel

        cost = CostModel.coerce(config.cost_model)
    planner = _plans.Planner(config.lengths, config, cost)  # bad input fails with no group
    return _distributed.run_in_group(config.device,
                                     lambda group: _trial(group, config, planner, cost), out)


def _trial(group, config, planner, cost):
    import numpy as np
    import torch

    rng = np.random.default_rng(config.seed)
    per_epoch = planner.steps_per_epoch
    chosen = [int(t) for t in rng.choice(per_epoch, size=min(config.steps, per_epoch),
                                         replace=False)]
    planned = {t: planner.step(t) for t in chosen}
    torch.manual_seed(config.seed)
    module, model_name = resolve_model(config.model, int(max(config.lengths)))
    module.to(config.device)
    groups = {ranks: torch.distributed.new_group(list(ranks))
              for ranks in _plans.process_groups([planned[t][1][name] for t in chosen
                                                  for name in _plans.STRATEGIES])}
    threads = torch.get_num_threads()
    if config.device.type == "cpu":
        torch.set_num_threads(1)  # one core a rank: the ranks share the machine's cores
    runner = Runner(module, config, groups, group, torch)
    show = _progress.Progress("brs trial", config.progress and group.rank == 0, unit="step")
    seconds = {name: [] for name in _plans.STRATEGIES}
    seen = {name: [] for name in _plans.STRATEGIES}
    load = [_record.load_average()]
    try:
        show.start(len(_plans.STRATEGIES), "warming each strategy once")
        for name in _plans.STRATEGIES:
            runner.step(planned[chosen[0]], name)
            show.update(name)
        show.start(len(chosen) * len(_plans.STRATEGIES), "timing")
        for t in chosen:
            for name in rng.permutation(_plans.STRATEGIES):
                took, held, covered = runner.step(planned[t], str(name))
                seconds[str(name)].append(took)
                seen[str(name)].append((held, covered))
                show.update(f"step {t} {name}")
    finally:
        torch.set_num_threads(threads)
        show.close()
    load.append(_record.load_average())
    measured = runner.clock.reduce(seconds)
    everyone = group.gather(seen)
    results = None
    if group.rank == 0:
        results = _results_of(config, planner, planned, chosen, measured, everyone)
        results.update(model=model_name, command=config.command, load_average=load,
                       cpus=_record.cpu_count(), torch=torch.__version__, device=_device_name(config,
                                                                                  torch),
                       processes=group.describe("global rank (dp x cp)"),
                       torch_threads=threads,
                       cost_model=None if cost is None else {
                           "source": cost.source, "alpha": cost.alpha,
                           "intercept": cost.intercept, "cp_comm_cost": cost.cp_comm_cost,
                           "cp_latency": cost.cp_latency})
        results["warnings"] = _results.warnings_of(results)
    return group.broadcast(results)


class Runner:
    """Runs one rank's pieces of a strategy's step on the decoder and times the step."""

    def __init__(self, module, config, groups, group, torch):
        self.module, self.config, self.groups, self.torch = module, config, groups, torch
        self.rank, self.device = group.rank, config.device
        self.cuda = config.device.type == "cuda"
        self.vocab = module.head.out_features
        # every micro-step (a phase) ends at a barrier: BarrierClock's micro_step sync
        self.clock = _clocks.BarrierClock(group, "micro_step", self)

    def tokens(self, samples):
        """Each sample's token ids, drawn from its index (the same on every rank)."""
        out = {}
        for i in samples:
            g = self.torch.Generator().manual_seed(self.config.seed * 1_000_003 + i)
            out[i] = self.torch.randint(0, self.vocab, (int(self.config.lengths[i]),),
                                        generator=g)
        return out

    def step(self, plan, name):
        """(seconds, most tokens a tensor of this rank held, {index: tokens computed here})
        of strategy ``name``'s step ``plan`` (cp_plans.Planner.step's)."""
        from .. import context_parallel as cp

        samples, phases, _ = plan
        tokens = self.tokens(samples)
        self.module.zero_grad(set_to_none=True)
        held, covered = 0, {}
        self.clock.start()
        for phase in phases[name]:
            for piece in phase[self.rank]:
                shard = cp.shard(piece, tokens.__getitem__)
                held = max(held, len(shard.input_ids))
                for i, start, end in piece.token_ranges:
                    covered[i] = covered.get(i, 0) + end - start
                self.module.loss_sum(self._on_device(shard, cp), self.groups).backward()
            self.clock.micro_step_done()
        return self.clock.stop(), held, covered

    def _on_device(self, shard, cp):
        if not self.cuda:
            return shard
        return cp.Shard(*(x.to(self.device) for x in (shard.input_ids, shard.targets,
                                                      shard.positions, shard.sequence_ids)),
                        shard.cp_ranks)


def resolve_model(model, max_len):
    """(module with loss_sum(shard, groups) and a ``head`` Linear, its name): "reference" (brs's
    TinyDecoder at the width brs calibrate --cp-size times), a JSON file of TinyDecoder's
    keywords (vocab, dim, max_len; a folder holding it as config.json), MODULE:FUNCTION
    returning a module, or the module itself."""
    from .. import context_parallel as cp
    from ..calibration.context_parallel import DIM

    if model is None or model == "reference":
        return cp.TinyDecoder(dim=DIM, max_len=max_len), f"reference (TinyDecoder, dim {DIM})"
    if isinstance(model, (str, os.PathLike)) and os.path.exists(model):
        return _from_config(model, max_len, cp)
    if isinstance(model, str) and ":" in model:
        name, function = model.split(":", 1)
        return _checked(getattr(importlib.import_module(name), function)()), model
    if hasattr(model, "loss_sum"):
        return _checked(model), type(model).__name__
    raise ValueError(f"model {model!r}: give 'reference', a TinyDecoder config file (JSON: "
                     "vocab, dim, max_len), MODULE:FUNCTION or a module with loss_sum(shard, "
                     "groups)")


def _from_config(path, max_len, cp):
    file = os.path.join(path, "config.json") if os.path.isdir(path) else path
    try:
        with open(file) as f:
            keywords = json.load(f)
    except (OSError, ValueError) as exc:
        raise ValueError(f"model config {file}: {exc}") from None
    unknown = set(keywords) - {"vocab", "dim", "max_len"}
    if not isinstance(keywords, dict) or unknown:
        raise ValueError(f"model config {file}: TinyDecoder takes vocab, dim and max_len; got "
                         f"{sorted(unknown)}")
    keywords.setdefault("max_len", max_len)
    if keywords["max_len"] < max_len:
        raise ValueError(f"model config {file}: max_len {keywords['max_len']} is below the "
                         f"longest sample ({max_len} tokens)")
    return cp.TinyDecoder(**keywords), f"TinyDecoder {keywords} ({file})"


def _checked(module):
    if not hasattr(module, "loss_sum") or not hasattr(module, "head"):
        raise ValueError("the context-parallel trial's model needs loss_sum(shard, groups) and "
                         "a head Linear (brs.context_parallel.TinyDecoder's interface)")
    return module


def _results_of(config, planner, planned, chosen, measured, everyone):
    """The results dict (rank 0) from each strategy's step seconds (max over ranks) and every
    rank's (held, covered) per timed step."""
    lengths = config.lengths
    by_name = {}
    for name in _plans.STRATEGIES:
        trained, peak = [], 0
        for k in range(len(chosen)):
            total = {}
            for rank in everyone:
                held, covered = rank[name][k]
                peak = max(peak, held)
                for i, n in covered.items():
                    total[i] = total.get(i, 0) + n
            trained.append(sorted([int(i), n] for i, n in total.items()))
        step_seconds = measured[name]
        real = sum(int(lengths[i]) for t in chosen for i in planned[t][0])
        by_name[name] = {
            "step_seconds": step_seconds,
            "median_step_seconds": statistics.median(step_seconds),
            "real_tokens_per_second": real / sum(step_seconds),
            "peak_tokens_per_rank": peak,
            "degrees": sorted({len(p.cp_ranks) for t in chosen for phase in planned[t][1][name]
                               for rank in phase for p in rank}),
            "syncs_per_step": [len(planned[t][1][name]) for t in chosen],
            "modelled_step_time": [planned[t][2].get(name) for t in chosen]
            if name in planned[chosen[0]][2] else None,
            "trained": trained,
            "every_sample_once": all(
                [i for i, _ in step] == planned[t][0]
                and all(n == int(lengths[i]) for i, n in step)
                for t, step in zip(chosen, trained))}
    seconds = {name: r["step_seconds"] for name, r in by_name.items()}
    paired = {f"{a}/{b}": _stats.paired(seconds[a], seconds[b])
              for a, b in (("brs", "fixed"), ("brs", "megatron"), ("fixed", "megatron"))}
    slower = {peer: [t for t, ours, theirs in zip(chosen, seconds["brs"], seconds[peer])
                     if ours > theirs] for peer in ("fixed", "megatron")}
    modelled = [b / f for b, f in zip(by_name["brs"]["modelled_step_time"],
                                      by_name["fixed"]["modelled_step_time"])]
    return {"mode": "context_parallel", "strategies": by_name, "paired": paired,
            "brs_slower_steps": slower, "timed_steps": chosen,
            "steps_per_epoch": planner.steps_per_epoch,
            "samples": {str(t): planned[t][0] for t in chosen},
            "modelled_brs_over_fixed": _stats.paired(by_name["brs"]["modelled_step_time"],
                                                     by_name["fixed"]["modelled_step_time"])
            if all(m > 0 for m in modelled) else None,
            "verdict": verdict(paired, planner.fixed_degree), "verdict_clock": "step_clock",
            "verdict_clock_why": CLOCK_WHY, "clock": _clocks.BarrierClock.describe,
            "cp_size": config.cp_size, "dp_size": config.dp_size,
            "max_tokens_per_rank": config.max_tokens_per_rank,
            "fixed_degree": planner.fixed_degree,
            "per_device_batch_size": config.per_device_batch_size,
            "grad_accum": config.grad_accum, "seed": config.seed}


CLOCK_WHY = ("the wall clock from a barrier before a step to a barrier after it (and after "
             "every micro-step of a brs plan, every group of Megatron's schedule), the slowest "
             "rank's: what the group waits for, its collectives included; on a shared CPU it "
             "moves with the load, which every strategy meets alike in interleaved rounds")

PEERS = {"brs/fixed": "fixed CP (degree {fixed} for every sample)",
         "brs/megatron": "megatron-core's BalancedCPScheduler"}


def verdict(paired, fixed_degree):
    """One sentence: brs against each peer, by the paired interval of the step-time ratio."""
    parts = []
    for key, peer in PEERS.items():
        p = paired[key]
        peer = peer.format(fixed=fixed_degree)
        low, high = p["ci95"]
        numbers = (f"brs's step time {p['ratio']:.3f}x ({_interval(low, high)}; sign test "
                   f"p = {p['sign_test_p']:.3g}, brs faster on {p['faster_steps']} of "
                   f"{p['steps']} steps)")
        if low != low or low <= 1 <= high:
            parts.append(f"indistinguishable from {peer}: {numbers}")
        elif high < 1:
            parts.append(f"{1 / p['ratio']:.2f}x faster than {peer}: {numbers}")
        else:
            parts.append(f"{p['ratio']:.2f}x slower than {peer}: {numbers}")
    return "brs dynamic CP is " + "; ".join(parts) + "."


def _interval(low, high):
    return "no interval" if low != low else f"95% CI {low:.3f}-{high:.3f}"


def _device_name(config, torch):
    if config.device.type == "cuda":
        return f"{config.device} ({torch.cuda.get_device_name(config.device)})"
    import platform

    return f"cpu ({platform.processor() or platform.machine()}, 1 thread a rank while timing)"

