"""brs_swig reproduces every golden vector exactly (indices, stats, totals)."""
import unittest

import brs_swig
from golden import expected_indices, expected_stats, load_vectors, swig_sampler


class GoldenVectors(unittest.TestCase):
    def test_every_vector(self):
        for vector in load_vectors():
            with self.subTest(vector=vector["name"]):
                self.check_vector(vector)

    def check_vector(self, vector):
        sampler = swig_sampler(vector)
        self.assertEqual(sampler.fingerprint(), vector["fingerprint"])
        self.assertEqual(sampler.steps_per_epoch(), vector["steps_per_epoch"])
        for plan in vector["plans"]:
            sampler.set_epoch(plan["epoch"])
            self.assertEqual(sampler.epoch(), plan["epoch"])
            self.assertEqual(sampler.plan(plan["step"]), expected_indices(plan))
            self.assertEqual(sampler.stats(), expected_stats(plan))
            self.assertEqual(sampler.plan_double(brs_swig.BRS_PLAN_MAX_COST), plan["max_cost"])
            self.assertEqual(sampler.plan_double(brs_swig.BRS_PLAN_LOWER_BOUND),
                             plan["lower_bound"])
            self.assertEqual(sampler.plan_int(brs_swig.BRS_PLAN_EPOCH), plan["epoch"])
            self.assertEqual(sampler.plan_int(brs_swig.BRS_PLAN_STEP), plan["step"])

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


if __name__ == "__main__":
    unittest.main()
