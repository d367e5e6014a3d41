"""brs_swig reproduces every golden vector exactly (indices, stats, totals)."""
import json
import os
import pathlib
import unittest

import brs_swig
from golden import expected_indices, expected_stats, load_vectors, swig_sampler


def check_vector(test, vector, sampler):
    """sampler (configured as the vector says) reproduces every plan of it."""
    test.assertEqual(sampler.fingerprint(), vector["fingerprint"])
    test.assertEqual(sampler.steps_per_epoch(), vector["steps_per_epoch"])
    for plan in vector["plans"]:
        sampler.set_epoch(plan["epoch"])
        test.assertEqual(sampler.epoch(), plan["epoch"])
        test.assertEqual(sampler.plan(plan["step"]), expected_indices(plan))
        test.assertEqual(sampler.stats(), expected_stats(plan))
        test.assertEqual(sampler.plan_double(brs_swig.BRS_PLAN_MAX_COST), plan["max_cost"])
        test.assertEqual(sampler.plan_double(brs_swig.BRS_PLAN_LOWER_BOUND),
                         plan["lower_bound"])
        test.assertEqual(sampler.plan_int(brs_swig.BRS_PLAN_EPOCH), plan["epoch"])
        test.assertEqual(sampler.plan_int(brs_swig.BRS_PLAN_STEP), plan["step"])


class GoldenVectors(unittest.TestCase):
    def test_every_vector(self):
        for vector in load_vectors():
            with self.subTest(vector=vector["name"]):
                check_vector(self, vector, swig_sampler(vector))

    def test_options_read_back(self):
        vector = load_vectors()[0]
        sampler = swig_sampler(vector)
        options = vector["options"]
        self.assertEqual(sampler.get_int(brs_swig.BRS_OPT_DP_SIZE), options["dp_size"])
        self.assertEqual(sampler.get_int(brs_swig.BRS_OPT_SEED), options["seed"])
        self.assertAlmostEqual(sampler.get_double(brs_swig.BRS_OPT_ALPHA), options["alpha"],
                               delta=1e-6)

    def test_options_change_the_plan(self):
        vector = next(v for v in load_vectors() if v["options"]["shuffle"] == 1)
        sampler = swig_sampler(vector)
        before, fingerprint = sampler.plan(0), sampler.fingerprint()
        sampler.set_int(brs_swig.BRS_OPT_SEED, vector["options"]["seed"] + 1)
        self.assertNotEqual(sampler.fingerprint(), fingerprint)
        self.assertNotEqual(sampler.plan(0), before)
    def test_the_ranks_time_splits_into_useful_padding_and_waiting(self):
        for vector in load_vectors():
            with self.subTest(vector=vector["name"]):
                sampler = swig_sampler(vector)
                plan = vector["plans"][0]
                sampler.set_epoch(plan["epoch"])
                sampler.plan(plan["step"])
                get = sampler.plan_double
                ranks = vector["options"].get("dp_size", 1) * vector["options"].get("cp_size", 1)
                whole = sum(get(k) for k in (brs_swig.BRS_PLAN_USEFUL_TIME,
                                             brs_swig.BRS_PLAN_PADDING_TIME,
                                             brs_swig.BRS_PLAN_WAITING_TIME))
                self.assertAlmostEqual(whole / (ranks * get(brs_swig.BRS_PLAN_STEP_TIME)), 1,
                                       places=9)
                self.assertAlmostEqual(get(brs_swig.BRS_PLAN_USEFUL_TIME)
                                       + get(brs_swig.BRS_PLAN_PADDING_TIME),
                                       get(brs_swig.BRS_PLAN_TOTAL_COST), delta=1e-6 * whole)


def strategy_value(name):
    """The BRS_STRATEGY_* value the library names `name`."""
    lower, upper = brs_swig.option_bounds_int(brs_swig.BRS_OPT_STRATEGY)
    return next(v for v in range(lower, upper + 1)
                if brs_swig.option_value_name(brs_swig.BRS_OPT_STRATEGY, v) == name)


