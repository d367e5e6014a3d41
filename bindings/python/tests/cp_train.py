"""torchrun --nproc_per_node=4 (gloo, CPU): dp_size 2 x cp_size 2 ranks train brs's reference
context-parallel decoder for an epoch from a context-parallel plan; rank 0 writes the losses,
the first step's gradients, the final parameters and every sample's tokens computed."""

import json
import sys

import torch
import torch.distributed as dist

import brs
from brs.integrations import context_parallel as cp

D, C, G, P, T = 2, 2, 2, 2, 48
SEED = 5


def lengths_and_tokens(n=48):
    g = torch.Generator().manual_seed(7)
    lengths = [int(x) for x in torch.randint(4, 40, (n,), generator=g)]
    for i in range(0, n, 6):
        lengths[i] = 60 + i % 30  # long ones: 60 .. 89 tokens need 2 ranks under T = 48
    tokens = [torch.randint(0, 64, (length,), generator=g) for length in lengths]
    return lengths, tokens


def main(out):
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    lengths, tokens = lengths_and_tokens()
    sampler = brs.BatchRebalanceSampler(lengths, per_device_batch_size=P, grad_accum=G,
                                        cp_size=C, max_tokens_per_rank=T, packed=True, seed=SEED)
    assert sampler.dp_size == D and sampler.rank == rank
    groups = brs.distributed.cp_process_groups(C)
    torch.manual_seed(0)
    model = cp.TinyDecoder()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
    covered = {}
    losses, first_grads, degrees, held = [], None, set(), 0
    batches = iter(sampler)
    for step in range(sampler.steps_per_epoch):
        plan = sampler.plan(step)
        # the global count of targets of the step: every token but each sample's last
        samples = {i for r in plan.micro_batches for mb in r for i in mb.indices}
        count = sum(lengths[i] - 1 for i in samples)
        optimizer.zero_grad()
        local = torch.zeros(())
        for micro in range(G):
            mb = next(batches)
            assert list(mb) == plan.micro_batches[rank][micro].indices
            degrees.add(len(mb.cp_ranks))
            for index, start, end in mb.token_ranges:
                covered[index] = covered.get(index, 0) + end - start
            if not mb.indices:
                continue  # a placeholder: no tokens, no loss, no group collective
            shard = cp.shard(mb, lambda i: tokens[i])
            held = max(held, len(shard.input_ids))  # the tokens this rank's tensors hold
            loss = model.loss_sum(shard, groups) / count
            loss.backward()
            local = local + loss.detach()
        for p in model.parameters():  # the data-parallel (and CP) gradient sum over the world
            if p.grad is None:
                p.grad = torch.zeros_like(p)
            dist.all_reduce(p.grad)
        dist.all_reduce(local)
        losses.append(float(local))
        if first_grads is None:
            first_grads = {name: p.grad.flatten().tolist() for name, p in model.named_parameters()}
        optimizer.step()
    everything = [None] * dist.get_world_size()
    dist.all_gather_object(everything, {"covered": covered, "degrees": sorted(degrees),
                                             "held": held})
    if rank == 0:
        total = {}
        for part in everything:
            for index, n in part["covered"].items():
                total[index] = total.get(index, 0) + n
        steps = [[i for r, mbs in enumerate(sampler.plan(s).micro_batches) for mb in mbs
                  if r == mb.cp_ranks[0] for i in mb.indices]
                 for s in range(sampler.steps_per_epoch)]
        with open(out, "w") as f:
            json.dump({"losses": losses, "grads": first_grads,
                       "params": {k: v.flatten().tolist() for k, v in model.state_dict().items()},
                       "covered": {str(k): v for k, v in total.items()}, "lengths": lengths,
                       "steps": steps, "cap": T,
                       "held": max(p["held"] for p in everything), "degrees": sorted({d for p in everything
                                                          for d in p["degrees"]})}, f)
    dist.destroy_process_group()


if __name__ == "__main__":
    main(sys.argv[1])
