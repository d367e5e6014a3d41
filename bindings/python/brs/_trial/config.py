"""What a trial runs: its arguments checked once and kept in one TrialConfig, which the rest of
the trial reads instead of passing its parts one by one."""

import dataclasses
import numbers
from typing import Any, Optional, Tuple

from . import distributed as _distributed, plans as _plans

#: Timed steps by default. The paired log-ratios vary from step to step with the samples (a
#: real spread, not noise: brs gains more on some steps than on others), so the interval narrows
#: only as 1/sqrt(steps). On the 2-core machine of bench/results/trial, a 2-layer Qwen2 at dp 8
#: gave a thread-time interval 0.850-1.022 at 12 steps (ratio 0.93, load 5): 12 steps could say
#: "indistinguishable" one run and "pays" the next. 32 steps narrow it to about +-5%.
DEFAULT_STEPS = 32


@dataclasses.dataclass(frozen=True)
class TrialConfig:
    """The job and how to time it (brs.trial's keywords, checked)."""

    model: Any  # a module, a config, a directory or a cached hub name
    lengths: Any  # int64 array, one token count per sample
    dataset: Any  # the tokenized dataset, or None for lengths alone
    collate_fn: Any
    forward: Any
    per_device_batch_size: int
    grad_accum: int
    dp_size: int
    max_tokens: Optional[int]
    pad_to_multiple_of: Optional[int]
    strategies: Tuple[str, ...]
    steps: int
    device: Any  # a torch.device, this process's own under torchrun
    seed: int
    budget: Optional[int]  # memory_budget in bytes
    progress: bool
    command: Optional[str]
    sampler_options: dict
    cost_model: Any = None  # brs's: None (fitted before timing, _trial/cost.py), a CostModel or path

    @property
    def global_batch(self):
        return self.per_device_batch_size * self.grad_accum * self.dp_size

    def without(self, strategy):
        return dataclasses.replace(self, strategies=tuple(s for s in self.strategies
                                                          if s != strategy))


def checked(model, lengths_or_dataset, *, collate_fn, forward, per_device_batch_size,
            grad_accum, dp_size, max_tokens, pad_to_multiple_of, strategies, steps, device, seed,
            memory_budget, progress, command, sampler_options):
    """The TrialConfig of brs.trial's arguments; ValueError (TypeError for a wrong type) on bad
    input, before anything is built or timed."""
    job = {"per_device_batch_size": _positive("per_device_batch_size", per_device_batch_size),
           "grad_accum": _positive("grad_accum", grad_accum),
           "dp_size": _dp_size(dp_size, _distributed.processes()),
           "steps": _positive("steps", steps)}
    _check_strategies(strategies)
    sampler_options = dict(sampler_options)
    cost_model = sampler_options.pop("cost_model", None)
    _check_sampler_options(sampler_options)
    lengths, dataset = _lengths(lengths_or_dataset)
    device = _distributed.local_device(_device(device))
    budget = None if memory_budget is None else _parse_budget(memory_budget)
    return TrialConfig(
        model=model, lengths=lengths, dataset=dataset, collate_fn=collate_fn, forward=forward,
        max_tokens=max_tokens, pad_to_multiple_of=pad_to_multiple_of,
        strategies=tuple(dict.fromkeys(strategies)), device=device, seed=seed, budget=budget,
        progress=progress, command=command, sampler_options=sampler_options,
        cost_model=cost_model, **job)


@dataclasses.dataclass(frozen=True)
class ContextParallelConfig:
    """The context-parallel trial's job (brs.trial with cp_size, checked): dp_size x cp_size
    processes, one per global rank."""

    model: Any  # "reference", a TinyDecoder config file, MODULE:FUNCTION or a module
    lengths: Any  # int64 array, one token count per sample
    cp_size: int
    max_tokens_per_rank: int
    dp_size: int
    per_device_batch_size: int
    grad_accum: int
    steps: int
    device: Any
    seed: int
    progress: bool
    command: Optional[str]
    cost_model: Any = None  # brs's (and fixed CP's) planning model; None: the library's defaults


