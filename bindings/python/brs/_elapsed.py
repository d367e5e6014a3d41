"""An elapsed-time line on stderr while one library call runs for seconds: the shape vocabulary
that max_shapes (and max_shapes_search) chooses at the first plan, which is silent otherwise.

ctypes releases the GIL for the length of a C call, so one watcher thread (a daemon, started
at the first watched call) can say that the call still runs. Nothing is printed for a call
shorter than SHOW_AFTER. ``progress`` follows the package's convention (brs.calibrate,
brs.trial: lines on stderr, prefixed by the tool): True shows it, False never, None (the
default) only where stderr is a terminal, so that logs and captured output stay clean.
"""

import contextlib
import os
import sys
import threading
import time

SHOW_AFTER = 1.0  # seconds: a call that ends sooner says nothing
_TICK = 0.25  # seconds between the watcher's looks
_EVERY_LINE = 5.0  # seconds between lines where stderr is no terminal (one line, rewritten, on one)

_lock = threading.Lock()
_watched = None  # the call being watched, or None
_watcher = None


def enabled(progress):
    """Whether a watched call shows its elapsed time (see the module docstring)."""
    if progress is None:
        return sys.stderr.isatty()
    return bool(progress)


@contextlib.contextmanager
def shown(what, progress=None):
    """Watch the block: ``what()`` (called once, before it) names it in the line. A block
    inside a watched one, or in another thread while one is watched, is not watched again."""
    global _watched
    call = None
    if enabled(progress):
        with _lock:
            if _watched is None:
                call = _watched = _Call(what())
                _start_watcher()
    try:
        yield
    finally:
        if call is not None:
            with _lock:
                _watched = None
                call.end()


class _Call:
    def __init__(self, what):
        self.what, self.start = what, time.monotonic()
        self.terminal = sys.stderr.isatty()
        self.shown_at = None  # elapsed seconds of the last line, None before the first

    def tick(self):
        elapsed = time.monotonic() - self.start
        if elapsed < SHOW_AFTER:
            return
        if self.shown_at is not None and not self.terminal and \
                elapsed - self.shown_at < _EVERY_LINE:
            return
        self.shown_at = elapsed
        self._write(f"{elapsed:.0f} s", end="")

    def end(self):
        if self.shown_at is not None:
            self._write(f"done in {time.monotonic() - self.start:.1f} s", end="\n")

    def _write(self, text, end):
        start = "\r" if self.terminal else ""
        stop = end if self.terminal else "\n"
        sys.stderr.write(f"{start}brs: {self.what}: {text}{stop}")
        sys.stderr.flush()


def _start_watcher():
    global _watcher
    if _watcher is None:
        _watcher = threading.Thread(target=_watch, name="brs elapsed", daemon=True)
        _watcher.start()


def _forget_watcher():
    """A forked child (a DataLoader worker) has no watcher thread: it starts its own."""
    global _watcher, _watched
    _watcher = _watched = None


os.register_at_fork(after_in_child=_forget_watcher)


def _watch():
    while True:
        time.sleep(_TICK)
        with _lock:
            if _watched is not None:
                _watched.tick()
