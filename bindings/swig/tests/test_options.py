"""brs_swig.Sampler takes every option of the library's table by its name.

The table is walked with the module's option_* functions (brs_option_*), so an option added to
the library is set and read back here with no edit; each value is read back from the library
with get_int / get_double by key.
"""
import unittest

import brs_swig as b

LENGTHS = [1 + (i * 7919) % 500 for i in range(400)]
INT64_MAX = 2**63 - 1


class Row:
    """One option of the table, as the module reports it."""

    def __init__(self, index):
        self.key = b.option_key(index)
        self.name = b.option_name(self.key)
        self.is_double = b.option_type(self.key) == b.BRS_OPTION_DOUBLE
        if self.is_double:
            self.default = b.option_default_double(self.key)
            self.lower, self.upper = b.option_bounds_double(self.key)
        else:
            self.default = b.option_default_int(self.key)
            self.lower, self.upper = b.option_bounds_int(self.key)

    def other_value(self):
        """A value within the bounds other than the default: the next one up. An integer of
        0 .. INT64_MAX (a count without bound: a cap whose 0 means none, the seed) takes 2**20
        instead, since a cap of 1 token is one that no sample meets."""
        if self.is_double:
            return self.default + 0.5 if self.default + 0.5 <= self.upper else self.lower
        if (self.lower, self.upper) == (0, INT64_MAX):
            return 2**20
        return self.default + 1 if self.default < self.upper else self.lower

    def stored(self, sampler):
        """The value the library holds, read by key."""
        return (sampler.get_double if self.is_double else sampler.get_int)(self.key)


def table():
    return [Row(index) for index in range(b.option_count())]


class EveryOption(unittest.TestCase):
    def test_every_option_is_set_by_its_name_and_read_back(self):
        rows = table()
        self.assertGreaterEqual(len(rows), 14)
        chosen = {row.name: row.other_value() for row in rows}
        for row in rows:
            self.assertNotEqual(chosen[row.name], row.default, row.name)
        sampler = b.Sampler(LENGTHS, **chosen)
        for row in rows:
            with self.subTest(option=row.name):
                self.assertAlmostEqual(row.stored(sampler), chosen[row.name], delta=1e-6)
                self.assertEqual(sampler.get_option(row.name), row.stored(sampler))

    def test_an_option_not_given_keeps_the_library_default(self):
        sampler = b.Sampler(LENGTHS)
        for row in table():
            with self.subTest(option=row.name):
                self.assertAlmostEqual(row.stored(sampler), row.default, delta=1e-12)

    def test_set_option_after_construction(self):
        sampler = b.Sampler(LENGTHS, batch_size=4, dp_size=2)
        for row in table():
            if row.name in ("rank", "dp_size", "batch_size"):
                continue  # bound by the lengths and each other: validate() checks them
            with self.subTest(option=row.name):
                sampler.set_option(row.name, row.other_value())
                self.assertAlmostEqual(row.stored(sampler), row.other_value(), delta=1e-6)
        sampler.validate()

    def test_named_values_and_numbers(self):
        sampler = b.Sampler(LENGTHS, sync="step", strategy="length_grouped", alpha=0)
        self.assertEqual(sampler.get_int(b.BRS_OPT_SYNC), b.BRS_SYNC_STEP)
        self.assertEqual(sampler.get_option("strategy"), b.BRS_STRATEGY_LENGTH_GROUPED)
        self.assertEqual(sampler.get_option("alpha"), 0.0)
        sampler = b.Sampler(LENGTHS, sync=b.BRS_SYNC_STEP, shuffle=False)
        self.assertEqual((sampler.get_option("sync"), sampler.get_option("shuffle")),
                         (b.BRS_SYNC_STEP, 0))

    def test_the_positional_options_of_the_1_4_constructor(self):
        sampler = b.Sampler(LENGTHS, 4, 2, 2, 1, 9, 0, 0, 0.25, 3.0, 4096, 1, 8)
        expected = {"batch_size": 4, "grad_accum": 2, "dp_size": 2, "rank": 1, "seed": 9,
                    "shuffle": 0, "drop_last": 0, "alpha": 0.25, "intercept": 3.0,
                    "max_tokens": 4096, "packed": 1, "pad_to_multiple_of": 8}
        for name, value in expected.items():
            self.assertEqual(sampler.get_option(name), value, name)
        mixed = b.Sampler(LENGTHS, 4, 2, sync="step")
        self.assertEqual((mixed.get_option("grad_accum"), mixed.get_option("sync")), (2, 1))
        with self.assertRaisesRegex(ValueError, "by name"):
            b.Sampler(LENGTHS, *expected.values(), 0)

    def test_wrong_names_kinds_and_values(self):
        cases = [({"per_device_batch_size": 2}, ValueError, "no option is named"),
                 ({"batch_size": "2"}, TypeError, "int64_t"),
                 ({"seed": 0.5}, TypeError, "int64_t"),
                 ({"seed": 2**64}, OverflowError, "int64_t"),
                 ({"alpha": "high"}, TypeError, "alpha takes a number"),
                 ({"sync": "never"}, ValueError, "micro_step, step"),
                 ({"sync": 2}, ValueError, "sync = 2 is out of range"),
                 ({"batch_size": None}, TypeError, "NoneType")]
        for options, exception, pattern in cases:
            with self.subTest(options=options):
                with self.assertRaisesRegex(exception, pattern):
                    b.Sampler(LENGTHS, **options)
        sampler = b.Sampler(LENGTHS)
        with self.assertRaisesRegex(ValueError, "no option is named"):
            sampler.get_option("nope")
        with self.assertRaisesRegex(ValueError, "no option is named"):
            sampler.set_option("nope", 1)


