"""progress=: the elapsed-time line on stderr while the sampler's first plan chooses the shape
vocabulary (brs/_elapsed.py), shown when asked or on a terminal, never in captured output
otherwise. The watcher is forced to show at once (SHOW_AFTER 0) and the planning call is held
until the watcher has written, so that no test depends on how long planning takes."""

import io
import threading

import pytest

import brs
from brs import _elapsed, _handles
from brs_testing import random_lengths

LENGTHS = random_lengths(320, seed=5, low=4, high=300)


class _Stderr(io.StringIO):
    """A stderr that says when it is written to, and whether it is a terminal."""

    def __init__(self, terminal):
        super().__init__()
        self.terminal, self.written = terminal, threading.Event()

    def isatty(self):
        return self.terminal

    def write(self, text):
        self.written.set()
        return super().write(text)


@pytest.fixture
def stderr(monkeypatch):
    def install(terminal=False):
        fake = _Stderr(terminal)
        monkeypatch.setattr("sys.stderr", fake)
        return fake
    monkeypatch.setattr(_elapsed, "SHOW_AFTER", 0.0)
    original = _handles.NativePlan.compute

    def held(self, *args):  # the C call, then held until the watcher has spoken (or 1 s: 4 of its looks)
        original(self, *args)
        fake = __import__("sys").stderr
        if isinstance(fake, _Stderr):
            fake.written.wait(1)
    monkeypatch.setattr(_handles.NativePlan, "compute", held)
    return install


def _first_plan(**kw):
    sampler = brs.BatchRebalanceSampler(LENGTHS, per_device_batch_size=4, grad_accum=2,
                                        dp_size=4, rank=0, seed=7, max_shapes=4, **kw)
    return sampler.plan(0)


def test_progress_true_shows_the_vocabulary_choice_and_its_end(stderr):
    fake = stderr(terminal=False)
    _first_plan(progress=True, max_shapes_search=64)
    lines = fake.getvalue().splitlines()
    what = "brs: choosing the shape vocabulary (max_shapes=4, max_shapes_search=64): "
    assert lines and all(line.startswith(what) for line in lines), lines
    assert lines[-1].startswith(what + "done in ") and lines[-1].endswith(" s")


def test_on_a_terminal_the_line_is_rewritten_in_place(stderr):
    fake = stderr(terminal=True)
    _first_plan()  # progress=None: shown because stderr is a terminal
    text = fake.getvalue()
    assert text.startswith("\rbrs: choosing the shape vocabulary (max_shapes=4): ")
    assert text.endswith(" s\n") and text.count("\n") == 1 and "done in" in text


@pytest.mark.parametrize("progress", [None, False])
def test_captured_output_stays_clean_unless_asked(stderr, progress):
    fake = stderr(terminal=False)
    _first_plan(progress=progress)
    assert fake.getvalue() == ""


def test_progress_is_a_keyword_kept_by_with_options():
    sampler = brs.BatchRebalanceSampler(LENGTHS, per_device_batch_size=4, progress=False)
    assert "progress" in brs.BatchRebalanceSampler.__signature__.parameters
    assert sampler.with_options(seed=1)._progress is False
