"""Under torchrun (2 gloo ranks): one RL-style (GRPO/PPO-like) step planned with brs.plan_batch.

    torchrun --nproc_per_node=2 rl_plan_batch.py OUT.json

The recipe: each rank samples rollouts of its own prompts (variable length, a tiny GPT-2 of one
layer); the ranks share the rollouts (all_gather_object), so every rank holds the same global
batch and computes the same plan with plan_batch, without talking further; each rank trains its
own dp_size x grad_accum share (no_sync while accumulating), the loss normalised by the global
token count so that DDP's gradient average is the global token mean; one optimizer step.
Rank 0 writes what each rank trained and a checksum of each rank's parameters after the step.
"""

import contextlib
import json
import sys

import torch
from torch.nn.parallel import DistributedDataParallel
from transformers import GPT2Config, GPT2LMHeadModel

from brs import plan_batch
from brs_testing import leave_after_teardown, process_group

VOCAB, PROMPTS_PER_RANK, GRAD_ACCUM, MAX_TOKENS = 64, 6, 2, 160


def tiny_policy():
    torch.manual_seed(0)  # the same initial weights on every rank
    config = GPT2Config(n_layer=1, n_embd=16, n_head=2, vocab_size=VOCAB, n_positions=64,
                        resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0,
                        bos_token_id=VOCAB - 1, eos_token_id=VOCAB - 1)
    return GPT2LMHeadModel(config)


def rollouts(policy, rank):
    """(tokens, reward) per prompt of this rank; completion lengths vary from 2 to 40 tokens."""
    generator = torch.Generator().manual_seed(100 + rank)
    out = []
    for _ in range(PROMPTS_PER_RANK):
        prompt = torch.randint(1, VOCAB - 1, (1, 3), generator=generator)
        new = int(torch.randint(2, 41, (1,), generator=generator))
        torch.manual_seed(int(torch.randint(0, 2**31, (1,), generator=generator)))
        with torch.no_grad():
            tokens = policy.generate(prompt, do_sample=True, min_new_tokens=new,
                                     max_new_tokens=new, pad_token_id=0)[0].tolist()
        reward = sum(t % 2 == 0 for t in tokens[3:]) / new  # a stand-in for a verifier
        out.append({"tokens": tokens, "reward": reward})
    return out


def micro_batch(rollouts_):
    """Padded ids, a mask over the completion tokens and each row's advantage."""
    longest = max(len(r["tokens"]) for r in rollouts_)
    ids = torch.zeros(len(rollouts_), longest, dtype=torch.long)
    mask = torch.zeros(len(rollouts_), longest)
    for row, r in enumerate(rollouts_):
        ids[row, :len(r["tokens"])] = torch.tensor(r["tokens"])
        mask[row, 3:len(r["tokens"])] = 1
    advantage = torch.tensor([r["advantage"] for r in rollouts_])
    return ids, mask, advantage


def policy_gradient_loss(model, ids, mask, advantage):
    """Sum over completion tokens of -advantage x log-prob (divided by the caller)."""
    logits = model(ids).logits[:, :-1]
    logp = torch.log_softmax(logits, -1).gather(-1, ids[:, 1:, None]).squeeze(-1)
    return -(logp * mask[:, 1:] * advantage[:, None]).sum()


def main(out_path):
    with process_group() as dist:
        rank, world = dist.get_rank(), dist.get_world_size()
        policy = tiny_policy()
        mine = rollouts(policy, rank)
        everyone = [None] * world
        dist.all_gather_object(everyone, mine)
        batch = [r for rank_rollouts in everyone for r in rank_rollouts]
        mean = sum(r["reward"] for r in batch) / len(batch)
        for r in batch:
            r["advantage"] = r["reward"] - mean
        lengths = [len(r["tokens"]) for r in batch]
        plan = plan_batch(lengths, dp_size=world, grad_accum=GRAD_ACCUM, max_tokens=MAX_TOKENS)

        model = DistributedDataParallel(policy)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        completion_tokens = sum(n - 3 for n in lengths)
        for micro, positions in enumerate(plan[rank]):
            ids, mask, advantage = micro_batch([batch[i] for i in positions])
            last = micro == GRAD_ACCUM - 1
            with contextlib.nullcontext() if last else model.no_sync():
                loss = policy_gradient_loss(model, ids, mask, advantage)
                (loss / completion_tokens * world).backward()
        optimizer.step()

        checksum = float(sum(p.double().sum() for p in model.parameters()))
        initial = float(sum(p.double().sum() for p in tiny_policy().parameters()))
        report = {"rank": rank, "positions": plan[rank],
                  "padded": [len(p) * max(lengths[i] for i in p) for p in plan[rank]],
                  "checksum": checksum, "initial": initial}
        reports = [None] * world
        dist.all_gather_object(reports, report)
        if rank == 0:
            with open(out_path, "w") as f:
                json.dump({"n": len(batch), "max_tokens": MAX_TOKENS, "ranks": reports}, f)
    leave_after_teardown()


if __name__ == "__main__":
    main(sys.argv[1])
