"""calibrate's progress: a tqdm bar where tqdm is installed, else one line a shape on stderr."""

import sys


def reporter(total, enabled):
    """A callable taking each shape's line of text, then None when the grid is done."""
    if not enabled:
        return lambda text: None
    try:
        from tqdm import tqdm
    except ImportError:
        tqdm = None
    if tqdm is not None:
        bar = tqdm(total=total, desc="brs calibrate", unit="shape")

        def update(text):
            if text is None:
                bar.close()
            else:
                bar.set_postfix_str(text)
                bar.update(1)
        return update
    count = [0]

    def line(text):
        if text is not None:
            count[0] += 1
            print(f"brs calibrate: {count[0]}/{total} {text}", file=sys.stderr, flush=True)
    return line
