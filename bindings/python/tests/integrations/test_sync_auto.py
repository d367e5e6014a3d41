"""sync="auto": each integration plans for the sync model its framework really runs.

Unit tests of the resolution for each setup (accelerate's, the Trainer's and Lightning's
objects stand in where no such job can run here: FSDP, DeepSpeed, tensor parallelism), then a
real run: the Trainer under torchrun (2 gloo ranks, DDP, gradient accumulation 2) plans with
sync "step", and trains that plan.
"""

import logging
from types import SimpleNamespace

import pytest
import torch
from accelerate.utils import DistributedType

import run_sync_auto as cfg
from _support import read_json, scaled_lengths, tiny_gpt2
from brs import BatchRebalanceSampler, CostModel
from brs.integrations import _sync_choice
from brs.integrations import accelerate as brs_accelerate
from brs.integrations.transformers import BatchRebalanceMixin, RebalanceOptions

STEP, MICRO_STEP = "step", "micro_step"


def accelerator(kind="MULTI_CPU", steps=1, sync_each_batch=False, zero_stage=None, tp=False):
    """What the resolution reads of an accelerate Accelerator."""
    return SimpleNamespace(
        distributed_type=DistributedType(kind), gradient_accumulation_steps=steps,
        gradient_state=SimpleNamespace(plugin_kwargs={"sync_each_batch": sync_each_batch}),
        state=SimpleNamespace(deepspeed_plugin=SimpleNamespace(zero_stage=zero_stage)),
        parallelism_config=SimpleNamespace(tp_enabled=True) if tp else None)


def sampler(dp_size=2, grad_accum=2, **options):
    return BatchRebalanceSampler(scaled_lengths(64), per_device_batch_size=4, dp_size=dp_size,
                                 rank=0, grad_accum=grad_accum, seed=3, **options)


def library_default():
    return BatchRebalanceSampler([5], per_device_batch_size=1).sync


# -- choose: where both models plan alike, the library's default ---------------------------------

@pytest.mark.parametrize("dp_size, grad_accum", [(1, 4), (4, 1), (1, 1)])
def test_one_rank_or_one_micro_step_keeps_the_library_default(dp_size, grad_accum):
    choice = _sync_choice.choose(STEP, "why", dp_size, grad_accum)
    assert choice.sync is None
    assert "plan alike" in choice.reason


def test_an_unknown_setup_keeps_the_library_default_and_says_how_to_choose():
    choice = _sync_choice.choose(None, "brs does not know", 2, 2)
    assert choice.sync is None and "pass sync='step'" in choice.reason


# -- accelerate: a hand-written loop --------------------------------------------------------------

@pytest.mark.parametrize("setup, expected", [
    (dict(steps=2), STEP),  # accelerator.accumulate(model): no_sync on all but the last
    (dict(kind="MULTI_GPU", steps=4), STEP),
    (dict(steps=2, sync_each_batch=True), MICRO_STEP),
    (dict(steps=1), None),  # accumulates by hand: no_sync or not, brs cannot see
    (dict(kind="FSDP", steps=2), MICRO_STEP),
    (dict(kind="DEEPSPEED", zero_stage=3), MICRO_STEP),
    (dict(kind="DEEPSPEED", zero_stage=2), MICRO_STEP),
    (dict(kind="DEEPSPEED", zero_stage=1), STEP),  # reduces at the accumulation boundary only
    (dict(kind="DEEPSPEED", zero_stage=0), STEP),
    (dict(kind="XLA", steps=2), None),
    (dict(kind="MULTI_GPU", steps=2, tp=True), None),  # accelerate does not wrap it in DDP
])
def test_accelerate_setups(setup, expected):
    model, why = brs_accelerate._sync_model(accelerator(**setup))
    assert model == expected, why
    assert _sync_choice.choose(model, why, 2, 2).sync == expected


def test_resolve_sets_an_unset_or_auto_sync_and_logs_it_once(caplog):
    for unset in ({}, {"sync": "auto"}):
        chosen = sampler(**unset)
        with caplog.at_level(logging.INFO, logger="brs"):
            caplog.clear()
            _sync_choice.resolve(chosen, "accelerate",
                                 *brs_accelerate._sync_model(accelerator(steps=2)))
        assert chosen.sync == STEP
        assert chosen.fingerprint == sampler(sync=STEP).fingerprint
        records = [r for r in caplog.records if r.name == "brs"]
        assert len(records) == 1 and records[0].levelno == logging.INFO
        assert "sync='step'" in records[0].getMessage()
        assert "no_sync" in records[0].getMessage()
        # The choice travels with the sampler's options: clones and pickles plan the same.
        assert chosen.with_options(seed=3).sync == STEP


