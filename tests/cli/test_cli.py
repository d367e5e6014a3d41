#!/usr/bin/env python3
"""Behaviour tests of the `brs` command (see docs/design.md and `brs --help`).

Usage: test_cli.py BRS VERSION [unittest arguments, e.g. a test class name]

BRS is the built executable, VERSION the project version it must report.
Standard library only; every check runs the real executable.
"""
import ast
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import unittest

BRS = None
VERSION = None
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
KEYS = ["epoch", "step", "rank", "micro", "indices", "padded_tokens", "cost"]


def lognormal_lengths(count, seed):
    """The upstream benchmark's synthetic distribution, clamp(lognormal(5, 1), 16, 1024)."""
    rng = random.Random(seed)
    return [min(1024, max(16, round(rng.lognormvariate(5, 1)))) for _ in range(count)]


def python_package_commands():
    """PYTHON_COMMANDS of bindings/python/brs/_cli.py: the commands of python -m brs that the
    Python package's `brs` runs itself, read from its source (this file imports no package)."""
    path = os.path.join(REPO, "bindings", "python", "brs", "_cli.py")
    with open(path, encoding="utf-8") as stream:
        tree = ast.parse(stream.read())
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "PYTHON_COMMANDS"
                                                for t in node.targets):
            return ast.literal_eval(node.value)
    raise AssertionError(f"{path} has no PYTHON_COMMANDS")


class BrsTestCase(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)

    def write(self, name, text):
        path = os.path.join(self.tmp.name, name)
        with open(path, "w", encoding="ascii") as stream:
            stream.write(text)
        return path

    def lengths_file(self, lengths, name="data.lengths"):
        return self.write(name, "".join(f"{value}\n" for value in lengths))

    def run_brs(self, *args, stdin=None):
        return subprocess.run([BRS, *map(str, args)], input=stdin, capture_output=True,
                              text=True, timeout=120)

    def ok(self, *args, stdin=None):
        result = self.run_brs(*args, stdin=stdin)
        self.assertEqual(result.returncode, 0, f"brs {args} failed: {result.stderr}")
        self.assertEqual(result.stderr, "")
        return result.stdout

    def plan(self, path, *args):
        return [json.loads(line) for line in self.ok("plan", "--lengths", path, *args).splitlines()]