class OptionQueries(unittest.TestCase):
    """LIBBRS_1.6: value names back to values, keywords and scopes, from the library."""

    def test_value_names_are_found_back(self):
        for row in table():
            if row.is_double:
                continue
            try:
                b.option_value_name(row.key, row.lower)
            except ValueError:
                with self.assertRaises(ValueError):
                    b.option_value_find(row.key, "1")
                continue
            for value in range(row.lower, row.upper + 1):
                name = b.option_value_name(row.key, value)
                self.assertEqual(b.option_value_find(row.key, name), value, row.name)
        self.assertEqual(b.option_value_find(b.BRS_OPT_SYNC, "step"), b.BRS_SYNC_STEP)
        with self.assertRaises(ValueError):
            b.option_value_find(b.BRS_OPT_STRATEGY, "Random")

    def test_keywords_and_scopes(self):
        for row in table():
            self.assertIn(b.option_scope(row.key), (b.BRS_OPTION_SCOPE_RANK,
                                                    b.BRS_OPTION_SCOPE_SPLIT,
                                                    b.BRS_OPTION_SCOPE_RUN))
            self.assertTrue(b.option_keyword(row.key))
        self.assertEqual(b.option_keyword(b.BRS_OPT_BATCH_SIZE), "per_device_batch_size")
        self.assertEqual(b.option_keyword(b.BRS_OPT_SEED), "seed")
        self.assertEqual(b.option_scope(b.BRS_OPT_RANK), b.BRS_OPTION_SCOPE_RANK)
        self.assertEqual(b.option_scope(b.BRS_OPT_DP_SIZE), b.BRS_OPTION_SCOPE_SPLIT)
        self.assertEqual(b.option_scope(b.BRS_OPT_MAX_SHAPES), b.BRS_OPTION_SCOPE_RUN)
        with self.assertRaises(ValueError):
            b.option_scope(9999)


class ShapeVocabulary(unittest.TestCase):
    OPTIONS = dict(batch_size=4, grad_accum=2, dp_size=3, seed=5)

    def walked(self, sampler, rank):
        shapes = set()
        for step in range(sampler.steps_per_epoch()):
            for indices, stats in zip(sampler.plan(step)[rank], sampler.stats()[rank]):
                shapes.add((len(indices), stats[0] // len(indices)))
        return shapes

    def test_none_without_max_shapes(self):
        self.assertEqual(b.Sampler(LENGTHS, **self.OPTIONS).shape_vocabulary(), [])

    def test_every_rank_and_epoch_runs_shapes_of_it(self):
        vocabularies = []
        for rank in range(3):
            sampler = b.Sampler(LENGTHS, rank=rank, max_shapes=8, **self.OPTIONS)
            vocabulary = [tuple(pair) for pair in sampler.shape_vocabulary()]
            self.assertTrue(1 <= len(vocabulary) <= 8, vocabulary)
            self.assertEqual(vocabulary, sorted(set(vocabulary)))
            for epoch in range(2):
                sampler.set_epoch(epoch)
                self.assertLessEqual(self.walked(sampler, rank), set(vocabulary), (rank, epoch))
            vocabularies.append(vocabulary)
        self.assertEqual(vocabularies[1:], vocabularies[:-1])


if __name__ == "__main__":
    unittest.main()
