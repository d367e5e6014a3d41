"""Turn the user's ``lengths`` into one C array of uint32 that libbrs can borrow.

libbrs borrows the array (BRS_LENGTHS_BORROW), so whatever object owns the memory must live as
long as the sampler: ``Lengths.owner`` is that object. A C-contiguous uint32 numpy array (or a
torch tensor viewing one) is used in place, without a copy; everything else is converted once,
with a check that every value is a whole number in 1 .. 2**32 - 1 and an error naming the first
index that is not.

read_file reads a lengths file (one token count per line) by the rules of docs/formats.md, the
same as the brs command's reader (cli/input.c); tests/vectors/formats checks both.

Neither numpy nor torch is imported here: they are only looked up if the user already imported
them (an object of their types cannot exist otherwise).
"""

import array
import ctypes
import itertools
import os
import re
import sys
from collections.abc import Mapping, Set

UINT32_MAX = 2**32 - 1
assert array.array("I").itemsize == 4, "libbrs needs a 4-byte unsigned int"


class Lengths:
    """A uint32 buffer ready for brs_sampler_set_lengths."""

    __slots__ = ("owner", "pointer", "count", "borrowed")

    def __init__(self, owner, pointer, count, borrowed):
        self.owner = owner  # keeps the memory alive; a numpy array or an array.array('I')
        self.pointer = pointer  # ctypes POINTER(c_uint32) into owner
        self.count = count
        self.borrowed = borrowed  # True when owner is the caller's own array (zero-copy)


def as_uint32(lengths):
    """Return a Lengths for list / tuple / range / array / numpy array / torch tensor input."""
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(lengths, torch.Tensor):
        lengths = _from_tensor(torch, lengths)
    numpy = sys.modules.get("numpy")
    if numpy is not None and isinstance(lengths, numpy.ndarray):
        return _from_numpy(numpy, lengths)
    return _from_sequence(lengths)


def _from_tensor(torch, tensor):
    if tensor.is_floating_point() or tensor.is_complex() or tensor.dtype == torch.bool:
        raise TypeError(f"lengths must be integers; got a torch tensor of {tensor.dtype}: "
                        "pass token counts, e.g. tensor.long() after checking they are whole")
    tensor = tensor.detach().cpu()
    if sys.modules.get("numpy") is None:
        try:
            import numpy  # noqa: F401  (torch's own .numpy() needs it anyway)
        except ImportError:
            return tensor.tolist()
    return tensor.numpy()  # a view: a contiguous uint32 tensor stays zero-copy


def _from_numpy(np, a):
    if isinstance(a, np.ma.MaskedArray):
        # The buffer holds the masked values too; planning over it would train masked samples.
        raise TypeError("lengths is a numpy masked array, whose mask libbrs cannot see: pass "
                        "lengths.filled(1) (masked samples kept, 1 token) or drop them from the "
                        "dataset first (lengths.compressed() renumbers the dataset indices)")
    if a.ndim != 1:
        raise ValueError(f"lengths must be one-dimensional; got an array of shape {a.shape}")
    if a.dtype.kind not in "iu":
        raise TypeError(f"lengths must be integers; got a numpy array of {a.dtype}: pass token "
                        "counts, e.g. lengths.astype(np.int64) after checking they are whole")
    if len(a) == 0:
        raise ValueError("lengths is empty: the dataset needs at least one sample")
    if a.dtype == np.uint32 and a.dtype.isnative and a.flags.c_contiguous:
        # Zero-copy: libbrs itself reports a zero length with its index.
        return Lengths(a, a.ctypes.data_as(ctypes.POINTER(ctypes.c_uint32)), len(a), True)
    _check_range_numpy(np, a)
    converted = np.ascontiguousarray(a, dtype=np.uint32)
    return Lengths(converted, converted.ctypes.data_as(ctypes.POINTER(ctypes.c_uint32)),
                   len(converted), False)


def _check_range_numpy(np, a):
    bad = np.flatnonzero(a <= 0)
    if bad.size:
        i = int(bad[0])
        raise ValueError(_nonpositive(i, int(a[i])))
    if a.dtype.itemsize > 4:
        big = np.flatnonzero(a > UINT32_MAX)
        if big.size:
            i = int(big[0])
            raise ValueError(_too_big(i, int(a[i])))


def _from_sequence(seq):
    if isinstance(seq, (str, bytes, bytearray, Mapping, Set)):
        raise TypeError(f"lengths must be a sequence of integers (list, tuple, numpy array, "
                        f"torch tensor); got {type(seq).__name__}")
    values = _bounded_list(seq)
    if not values:
        raise ValueError("lengths is empty: the dataset needs at least one sample")
    buf = _fast_array(values)
    if buf is None:
        buf = _checked_array(values)
    pointer = (ctypes.c_uint32 * len(buf)).from_buffer(buf)
    return Lengths(buf, ctypes.cast(pointer, ctypes.POINTER(ctypes.c_uint32)), len(buf), False)