class Strategies(unittest.TestCase):
    def test_strategy_vectors(self):
        directory = pathlib.Path(os.environ["BRS_VECTORS"]) / "strategies"
        files = sorted(directory.glob("*.json"))
        self.assertTrue(files, f"no strategy vectors in {directory}")
        for path in files:
            vector = json.loads(path.read_text())
            with self.subTest(vector=vector["name"]):
                options = dict(vector["options"])
                strategy = options.pop("strategy")
                sampler = brs_swig.Sampler(vector["lengths"], **options)
                sampler.set_int(brs_swig.BRS_OPT_STRATEGY, strategy_value(strategy))
                check_vector(self, vector, sampler)

    def test_load_reproduces_the_computed_plan(self):
        for vector in load_vectors():
            with self.subTest(vector=vector["name"]):
                computed, loaded = swig_sampler(vector), swig_sampler(vector)
                plan = vector["plans"][-1]
                computed.set_epoch(plan["epoch"])
                loaded.set_epoch(plan["epoch"])
                batches = computed.plan(plan["step"])
                flat = [m for rank in batches for m in rank]
                indices = [i for m in flat for i in m]
                self.assertEqual(loaded.load(indices, [len(m) for m in flat], plan["step"]), batches)
                self.assertEqual(loaded.stats(), computed.stats())
                for key in (brs_swig.BRS_PLAN_MAX_COST, brs_swig.BRS_PLAN_MICRO_SYNC_TIME,
                            brs_swig.BRS_PLAN_STEP_SYNC_TIME, brs_swig.BRS_PLAN_LOWER_BOUND):
                    self.assertEqual(loaded.plan_double(key), computed.plan_double(key))

    def test_load_errors(self):
        sampler = swig_sampler(load_vectors()[0])
        with self.assertRaises(ValueError):
            sampler.load([0, 1], [1], 0)          # counts do not add up
        with self.assertRaises(ValueError):
            sampler.load([0], [1], 0)             # K micro-batches expected
        with self.assertRaises(ValueError):
            sampler.load([-1], [1], 0)
        with self.assertRaises(RuntimeError):     # the failed load left no plan
            sampler.stats()


class ShapeVectors(unittest.TestCase):
    """tests/vectors/shapes: max_shapes (and sync, by its value's name, when set) as options
    by name; each vector holds the sampler's shape vocabulary too."""

    def test_shape_vectors(self):
        directory = pathlib.Path(os.environ["BRS_VECTORS"]) / "shapes"
        files = sorted(directory.glob("*.json"))
        self.assertTrue(files, f"no shape vectors in {directory}")
        for path in files:
            vector = json.loads(path.read_text())
            with self.subTest(vector=vector["name"]):
                self.assertIn("max_shapes", vector["options"])
                sampler = swig_sampler(vector)
                self.assertEqual(sampler.get_option("max_shapes"),
                                 vector["options"]["max_shapes"])
                self.assertEqual(sampler.shape_vocabulary(), vector["vocabulary"])
                check_vector(self, vector, sampler)


class OptionTable(unittest.TestCase):
    def test_every_option_named_and_found(self):
        count = brs_swig.option_count()
        self.assertGreaterEqual(count, 13)
        names = []
        for index in range(count):
            key = brs_swig.option_key(index)
            name = brs_swig.option_name(key)
            self.assertEqual(brs_swig.option_find(name), key)
            self.assertTrue(brs_swig.option_help(key))
            if brs_swig.option_type(key) == brs_swig.BRS_OPTION_INT:
                lower, upper = brs_swig.option_bounds_int(key)
                self.assertTrue(lower <= brs_swig.option_default_int(key) <= upper)
            else:
                lower, upper = brs_swig.option_bounds_double(key)
                self.assertTrue(lower <= brs_swig.option_default_double(key) <= upper)
            names.append(name)
        self.assertIn("strategy", names)
        with self.assertRaises(ValueError):
            brs_swig.option_find("per_device_batch_size")
        with self.assertRaises(ValueError):
            brs_swig.option_key(count)
        self.assertEqual(brs_swig.option_value_name(brs_swig.BRS_OPT_SYNC, 1), "step")


if __name__ == "__main__":
    unittest.main()
