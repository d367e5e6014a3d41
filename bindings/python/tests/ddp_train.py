"""Under torchrun (2 gloo processes): train a tiny model 2 epochs with grad_accum 2 and no_sync.

    torchrun --nproc_per_node=2 ddp_train.py OUT.json

The sampler is built BEFORE init_process_group with dp_size/rank left to detection. Rank 0
writes OUT.json: the indices every rank trained per epoch, and the first optimizer step's
gradient three ways: DDP with the loss normalised by the step's global token count from plan(),
a single-process reference with the global token mean over the whole step, and DDP with the
naive per-micro-batch mean.
"""

import contextlib
import json
import sys

import torch
import torch.distributed as dist

from brs import BatchRebalanceSampler
from brs_data import VOCAB, TokenDataset, pad_collate
from brs_testing import leave_after_teardown, process_group, random_lengths

GRAD_ACCUM = 2
LENGTHS = random_lengths(96, seed=41, low=2, high=48)


def tiny_model():
    torch.manual_seed(0)  # the same initial weights on every rank and for the reference
    return torch.nn.Sequential(torch.nn.Embedding(VOCAB, 8), torch.nn.Tanh(),
                               torch.nn.Linear(8, 1))


def token_errors(model, batch):
    """Squared error of every real token (padding masked out), summed."""
    out = model(batch["input_ids"]).squeeze(-1)
    target = (batch["input_ids"] % 7).to(out.dtype) / 7
    return (((out - target) ** 2) * batch["attention_mask"]).sum()


def global_mean_loss(model, batch, plan, world):
    # Every rank divides by the same global count; DDP averages gradients over ranks, so
    # multiplying by world makes the sum over ranks the exact global token mean.
    return token_errors(model, batch) / plan.total_real_tokens * world


def naive_loss(model, batch, plan, world):
    return token_errors(model, batch) / batch["attention_mask"].sum() / GRAD_ACCUM


def reference_gradient(plan):
    """One process, the whole step at once: mean over every real token of the step."""
    model = tiny_model()
    batches = [pad_collate([TokenDataset(LENGTHS)[i] for i in mb.indices])
               for rank in plan.micro_batches for mb in rank]
    loss = sum(token_errors(model, b) for b in batches) / plan.total_real_tokens
    loss.backward()
    return flat_grad(model)


def flat_grad(model):
    return torch.cat([p.grad.reshape(-1) for p in model.parameters()])


def first_step_gradient(model, loader, loss_fn, world, sampler):
    """DDP gradient after the first optimizer step's G micro-batches with loss_fn."""
    ddp = torch.nn.parallel.DistributedDataParallel(model)
    plan = sampler.plan(0)
    for micro, batch in zip(range(GRAD_ACCUM), loader):
        sync = contextlib.nullcontext() if micro == GRAD_ACCUM - 1 else ddp.no_sync()
        with sync:
            loss_fn(ddp, batch, plan, world).backward()
    return flat_grad(model)


def train(sampler, loader, world):
    model = tiny_model()
    ddp = torch.nn.parallel.DistributedDataParallel(model)
    optimizer = torch.optim.SGD(ddp.parameters(), lr=0.05)
    seen = {}
    for epoch in range(2):
        sampler.set_epoch(epoch)
        seen[epoch] = []
        for i, batch in enumerate(loader):
            step, micro = divmod(i, GRAD_ACCUM)
            plan = sampler.plan(step) if micro == 0 else plan
            seen[epoch].append(batch["index"].tolist())
            sync = contextlib.nullcontext() if micro == GRAD_ACCUM - 1 else ddp.no_sync()
            with sync:
                global_mean_loss(ddp, batch, plan, world).backward()
            if micro == GRAD_ACCUM - 1:
                optimizer.step()
                optimizer.zero_grad()
    return seen


def main(out):
    torch.set_default_dtype(torch.float64)
    sampler = BatchRebalanceSampler(LENGTHS, per_device_batch_size=3, grad_accum=GRAD_ACCUM,
                                    seed=5)
    with process_group():
        train_and_report(sampler, out)


def train_and_report(sampler, out):
    world = dist.get_world_size()
    loader = torch.utils.data.DataLoader(TokenDataset(LENGTHS), batch_sampler=sampler,
                                         collate_fn=pad_collate)
    exact = first_step_gradient(tiny_model(), loader, global_mean_loss, world, sampler)
    naive = first_step_gradient(tiny_model(), loader, naive_loss, world, sampler)
    seen = train(sampler, loader, world)
    gathered = [None] * world
    dist.all_gather_object(gathered, {"rank": sampler.rank, "dp_size": sampler.dp_size,
                                      "len": len(sampler), "seen": seen})
    if dist.get_rank() == 0:
        plan = sampler.plan(0, epoch=0)
        reference = reference_gradient(plan)
        sizes = [mb.num_samples for rank in plan.micro_batches for mb in rank]
        with open(out, "w") as handle:
            json.dump({"ranks": gathered, "n": len(LENGTHS), "step0_sizes": sizes,
                       "exact_vs_reference": float((exact - reference).abs().max()),
                       "naive_vs_reference": float((naive - reference).abs().max()),
                       "reference_norm": float(reference.norm())}, handle)


if __name__ == "__main__":
    main(sys.argv[1])
    leave_after_teardown()
