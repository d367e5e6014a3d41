#!/usr/bin/env python3
"""check_bindings.py fails, naming binding and symbol, where it must."""
import pathlib
import sys
import tempfile
import unittest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import check_bindings  # noqa: E402

SYM = "LIBBRS_1.0 {\n  global:\n    brs_alpha;\n    brs_beta;\n  local:\n    *;\n};\n"
FULL = {
    "bindings/python/brs/_native.py": 'lib.brs_alpha.restype = None\nNAMES = ["brs_beta"]\n',
    "bindings/rust/brs-sys/src/lib.rs":
        'extern "C" {\n    pub fn brs_alpha();\n    pub fn brs_beta(x: *mut u8) -> i32;\n}\n',
    "bindings/swig/brs.i": "%{\nstatic void f(void) { brs_alpha(); brs_beta (0); }\n%}\n",
    "bindings/julia/BatchRebalance.jl/src/api.jl":
        "f() = ccall((:brs_alpha, lib), Cvoid, ())\ng() = @ccall lib.brs_beta()::Int32\n",
}


class CheckBindings(unittest.TestCase):
    def problems(self, files, not_wrapped=""):
        with tempfile.TemporaryDirectory() as tmp:
            root = pathlib.Path(tmp)
            for path, text in {"libbrs/libbrs.sym": SYM, **files}.items():
                (root / path).parent.mkdir(parents=True, exist_ok=True)
                (root / path).write_text(text)
            (root / "tests/coverage").mkdir(parents=True)
            (root / "tests/coverage/not_wrapped.txt").write_text(not_wrapped)
            return check_bindings.check(root)

    def with_file(self, path, text):
        return {**FULL, path: text}

    def test_complete_bindings_pass(self):
        self.assertEqual(self.problems(FULL), [])

    def test_missing_symbol_names_binding_and_symbol(self):
        files = self.with_file("bindings/julia/BatchRebalance.jl/src/api.jl", "f() = ccall((:brs_alpha, lib), Cvoid, ())\n")
        problems = self.problems(files)
        self.assertEqual(len(problems), 1)
        self.assertTrue(problems[0].startswith("julia: brs_beta is not wrapped"), problems)

    def test_comments_and_docstrings_do_not_count(self):
        cases = {
            "bindings/python/brs/_native.py": 'lib.brs_alpha\n# lib.brs_beta\n"""calls brs_beta"""\n',
            "bindings/rust/brs-sys/src/lib.rs": 'extern "C" { pub fn brs_alpha(); }\n// fn brs_beta();\nfn brs_beta() {}\n',
            "bindings/swig/brs.i": "brs_alpha();\n/* brs_beta() */ // brs_beta()\n",
            "bindings/julia/BatchRebalance.jl/src/api.jl": "ccall((:brs_alpha, l), Cvoid, ())\n# ccall((:brs_beta, l))\n",
        }
        for path, text in cases.items():
            with self.subTest(path=path):
                problems = self.problems(self.with_file(path, text))
                self.assertEqual(len(problems), 1, problems)
                self.assertIn("brs_beta is not wrapped", problems[0])

    def test_missing_binding_directory(self):
        files = {k: v for k, v in FULL.items() if "rust" not in k}
        self.assertEqual(self.problems(files), ["brs-sys: no files match bindings/rust/brs-sys/src/**/*.rs"])

    def test_exemptions(self):
        files = self.with_file("bindings/swig/brs.i", "brs_alpha();\n")
        self.assertEqual(self.problems(files, "swig brs_beta needs a callback type\n"), [])
        for line, message in [("swig brs_beta\n", "needs '<binding> <symbol> <reason>'"),
                              ("perl brs_beta why\n", "unknown binding 'perl'"),
                              ("swig brs_gamma why\n", "brs_gamma is not exported")]:
            with self.subTest(line=line):
                self.assertTrue(any(message in p for p in self.problems(files, line)))
        stale = self.problems(FULL, "julia brs_alpha no reason any more\n")
        self.assertEqual(len(stale), 1)
        self.assertIn("julia: brs_alpha is wrapped but listed", stale[0])

    def test_option_constants_of_the_header(self):
        header = "#define BRS_OPT_ALPHA 10\n#define BRS_OPT_SYNC 13\n#define BRS_OK 0\n"
        defined = {
            "bindings/python/brs/_native.py": FULL["bindings/python/brs/_native.py"]
            + "OPT_ALPHA = 10\nOPT_SYNC = 13\n",
            "bindings/rust/brs-sys/src/lib.rs": FULL["bindings/rust/brs-sys/src/lib.rs"]
            + "pub const BRS_OPT_ALPHA: i32 = 10;\npub const BRS_OPT_SYNC: i32 = 13;\n",
            "bindings/swig/brs.i": FULL["bindings/swig/brs.i"] + "%include <brs.h>\n",
            "bindings/julia/BatchRebalance.jl/src/api.jl":
                FULL["bindings/julia/BatchRebalance.jl/src/api.jl"]
                + "const BRS_OPT_ALPHA = Int32(10)\nconst BRS_OPT_SYNC = Int32(13)\n",
        }
        self.assertEqual(self.problems({**defined, "include/brs.h": header}), [])
        named = {**defined, "bindings/swig/brs.i": FULL["bindings/swig/brs.i"]
                 + "x = BRS_OPT_ALPHA + BRS_OPT_SYNC;\n"}
        self.assertEqual(self.problems({**named, "include/brs.h": header}), [])
        for path, text in named.items():
            with self.subTest(path=path):
                lacking = text.replace("SYNC", "SYNK")
                problems = self.problems({**named, path: lacking, "include/brs.h": header})
                self.assertEqual(len(problems), 1, problems)
                self.assertIn("BRS_OPT_SYNC of include/brs.h is not defined", problems[0])

    def test_symbols_of_the_real_version_script(self):
        root = pathlib.Path(__file__).resolve().parents[2]
        symbols = check_bindings.exported_symbols(root)
        self.assertIn("brs_plan_compute", symbols)
        self.assertNotIn("*", symbols)


if __name__ == "__main__":
    unittest.main()
