"""Turn the user's ``lengths`` into one C array of uint32 that libbrs can borrow.

libbrs borrows the array (BRS_LENGTHS_BORROW), so whatever object owns the memory must live as
long as the sampler: ``Lengths.owner`` is that object. A C-contiguous uint32 numpy array (or a
torch tensor viewing one) is used in place, without a copy; everything else is converted once,
with a check that every value is a whole number in 1 .. 2**32 - 1 and an error naming the first
index that is not.

read_file (and read_file_with_images, which also returns the encoder loads of each sample's
images) reads a lengths file through libbrs's reader (brs_lengths_file_*), the one the brs
command uses; tests/vectors/formats checks every surface against docs/formats.md.

Neither numpy nor torch is imported here: they are only looked up if the user already imported
them (an object of their types cannot exist otherwise).
"""

import array
import ctypes
import itertools
import os
import sys
from collections.abc import Mapping, Set

from . import _files

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
            if i == 0 and len(values) == 2 and isinstance(v, list):
                raise TypeError("lengths is a (lengths, images) pair, as brs.read_lengths_file "
                                "returns: pass lengths, images = brs.read_lengths_file(path), "
                                "then BatchRebalanceSampler(lengths, encoder_loads=images, ...)")
            shown = repr(v) if len(repr(v)) <= 40 else repr(v)[:37] + "..."
            raise TypeError(f"lengths[{i}] is {shown} ({type(v).__name__}); lengths must be "
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


# -- lengths files: libbrs reads them (brs_lengths_file_*, docs/formats.md) ----------------------

def read_file(path):
    """The lengths of a lengths file (``"-"``: standard input) as a list of int; ValueError
    naming the file and the line otherwise, in the words of the brs command (the library's)."""
    return _read(path).lengths().tolist()


def read_file_with_images(path):
    """(lengths, images) of a lengths file (``"-"``: standard input): lengths a list of int;
    images None when no sample has an image, else one list per sample of its images' encoder
    loads (patch counts), ``[]`` for a sample without images. Errors as read_file."""
    reader = _read(path)
    lengths = reader.lengths()
    patches, offsets = reader.images(len(lengths))
    if offsets[-1] == 0:
        return lengths.tolist(), None
    images = [patches[offsets[i]:offsets[i + 1]].tolist() for i in range(len(lengths))]
    return lengths.tolist(), images


def _read(path):
    """A _files.LengthsFile that has read the file at path (or standard input)."""
    reader = _files.LengthsFile()
    if path == "-":
        _feed(reader, sys.stdin.buffer, "standard input")
        return reader
    name = os.fspath(path)
    try:
        stream = open(name, "rb")
    except OSError as exc:
        raise ValueError(f"cannot open lengths file '{name}': {exc.strerror}") from None
    with stream:
        _feed(reader, stream, name)
    return reader


def _feed(reader, stream, name):
    try:
        reader.read(stream, name)
    except OSError as exc:  # a read error is not an end of file: never plan a part of a dataset
        raise ValueError(f"cannot read {name}: {exc.strerror}") from None
