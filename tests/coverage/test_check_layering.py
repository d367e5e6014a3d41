#!/usr/bin/env python3
"""scripts/check_layering.py fails, naming the files, on a circle or a call up a layer."""
import pathlib
import sys
import unittest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "scripts"))
import check_layering as check  # noqa: E402

CLEAN = {
    "util/message.h": "#include \"brs.h\"\nbrs_status brs_fail(int status);\n",
    "util/message.c": "#include \"util/message.h\"\nbrs_status brs_fail(int status)\n{\n"
                      "    return status;\n}\n",
    "planner/search.c": "#include \"util/message.h\"\nint brs_search_run(int x)\n{\n"
                        "    return brs_fail(x);\n}\n",
    "api/plan.c": "#include \"util/message.h\"\n/* brs_plan_free is not called here */\n"
                  "int brs_plan_compute(int x)\n{\n    return brs_search_run(x);\n}\n",
}


def with_file(name, text):
    files = dict(CLEAN)
    files[name] = text
    return files


class CheckLayering(unittest.TestCase):
    def test_clean_graph_passes(self):
        self.assertEqual(check.problems(CLEAN), [])

    def test_a_call_back_is_a_circle(self):
        files = with_file("planner/other.c", "int brs_other(int x)\n{\n"
                          "    return brs_search_run(x);\n}\n")
        self.assertEqual(check.problems(files), [])  # one way: no circle
        files["planner/search.c"] = "int brs_search_run(int x)\n{\n    return brs_other(x);\n}\n"
        self.assertEqual(check.problems(files), ["circle: planner/other.c <-> planner/search.c"])

    def test_a_comment_naming_a_function_is_no_call(self):
        files = with_file("util/message.c", CLEAN["util/message.c"] +
                          "/* brs_plan_compute calls this */\n")
        self.assertEqual(check.problems(files), [])

    def test_formats_including_api_fails(self):
        files = with_file("formats/reader.c", "#include \"api/internal.h\"\n")
        files["api/internal.h"] = "struct brs_plan;\n"
        found = check.problems(files)
        self.assertEqual(len(found), 1)
        self.assertIn("formats/reader.c reaches api/internal.h", found[0])

    def test_planner_calling_api_fails(self):
        files = with_file("planner/search.c", "int brs_search_run(int x)\n{\n"
                          "    return brs_plan_compute(x);\n}\n")
        found = check.problems(files)
        self.assertIn("planner/search.c reaches api/plan.c: planner/ may not reach api/", found)
        self.assertTrue(any(f.startswith("circle: api/plan.c <-> planner/search.c")
                            for f in found))

    def test_a_header_inline_calling_its_own_source_is_one_unit(self):
        files = dict(CLEAN)
        files["util/text.h"] = ("void brs_text_write(char *out);\n"
                                "static inline void brs_text_say(char *out)\n{\n"
                                "    brs_text_write(out);\n}\n")
        files["util/text.c"] = ("#include \"util/text.h\"\nvoid brs_text_write(char *out)\n{\n"
                                "    out[0] = 0;\n}\n")
        self.assertEqual(check.problems(files), [])

    def test_a_table_expands_into_its_including_source(self):
        files = dict(CLEAN)
        files["planner/rows.def"] = "BRS_CANDIDATE(fast)\n"
        files["planner/fast.c"] = ("#include \"planner/padded.h\"\n"
                                   "const struct brs_candidate brs_fast_candidate = {0};\n")
        files["planner/padded.h"] = "#include \"planner/rows.def\"\n"  # declares the rows only
        files["planner/padded.c"] = "#include \"planner/rows.def\"\n"
        graph = check.build_graph(files)
        self.assertIn("planner/fast.c", graph["planner/padded.c"])
        self.assertNotIn("planner/fast.c", graph["planner/padded.h"])
        self.assertEqual(check.problems(files), [])


if __name__ == "__main__":
    unittest.main()
