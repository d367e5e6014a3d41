"""Progress of a measurement (calibration's grid, the trial's stages): a tqdm bar where tqdm is
installed, else one line a run on stderr. The one progress report of the measurement layer."""

import sys


class Progress:
    """``start(total, what)`` opens a stage, ``update(text)`` counts one run, ``close()`` ends
    it. ``prefix`` names the tool ("brs calibrate"); disabled, every call does nothing."""

    def __init__(self, prefix, enabled=True, unit="run"):
        self.prefix, self.enabled, self.unit = prefix, enabled, unit
        self.bar, self.total, self.done, self.what = None, 0, 0, ""

    def start(self, total, what=None):
        if not self.enabled:
            return
        self.close()
        try:
            from tqdm import tqdm
        except ImportError:
            tqdm = None
        self.total, self.done, self.what = total, 0, what
        desc = self.prefix if what is None else f"{self.prefix}: {what}"
        if tqdm is not None:
            self.bar = tqdm(total=total, desc=desc, unit=self.unit)
        elif what is not None:
            print(f"{desc}: {total} {self.unit}s", file=sys.stderr, flush=True)

    def update(self, text):
        if not self.enabled:
            return
        if self.bar is not None:
            self.bar.set_postfix_str(text)
            self.bar.update(1)
            return
        self.done += 1
        stage = f"{self.what} " if self.what else ""
        print(f"{self.prefix}: {stage}{self.done}/{self.total} {text}", file=sys.stderr,
              flush=True)

    def close(self):
        if self.bar is not None:
            self.bar.close()
            self.bar = None


def reporter(total, enabled):
    """calibrate's grid: a callable taking each shape's line of text, then None when done."""
    progress = Progress("brs calibrate", enabled, unit="shape")
    progress.start(total)

    def update(text):
        if text is None:
            progress.close()
        else:
            progress.update(text)
    return update
