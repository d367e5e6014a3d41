"""A brs context-parallel plan in the structure Megatron's hybrid context parallelism runs.

megatron-core's ``HybridCPDataLoaderWrapper`` (megatron.core.datasets.data_schedule) gives each
rank, every step, ``(samples, sample_id_groups)``: ``sample_id_groups[g][r]`` the ids of the
sub-samples hybrid-DP x CP rank r runs in group g (groups run one after another with a barrier
between them; a sub-sample on c ranks is in the lists of c consecutive ranks of one group, and
each of them reads c as its ``local_cp_size``), and ``samples`` the whole sub-samples of this
rank's lists by id. ``hybrid_context_parallel_forward_backward`` consumes exactly that. To build it
the wrapper all-gathers every rank's lengths, runs ``BalancedCPScheduler`` and reroutes the
samples with an all-to-all each step. Every rank already knows brs's plan of the step (the same
samples and the same plan on every rank), so this loader builds the same structure from it with no
collective, and reads from the dataset only the samples this rank runs:

    sampler = brs.BatchRebalanceSampler(lengths, per_device_batch_size=P, grad_accum=G,
                                        cp_size=C, max_tokens_per_rank=T, packed=True)
    loader = megatron.HybridCPLoader(sampler, sample_of)   # sample_of(i): sample i's dict
    samples, sample_id_groups = next(loader)                # what the wrapper's __next__ gives

A group is a run of the plan's micro-steps: one micro-step where every rank has a micro-batch,
else micro-steps joined until every rank has one (Megatron runs no empty list). Ranks follow the
plan's global order (dp index x C + cp index), which is Megatron's hybrid DP x CP rank with
tensor and pipeline parallelism 1.
"""

def sample_id_groups(plan):
    """``sample_id_groups`` of one step's context-parallel plan (brs.Plan): a list of groups,
    each a list over the plan's dp_size x cp_size ranks of the dataset indices each rank runs in
    that group, in order."""
    ranks = len(plan.micro_batches)
    groups, current = [], [[] for _ in range(ranks)]
    for micro in range(len(plan.micro_batches[0])):
        for rank in range(ranks):
            current[rank].extend(plan.micro_batches[rank][micro].indices)
        if all(current):
            groups.append(current)
            current = [[] for _ in range(ranks)]
    if any(current):  # the last micro-steps leave a rank idle: they join the last group
        if not groups:
            raise ValueError(f"a step of {ranks} ranks gives some rank no sample at all: "
                             "Megatron's hybrid CP runs at least one a rank; draw more samples "
                             "a step (per_device_batch_size, grad_accum)")
        for rank in range(ranks):
            groups[-1][rank].extend(current[rank])
    return groups


class HybridCPLoader:
    """An iterator of ``(samples, sample_id_groups)`` per step from ``sampler`` (a
    context-parallel brs.BatchRebalanceSampler), for global rank ``rank`` (default the
    sampler's): ``samples`` maps each index of this rank's lists to ``sample_of(index)`` (the
    whole sample's dict of tensors, as Megatron's dataset gives it). Starts at step
    ``start_step`` of the sampler's epoch."""

    def __init__(self, sampler, sample_of, rank=None, start_step=0):
        if not sampler.context_parallel:
            raise ValueError("HybridCPLoader needs a context-parallel sampler: pass cp_size= "
                             "(and max_tokens_per_rank=, packed=True) to BatchRebalanceSampler")
        self.sampler, self.sample_of = sampler, sample_of
        self.rank = sampler.rank if rank is None else rank
        self.step = start_step

    def __iter__(self):
        return self

    def __len__(self):
        return self.sampler.steps_per_epoch

    def __next__(self):
        if self.step >= self.sampler.steps_per_epoch:
            raise StopIteration
        groups = sample_id_groups(self.sampler.plan(self.step))
        self.step += 1
        samples = {i: self.sample_of(i) for group in groups for i in group[self.rank]}
        return samples, groups