def _bounded_list(seq):
    """list(seq) for a sized sequence, reading at most len(seq) + 1 items, so that an endless
    iterator is refused instead of filling the memory forever."""
    try:
        count = len(seq)
    except TypeError:
        endless = (f"{type(seq).__name__}: an iterator may never end, so pass list(...) of a "
                   "finite one" if hasattr(seq, "__iter__") else type(seq).__name__)
        raise TypeError("lengths must be a sequence of integers with a len() (list, tuple, "
                        f"numpy array, torch tensor); got {endless}") from None
    try:
        values = list(itertools.islice(seq, count + 1))
    except TypeError:
        raise TypeError(f"lengths must be a sequence of integers; got {type(seq).__name__}") \
            from None
    if len(values) != count:
        raise ValueError(f"lengths says len() == {count} but yields "
                         f"{'more' if len(values) > count else len(values)} items: pass a list")
    return values


def _fast_array(values):
    """array('I') in C speed; None when some value needs the slow path's exact message."""
    if any(type(v) is bool for v in values):
        return None
    try:
        buf = array.array("I", values)
    except (TypeError, OverflowError):
        return None
    if buf.itemsize != 4 or 0 in buf:
        return None
    return buf


def _checked_array(values):
    out = array.array("I")
    for i, v in enumerate(values):
        if isinstance(v, bool) or not hasattr(type(v), "__index__"):
            raise TypeError(f"lengths[{i}] is {v!r} ({type(v).__name__}); lengths must be "
                            "integers (token counts)")
        v = v.__index__()
        if v <= 0:
            raise ValueError(_nonpositive(i, v))
        if v > UINT32_MAX:
            raise ValueError(_too_big(i, v))
        out.append(v)
    return out


def _nonpositive(i, v):
    return (f"lengths[{i}] is {v}; every sample needs at least one token (length >= 1): "
            "drop empty samples before building the sampler")


def _too_big(i, v):
    return f"lengths[{i}] is {v}, above the uint32 limit {UINT32_MAX} of libbrs"


# -- lengths files (docs/formats.md; the C reader is in cli/input.c) ------------------------

MAX_LINE = 128  # bytes of one line, its end excluded (LENGTHS_MAX_LINE)
MAX_SAMPLES = 2**28  # lines of one file (LENGTHS_MAX_SAMPLES)
_BOM = b"\xef\xbb\xbf"
_LINE_END = re.compile(rb"\r\n|\r|\n")  # only these: str.splitlines also splits at \f, \x85...
_DIGITS = re.compile(rb"[ \t]*([0-9]+)")
_BLANKS = re.compile(rb"[ \t]*")


def read_file(path):
    """The values of a lengths file (``"-"``: standard input) as a list of int; ValueError
    naming the file and the line otherwise, in the words of the brs command."""
    name = "standard input" if path == "-" else os.fspath(path)
    try:
        if path == "-":
            data = sys.stdin.buffer.read()
        else:
            with open(path, "rb") as f:
                data = f.read()
    except OSError as exc:
        raise ValueError(f"cannot open lengths file '{name}': {exc.strerror}") from None
    return parse_file(data, name)


def parse_file(data, name="lengths file"):
    """parse_file(bytes) -> list of int, by the rules read_file states."""
    lines = _LINE_END.split(data)
    if lines[-1] == b"":
        lines.pop()  # the end of the last line, or an empty file
    values = []
    for number, line in enumerate(lines, 1):
        if len(values) == MAX_SAMPLES:
            raise ValueError(f"{name} has more than {MAX_SAMPLES} lines, the most brs reads: "
                             "plan a part of the dataset")
        values.append(_line_value(name, number, line))
    if not values:
        raise ValueError(f"{name} has no lengths (expected one token count >= 1 per line)")
    return values


def _line_value(name, number, line):
    nul = line.find(b"\0")
    if nul != -1 and nul <= MAX_LINE:  # the C reader meets a NUL before a line's 129th byte
        raise ValueError(f"{name} line {number}: a NUL byte at column {nul + 1}: this is not a "
                         "text file of one token count per line")
    if len(line) > MAX_LINE:
        raise ValueError(f"{name} line {number} is longer than {MAX_LINE} bytes: write one "
                         "token count >= 1 per line")
    if number == 1 and line.startswith(_BOM):
        line = line[len(_BOM):]  # some Windows editors start a text file with one
    if not line:
        raise ValueError(f"{name} line {number} is empty: write one token count >= 1 on every "
                         "line")
    match = _DIGITS.match(line)
    quoted = _escape(line)
    value = int(match.group(1)) if match else 0
    if value > UINT32_MAX:  # said before what follows the digits, as the C reader does
        raise ValueError(f"{name} line {number}: '{quoted}' is larger than {UINT32_MAX}, the "
                         "largest length")
    if match is None or not _BLANKS.fullmatch(line, match.end()):
        raise ValueError(f"{name} line {number}: '{quoted}' is not a positive integer: write "
                         "one token count >= 1 per line")
    if value == 0:
        raise ValueError(f"{name} line {number}: '{quoted}' is a length of 0: every sample needs "
                         "at least one token")
    return value


def _escape(line):
    """The line as the C command quotes it: printable ASCII, other bytes as \\xNN, cut at 40."""
    text = "".join(chr(b) if 0x20 <= b <= 0x7E else f"\\x{b:02x}" for b in line)
    return text if len(text) <= 43 else text[:40] + "..."
