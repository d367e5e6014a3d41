"""Every failing status raises, with brs_strerror and the handle's detail."""
import unittest

import brs_swig as b

LENGTHS = [30, 10, 50, 20, 40, 60, 70, 80]


class Errors(unittest.TestCase):
    def assertRaisesStatus(self, exception, status, call, *args, **kwargs):
        """call raises `exception` whose message names `status` and gives a detail."""
        with self.assertRaises(exception) as caught:
            call(*args, **kwargs)
        message = str(caught.exception)
        prefix = f"{b.strerror(status)} (brs status {status})"
        self.assertTrue(message.startswith(prefix), f"{message!r} lacks {prefix!r}")
        return message[len(prefix):].lstrip(": ")

    def test_zero_length_names_its_index(self):
        detail = self.assertRaisesStatus(ValueError, b.BRS_ERR_INVALID_LENGTH,
                                         b.Sampler, [5, 9, 0, 7], batch_size=1)
        self.assertIn("2", detail)

    def test_empty_lengths(self):
        self.assertRaisesStatus(ValueError, b.BRS_ERR_INVALID_ARGUMENT, b.Sampler, [])

    def test_lengths_that_are_not_uint32(self):
        for bad in ([1, -1], [1, 2**32], [1, "x"], [1, 2.0], 7):
            with self.subTest(bad=bad), self.assertRaises((ValueError, TypeError)):
                b.Sampler(bad)

    def test_lengths_from_any_integer_sequence(self):
        expected = b.Sampler([3, 1, 2, 5], batch_size=2).plan(0)

        class Length:  # an integer type that is not int, as numpy.uint32 is
            def __init__(self, value):
                self.value = value

            def __index__(self):
                return self.value
        for lengths in ((3, 1, 2, 5), [Length(v) for v in (3, 1, 2, 5)]):
            with self.subTest(lengths=type(lengths[0]).__name__):
                self.assertEqual(b.Sampler(lengths, batch_size=2).plan(0), expected)

    def test_option_out_of_range(self):
        detail = self.assertRaisesStatus(ValueError, b.BRS_ERR_OUT_OF_RANGE,
                                         b.Sampler, LENGTHS, batch_size=1, dp_size=0)
        self.assertTrue(detail, "no detail message")

    def test_too_few_samples(self):
        self.assertRaisesStatus(ValueError, b.BRS_ERR_TOO_FEW_SAMPLES,
                                b.Sampler, LENGTHS, batch_size=8, dp_size=2)

    def test_sample_longer_than_cap(self):
        self.assertRaisesStatus(ValueError, b.BRS_ERR_SAMPLE_TOO_LONG,
                                b.Sampler, LENGTHS, batch_size=2, max_tokens=75)

    def test_infeasible_cap_says_how_many_micro_batches(self):
        sampler = b.Sampler(LENGTHS, batch_size=4, dp_size=2, max_tokens=80, shuffle=0)
        detail = self.assertRaisesStatus(ValueError, b.BRS_ERR_CAP_INFEASIBLE, sampler.plan, 0)
        self.assertRegex(detail, r"\d")

    def test_step_out_of_range_then_no_stale_plan(self):
        sampler = b.Sampler(LENGTHS, batch_size=2, dp_size=2)
        sampler.plan(0)
        self.assertRaisesStatus(ValueError, b.BRS_ERR_OUT_OF_RANGE, sampler.plan,
                                sampler.steps_per_epoch())
        self.assertRaises(RuntimeError, sampler.stats)

    def test_stats_before_any_plan(self):
        sampler = b.Sampler(LENGTHS, batch_size=2)
        self.assertRaisesStatus(RuntimeError, b.BRS_ERR_STATE, sampler.stats)
        self.assertRaisesStatus(RuntimeError, b.BRS_ERR_STATE, sampler.plan_int, b.BRS_PLAN_STEP)

    def test_failed_setter_keeps_the_value(self):
        sampler = b.Sampler(LENGTHS, batch_size=2, dp_size=2)
        self.assertRaisesStatus(ValueError, b.BRS_ERR_OUT_OF_RANGE,
                                sampler.set_int, b.BRS_OPT_DP_SIZE, -3)
        self.assertEqual(sampler.get_int(b.BRS_OPT_DP_SIZE), 2)
        self.assertRaisesStatus(ValueError, b.BRS_ERR_OUT_OF_RANGE,
                                sampler.set_double, b.BRS_OPT_ALPHA, float("nan"))

    def test_unknown_keys(self):
        sampler = b.Sampler(LENGTHS, batch_size=2)
        self.assertRaisesStatus(ValueError, b.BRS_ERR_UNSUPPORTED, sampler.set_int, 999, 1)
        self.assertRaisesStatus(ValueError, b.BRS_ERR_UNSUPPORTED, sampler.get_double,
                                b.BRS_OPT_DP_SIZE)
        self.assertRaisesStatus(ValueError, b.BRS_ERR_UNSUPPORTED, b.option_bounds_int,
                                b.BRS_OPT_ALPHA)
        self.assertRaisesStatus(ValueError, b.BRS_ERR_UNSUPPORTED, b.option_bounds_double,
                                b.BRS_OPT_DP_SIZE)

    def test_bounds_and_versions(self):
        lower, upper = b.option_bounds_int(b.BRS_OPT_DP_SIZE)
        self.assertEqual(lower, 1)
        self.assertGreater(upper, lower)
        lower, upper = b.option_bounds_double(b.BRS_OPT_ALPHA)
        self.assertEqual((lower, upper), (0.0, 1000.0))
        self.assertEqual(b.version_number() // 10000, b.BRS_VERSION_MAJOR)
        self.assertEqual(b.version_string(),
                         f"{b.BRS_VERSION_MAJOR}.{b.BRS_VERSION_MINOR}.{b.BRS_VERSION_PATCH}")
        self.assertNotEqual(b.strerror(b.BRS_ERR_STATE), b.strerror(b.BRS_ERR_NO_MEMORY))


if __name__ == "__main__":
    unittest.main()