def test_resolve_keeps_a_sync_the_user_gave(caplog):
    given = sampler(sync=MICRO_STEP)
    with caplog.at_level(logging.INFO, logger="brs"):
        choice = _sync_choice.resolve(given, "accelerate", STEP, "why")
    assert given.sync == MICRO_STEP and choice.sync == MICRO_STEP
    assert not caplog.records


def test_resolve_where_both_models_coincide_reads_the_default_back(caplog):
    one_rank = sampler(dp_size=1)
    with caplog.at_level(logging.INFO, logger="brs"):
        _sync_choice.resolve(one_rank, "accelerate", STEP, "why")
    assert one_rank.sync == library_default()
    assert one_rank.fingerprint == sampler(dp_size=1).fingerprint
    assert f"sync={library_default()!r}" in caplog.text


def test_prepare_dataloader_resolves_on_a_real_single_process_accelerator(caplog):
    from accelerate import Accelerator
    from torch.utils.data import DataLoader

    from _support import TokenDataset, pad_collate

    plain = sampler(dp_size=None)
    with caplog.at_level(logging.INFO, logger="brs"):
        brs_accelerate.prepare_dataloader(Accelerator(cpu=True), DataLoader(
            TokenDataset(scaled_lengths(64)), batch_sampler=plain, collate_fn=pad_collate))
    assert plain.sync == library_default()
    assert "sync='auto' under accelerate" in caplog.text


# -- the Trainer ----------------------------------------------------------------------------------

class TrainerParts(BatchRebalanceMixin):
    """What BatchRebalanceMixin's sync choice reads of a Trainer, without building one."""

    def __init__(self, accelerator, grad_accum=2, model=None, sharded_at_load=False):
        self.accelerator = accelerator
        self.args = SimpleNamespace(gradient_accumulation_steps=grad_accum)
        self.model = model if model is not None else torch.nn.Linear(1, 1)
        self.is_distributed_loading_by_transformers = sharded_at_load


@pytest.mark.parametrize("setup, expected", [
    (dict(), STEP),  # the Trainer's own loop: no_sync on all but the last micro-batch
    (dict(kind="MULTI_GPU"), STEP),
    (dict(sync_each_batch=True), MICRO_STEP),
    (dict(kind="FSDP"), MICRO_STEP),
    (dict(kind="DEEPSPEED", zero_stage=3), MICRO_STEP),
    (dict(kind="DEEPSPEED", zero_stage=1), STEP),
])
def test_trainer_setups(setup, expected):
    # accelerate's own gradient_accumulation_steps is 1 under the Trainer: it does not matter.
    choice = TrainerParts(accelerator(steps=1, **setup))._auto_sync(RebalanceOptions(), 2)
    assert choice.sync == expected, choice.reason


def test_trainer_with_a_model_sharded_at_load_time_syncs_every_micro_step():
    model = torch.nn.Linear(1, 1)
    model._is_fsdp_managed_module = True  # what transformers' FSDP2 loading marks
    parts = TrainerParts(accelerator(), model=model, sharded_at_load=True)
    assert parts._auto_sync(RebalanceOptions(), 2).sync == MICRO_STEP


def test_trainer_with_one_micro_step_keeps_the_library_default():
    assert TrainerParts(accelerator(), grad_accum=1)._auto_sync(RebalanceOptions(), 2).sync is None


def test_trainer_takes_an_explicit_sync_as_is():
    parts = TrainerParts(accelerator())
    assert parts._auto_sync(RebalanceOptions(sync=MICRO_STEP), 2) is None


def test_a_trainer_checkpoint_resumes_on_another_number_of_processes_and_sync():
    """2 ranks under DDP planned "step"; 1 process with twice the accumulation plans the
    library's default: the same samples per step, so the elastic resume accepts it."""
    from brs import _elastic

    two = sampler(dp_size=2, grad_accum=2, sync=STEP)
    state = two.state_dict(consumed=4)
    one = sampler(dp_size=1, grad_accum=4)
    assert _elastic.accepts(one, state)
    one.load_state_dict(state)
    assert sorted(i for mb in list(one)[:4] for i in mb) == sorted(
        i for rank in two.plan(2).micro_batches for mb in rank for i in mb.indices)


# -- Lightning ------------------------------------------------------------------------------------

