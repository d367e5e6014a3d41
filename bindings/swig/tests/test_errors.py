"""Every failing status raises, with brs_strerror and the handle's detail; bad Python values
(wrong types, 2**64, NaN/inf, iterators, masked arrays) are refused before any C call. The cases
of BadInput are recorded for docs/errors.md when $BRS_ERROR_LOG is set."""
import itertools
import json
import os
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

    def test_epoch_check_refuses_the_cap_and_names_one_that_plans(self):
        sampler = b.Sampler(LENGTHS, batch_size=4, dp_size=2, max_tokens=80, shuffle=0)
        detail = self.assertRaisesStatus(ValueError, b.BRS_ERR_CAP_INFEASIBLE,
                                         sampler.check_epoch)
        cap, needed = b.Sampler(LENGTHS, batch_size=4, dp_size=2, shuffle=0).check_epoch()
        self.assertEqual(needed, 1)  # no cap: one micro-batch would do
        self.assertIn(str(cap), detail)
        sampler.set_int(b.BRS_OPT_MAX_TOKENS, cap)
        self.assertLessEqual(sampler.check_epoch()[1], 2)
        sampler.plan(0)

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


def record(call, bad_input, exception):
    path = os.environ.get("BRS_ERROR_LOG")
    if path:
        with open(path, "a", encoding="utf-8") as log:
            log.write(json.dumps({"layer": "SWIG (Python)", "call": call, "input": bad_input,
                                  "outcome": type(exception).__name__,
                                  "message": str(exception)}) + "\n")


class BadInput(unittest.TestCase):
    CASES = [  # (call, bad input, function, exception, what the message must say)
        ("Sampler(lengths, batch_size)", "batch_size='2'",
         lambda: b.Sampler(LENGTHS, batch_size="2"), TypeError, r"int64_t"),
        ("Sampler(lengths, batch_size)", "batch_size=2.5",
         lambda: b.Sampler(LENGTHS, batch_size=2.5), TypeError, r"int64_t"),
        ("Sampler(lengths, batch_size)", "batch_size=-1",
         lambda: b.Sampler(LENGTHS, batch_size=-1), ValueError,
         r"batch_size = -1 is out of range \[1, \d+\]"),
        ("Sampler(lengths, batch_size)", "batch_size=0",
         lambda: b.Sampler(LENGTHS, batch_size=0), ValueError, r"batch_size = 0 is out of range"),
        ("Sampler(lengths, seed)", "seed=2**64", lambda: b.Sampler(LENGTHS, seed=2**64),
         OverflowError, r"int64_t"),
        ("Sampler(lengths, alpha)", "alpha=nan", lambda: b.Sampler(LENGTHS, alpha=float("nan")),
         ValueError, r"alpha = nan is out of range"),
        ("Sampler(lengths, alpha)", "alpha=inf", lambda: b.Sampler(LENGTHS, alpha=float("inf")),
         ValueError, r"alpha = inf is out of range"),
        ("Sampler(lengths, max_tokens)", "max_tokens=-1",
         lambda: b.Sampler(LENGTHS, max_tokens=-1), ValueError, r"max_tokens"),
        ("Sampler(lengths)", "an endless iterator", lambda: b.Sampler(itertools.count(1)),
         TypeError, r"an iterator may never end: pass list"),
        ("Sampler(lengths)", "a generator", lambda: b.Sampler(n for n in LENGTHS), TypeError,
         r"sequence of ints"),
        ("Sampler(lengths)", "[30, 2**64]", lambda: b.Sampler([30, 2**64]), ValueError,
         r"lengths\[1\] is not an integer in 0 .. 2\*\*32-1"),
        ("Sampler(lengths)", "[30, None]", lambda: b.Sampler([30, None]), ValueError,
         r"lengths\[1\]"),
        ("Sampler.plan(step)", "step=-1", lambda: b.Sampler(LENGTHS).plan(-1),
         (OverflowError, ValueError), r"."),
        ("Sampler.plan(step)", "step=2**64", lambda: b.Sampler(LENGTHS).plan(2**64),
         OverflowError, r"."),
        ("Sampler.plan(step)", "step='0'", lambda: b.Sampler(LENGTHS).plan("0"), TypeError,
         r"."),
    ]

    def test_cases(self):
        for call, bad, function, exception, pattern in self.CASES:
            with self.subTest(call=call, bad=bad):
                with self.assertRaisesRegex(exception, pattern) as caught:
                    function()
                record(call, bad, caught.exception)

    def test_a_masked_array_is_refused(self):
        try:
            import numpy as np
        except ImportError:
            self.skipTest("numpy is not installed")
        masked = np.ma.masked_array(LENGTHS, mask=[0, 1] + [0] * (len(LENGTHS) - 2))
        with self.assertRaisesRegex(ValueError, r"lengths\[1\]") as caught:
            b.Sampler(masked)
        record("Sampler(lengths)", "a numpy masked array", caught.exception)

    def test_no_message_outlives_its_call(self):
        sampler = b.Sampler(LENGTHS, batch_size=2)
        with self.assertRaisesRegex(ValueError, "rank"):
            sampler.set_int(b.BRS_OPT_RANK, -5)
        with self.assertRaises(ValueError) as caught:
            sampler.get_int(999)
        self.assertNotIn("rank", str(caught.exception))
        self.assertIn("999", str(caught.exception))


if __name__ == "__main__":
    unittest.main()
