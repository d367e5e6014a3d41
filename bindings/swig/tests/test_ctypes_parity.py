"""brs_swig and the ctypes package brs plan identically, step for step.

Both wrap the same libbrs, so any difference is a marshalling bug in one of
them. Compares every step of two epochs of every golden vector. Skips
(exit 77) only when the ctypes package cannot be imported.
"""
import sys
import unittest

try:
    import brs
except ImportError as error:
    print(f"SKIP: import brs failed: {error}")
    sys.exit(77)

import brs_swig as sampler_module
from golden import load_vectors, swig_sampler


def ctypes_sampler(vector):
    o = vector["options"]
    return brs.BatchRebalanceSampler(
        vector["lengths"], per_device_batch_size=o["batch_size"], grad_accum=o["grad_accum"],
        dp_size=o["dp_size"], rank=0, seed=o["seed"], shuffle=bool(o["shuffle"]),
        drop_last=bool(o["drop_last"]), alpha=o["alpha"], intercept=o["intercept"],
        max_tokens=o["max_tokens"] or None, packed=bool(o["packed"]),
        pad_to_multiple_of=o.get("pad_to_multiple_of"), length_buckets=o.get("length_buckets"))


def outcome(compute, view):
    """("plan", the plan's view) or ("error", exception type): planning may fail (a cap)."""
    try:
        return "plan", view(compute())
    except ValueError as error:
        return "error", type(error)


def ctypes_view(plan):
    """(indices, stats, max_cost, lower_bound) in the shapes brs_swig returns."""
    indices = [[list(mb.indices) for mb in rank] for rank in plan.micro_batches]
    stats = [[[mb.padded_tokens, mb.real_tokens, mb.cost] for mb in rank]
             for rank in plan.micro_batches]
    return indices, stats, plan.max_cost, plan.lower_bound


def swig_view(sampler):
    def view(indices):
        return (indices, sampler.stats(), sampler.plan_double(sampler_module.BRS_PLAN_MAX_COST),
                sampler.plan_double(sampler_module.BRS_PLAN_LOWER_BOUND))
    return view


class CtypesParity(unittest.TestCase):
    def test_same_plans(self):
        for vector in load_vectors():
            with self.subTest(vector=vector["name"]):
                swig, ctypes = swig_sampler(vector), ctypes_sampler(vector)
                self.assertEqual(swig.fingerprint(), ctypes.fingerprint)
                self.assertEqual(swig.stream_fingerprint(), ctypes.stream_fingerprint)
                self.assertEqual(swig.length_buckets(), list(ctypes.length_buckets))
                self.assertEqual(swig.steps_per_epoch(), ctypes.steps_per_epoch)
                epochs = {p["epoch"] for p in vector["plans"]} | {0, 1}
                for epoch in sorted(epochs):
                    swig.set_epoch(epoch)
                    for step in range(swig.steps_per_epoch()):
                        self.assertEqual(
                            outcome(lambda: swig.plan(step), swig_view(swig)),
                            outcome(lambda: ctypes.plan(step, epoch=epoch), ctypes_view),
                            f"epoch {epoch} step {step}")

    def test_same_errors(self):
        """An infeasible cap: the same kind of error and the library's same detail (ctypes
        checks the epoch at construction, SWIG when asked)."""
        lengths, options = [30, 10, 50, 20, 40, 60, 70, 80], dict(dp_size=2, max_tokens=80)
        swig = sampler_module.Sampler(lengths, batch_size=4, shuffle=0, **options)
        with self.assertRaises(ValueError) as swig_error:
            swig.check_epoch()
        with self.assertRaises(ValueError) as ctypes_error:
            brs.BatchRebalanceSampler(lengths, per_device_batch_size=4, shuffle=False, rank=0,
                                      **options)
        reason = sampler_module.strerror(sampler_module.BRS_ERR_CAP_INFEASIBLE)
        detail = str(swig_error.exception).split("): ", 1)[1]
        self.assertIn(reason, str(ctypes_error.exception))
        self.assertIn(detail, str(ctypes_error.exception))
    def test_same_buckets_ladder_and_shapes(self):
        """The default ladder ("auto" in ctypes), the buckets read back and every epoch's
        shapes agree, with pad_to_multiple_of and the ladder set (no cap: every step plans)."""
        for vector in load_vectors():
            with self.subTest(vector=vector["name"]):
                o = dict(vector["options"], pad_to_multiple_of=16, max_tokens=0)
                o.pop("length_buckets", None)
                swig = sampler_module.Sampler(vector["lengths"], **o)
                ladder = swig.bucket_ladder()
                swig.set_length_buckets(ladder)
                swig.validate()
                ctypes = ctypes_sampler(dict(vector, options=dict(o, length_buckets="auto")))
                self.assertEqual(ladder, list(ctypes.length_buckets))
                self.assertEqual(swig.length_buckets(), ladder)
                self.assertEqual(swig.fingerprint(), ctypes.fingerprint)
                for epoch in (0, 1):
                    swig.set_epoch(epoch)
                    self.assertEqual(swig.shapes(),
                                     [list(shape) for shape in ctypes.shapes(epoch)],
                                     f"epoch {epoch}")

    def test_same_batch_plans(self):
        """plan_batch: the same positions as brs.plan_batch, from a configuration whose own
        lengths play no part."""
        lengths = [30, 10, 50, 20, 40, 60, 70, 80, 5, 3]
        swig = sampler_module.Sampler([1], dp_size=2, grad_accum=2, drop_last=0, max_tokens=160)
        self.assertEqual(swig.plan_batch(lengths),
                         brs.plan_batch(lengths, dp_size=2, grad_accum=2, max_tokens=160))
        with self.assertRaises(ValueError):
            swig.plan_batch(lengths[:3])

    def test_same_context_parallel_plans(self):
        """cp_micro_batches: every global rank's group, shares and token ranges as ctypes
        reads them (brs_plan_cp_*)."""
        lengths = [40 + (i * 7919) % 3000 + (i % 9) * 600 for i in range(120)]
        options = dict(dp_size=2, grad_accum=2, cp_size=4, max_tokens_per_rank=4096, packed=1)
        swig = sampler_module.Sampler(lengths, batch_size=2, **options)
        ctypes = brs.BatchRebalanceSampler(lengths, per_device_batch_size=2, rank=0, **options)
        self.assertEqual(swig.fingerprint(), ctypes.fingerprint)
        for step in range(3):
            swig.plan(step)
            self.assertEqual(swig.cp_micro_steps(), 2)
            want = [[[list(mb.indices), mb.cp_ranks[0], len(mb.cp_ranks), mb.padded_tokens,
                      mb.real_tokens, mb.cost, [x for r in mb.token_ranges for x in r]]
                     for mb in rank] for rank in ctypes.plan(step).micro_batches]
            self.assertEqual(swig.cp_micro_batches(), want, f"step {step}")


if __name__ == "__main__":
    unittest.main()