def lightning_setup(strategy_name, **attributes):
    strategies = pytest.importorskip("lightning.pytorch.strategies")
    strategy = object.__new__(getattr(strategies, strategy_name))  # no process group needed
    for name, value in attributes.items():
        setattr(strategy, name, value)
    return strategy


@pytest.mark.parametrize("strategy, automatic, expected", [
    (("DDPStrategy",), True, STEP),  # block_backward_sync: DDP's no_sync while accumulating
    (("DDPStrategy",), False, None),  # manual optimization: the training_step decides
    (("FSDPStrategy",), True, MICRO_STEP),
    (("ModelParallelStrategy",), True, MICRO_STEP),
    (("DeepSpeedStrategy", {"config": {"zero_optimization": {"stage": 3}}}), True, MICRO_STEP),
    (("DeepSpeedStrategy", {"config": {"zero_optimization": {"stage": 1}}}), True, STEP),
    (("DeepSpeedStrategy", {"config": {}}), True, STEP),  # no ZeRO section: stage 0
    (("XLAStrategy",), True, None),
    (("SingleDeviceStrategy",), True, None),
])
def test_lightning_setups(strategy, automatic, expected):
    from brs.integrations.lightning import _sync_model

    name, attributes = strategy[0], (strategy[1] if len(strategy) > 1 else {})
    model, why = _sync_model(lightning_setup(name, **attributes),
                             SimpleNamespace(automatic_optimization=automatic))
    assert model == expected, why


def test_lightning_callback_resolves_before_it_loads_a_checkpoint(caplog):
    """The callback's on_train_start under DDP: sync "step", and a position saved by a "step"
    sampler (the checkpoint of the same job) loads on it."""
    pytest.importorskip("lightning")
    from torch.utils.data import DataLoader

    from _support import TokenDataset, pad_collate
    from brs.integrations.lightning import LightningBatchSampler, RebalanceCallback

    planned = sampler()
    trainer = SimpleNamespace(
        train_dataloader=DataLoader(TokenDataset(scaled_lengths(64)), collate_fn=pad_collate,
                                    batch_sampler=LightningBatchSampler(planned)),
        accumulate_grad_batches=2, distributed_sampler_kwargs={"num_replicas": 2, "rank": 0},
        strategy=lightning_setup("DDPStrategy"), max_epochs=1, max_steps=-1)
    callback = RebalanceCallback(metrics=False)
    callback.load_state_dict({"sampler": sampler(sync=STEP).state_dict(consumed=2)})
    with caplog.at_level(logging.INFO, logger="brs"):
        callback.on_train_start(trainer, SimpleNamespace(automatic_optimization=True))
    assert planned.sync == STEP
    assert "under Lightning's DDPStrategy" in caplog.text
    assert next(iter(planned)) == planned.plan(1).micro_batches[0][0].indices


# -- the Trainer under torchrun: DDP, gradient accumulation 2 -------------------------------------

def reference(rank, sync):
    return BatchRebalanceSampler(scaled_lengths(cfg.NUM_SAMPLES),
                                 per_device_batch_size=cfg.PER_DEVICE, grad_accum=cfg.GRAD_ACCUM,
                                 dp_size=2, rank=rank, seed=cfg.SEED, drop_last=False, sync=sync,
                                 # the Trainer's cost model when given none (brs/integrations/transformers.py)
                                 cost_model=CostModel.from_config(tiny_gpt2().config))


@pytest.fixture(scope="module")
def ddp_run(tmp_path_factory, torchrun):
    out = tmp_path_factory.mktemp("sync-auto")
    torchrun("run_sync_auto.py", "--out", out)
    return [read_json(out / f"result-rank{rank}.json") for rank in range(2)]


@pytest.mark.distributed
def test_the_trainer_under_ddp_with_accumulation_plans_per_step_sync(ddp_run):
    # The setup discriminates: its first step splits differently under the two models.
    step_plan, micro_plan = reference(0, STEP).plan(0), reference(0, MICRO_STEP).plan(0)
    assert step_plan.micro_batches != micro_plan.micro_batches
    for rank, result in enumerate(ddp_run):
        assert result["distributed_type"] == "MULTI_CPU" and result["dp_size"] == 2
        assert (result["sync"], result["saved_sync"]) == (STEP, STEP)
        assert result["fingerprint"] == reference(rank, STEP).fingerprint
        trained = [entry["indices"] for entry in result["trained"] if entry["step"] == 0]
        assert trained == [mb.indices for mb in reference(rank, STEP).plan(0).micro_batches[rank]]
        (message,) = [m for m in result["log"] if "sync='auto'" in m]
        assert "the Trainer" in message and "sync='step'" in message and "no_sync" in message