class PlanFormatTests(BrsTestCase):
    """Every line is one JSON object with the documented keys, types and values."""

    def check_line(self, line, lengths, alpha=0.001, intercept=0.0, packed=False):
        pairs = json.loads(line, object_pairs_hook=lambda items: items)
        self.assertEqual([key for key, _ in pairs], KEYS, line)
        record = dict(pairs)
        for key in ["epoch", "step", "rank", "micro", "padded_tokens"]:
            self.assertIs(type(record[key]), int, f"{key} in {line}")
            self.assertGreaterEqual(record[key], 0)
        self.assertIn(type(record["cost"]), (int, float))
        indices = record["indices"]
        self.assertIsInstance(indices, list)
        self.assertGreater(len(indices), 0, "empty micro-batch")
        for index in indices:
            self.assertIs(type(index), int)
            self.assertTrue(0 <= index < len(lengths), index)
        sizes = [lengths[i] for i in indices]
        self.assertEqual(sizes, sorted(sizes, reverse=True), "not longest first")
        if packed:
            tokens = sum(sizes)
            cost = intercept + tokens + alpha * sum(size * size for size in sizes)
        else:
            tokens = len(sizes) * max(sizes)
            cost = intercept + tokens + alpha * tokens * max(sizes)
        self.assertEqual(record["padded_tokens"], tokens, line)
        self.assertAlmostEqual(record["cost"], cost, delta=1e-9 * cost + 1e-6, msg=line)
        return record

    def check_output(self, path, lengths, *args, **model):
        lines = self.ok("plan", "--lengths", path, *args).splitlines()
        self.assertGreater(len(lines), 0)
        return [self.check_line(line, lengths, **model) for line in lines]

    def test_default_configuration(self):
        lengths = lognormal_lengths(300, 1)
        records = self.check_output(self.lengths_file(lengths), lengths)
        # Defaults: batch 8, dp 1, grad-accum 1, drop-last: one micro-batch per step.
        self.assertEqual(len(records), 300 // 8)
        self.assertTrue(all(r["rank"] == 0 and r["micro"] == 0 and r["epoch"] == 0
                            for r in records))

    def test_cost_model_flags(self):
        lengths = lognormal_lengths(200, 2)
        self.check_output(self.lengths_file(lengths), lengths, "--alpha", "0.25",
                          "--intercept", "17.5", "--dp-size", "2", "--grad-accum", "3",
                          "--batch-size", "4", alpha=0.25, intercept=17.5)

    def test_context_parallel_plan_prints_every_rank_and_its_ranges(self):
        lengths = lognormal_lengths(120, 4)
        cap = 2048
        out = self.ok("plan", "--lengths", self.lengths_file(lengths), "--packed", "--dp-size",
                      "2", "--cp-size", "4", "--grad-accum", "2", "--batch-size", "2",
                      "--max-tokens-per-rank", str(cap), "--step", "2")
        records = [json.loads(line) for line in out.splitlines()]
        steps = {r["step"] for r in records}
        self.assertEqual(steps, {2})
        self.assertEqual(len(records), 2 * 4 * 2)  # every global rank at every micro-step
        for step in steps:
            covered = {}
            for r in (r for r in records if r["step"] == step):
                first, degree = r["cp_ranks"]["first"], r["cp_ranks"]["degree"]
                self.assertTrue(first <= r["rank"] < first + degree and first % degree == 0)
                self.assertLessEqual(r["padded_tokens"], cap)
                self.assertEqual({i for i, _, _ in r["token_ranges"]}, set(r["indices"]))
                for index, start, end in r["token_ranges"]:
                    covered[index] = covered.get(index, 0) + end - start
            self.assertEqual(covered, {i: lengths[i] for i in covered})
            self.assertEqual(len(covered), 2 * 2 * 2)  # the step's samples, each whole once

    def test_packed_mode(self):
        lengths = lognormal_lengths(200, 3)
        self.check_output(self.lengths_file(lengths), lengths, "--packed", "--dp-size", "2",
                          "--alpha", "0.002", alpha=0.002, packed=True)

    def test_real_dataset(self):
        path = os.path.join(REPO, "data", "gsm8k_train.lengths")
        with open(path, encoding="ascii") as stream:
            lengths = [int(line) for line in stream]
        self.check_output(path, lengths, "--dp-size", "8", "--grad-accum", "2")

    def test_order_is_step_rank_micro(self):
        lengths = lognormal_lengths(200, 4)
        records = self.plan(self.lengths_file(lengths), "--dp-size", "3", "--grad-accum", "2",
                            "--batch-size", "4")
        keys = [(r["step"], r["rank"], r["micro"]) for r in records]
        steps = 200 // 24
        self.assertEqual(keys, [(t, r, m) for t in range(steps) for r in range(3)
                                for m in range(2)])

    def test_cost_round_trips(self):
        # Costs with alpha = 1e-6 steps are not integers: the printed text
        # must carry enough digits to read back to the library's double.
        lengths = lognormal_lengths(64, 5)
        text = self.ok("plan", "--lengths", self.lengths_file(lengths), "--alpha", "0.000123")
        for line in text.splitlines():
            cost_text = re.search(r'"cost":([^}]*)}$', line).group(1)
            self.assertRegex(cost_text, r"^-?\d+(\.\d+)?([eE][-+]?\d+)?$")
            record = json.loads(line)
            length = max(lengths[i] for i in record["indices"])
            tokens = len(record["indices"]) * length
            self.assertAlmostEqual(float(cost_text), tokens + 0.000123 * tokens * length,
                                   delta=1e-9 * tokens * length)


class PlanContractTests(BrsTestCase):
    """The sampling contract, seen through the command line."""

    def counts(self, records):
        seen = {}
        for record in records:
            for index in record["indices"]:
                seen[index] = seen.get(index, 0) + 1
        return seen

    def test_drop_last_every_index_once_when_divisible(self):
        lengths = lognormal_lengths(256, 10)
        records = self.plan(self.lengths_file(lengths), "--dp-size", "2", "--grad-accum", "2",
                            "--batch-size", "4")
        self.assertEqual(self.counts(records), {i: 1 for i in range(256)})

    def test_drop_last_drops_only_the_tail(self):
        lengths = lognormal_lengths(300, 11)
        records = self.plan(self.lengths_file(lengths), "--dp-size", "2", "--grad-accum", "2",
                            "--batch-size", "4")
        seen = self.counts(records)
        self.assertEqual(set(seen.values()), {1})
        self.assertEqual(len(seen), (300 // 16) * 16)

    def test_no_drop_last_keeps_everything(self):
        lengths = lognormal_lengths(300, 12)  # remainder 12 >= K = 4: no top-up
        records = self.plan(self.lengths_file(lengths), "--dp-size", "2", "--grad-accum", "2",
                            "--batch-size", "4", "--no-drop-last")
        self.assertEqual(self.counts(records), {i: 1 for i in range(300)})
        self.assertEqual(max(r["step"] for r in records), 300 // 16)

    def test_no_drop_last_repeats_only_the_top_up(self):
        lengths = lognormal_lengths(258, 13)  # remainder 2 < K = 8: 6 repeats
        records = self.plan(self.lengths_file(lengths), "--dp-size", "4", "--grad-accum", "2",
                            "--batch-size", "4", "--no-drop-last")
        seen = self.counts(records)
        self.assertEqual(set(seen), set(range(258)))
        self.assertEqual(sum(count - 1 for count in seen.values()), 8 - 258 % 32)

    def test_one_sample_fills_eight_micro_batches(self):
        records = self.plan(self.lengths_file([5]), "--dp-size", "4", "--grad-accum", "2",
                            "--no-drop-last")
        self.assertEqual(len(records), 8)
        self.assertTrue(all(r["indices"] == [0] and r["padded_tokens"] == 5 for r in records))

    def test_equal_micro_batch_counts_per_rank(self):
        lengths = lognormal_lengths(500, 14)
        for extra in ([], ["--no-drop-last"]):
            records = self.plan(self.lengths_file(lengths), "--dp-size", "4", "--grad-accum",
                                "3", "--batch-size", "5", *extra)
            steps = len({r["step"] for r in records})
            for rank in range(4):
                slots = [(r["step"], r["micro"]) for r in records if r["rank"] == rank]
                self.assertEqual(sorted(slots), [(t, m) for t in range(steps) for m in range(3)])

    def test_step_holds_batch_size_times_k_samples(self):
        lengths = lognormal_lengths(400, 15)
        records = self.plan(self.lengths_file(lengths), "--dp-size", "3", "--grad-accum", "2",
                            "--batch-size", "6")
        for step in range(400 // 36):
            self.assertEqual(sum(len(r["indices"]) for r in records if r["step"] == step), 36)

    def test_no_shuffle_takes_file_order(self):
        lengths = lognormal_lengths(100, 16)
        records = self.plan(self.lengths_file(lengths), "--dp-size", "2", "--batch-size", "5",
                            "--no-shuffle")
        for step in range(100 // 10):
            indices = sorted(i for r in records if r["step"] == step for i in r["indices"])
            self.assertEqual(indices, list(range(10 * step, 10 * step + 10)))

    def test_deterministic_and_keyed_by_seed_and_epoch(self):
        path = self.lengths_file(lognormal_lengths(400, 17))
        args = ["plan", "--lengths", path, "--dp-size", "2", "--grad-accum", "2"]
        first = self.ok(*args)
        self.assertEqual(first, self.ok(*args))
        self.assertNotEqual(first, self.ok(*args, "--seed", "1"))
        other_epoch = self.ok(*args, "--epoch", "3")
        self.assertNotEqual(first, other_epoch)
        self.assertTrue(all(json.loads(line)["epoch"] == 3 for line in other_epoch.splitlines()))

    def test_step_and_rank_narrow_the_full_output(self):
        path = self.lengths_file(lognormal_lengths(333, 18))
        for extra in ([], ["--no-drop-last"]):
            args = ["plan", "--lengths", path, "--dp-size", "3", "--grad-accum", "2",
                    "--batch-size", "4", *extra]
            full = self.ok(*args).splitlines()
            records = [json.loads(line) for line in full]
            last = max(r["step"] for r in records)
            for step, rank in [(0, None), (last, None), (None, 2), (None, 0), (last, 1), (5, 0)]:
                narrowing = (["--step", step] if step is not None else []) + \
                            (["--rank", rank] if rank is not None else [])
                expected = [line for line, r in zip(full, records)
                            if (step is None or r["step"] == step)
                            and (rank is None or r["rank"] == rank)]
                self.assertEqual(self.ok(*args, *narrowing).splitlines(), expected, narrowing)

    def test_standard_input(self):
        lengths = lognormal_lengths(120, 19)
        path = self.lengths_file(lengths)
        text = "".join(f"{value}\n" for value in lengths)
        self.assertEqual(self.ok("plan", "--lengths", "-", "--dp-size", "2", stdin=text),
                         self.ok("plan", "--lengths", path, "--dp-size", "2"))

    def test_equals_form_of_flags(self):
        path = self.lengths_file(lognormal_lengths(120, 20))
        self.assertEqual(self.ok("plan", f"--lengths={path}", "--dp-size=2", "--seed=4"),
                         self.ok("plan", "--lengths", path, "--dp-size", "2", "--seed", "4"))

    def test_max_tokens_is_never_exceeded(self):
        lengths = lognormal_lengths(640, 21)
        cap = 2560  # below batch 4 x the longest samples (1024): the cap binds
        self.assertLess(cap, 4 * max(lengths))
        records = self.plan(self.lengths_file(lengths), "--dp-size", "2", "--grad-accum", "2",
                            "--batch-size", "4", "--max-tokens", cap)
        self.assertTrue(records)
        self.assertLessEqual(max(r["padded_tokens"] for r in records), cap)
        records = self.plan(self.lengths_file(lengths), "--dp-size", "2", "--batch-size", "4",
                            "--max-tokens", cap, "--packed")
        self.assertLessEqual(max(r["padded_tokens"] for r in records), cap)


class BadInputTests(BrsTestCase):
    """Bad input: exit 2, exactly one line on stderr, nothing on stdout."""

    def fails(self, *args, stdin=None, mentions=()):
        result = self.run_brs(*args, stdin=stdin)
        self.assertEqual(result.returncode, 2, f"brs {args}: {result.stderr}")
        self.assertEqual(result.stdout, "", f"brs {args} wrote to stdout")
        self.assertEqual(result.stderr.count("\n"), 1, repr(result.stderr))
        self.assertTrue(result.stderr.endswith("\n"))
        self.assertTrue(result.stderr.startswith("brs"), result.stderr)
        for word in mentions:
            self.assertIn(str(word), result.stderr)
        return result.stderr

    def good_file(self):
        return self.lengths_file(lognormal_lengths(100, 30))

    def test_missing_file(self):
        missing = os.path.join(self.tmp.name, "no-such.lengths")
        for command in ("plan", "compare"):
            self.fails(command, "--lengths", missing, mentions=[missing])

    def test_non_numeric_line(self):
        path = self.write("bad.lengths", "12\n7\nabc\n9\n")
        for command in ("plan", "compare"):
            self.fails(command, "--lengths", path, mentions=["line 3", "abc"])
        self.fails("plan", "--lengths", self.write("neg.lengths", "4\n-5\n"), mentions=["line 2"])
        self.fails("plan", "--lengths", self.write("frac.lengths", "4\n2.5\n"),
                   mentions=["line 2"])

    def test_zero_line(self):
        path = self.write("zero.lengths", "12\n0\n9\n")
        for command in ("plan", "compare"):
            self.fails(command, "--lengths", path, mentions=["line 2"])
        self.fails("plan", "--lengths", "-", stdin="3\n4\n0\n", mentions=["line 3"])

    def test_blank_line_and_empty_file(self):
        self.fails("plan", "--lengths", self.write("blank.lengths", "3\n\n4\n"),
                   mentions=["line 2"])
        self.fails("plan", "--lengths", self.write("empty.lengths", ""))

    def test_too_large_length(self):
        self.fails("plan", "--lengths", self.write("big.lengths", "3\n4294967296\n"),
                   mentions=["line 2"])

    def test_dp_size_zero(self):
        for command in ("plan", "compare"):
            self.fails(command, "--lengths", self.good_file(), "--dp-size", "0",
                       mentions=["--dp-size"])

    def test_other_out_of_range_values(self):
        path = self.good_file()
        self.fails("plan", "--lengths", path, "--batch-size", "0", mentions=["--batch-size"])
        self.fails("plan", "--lengths", path, "--grad-accum", "-1", mentions=["--grad-accum"])
        self.fails("plan", "--lengths", path, "--alpha", "-1", mentions=["--alpha"])
        self.fails("plan", "--lengths", path, "--alpha", "nan", mentions=["--alpha"])
        self.fails("plan", "--lengths", path, "--epoch", "-1", mentions=["--epoch"])

    def test_fewer_samples_than_micro_batches(self):
        path = self.lengths_file([10, 20, 30, 40, 50])
        for command in ("plan", "compare"):
            self.fails(command, "--lengths", path, "--dp-size", "8")
        self.fails("plan", "--lengths", path, "--dp-size", "8", "--batch-size", "1")

    def test_sample_longer_than_max_tokens(self):
        path = self.lengths_file([100] * 40 + [5000])
        for command in ("plan", "compare"):
            self.fails(command, "--lengths", path, "--max-tokens", "4096",
                       mentions=["line 41", "--max-tokens"])
        self.fails("plan", "--lengths", path, "--max-tokens", "4096", "--packed")

    def test_a_refused_cap_names_one_that_plans_the_run(self):
        """One retry suffices: the cap named after a refusal plans every step of the epoch, one
        token less does not, and a sample above the cap is named by the longest one's line."""
        path = os.path.join(REPO, "data", "gsm8k_train.lengths")  # samples of 401..423 tokens
        with open(path, encoding="ascii") as stream:
            lengths = [int(line) for line in stream]
        longest_line = lengths.index(max(lengths)) + 1
        for command in ("plan", "compare"):
            with self.subTest(command=command):
                error = self.fails(command, "--lengths", path, "--max-tokens", "400",
                                   mentions=[f"sample {longest_line - 1} (line {longest_line})",
                                             "--max-tokens"])
                cap = int(re.search(r"at least (\d+)", error).group(1))
                self.assertGreaterEqual(cap, max(lengths))
                self.ok(command, "--lengths", path, "--max-tokens", cap)
                if command == "plan":
                    self.fails(command, "--lengths", path, "--max-tokens", cap - 1)
                else:  # compare marks brs's row with the same cap and shows the others
                    self.assertIn(f"infeasible: needs --max-tokens >= {cap}",
                                  self.ok(command, "--lengths", path, "--max-tokens", cap - 1))
        # Every sample fits, but step 0 (unshuffled: the 8 long samples and 4 short ones) needs
        # more micro-batches than K = 4: refused before any step is planned, with the count and
        # the cap that plans the epoch.
        path = self.lengths_file([3000] * 8 + [100] * 40)
        shape = ("--batch-size", "3", "--dp-size", "2", "--grad-accum", "2", "--epoch", "1",
                 "--no-shuffle")
        error = self.fails("plan", "--lengths", path, *shape, "--max-tokens", "4000",
                           mentions=["micro-batches", "epoch 1"])
        cap = int(re.search(r"max_tokens to (\d+)", error).group(1))
        self.ok("plan", "--lengths", path, *shape, "--max-tokens", cap)
        self.fails("plan", "--lengths", path, *shape, "--max-tokens", cap - 1)

    def test_unsatisfiable_cap(self):
        # 8 samples of 10 tokens in one micro-batch need 80 padded tokens;
        # under a cap of 40 only 2 or more micro-batches would do. (compare
        # marks the row instead: CompareTests.test_infeasible_cap_marks_the_row)
        path = self.lengths_file([10] * 8)
        self.fails("plan", "--lengths", path, "--max-tokens", "40")

    def test_unknown_flag(self):
        for command in ("plan", "compare"):
            self.fails(command, "--lengths", self.good_file(), "--bogus", mentions=["--bogus"])
        self.fails("demo", "--bogus", mentions=["--bogus"])
        self.fails("demo", "--dp-size", "4")

    def test_malformed_arguments(self):
        path = self.good_file()
        self.fails("plan", "--lengths", path, "--seed", mentions=["--seed"])
        self.fails("plan", "--lengths", path, "--batch-size", "eight", mentions=["--batch-size"])
        self.fails("plan", "--lengths", path, "--batch-size", "8x")
        self.fails("plan", "--lengths", path, "--seed", "99999999999999999999")
        self.fails("plan", "--lengths", path, "--packed=1", mentions=["--packed"])
        self.fails("plan", "--lengths", path, "stray", mentions=["stray"])
        self.fails("plan", mentions=["--lengths"])

    def test_step_and_rank_out_of_range(self):
        path = self.good_file()  # 100 samples, batch 8: 12 steps
        self.fails("plan", "--lengths", path, "--step", "12", mentions=["--step"])
        self.fails("plan", "--lengths", path, "--step", "-1", mentions=["--step"])
        self.fails("plan", "--lengths", path, "--dp-size", "2", "--batch-size", "2",
                   "--rank", "2")

    def test_unknown_or_missing_command(self):
        self.fails("frobnicate", mentions=["frobnicate", "python -m brs", "brs --help"])
        self.fails()

    def test_python_commands_are_named_where_they_live(self):
        # `python -m brs` passes plan, compare and demo to this program, so
        # its own commands are looked for here too: say where they are, for
        # every command the Python package's `brs` runs itself (trial too).
        commands = python_package_commands()
        self.assertIn("trial", commands)
        for command in commands:
            for args in (["--help"], ["--lengths", self.good_file()]):
                self.fails(command, *args,
                           mentions=[f"python -m brs {command}", "Python package"])


class CompareTests(BrsTestCase):
    """`brs compare` and `brs demo` run and report numbers that match the plans."""

    MARK = "  exceeds the cap"

    def table(self, text):
        """The three rows under the "strategy" header, by name (without the mark of a row
        over the cap: see exceeding)."""
        lines = text.splitlines()
        header = next(i for i, line in enumerate(lines) if line.startswith("strategy"))
        rows = {}
        for line in lines[header + 1:header + 4]:
            fields = line.removesuffix(CompareTests.MARK).split()
            rows[fields[0]] = fields[1:]
        self.assertEqual(list(rows), ["random", "length-grouped", "brs"], text)
        return rows

    def exceeding(self, text):
        """The strategies whose rows are marked as over the cap."""
        return {line.split()[0] for line in text.splitlines() if line.endswith(self.MARK)}

    def verdict(self, text):
        """The paragraph in plain words, as one line."""
        paragraph = text[text.index("In plain words"):]
        return " ".join(paragraph.split())

    def test_brs_row_matches_its_plan(self):
        lengths = lognormal_lengths(480, 40)
        path = self.lengths_file(lengths)
        args = ["--lengths", path, "--dp-size", "4", "--grad-accum", "3", "--batch-size", "5"]
        row = self.table(self.ok("compare", *args))["brs"]
        records = [json.loads(line) for line in self.ok("plan", *args).splitlines()]
        self.assertEqual(int(row[0]), max(r["padded_tokens"] for r in records))
        real = sum(lengths[i] for r in records for i in r["indices"])
        padded = sum(r["padded_tokens"] for r in records)
        self.assertAlmostEqual(float(row[1].rstrip("%")), 100 * real / padded, delta=0.051)
        micro_sync = step_sync = 0.0
        for step in {r["step"] for r in records}:
            costs = {(r["rank"], r["micro"]): r["cost"] for r in records if r["step"] == step}
            micro_sync += sum(max(costs[(k, m)] for k in range(4)) for m in range(3))
            step_sync += max(sum(costs[(k, m)] for m in range(3)) for k in range(4))
        self.assertAlmostEqual(float(row[2]), micro_sync, delta=0.51)
        self.assertAlmostEqual(float(row[4]), step_sync, delta=0.51)
        for ratio, time in ((row[3], micro_sync), (row[5], step_sync)):
            self.assertGreaterEqual(float(ratio), 0.995, "step time below the lower bound")

    def test_baselines_without_shuffle(self):
        # In file order the baselines are fully known: fixed chunks of P for
        # random, and transformers' megabatch sort for length-grouped.
        lengths = lognormal_lengths(4000, 41)  # enough for 50 x P*G megabatches
        # Short samples up front and a unique longest one late, so that moving
        # the longest megabatch head to the front changes what is measured.
        lengths[:400] = [min(length, 40) for length in lengths[:400]]
        lengths[3700] = 2000
        p, g, r = 4, 2, 3
        row = self.table(self.ok("compare", "--lengths", self.lengths_file(lengths),
                                 "--no-shuffle", "--batch-size", p, "--grad-accum", g,
                                 "--dp-size", r))
        steps = len(lengths) // (p * g * r)

        def measure(order):
            """Peak, efficiency and both step times of reading `order` in chunks of P;
            chunk c of a step goes to rank c % R, micro-step c // R."""
            chunks = [order[i:i + p] for i in range(0, steps * p * g * r, p)]
            padded = [len(c) * max(lengths[i] for i in c) for c in chunks]
            costs = [t + 0.001 * t * max(lengths[i] for i in c) for t, c in zip(padded, chunks)]
            real = sum(lengths[i] for c in chunks for i in c)
            micro_sync = step_sync = 0.0
            for step in range(steps):
                cost = costs[step * g * r:(step + 1) * g * r]
                micro_sync += sum(max(cost[m * r + k] for k in range(r)) for m in range(g))
                step_sync += max(sum(cost[m * r + k] for m in range(g)) for k in range(r))
            return max(padded), 100 * real / sum(padded), micro_sync, step_sync

        def length_grouped(order):
            batch = p * g
            size = max(1, min(len(order) // (batch * 4), 50)) * batch
            groups = [sorted(order[i:i + size], key=lambda i: lengths[i], reverse=True)
                      for i in range(0, len(order), size)]
            top = max(range(len(groups)), key=lambda k: (lengths[groups[k][0]], -k))
            groups[0][0], groups[top][0] = groups[top][0], groups[0][0]
            return [i for group in groups for i in group]

        identity = list(range(len(lengths)))
        for name, order in (("random", identity), ("length-grouped", length_grouped(identity))):
            peak, efficiency, micro_sync, step_sync = measure(order)
            self.assertEqual(int(row[name][0]), peak, name)
            self.assertAlmostEqual(float(row[name][1].rstrip("%")), efficiency, delta=0.051)
            self.assertAlmostEqual(float(row[name][2]), micro_sync, delta=0.51, msg=name)
            self.assertAlmostEqual(float(row[name][4]), step_sync, delta=0.51, msg=name)

    def test_cap_violations(self):
        lengths = lognormal_lengths(640, 21)
        text = self.ok("compare", "--lengths", self.lengths_file(lengths), "--dp-size", "2",
                       "--grad-accum", "2", "--batch-size", "4", "--max-tokens", "2560")
        self.assertIn("over cap", text)
        rows = self.table(text)
        self.assertEqual(rows["brs"][-1], "0")
        self.assertGreater(int(rows["random"][-1]), 0, "the cap does not bind the baseline")
        self.assertLessEqual(int(rows["brs"][0]), 2560)
        self.assertEqual(self.exceeding(text),
                         {name for name, row in rows.items() if int(row[-1]) > 0})
        verdict = self.verdict(text)
        self.assertIn("Under --max-tokens 2560, pick brs", verdict)
        self.assertIn(f"exceeded by random batches in {rows['random'][-1]} micro-batches",
                      verdict)

    def test_infeasible_cap_marks_the_row(self):
        # One micro-batch per step cannot keep 8 samples of 10 tokens under
        # 40: brs's row says which cap would do, the baselines are measured.
        path = self.lengths_file([10] * 8 + [30] * 8)
        args = ["compare", "--lengths", path, "--max-tokens", "40"]
        text = self.ok(*args)
        lines = {line.split()[0]: line for line in text.splitlines()
                 if line.split()[:1] in (["random"], ["length-grouped"], ["brs"])}
        found = re.search(r"^brs +infeasible: needs --max-tokens >= (\d+)", lines["brs"])
        self.assertIsNotNone(found, text)
        least = int(found.group(1))
        self.assertEqual(self.exceeding(text), {"random", "length-grouped"})
        self.assertIn(f"no strategy keeps --max-tokens 40: brs needs at least {least}",
                      self.verdict(text))
        # The cap named is the least one that plans: brs's row is a plain row again.
        self.assertGreater(int(self.table(self.ok(*args[:-1], least))["brs"][0]), 0)
        self.assertIn("infeasible", self.ok(*args[:-1], least - 1))
        BadInputTests.fails(self, "plan", "--lengths", path, "--max-tokens", least - 1)

    def test_verdict_says_what_each_costs_and_what_to_pick(self):
        path = os.path.join(REPO, "data", "gsm8k_train.lengths")
        shape = ["--dp-size", "4", "--grad-accum", "2", "--batch-size", "8"]
        for sync, column in (("micro_step", 2), ("step", 4)):
            text = self.ok("compare", "--lengths", path, *shape, "--sync", sync)
            rows, verdict = self.table(text), self.verdict(text)
            self.assertIn(f"brs's largest micro-batch holds {rows['brs'][0]} padded tokens",
                          verdict)
            self.assertIn(f"({rows['length-grouped'][0]}", verdict)
            # The step time compared is the one of the synchronisation --sync names.
            brs, grouped = float(rows["brs"][column]), float(rows["length-grouped"][column])
            words = "at every micro-step" if sync == "micro_step" else "once per step"
            self.assertIn(f"With the ranks syncing {words}", verdict)
            if grouped * 1.005 < brs:
                self.assertRegex(verdict, rf"{brs / grouped:.2f}x longer than length-grouped")
                self.assertRegex(verdict, r"Length-grouped batches are \d+% faster where "
                                          rf"{rows['length-grouped'][0]} padded tokens")
            self.assertIn("Pick brs", verdict)
            self.assertIn("give it as --max-tokens", verdict)

    def test_one_step_and_packed(self):
        path = self.lengths_file(lognormal_lengths(300, 42))
        self.table(self.ok("compare", "--lengths", path, "--step", "2", "--dp-size", "2"))
        rows = self.table(self.ok("compare", "--lengths", path, "--packed", "--no-drop-last"))
        for name in rows:
            self.assertEqual(rows[name][1], "100.0%", name)

    def time_split(self, text):
        """The rows of "where the time goes": strategy -> (useful, padding, waiting) in %."""
        lines = text.splitlines()
        start = next(i for i, line in enumerate(lines) if line.startswith("where the time goes"))
        rows = {}
        for line in lines[start + 2:start + 5]:
            name, *shares = line.split()
            rows[name] = [float(share.rstrip("%")) for share in shares]
        self.assertEqual(list(rows), ["random", "length-grouped", "brs"], text)
        return rows

    def test_time_split_is_the_plans_own(self):
        # The shares of the ranks' time, recomputed from the micro-batch costs brs plan prints:
        # waiting is each micro-step's slowest rank minus each rank, summed.
        lengths = lognormal_lengths(400, 17)
        path = self.lengths_file(lengths)
        args = ["--lengths", path, "--dp-size", "4", "--grad-accum", "2", "--batch-size", "3"]
        text = self.ok("compare", *args)
        shares = self.time_split(text)
        for name, row in shares.items():
            self.assertAlmostEqual(sum(row), 100, delta=0.2, msg=name)
        records = [json.loads(line) for line in self.ok("plan", *args).splitlines()]
        by_micro = {}
        for r in records:
            by_micro.setdefault((r["step"], r["micro"]), []).append(r["cost"])
        work = sum(r["cost"] for r in records)
        waiting = sum(max(costs) * len(costs) - sum(costs) for costs in by_micro.values())
        self.assertAlmostEqual(shares["brs"][2], 100 * waiting / (work + waiting), delta=0.06)
        self.assertLess(shares["brs"][2], shares["random"][2])
        # the command that adds transformers' batch_rebalance, with these very flags
        self.assertIn("python -m brs report " + " ".join(args), " ".join(text.split()))
        # packed, nothing rounded: brs pads nothing
        packed = self.time_split(self.ok("compare", *args, "--packed"))
        self.assertEqual(packed["brs"][1], 0.0)

    def test_time_split_follows_the_sync_model(self):
        path = self.lengths_file(lognormal_lengths(400, 18))
        args = ["--lengths", path, "--dp-size", "4", "--grad-accum", "4", "--batch-size", "2"]
        micro = self.ok("compare", *args)
        step = self.ok("compare", *args, "--sync", "step")
        self.assertIn("micro-step sync", micro)
        self.assertIn("step time, step sync)", step)
        # a rank waits once per step under step sync, not at every micro-step
        self.assertLess(self.time_split(step)["random"][2], self.time_split(micro)["random"][2])

    def test_demo(self):
        text = self.ok("demo")
        shares = self.time_split(text)
        self.assertLess(shares["brs"][2], shares["random"][2])
        self.assertIn("python -m brs report --lengths data/jargon.lengths --dp-size 8 "
                      "--grad-accum 2 --batch-size 8", " ".join(text.split()))
        rows = self.table(text)
        self.assertIn("jargon", text)
        self.assertRegex(self.verdict(text),
                         rf"brs's largest micro-batch holds {rows['brs'][0]} padded tokens, "
                         r"\d+% fewer than random and length-grouped batches'")
        self.assertLess(int(rows["brs"][0]), int(rows["length-grouped"][0]))


class HelpTests(BrsTestCase):
    def test_version(self):
        self.assertEqual(self.ok("--version").strip(), f"brs {VERSION}")

    def test_main_help(self):
        text = self.ok("--help")
        for command in ("plan", "compare", "demo", "--version", "python -m brs report",
                        "python -m brs calibrate", "python -m brs trial"):
            self.assertIn(command, text)

    def listed(self, command):
        """The flags --help lists as options of the command."""
        return {word.rstrip(",") for line in self.ok(command, "--help").splitlines()
                if line.startswith("  -") for word in line.split() if word.startswith("-")}

    def test_command_help_lists_every_flag(self):
        flags = {"--lengths", "--batch-size", "--grad-accum", "--dp-size", "--seed", "--epoch",
                 "--no-shuffle", "--no-drop-last", "--alpha", "--intercept", "--max-tokens",
                 "--packed", "--step", "--cost-model", "--output", "--sync"}
        self.assertLessEqual(flags | {"--rank", "--strategy"}, self.listed("plan"))
        self.assertLessEqual(flags, self.listed("compare"))

    def test_help_lists_only_the_flags_a_command_takes(self):
        # compare measures every strategy and every rank: it refuses the flags
        # that pick one, so its help does not offer them.
        path = self.lengths_file(lognormal_lengths(100, 90))
        listed = self.listed("compare")
        for flag, value in (("--rank", "0"), ("--strategy", "balanced")):
            self.assertNotIn(flag, listed)
            self.assertNotIn(flag, self.ok("compare", "--help"))
            BadInputTests.fails(self, "compare", "--lengths", path, flag, value,
                                mentions=[flag, "leave it out", "brs plan"])
            self.ok("plan", "--lengths", path, flag, value)
        # Every other flag plan lists, compare lists too and takes.
        self.assertEqual(self.listed("plan") - listed, {"--rank", "--strategy"})
        self.assertLessEqual(self.listed("demo"), {"-h", "--help"})  # the demo takes none

    def test_demo_help_gives_provenance(self):
        text = self.ok("demo", "--help")
        self.assertIn("Jargon File", text)
        self.assertIn("public domain", text)


def printable(text):
    """Whether every character of a message is printable ASCII (escaped bytes)."""
    return all(" " <= c <= "~" for c in text.rstrip("\n"))


class ReaderTests(BrsTestCase):
    """The lengths reader: every wrong file is a named error, read errors included."""

    def fails(self, *args, stdin=None, mentions=()):
        result = subprocess.run([BRS, *map(str, args)], input=stdin, capture_output=True,
                                timeout=120)
        err = result.stderr.decode("ascii")  # raises if a raw byte was printed
        self.assertEqual(result.returncode, 2, err)
        self.assertEqual(result.stdout, b"")
        self.assertEqual(err.count("\n"), 1, repr(err))
        self.assertTrue(printable(err), repr(err))
        for word in mentions:
            self.assertIn(str(word), err)
        return err

    def plan_bytes(self, data, *args):
        path = os.path.join(self.tmp.name, "raw.lengths")
        with open(path, "wb") as stream:
            stream.write(data)
        return self.ok("plan", "--lengths", path, *args)

    def test_nul_byte_inside_a_line(self):
        self.fails("plan", "--lengths", "-", stdin=b"5\x006\n7\n", mentions=["line 1", "NUL"])
        self.fails("plan", "--lengths", "-", stdin=b"5\n6\n7\x00\n", mentions=["line 3", "NUL"])

    def test_dev_zero_stops_at_once(self):
        self.fails("plan", "--lengths", "/dev/zero", mentions=["/dev/zero", "line 1", "NUL"])

    def test_lengths_then_endless_zeros(self):
        # Four good lines, then a stream of NUL bytes (the reader must not
        # plan the first four samples and succeed).
        script = "(printf '5\\n6\\n7\\n8\\n'; cat /dev/zero) | \"$0\" plan --lengths - " \
                 "--batch-size 1 --no-shuffle"
        result = subprocess.run(["sh", "-c", script, BRS], capture_output=True, timeout=120)
        self.assertEqual(result.returncode, 2, result.stderr)
        self.assertEqual(result.stdout, b"")
        self.assertIn(b"line 5", result.stderr)

    def test_out_of_memory_is_a_failure(self):
        # Endless valid lines under a small address-space limit: the reader
        # runs out of memory and says so (exit 1), never plans what it read.
        with open(BRS, "rb") as stream:
            if b"__asan_init" in stream.read():
                self.skipTest("AddressSanitizer needs more address space than the limit")
        script = 'ulimit -v 150000; yes 5 | "$0" plan --lengths - --batch-size 1'
        result = subprocess.run(["sh", "-c", script, BRS], capture_output=True, timeout=300)
        self.assertEqual(result.returncode, 1, result.stderr)
        self.assertEqual(result.stdout, b"")
        self.assertIn(b"out of memory", result.stderr)

    def test_overlong_line(self):
        self.fails("plan", "--lengths", "-", stdin=b"5\n" + b"7" * 100000 + b"\n",
                   mentions=["line 2", "longer than"])
        self.fails("plan", "--lengths", "-", stdin=b" " * 1000 + b"5\n", mentions=["line 1"])

    def test_read_error_is_an_error(self):
        # /proc/self/mem fails its first read with EIO: a read error, not
        # an end of file.
        if os.path.exists("/proc/self/mem"):
            self.fails("plan", "--lengths", "/proc/self/mem", mentions=["cannot read"])
        self.fails("plan", "--lengths", self.tmp.name, mentions=["cannot read", self.tmp.name])

    def test_crlf_and_cr_line_ends(self):
        lengths = lognormal_lengths(90, 50)
        expected = self.plan_bytes("".join(f"{v}\n" for v in lengths).encode(), "--dp-size", "2")
        for end in ("\r\n", "\r"):
            self.assertEqual(self.plan_bytes("".join(f"{v}{end}" for v in lengths).encode(),
                                             "--dp-size", "2"), expected, repr(end))
        # The last line needs no line end, whatever the others use.
        self.assertEqual(self.plan_bytes("\r\n".join(str(v) for v in lengths).encode(),
                                         "--dp-size", "2"), expected)

    def test_cr_only_file_reports_the_right_line(self):
        self.fails("plan", "--lengths", "-", stdin=b"5\r6\rx\r7\r", mentions=["line 3", "'x'"])
        self.fails("plan", "--lengths", "-", stdin=b"5\r\n\r\n7\r\n", mentions=["line 2", "empty"])

    def test_byte_order_mark_is_skipped(self):
        lengths = lognormal_lengths(60, 51)
        text = "".join(f"{v}\n" for v in lengths).encode()
        self.assertEqual(self.plan_bytes(b"\xef\xbb\xbf" + text), self.plan_bytes(text))
        # Only before the first line: elsewhere it is not a number, and it
        # is shown escaped.
        err = self.fails("plan", "--lengths", "-", stdin=b"5\n\xef\xbb\xbf6\n",
                         mentions=["line 2", "\\xef\\xbb\\xbf6"])
        self.assertNotIn("\ufeff", err)

    def test_raw_bytes_are_escaped(self):
        err = self.fails("plan", "--lengths", "-", stdin=b"5\n\xff\x1b[31mred\n",
                         mentions=["line 2", "\\xff\\x1b[31mred"])
        self.assertNotIn("\x1b", err)
        self.fails("plan", "--lengths", "-", stdin=b"5\n\x07\t9\n", mentions=["\\x07"])

    def test_missing_file_name_is_escaped(self):
        name = os.path.join(self.tmp.name, "no\x1bsuch")
        self.fails("plan", "--lengths", name, mentions=["no\\x1bsuch"])

    def test_blanks_around_a_number_are_allowed(self):
        self.assertEqual(self.plan_bytes(b" 5\t\n6 \n\t7\n8\n", "--batch-size", "1"),
                         self.plan_bytes(b"5\n6\n7\n8\n", "--batch-size", "1"))


class OptionStrictnessTests(BrsTestCase):
    """Numbers are strict decimal for every flag; a flag is given once."""

    fails = BadInputTests.fails

    def test_numbers_are_strict_decimal(self):
        path = self.lengths_file(lognormal_lengths(100, 52))
        for flag, value in [("--alpha", "0x10"), ("--alpha", " 1"), ("--alpha", "1 "),
                            ("--alpha", "inf"), ("--alpha", "nan"), ("--alpha", "+1"),
                            ("--alpha", "1e"), ("--alpha", "."), ("--alpha", ""),
                            ("--intercept", "0x1p3"), ("--batch-size", " 4"),
                            ("--batch-size", "4 "), ("--batch-size", "+4"),
                            ("--batch-size", "0x10"), ("--seed", "1e3"), ("--seed", "1.0"),
                            ("--max-tokens", "--packed"), ("--epoch", " 1"),
                            ("--epoch", "0x1"), ("--step", "+1")]:
            err = self.fails("plan", "--lengths", path, flag, value, mentions=[flag])
            self.assertIn("got '", err, (flag, value))

    def test_decimal_forms_that_are_accepted(self):
        path = self.lengths_file(lognormal_lengths(100, 53))
        base = self.ok("plan", "--lengths", path, "--alpha", "0.002")
        for text in ("2e-3", "2E-3", ".002", "0.0020", "2.e-3"):
            self.assertEqual(self.ok("plan", "--lengths", path, "--alpha", text), base, text)

    def test_values_past_64_bits(self):
        path = self.lengths_file(lognormal_lengths(100, 54))
        self.fails("plan", "--lengths", path, "--seed", "99999999999999999999",
                   mentions=["--seed", "out of range", "9223372036854775807"])
        self.fails("plan", "--lengths", path, "--alpha", "1e999", mentions=["--alpha"])
        self.fails("plan", "--lengths", path, "--alpha", "1e-400", mentions=["--alpha"])

    def test_epoch_takes_every_uint64(self):
        # The library takes a uint64 epoch: 2^63 is a valid epoch, 2^64 is
        # not, and the message gives the real limit.
        path = self.lengths_file(lognormal_lengths(100, 55))
        lines = self.ok("plan", "--lengths", path, "--epoch", "9223372036854775808").splitlines()
        self.assertEqual(json.loads(lines[0])["epoch"], 9223372036854775808)
        top = self.ok("plan", "--lengths", path, "--epoch", "18446744073709551615").splitlines()
        self.assertEqual(json.loads(top[0])["epoch"], 18446744073709551615)
        self.fails("plan", "--lengths", path, "--epoch", "18446744073709551616",
                   mentions=["--epoch", "18446744073709551615"])
        self.fails("plan", "--lengths", path, "--epoch", "-1", mentions=["--epoch"])

    def test_values_the_library_rejects(self):
        path = self.lengths_file(lognormal_lengths(100, 59))
        # 1e-7 would round to 0 at the library's resolution of alpha.
        self.fails("plan", "--lengths", path, "--alpha", "1e-7", mentions=["--alpha", "alpha"])
        # A global batch past the library's limit is an error at once; with
        # drop-last, so is a step the dataset cannot fill.
        for extra in ([], ["--no-drop-last"]):
            self.fails("plan", "--lengths", path, "--dp-size", "16777216", *extra,
                       mentions=["batch_size"])
        self.fails("plan", "--lengths", path, "--dp-size", "200", "--batch-size", "1")

    def test_repeated_flag_is_an_error(self):
        path = self.lengths_file(lognormal_lengths(100, 56))
        for args, words in [(["--seed", "1", "--seed", "2"], ["--seed", "twice"]),
                            (["--seed=1", "--seed", "1"], ["--seed", "twice"]),
                            (["--alpha", "0.1", "--alpha=0.1"], ["--alpha", "twice"]),
                            (["--packed", "--packed"], ["--packed", "twice"]),
                            (["--shuffle", "--no-shuffle"], ["--shuffle", "--no-shuffle"]),
                            (["--epoch", "1", "--epoch", "1"], ["--epoch", "twice"]),
                            (["--lengths", path], ["--lengths", "twice"]),
                            (["-o", "a", "--output", "b"], ["--output", "twice"])]:
            for command in ("plan", "compare"):
                self.fails(command, "--lengths", path, *args, mentions=words)

    def test_switch_pairs(self):
        path = self.lengths_file(lognormal_lengths(100, 57))
        self.assertEqual(self.ok("plan", "--lengths", path, "--shuffle"),
                         self.ok("plan", "--lengths", path))
        self.assertEqual(self.ok("plan", "--lengths", path, "--no-packed"),
                         self.ok("plan", "--lengths", path))
        self.fails("plan", "--lengths", path, "--no-shuffle=1", mentions=["--no-shuffle"])

    def test_help_to_a_full_device_fails(self):
        if not os.path.exists("/dev/full"):
            self.skipTest("no /dev/full")
        path = self.lengths_file(lognormal_lengths(100, 58))
        for args in (["--help"], ["--version"], ["plan", "--help"], ["compare", "--help"],
                     ["demo", "--help"], ["plan", "--lengths", path], ["demo"]):
            with open("/dev/full", "w") as full:
                result = subprocess.run([BRS, *args], stdout=full, stderr=subprocess.PIPE,
                                        text=True, timeout=120)
            self.assertEqual(result.returncode, 1, args)
            self.assertIn("could not write", result.stderr, args)


class StrategyTests(BrsTestCase):
    """--strategy and --sync come from the library's option table."""

    fails = BadInputTests.fails

    def test_strategy_by_name_or_number(self):
        path = self.lengths_file(lognormal_lengths(200, 60))
        args = ["plan", "--lengths", path, "--dp-size", "2", "--batch-size", "4"]
        balanced = self.ok(*args)
        self.assertEqual(self.ok(*args, "--strategy", "balanced"), balanced)
        self.assertEqual(self.ok(*args, "--strategy=0"), balanced)
        random_plan = self.ok(*args, "--strategy", "random")
        self.assertEqual(self.ok(*args, "--strategy", "1"), random_plan)
        grouped = self.ok(*args, "--strategy", "length_grouped")
        self.assertEqual(self.ok(*args, "--strategy", "length-grouped"), grouped)
        self.assertEqual(self.ok(*args, "--strategy", "2"), grouped)
        self.assertNotEqual(random_plan, balanced)
        # A random plan: fixed-size micro-batches of batch_size samples.
        for line in random_plan.splitlines():
            self.assertEqual(len(json.loads(line)["indices"]), 4)

    def test_bad_strategy_names_the_choices(self):
        path = self.lengths_file(lognormal_lengths(100, 61))
        self.fails("plan", "--lengths", path, "--strategy", "fastest",
                   mentions=["--strategy", "balanced", "random", "length_grouped", "fastest"])
        self.fails("plan", "--lengths", path, "--strategy", "7", mentions=["--strategy"])
        self.fails("plan", "--lengths", path, "--sync", "never", mentions=["--sync", "step"])

    def test_sync_step(self):
        path = self.lengths_file(lognormal_lengths(300, 62))
        args = ["plan", "--lengths", path, "--dp-size", "2", "--grad-accum", "3"]
        self.assertEqual(self.ok(*args, "--sync", "micro_step"), self.ok(*args))
        for line in self.ok(*args, "--sync", "step").splitlines():
            json.loads(line)

    def test_compare_takes_no_strategy(self):
        path = self.lengths_file(lognormal_lengths(100, 63))
        self.fails("compare", "--lengths", path, "--strategy", "random", mentions=["--strategy"])

    def test_help_lists_the_library_options(self):
        text = self.ok("plan", "--help")
        for flag in ("--strategy", "--sync", "--cost-model", "--output", "random",
                     "length_grouped", "micro_step"):
            self.assertIn(flag, text)


class OutputTests(BrsTestCase):
    """-o/--output: the whole output or nothing, through a temporary file."""

    fails = BadInputTests.fails

    def test_output_file_equals_standard_output(self):
        path = self.lengths_file(lognormal_lengths(200, 70))
        out = os.path.join(self.tmp.name, "plan.jsonl")
        self.assertEqual(self.ok("plan", "--lengths", path, "-o", out), "")
        with open(out, encoding="ascii") as stream:
            self.assertEqual(stream.read(), self.ok("plan", "--lengths", path))
        report = os.path.join(self.tmp.name, "compare.txt")
        self.assertEqual(self.ok("compare", "--lengths", path, f"--output={report}"), "")
        with open(report, encoding="ascii") as stream:
            self.assertIn("strategy", stream.read())
        self.assertEqual(sorted(os.listdir(self.tmp.name)),
                         ["compare.txt", "data.lengths", "plan.jsonl"])

    def test_unwritable_output_paths(self):
        path = self.lengths_file(lognormal_lengths(100, 71))
        missing = os.path.join(self.tmp.name, "no-such-dir", "plan.jsonl")
        self.fails("plan", "--lengths", path, "-o", missing, mentions=[missing, "--output"])
        self.fails("plan", "--lengths", path, "-o", self.tmp.name,
                   mentions=[self.tmp.name, "directory"])
        self.fails("plan", "--lengths", path, "--output=", mentions=["--output"])
        if os.geteuid() != 0:
            locked = os.path.join(self.tmp.name, "locked")
            os.mkdir(locked, 0o500)
            self.fails("plan", "--lengths", path, "-o", os.path.join(locked, "x"),
                       mentions=["locked"])

    def test_failed_command_leaves_the_file_untouched(self):
        out = os.path.join(self.tmp.name, "plan.jsonl")
        with open(out, "w", encoding="ascii") as stream:
            stream.write("old\n")
        path = self.lengths_file([10] * 8)
        self.fails("plan", "--lengths", path, "--max-tokens", "40", "-o", out)
        self.fails("plan", "--lengths", self.write("bad.lengths", "1\nx\n"), "-o", out)
        with open(out, encoding="ascii") as stream:
            self.assertEqual(stream.read(), "old\n")
        self.assertEqual(sorted(os.listdir(self.tmp.name)),
                         ["bad.lengths", "data.lengths", "plan.jsonl"])


class CostModelTests(BrsTestCase):
    """--cost-model FILE: alpha, intercept and max_tokens from a calibrated model."""

    fails = BadInputTests.fails

    def model(self, **fields):
        """A cost-model file of its own (each call writes a new one)."""
        name = f"model{len(os.listdir(self.tmp.name))}.json"
        document = {"format": "brs-cost-model", "version": 1, "alpha": 0.0025,
                    "intercept": 40.0, "max_tokens": 6000, "r2": 0.99,
                    "worst_residual": 0.03, "source": "calibrated", "model": "gpt2",
                    "device": "cpu", "memory": {"a": [1, 2, {"b": None}]},
                    "timings": [[128, 4, 0.5], [256, 2, 0.6]]}
        document.update(fields)
        document = {k: v for k, v in document.items() if v is not Ellipsis}
        return self.write(name, json.dumps(document))

    def test_model_equals_its_flags(self):
        path = self.lengths_file(lognormal_lengths(300, 80))
        args = ["plan", "--lengths", path, "--dp-size", "2"]
        self.assertEqual(self.ok(*args, "--cost-model", self.model()),
                         self.ok(*args, "--alpha", "0.0025", "--intercept", "40",
                                 "--max-tokens", "6000"))

    def test_flags_win_over_the_file(self):
        path = self.lengths_file(lognormal_lengths(300, 81))
        args = ["plan", "--lengths", path, "--dp-size", "2"]
        self.assertEqual(self.ok(*args, "--alpha", "0.01", "--cost-model", self.model()),
                         self.ok(*args, "--alpha", "0.01", "--intercept", "40",
                                 "--max-tokens", "6000"))

    def test_null_max_tokens_sets_no_cap(self):
        path = self.lengths_file(lognormal_lengths(300, 82))
        args = ["plan", "--lengths", path]
        self.assertEqual(self.ok(*args, "--cost-model", self.model(max_tokens=None)),
                         self.ok(*args, "--alpha", "0.0025", "--intercept", "40"))
        self.assertEqual(self.ok(*args, "--cost-model", self.model(max_tokens=...)),
                         self.ok(*args, "--alpha", "0.0025", "--intercept", "40"))

    def test_compare_reads_it_too(self):
        path = self.lengths_file(lognormal_lengths(300, 83))
        text = self.ok("compare", "--lengths", path, "--dp-size", "4", "--cost-model",
                       self.model())
        self.assertIn("40 + bs*L + 0.0025*bs*L^2", text)
        self.assertIn("over cap", text)
        self.assertIn("times in cost units", text)  # this model has no seconds_per_unit

    def test_compare_shows_seconds_of_a_calibrated_model(self):
        path = self.lengths_file(lognormal_lengths(300, 86))
        args = ["compare", "--lengths", path, "--dp-size", "4", "--grad-accum", "2"]
        units = self.ok(*args, "--cost-model", self.model(seconds_per_unit=None))
        self.assertIn("times in cost units", units)
        seconds_per_unit = 3.5e-06
        model = self.model(seconds_per_unit=seconds_per_unit)
        seconds = self.ok(*args, "--cost-model", model)
        self.assertIn(f"times in seconds: cost x {seconds_per_unit:g} s", seconds)
        self.assertIn(model, seconds)
        table, in_units = CompareTests.table(self, seconds), CompareTests.table(self, units)
        for name, row in table.items():
            self.assertEqual(row[0], in_units[name][0])  # tokens stay tokens
            for column in (2, 4):  # both step times
                self.assertAlmostEqual(float(row[column]),
                                       float(in_units[name][column]) * seconds_per_unit,
                                       delta=1e-3 * float(row[column]), msg=name)
            self.assertEqual(row[3], in_units[name][3])  # a ratio has no unit
        legend = r"lower bound of these steps' samples, (\S+)"
        bound = float(re.search(legend + " s", " ".join(seconds.split())).group(1))
        bound_units = float(re.search(legend, " ".join(units.split())).group(1))
        self.assertAlmostEqual(bound, bound_units * seconds_per_unit, delta=1e-3 * bound)
        # plan's costs stay in the planner's units
        plan = ["plan", "--lengths", path, "--dp-size", "4"]
        self.assertEqual(self.ok(*plan, "--cost-model", model),
                         self.ok(*plan, "--cost-model", self.model()))

    def test_bad_seconds_per_unit(self):
        path = self.lengths_file(lognormal_lengths(100, 87))
        for value, words in (("fast", ["not a number"]), (0, ["above 0"]), (-1e-6, ["above 0"])):
            model = self.model(seconds_per_unit=value)
            self.fails("compare", "--lengths", path, "--cost-model", model,
                       mentions=["--cost-model", model, "seconds_per_unit", *words])

    def test_bad_files_name_the_file_and_the_key(self):
        path = self.lengths_file(lognormal_lengths(100, 84))
        cases = [
            (self.model(format="other"), ["format", "brs-cost-model"]),
            (self.model(format=...), ["format", "missing"]),
            (self.model(version=2), ["version", "2"]),
            (self.model(version="1"), ["version"]),
            (self.model(alpha=...), ["alpha", "missing"]),
            (self.model(alpha="0.1"), ["alpha", "not a number"]),
            (self.model(intercept=None), ["intercept"]),
            (self.model(max_tokens=1.5), ["max_tokens", "1.5"]),
            (self.model(max_tokens="4096"), ["max_tokens"]),
            (self.model(alpha=-1.0), ["alpha", "out of range"]),
            (self.model(max_tokens=-5), ["max_tokens"]),
            (self.write("dup.json", '{"format": "brs-cost-model", "version": 1, "alpha": 1,'
                                    ' "alpha": 2, "intercept": 0}'), ["alpha", "twice"]),
            (self.write("trailing.json", '{"format": "brs-cost-model"} x'), ["JSON"]),
            (self.write("comma.json", '{"format": "brs-cost-model",}'), ["JSON"]),
            (self.write("array.json", '[1, 2]'), ["JSON"]),
            (self.write("empty.json", ''), ["JSON"]),
            (self.write("deep.json", '{"x": ' + '[' * 1000 + ']' * 1000 + '}'), ["JSON"]),
            (os.path.join(self.tmp.name, "missing.json"), ["cannot open"]),
            (self.tmp.name, ["cannot read"]),
        ]
        for model, words in cases:
            self.fails("plan", "--lengths", path, "--cost-model", model,
                       mentions=["--cost-model", model, *words])

    def test_nul_and_raw_bytes_in_the_file(self):
        path = self.lengths_file(lognormal_lengths(100, 85))
        model = os.path.join(self.tmp.name, "raw.json")
        with open(model, "wb") as stream:
            stream.write(b'{"format": "brs\x00\xff", "version": 1}')
        err = ReaderTests.fails(self, "plan", "--lengths", path, "--cost-model", model)
        self.assertIn("raw.json", err)


class EncoderLoadsTests(BrsTestCase):
    """A lengths file's second column (each image's patches): every micro-batch reports its
    images, --max-encoder-tokens caps them, compare shows their peak, a file without the
    column plans as before."""

    def vlm_file(self, count, seed):
        rng = random.Random(seed)
        lengths = lognormal_lengths(count, seed)
        images = [[rng.choice([256, 1024, 1536, 4096]) for _ in range(rng.choice([0, 0, 1, 2, 4]))]
                  for _ in range(count)]
        text = "".join(f"{n} {','.join(map(str, im))}\n" if im else f"{n}\n"
                       for n, im in zip(lengths, images))
        return self.write("vlm.lengths", text), lengths, images

    def test_every_micro_batch_reports_its_images_within_the_cap(self):
        path, _, images = self.vlm_file(1000, 5)
        records = self.plan(path, "--dp-size", "4", "--grad-accum", "2",
                            "--max-encoder-tokens", "40000")
        seen = []
        for record in records:
            ids = record["indices"]
            seen.extend(ids)
            self.assertEqual(record["encoder_tokens"], sum(sum(images[i]) for i in ids))
            self.assertEqual(record["images"], sum(len(images[i]) for i in ids))
            self.assertLessEqual(record["encoder_tokens"], 40000)
        self.assertEqual(len(seen), len(set(seen)))  # drop_last leaves the remainder out
        self.assertEqual(len(seen), 1000 // 64 * 64)

    def test_images_change_the_plan_and_a_text_file_keeps_its_format(self):
        path, lengths, _ = self.vlm_file(1000, 6)
        with_images = self.plan(path, "--dp-size", "4", "--grad-accum", "2")
        text = self.plan(self.lengths_file(lengths), "--dp-size", "4", "--grad-accum", "2")
        self.assertNotIn("encoder_tokens", text[0])
        self.assertNotEqual([r["indices"] for r in with_images], [r["indices"] for r in text])

    def test_compare_shows_the_peak_patches_and_the_encoder_cap(self):
        path, lengths, _ = self.vlm_file(1000, 7)
        out = self.ok("compare", "--lengths", path, "--dp-size", "4", "--grad-accum", "2",
                      "--max-encoder-tokens", "40000")
        header = next(line for line in out.splitlines() if line.startswith("strategy"))
        self.assertTrue(header.rstrip().endswith("peak patches"))
        brs_row = next(line for line in out.splitlines() if re.match(r"brs +\d", line))
        self.assertLessEqual(int(brs_row.split()[-1]), 40000)
        tight = self.ok("compare", "--lengths", path, "--dp-size", "4", "--grad-accum", "2",
                        "--max-encoder-tokens", "16384")
        self.assertRegex(tight, r"brs +infeasible: step \d+ cannot keep --max-encoder-tokens "
                                r"16384")
        text = self.ok("compare", "--lengths", self.lengths_file(lengths), "--dp-size", "4")
        self.assertNotIn("peak patches", text)

    def test_a_cost_model_file_gives_the_encoder_terms(self):
        path, _, _ = self.vlm_file(600, 8)
        model = self.write("model.json", json.dumps({
            "format": "brs-cost-model", "version": 1, "alpha": 0.001, "intercept": 0,
            "encoder_weight": 0.25, "encoder_alpha": 0.0002, "encoder_intercept": 30,
            "max_encoder_tokens": 40000}))
        from_file = self.plan(path, "--dp-size", "4", "--cost-model", model)
        flags = self.plan(path, "--dp-size", "4", "--encoder-weight", "0.25",
                          "--encoder-alpha", "0.0002", "--encoder-intercept", "30",
                          "--max-encoder-tokens", "40000")
        self.assertEqual(from_file, flags)
        self.assertNotEqual(from_file, self.plan(path, "--dp-size", "4"))

    def test_a_sample_above_the_encoder_cap_is_named(self):
        path = self.write("big.lengths", "10 100\n20 5000,5000\n30\n40\n")
        result = self.run_brs("plan", "--lengths", path, "--max-encoder-tokens", "6000",
                              "--batch-size", "1")
        self.assertEqual(result.returncode, 2)
        self.assertIn("sample 1 has 10000 image patches, more than max_encoder_tokens 6000",
                      result.stderr)


def main():
    global BRS, VERSION
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    BRS, VERSION = os.path.abspath(sys.argv[1]), sys.argv[2]
    unittest.main(argv=[sys.argv[0], *sys.argv[3:]], verbosity=2)

class PaddingTests(BrsTestCase):
    """--pad-to-multiple-of and --length-buckets: the plan holds the tensors the collator builds;
    compare counts each rank's distinct shapes and says what their first runs cost."""

    def padded_lengths(self, records, lengths):
        """Each record's padded length, checked to pad every row to one length."""
        out = []
        for record in records:
            size = len(record["indices"])
            self.assertEqual(record["padded_tokens"] % size, 0, record)
            padded = record["padded_tokens"] // size
            self.assertGreaterEqual(padded, max(lengths[i] for i in record["indices"]))
            out.append(padded)
        return out

    def test_multiple_rounds_every_micro_batch_within_the_cap(self):
        lengths = lognormal_lengths(2000, 90)
        path = self.lengths_file(lengths)
        records = self.plan(path, "--dp-size", "4", "--grad-accum", "2", "--max-tokens", "4096",
                            "--pad-to-multiple-of", "64")
        for record, padded in zip(records, self.padded_lengths(records, lengths)):
            longest = max(lengths[i] for i in record["indices"])
            self.assertEqual(padded, -(-longest // 64) * 64)
            self.assertLessEqual(record["padded_tokens"], 4096)

    def test_buckets_from_a_list_a_file_and_the_ladder(self):
        lengths = lognormal_lengths(1500, 91)
        path = self.lengths_file(lengths)
        buckets = [64, 128, 256, 512, 1024]
        listed = self.plan(path, "--dp-size", "2", "--length-buckets", ",".join(map(str, buckets)))
        from_file = self.plan(path, "--dp-size", "2", "--length-buckets",
                              self.write("buckets.txt", "\n".join(map(str, buckets)) + "\n"))
        self.assertEqual(listed, from_file)
        for record, padded in zip(listed, self.padded_lengths(listed, lengths)):
            longest = max(lengths[i] for i in record["indices"])
            self.assertEqual(padded, min(b for b in buckets if b >= longest))
        ladder = self.plan(path, "--dp-size", "2", "--length-buckets", "auto")
        self.assertLess(len(set(self.padded_lengths(ladder, lengths))), 30)

    def test_bucket_errors_name_the_fix(self):
        path = self.lengths_file([10, 300, 40, 70])
        base = ["plan", "--lengths", path, "--batch-size", "2"]
        for value, words in (("64,128", ["last length bucket 128", "at least 300"]),
                             ("64,0", ["'0' is not a length"]),
                             ("128,64", ["strictly increasing"]),
                             ("64,,128", ["item 2"])):
            result = self.run_brs(*base, "--length-buckets", value)
            self.assertEqual(result.returncode, 2, result.stderr)
            self.assertEqual(result.stdout, "")
            for word in words:
                self.assertIn(word, result.stderr)

    def test_compare_counts_each_ranks_shapes(self):
        lengths = lognormal_lengths(1200, 92)
        path = self.lengths_file(lengths)
        layout = ["--dp-size", "3", "--grad-accum", "2", "--pad-to-multiple-of", "32"]
        text = self.ok("compare", "--lengths", path, *layout)
        row = CompareTests.table(self, text)["brs"]
        records = self.plan(path, *layout)
        shapes = {}
        for record in records:
            shapes.setdefault(record["rank"], set()).add(
                (len(record["indices"]), record["padded_tokens"]))
        self.assertEqual(int(row[6]), max(len(s) for s in shapes.values()))
        self.assertIn("shapes/rank", text)

    def test_compare_prices_first_runs_from_the_cost_model(self):
        path = self.lengths_file(lognormal_lengths(600, 93))
        model = CostModelTests.model(self, first_shape_seconds=0.125, max_tokens=None)
        text = self.ok("compare", "--lengths", path, "--dp-size", "2", "--grad-accum", "2",
                       "--cost-model", model)
        shapes = int(CompareTests.table(self, text)["brs"][6])
        paragraph = " ".join(text.split())
        self.assertIn("first runs of a shape cost 0.125 s more", paragraph)
        self.assertIn(f"brs {0.125 * shapes:.3g} s", paragraph)
        bad = CostModelTests.model(self, first_shape_seconds=-1)
        result = self.run_brs("compare", "--lengths", path, "--cost-model", bad)
        self.assertEqual(result.returncode, 2)
        self.assertIn('"first_shape_seconds"', result.stderr)


class CompareDecisionTests(BrsTestCase):
    """The verdict decides only what the numbers can: a layout to balance, bounds in scope, a cap
    named with where it came from."""

    def test_one_micro_batch_per_step_has_nothing_to_balance(self):
        path = self.lengths_file(lognormal_lengths(400, 94))
        text = " ".join(self.ok("compare", "--lengths", path).split())
        self.assertIn("nothing to balance", text)
        self.assertIn("--dp-size and --grad-accum", text)
        self.assertNotIn("pick brs", text.lower())

    def test_length_grouped_is_not_measured_against_another_draws_bound(self):
        path = self.lengths_file(lognormal_lengths(800, 95))
        rows = CompareTests.table(self, self.ok("compare", "--lengths", path, "--dp-size", "4"))
        self.assertEqual(rows["length-grouped"][3], "-")
        self.assertEqual(rows["length-grouped"][5], "-")
        for name in ("random", "brs"):
            self.assertGreaterEqual(float(rows[name][3]), 0.995)

    def test_a_cap_from_the_cost_model_says_so(self):
        path = self.lengths_file(lognormal_lengths(600, 96))
        model = CostModelTests.model(self, max_tokens=50000)
        text = " ".join(self.ok("compare", "--lengths", path, "--dp-size", "4",
                                "--cost-model", model).split())
        self.assertIn(f'max_tokens 50000 (from --cost-model {model} key "max_tokens")', text)
        given = " ".join(self.ok("compare", "--lengths", path, "--dp-size", "4",
                                 "--max-tokens", "50000").split())
        self.assertIn("Under --max-tokens 50000,", given)


if __name__ == "__main__":
    main()
