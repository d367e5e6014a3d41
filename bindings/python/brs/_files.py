"""Owners of libbrs's two file readers (brs_lengths_file, brs_cost_model_file): the one reader of
each format of docs/formats.md, shared with the brs command and every binding. Python opens and
reads the files; the library accepts or refuses the bytes and words the message.
"""

import array
import ctypes
import json
import os

from . import _native as n
from ._errors import error_for

CHUNK_SIZE = 1 << 16  # bytes fed to the lengths reader at a time (the brs command's too)


def _name(name):
    """A file's name as bytes for the library, which escapes what a terminal must not see."""
    return os.fsencode(name) if isinstance(name, (str, os.PathLike)) else bytes(name)


def _refusal(status, message):
    """The exception of a refused file: the library's message alone, which names the file."""
    if status in (n.ERR_INVALID_ARGUMENT, n.ERR_TOO_LARGE):
        exc = ValueError(message)
    elif status == n.ERR_NO_MEMORY:
        exc = MemoryError(message)
    else:
        return error_for(status, message)  # a state or NULL error: a bug on our side
    exc.status = status
    return exc


def _c_array(pointer, count, typecode):
    """A copy of count C values at pointer, as an array.array."""
    values = array.array(typecode)
    if count:
        values.frombytes(ctypes.string_at(pointer, count * values.itemsize))
    return values


class _Reader:
    """Owns one reader handle of the library's brs_<kind> functions (new, free, last_error):
    frees it when collected, raises the library's refusal of a call on it."""

    def __init__(self, kind, pointer_type):
        handle = pointer_type()
        status = getattr(n.lib, f"brs_{kind}_new")(ctypes.byref(handle))
        if status != n.OK:
            raise error_for(status)
        self.handle = handle
        # still reachable while the interpreter shuts down
        self._free = getattr(n.lib, f"brs_{kind}_free")
        self._last_error = getattr(n.lib, f"brs_{kind}_last_error")

    def __del__(self):
        handle = getattr(self, "handle", None)
        if handle:
            self._free(handle)
            self.handle = None

    def _check(self, status):
        if status != n.OK:
            message = self._last_error(self.handle)
            raise _refusal(status, message.decode("ascii", "replace"))


class LengthsFile(_Reader):
    """One brs_lengths_file handle: read a stream, then its lengths and images."""

    def __init__(self):
        super().__init__("lengths_file", n.LengthsFilePtr)

    def read(self, stream, name):
        """Feed a binary stream to its end in chunks (memory bounded by the values; /dev/zero
        stops at its first line). ValueError naming ``name`` and the line; OSError of the
        stream as raised."""
        self._check(n.lib.brs_lengths_file_begin(self.handle, _name(name)))
        while True:
            chunk = stream.read(CHUNK_SIZE)
            if not chunk:
                break
            status = n.lib.brs_lengths_file_feed(self.handle, chunk, len(chunk))
            if status != n.OK:
                break  # finish reports the first problem
        self._check(n.lib.brs_lengths_file_finish(self.handle))

    def lengths(self):
        """The lengths read, as an array.array('I')."""
        pointer = ctypes.POINTER(ctypes.c_uint32)()
        count = ctypes.c_size_t()
        self._check(n.lib.brs_lengths_file_lengths(ctypes.byref(pointer), ctypes.byref(count),
                                                   self.handle))
        return _c_array(pointer, count.value, "I")

    def images(self, count):
        """(patches, offsets) as array.array('I') and array.array('Q'): sample i's images are
        patches[offsets[i]:offsets[i + 1]]; ``count`` is the number of samples."""
        patches = ctypes.POINTER(ctypes.c_uint32)()
        offsets = ctypes.POINTER(ctypes.c_uint64)()
        self._check(n.lib.brs_lengths_file_images(ctypes.byref(patches), ctypes.byref(offsets),
                                                  self.handle))
        offset_values = _c_array(offsets, count + 1, "Q")
        return _c_array(patches, offset_values[-1], "I"), offset_values


def _parse_int(text):
    # Python refuses to convert an integer of more than 4300 digits; JSON allows it, and a
    # record the library accepted must load.
    return int(text) if len(text) <= 4000 else float(text)


class CostModelFile(_Reader):
    """One brs_cost_model_file handle: parse a file's bytes, then its values by key."""

    def __init__(self):
        super().__init__("cost_model_file", n.CostModelFilePtr)

    def parse(self, data, name):
        """Check ``data`` (bytes) by the rules of docs/formats.md; ValueError naming ``name``
        and the key, or the byte where it is not JSON."""
        self._check(n.lib.brs_cost_model_file_parse(self.handle, data, len(data), _name(name)))

    def has(self, key):
        """Whether ``key`` holds a value (absent and null mean the same)."""
        present = ctypes.c_int32()
        self._check(n.lib.brs_cost_model_file_has(ctypes.byref(present), self.handle,
                                                  key.encode()))
        return bool(present.value)

    def double(self, key):
        """A number key's value as the library checked it, or None when absent or null."""
        if not self.has(key):
            return None
        value = ctypes.c_double()
        self._check(n.lib.brs_cost_model_file_get_double(ctypes.byref(value), self.handle,
                                                         key.encode()))
        return value.value

    def integer(self, key):
        """An integer key's value (max_tokens, version), or None when absent or null."""
        if not self.has(key):
            return None
        value = ctypes.c_int64()
        self._check(n.lib.brs_cost_model_file_get_int(ctypes.byref(value), self.handle,
                                                      key.encode()))
        return value.value

    def value(self, key):
        """Any key's value decoded from the JSON text the library checked (a record's string,
        object or array), or None when absent or null."""
        if not self.has(key):
            return None
        text = ctypes.c_void_p()
        length = ctypes.c_size_t()
        self._check(n.lib.brs_cost_model_file_get_json(ctypes.byref(text), ctypes.byref(length),
                                                       self.handle, key.encode()))
        return json.loads(ctypes.string_at(text, length.value), parse_int=_parse_int)
