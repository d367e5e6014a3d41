"""TRL's GRPOTrainer with its generation batch split by brs.plan_batch, trained for real on CPU.

GRPOTrainer generates completions for steps_per_generation micro-steps at once, shuffles them
and cuts them into equal slices (_prepare_inputs). The recipe below keeps everything else and
replaces that cut: plan_batch splits this rank's generation batch into steps_per_generation
balanced slices of variable size, and each slice is trimmed to its own longest prompt and
completion, so a slice of short completions is not padded to the batch's longest. It overrides
a private method of trl 1.16, so it is pinned to that release's _prepare_inputs.
"""

import pytest

trl = pytest.importorskip("trl")
datasets = pytest.importorskip("datasets")
torch = pytest.importorskip("torch")

from tokenizers import Tokenizer  # noqa: E402
from tokenizers.models import WordLevel  # noqa: E402
from transformers import PreTrainedTokenizerFast  # noqa: E402

from _support import VOCAB, tiny_gpt2  # noqa: E402
from brs import plan_batch  # noqa: E402

# Per-row tensors whose second dimension is the prompt (left-padded) or the completion.
_PROMPT_WIDE = ("prompt_ids", "prompt_mask")
_COMPLETION_WIDE = ("completion_ids", "completion_mask", "old_per_token_logps",
                    "ref_per_token_logps", "sampling_per_token_logps", "importance_sampling_ratio")


def balanced_slices(batch, slices):
    """``batch`` (GRPOTrainer's scored generation batch) cut into ``slices`` balanced parts."""
    prompt_lengths = batch["prompt_mask"].sum(1)
    completion_lengths = batch["completion_mask"].sum(1)
    lengths = (prompt_lengths + completion_lengths).clamp(min=1).tolist()
    plan = plan_batch(lengths, dp_size=1, grad_accum=slices)[0]
    parts = []
    for positions in plan:
        rows = torch.tensor(positions)
        prompt_width = max(int(prompt_lengths[rows].max()), 1)
        completion_width = max(int(completion_lengths[rows].max()), 1)
        part = {}
        for key, value in batch.items():
            if isinstance(value, torch.Tensor) and value.ndim > 0:
                value = value[rows]
                if key in _PROMPT_WIDE:
                    value = value[:, -prompt_width:]
                elif key in _COMPLETION_WIDE and value.ndim > 1:
                    value = value[:, :completion_width]
            elif isinstance(value, list):
                value = [value[i] for i in positions]
            part[key] = value
        parts.append(part)
    return parts


class BalancedGRPOTrainer(trl.GRPOTrainer):
    def _prepare_inputs(self, generation_batch):
        if not self.model.training:
            return super()._prepare_inputs(generation_batch)
        generate_every = self.args.steps_per_generation * self.num_iterations
        if self._step % generate_every == 0 or self._buffered_inputs is None:
            scored = self._generate_and_score_completions(generation_batch)
            self._buffered_inputs = balanced_slices(scored, self.args.steps_per_generation)
            self.generations.append({
                "sizes": [len(part["prompt_ids"]) for part in self._buffered_inputs],
                "real": [int(scored[key].sum()) for key in ("prompt_mask", "completion_mask")],
                "kept": [sum(int(part[key].sum()) for part in self._buffered_inputs)
                         for key in ("prompt_mask", "completion_mask")],
                "widths": [int(scored["completion_mask"].shape[1])]
                + [int(part["completion_mask"].shape[1]) for part in self._buffered_inputs]})
        return self._buffered_inputs[self._step % self.args.steps_per_generation]


def tokenizer():
    vocab = {str(i): i for i in range(VOCAB)}
    tok = PreTrainedTokenizerFast(tokenizer_object=Tokenizer(WordLevel(vocab, unk_token="1")),
                                  pad_token="0", eos_token=str(VOCAB - 1))
    tok.padding_side = "left"
    return tok


def even_tokens(completions, **kwargs):
    """A stand-in verifier: the share of even token ids in the completion."""
    return [sum(int(t) % 2 == 0 for t in c.split()) / max(len(c.split()), 1)
            for c in completions]


def test_grpo_trains_on_balanced_slices(tmp_path):
    prompts = [" ".join(str(1 + (i * 7 + j) % 90) for j in range(2 + i % 5)) for i in range(16)]
    args = trl.GRPOConfig(output_dir=str(tmp_path), per_device_train_batch_size=4,
                          gradient_accumulation_steps=2, num_generations=4,
                          max_completion_length=24, max_steps=2, learning_rate=1e-3,
                          logging_steps=1, report_to="none", use_cpu=True, seed=3,
                          save_strategy="no", disable_tqdm=True,
                          generation_kwargs={"min_new_tokens": 1})
    trainer = BalancedGRPOTrainer(model=tiny_gpt2(), reward_funcs=even_tokens, args=args,
                                  train_dataset=datasets.Dataset.from_dict({"prompt": prompts}),
                                  processing_class=tokenizer())
    trainer.generations = []
    before = [p.detach().clone() for p in trainer.model.parameters()]
    trainer.train()
    assert trainer.generations, "the balanced split never ran"
    for generation in trainer.generations:
        # every completion of the generation batch once, in 2 non-empty slices
        assert sum(generation["sizes"]) == 8 and min(generation["sizes"]) >= 1
        # trimming cut only padding
        assert generation["kept"] == generation["real"]
        assert max(generation["widths"][1:]) <= generation["widths"][0]
    assert any(not torch.equal(a, b) for a, b in zip(before, trainer.model.parameters()))
