#!/usr/bin/env python3
"""check_header_defaults.py fails, naming the option, where brs.h and the table disagree."""
import pathlib
import sys
import unittest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import check_header_defaults as check  # noqa: E402

HEADER = """
/** int: batch_size, the average micro-batch size. Default 8. */
#define BRS_OPT_BATCH_SIZE 1
/** double: alpha, the quadratic term, 0 .. 1000,
 *  stored rounded. Default 0.001. */
#define BRS_OPT_ALPHA 10
/** int: sync, the synchronisation model.
 *  Default BRS_SYNC_MICRO_STEP. */
#define BRS_OPT_SYNC 13
#define BRS_SYNC_MICRO_STEP 0
#define BRS_SYNC_STEP 1
"""
TABLE = {1: ("batch_size", 8, 1, 16777216), 10: ("alpha", 0.001, 0.0, 1000.0),
         13: ("sync", 0, 0, 1)}


def problems(header=HEADER, table=None):
    return check.compare(check.documented_options(header), TABLE if table is None else table,
                         check.header_constants(header))


class CheckHeaderDefaults(unittest.TestCase):
    def test_agreement_passes(self):
        self.assertEqual(problems(), [])

    def test_another_default_fails(self):
        found = problems(HEADER.replace("Default 8.", "Default 4."))
        self.assertEqual(len(found), 1)
        self.assertIn("BRS_OPT_BATCH_SIZE", found[0])
        self.assertIn("Default 4", found[0])

    def test_another_named_default_fails(self):
        found = problems(HEADER.replace("Default BRS_SYNC_MICRO_STEP", "Default BRS_SYNC_STEP"))
        self.assertEqual(len(found), 1)
        self.assertIn("BRS_OPT_SYNC", found[0])

    def test_a_double_default_is_compared_as_a_number(self):
        found = problems(HEADER.replace("Default 0.001.", "Default 0.002."))
        self.assertEqual(len(found), 1)
        self.assertIn("BRS_OPT_ALPHA", found[0])

    def test_other_bounds_fail(self):
        found = problems(HEADER.replace("0 .. 1000", "0 .. 100"))
        self.assertEqual(len(found), 1)
        self.assertIn("0 .. 100", found[0])

    def test_a_missing_default_fails(self):
        found = problems(HEADER.replace(" Default 8.", ""))
        self.assertEqual(len(found), 1)
        self.assertIn("no \"Default", found[0])

    def test_an_option_missing_on_either_side_fails(self):
        extra = {**TABLE, 15: ("encoder_alpha", 0.001, 0.0, 1000.0)}
        self.assertIn("encoder_alpha", problems(table=extra)[0])
        fewer = {key: row for key, row in TABLE.items() if key != 13}
        self.assertIn("BRS_OPT_SYNC = 13", problems(table=fewer)[0])


if __name__ == "__main__":
    unittest.main()