def checked_context_parallel(model, lengths_or_dataset, *, cp_size, max_tokens_per_rank,
                             per_device_batch_size, grad_accum, steps, device, seed, progress,
                             command, cost_model):
    """The ContextParallelConfig of brs.trial's arguments with cp_size; ValueError on bad input,
    before anything is built or timed. It runs one process per global rank: the world size
    (torchrun's) must be a multiple of cp_size."""
    cp_size = _positive("cp_size", cp_size)
    if cp_size & (cp_size - 1) or cp_size < 2:
        raise ValueError(f"cp_size must be a power of two >= 2; got {cp_size}")
    if max_tokens_per_rank is None:
        raise ValueError("the context-parallel trial needs max_tokens_per_rank (the most "
                         "tokens a rank may hold, the cap every strategy plans under)")
    processes = _distributed.processes()
    if processes is None or processes % cp_size:
        raise ValueError(f"the context-parallel trial runs one process per rank: launch it "
                         f"with torchrun --nproc_per_node={cp_size} (or a multiple of "
                         f"{cp_size}); got {processes or 1} process(es)")
    lengths, dataset = _lengths(lengths_or_dataset)
    if dataset is not None:
        raise ValueError("the context-parallel trial takes lengths (token counts), not a "
                         "dataset: its tokens are drawn at random")
    return ContextParallelConfig(
        model=model, lengths=lengths, cp_size=cp_size,
        max_tokens_per_rank=_positive("max_tokens_per_rank", max_tokens_per_rank),
        dp_size=processes // cp_size,
        per_device_batch_size=_positive("per_device_batch_size", per_device_batch_size),
        grad_accum=_positive("grad_accum", grad_accum), steps=_positive("steps", steps),
        device=_distributed.local_device(_device(device)), seed=seed, progress=progress,
        command=command, cost_model=cost_model)


def _check_strategies(strategies):
    unknown = [s for s in strategies if s not in _plans.STRATEGIES]
    if unknown or "brs" not in strategies:
        raise ValueError(f"strategies must hold 'brs' and only names of {_plans.STRATEGIES}; "
                         f"got {tuple(strategies)}")


def _check_sampler_options(sampler_options):
    for name in ("rank", "strategy", "per_device_batch_size", "grad_accum", "dp_size",
                 "packed"):
        if sampler_options.get(name):
            raise ValueError(f"trial sets {name} itself (packed micro-batches are not "
                             "simulated); leave it out of the sampler options")


def _positive(name, value):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise ValueError(f"{name} must be an int >= 1; got {value!r}")
    return int(value)
def _dp_size(value, processes):
    """dp_size of the job. One process (``processes`` None) simulates any dp_size, 1 by
    default. Under torchrun each process runs one rank's micro-batches, so dp_size is the
    world size: the default there, and any other value is refused rather than adjusted (a
    plan for another dp_size would leave ranks unrun or run nowhere)."""
    if value is None:
        return 1 if processes is None else processes
    value = _positive("dp_size", value)
    if processes is not None and value != processes:
        raise ValueError(f"dp_size {value} disagrees with the world size {processes}: under "
                         f"torchrun each of the {processes} processes runs one dp rank's "
                         f"micro-batches, so dp_size must be {processes} (or left out)")
    return value


def _lengths(value):
    """(lengths as an int64 array, the dataset or None). A lengths file is read by the library,
    so a bad line gets its message."""
    import numpy as np

    if isinstance(value, str) or hasattr(value, "__fspath__"):
        from .._lengths import read_file

        return np.asarray(read_file(value), dtype=np.int64), None
    from ..calibration.arguments import is_dataset, resolve_lengths

    try:
        data = resolve_lengths(value)
    except (ValueError, TypeError) as exc:
        raise type(exc)(str(exc).replace("calibrate: ", "")) from None
    return data, (value if is_dataset(value) else None)


def _device(device):
    import torch

    if device is None:
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        device = torch.device(device)
    except (RuntimeError, TypeError) as exc:
        raise ValueError(f"device {device!r} is not a torch device: {exc}") from None
    if device.type == "cuda" and not torch.cuda.is_available():
        raise ValueError("device cuda: this torch has no CUDA device")
    return device


def _parse_budget(value):
    from ..calibration.memory import parse_bytes

    return parse_bytes(value)


