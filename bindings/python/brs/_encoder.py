"""The ``encoder_loads=`` argument: each sample's images, as the library takes them.

A sample's entry is its images' patch counts (the vision encoder's tokens per image): a list of
ints, one int for a single image, or 0 / an empty list for a sample without images. The library
prices each image (``encoder_alpha``, ``encoder_intercept``) and caps a micro-batch's patches
(``max_encoder_tokens``); here the entries are only checked and laid out flat, sample after
sample (brs_sampler_set_encoder_loads).
"""

import ctypes
import numbers

from . import _args

_MAX_PATCHES = 2**32 - 1  # a uint32 per image


class ImageTable:
    """The images of ``count`` samples: sample i's are patches[offsets[i]:offsets[i + 1]]."""

    __slots__ = ("patches", "offsets", "count")

    def __init__(self, per_sample):
        flat, offsets = [], [0]
        for index, entry in enumerate(per_sample):
            flat.extend(_images_of(index, entry))
            offsets.append(len(flat))
        self.count = len(offsets) - 1
        self.patches = (ctypes.c_uint32 * max(len(flat), 1))(*flat)
        self.offsets = (ctypes.c_uint64 * len(offsets))(*offsets)


def _images_of(index, entry):
    if isinstance(entry, numbers.Integral) and not isinstance(entry, bool):
        return [_patches(index, entry)] if int(entry) != 0 else []
    if isinstance(entry, (str, bytes)) or not hasattr(entry, "__iter__"):
        raise TypeError(f"encoder_loads[{index}] must be a list of image patch counts, an int "
                        f"(one image) or 0 (no image); got {entry!r} ({type(entry).__name__})")
    return [_patches(index, patches) for patches in entry]


def _patches(index, value):
    value = _args.integer(f"encoder_loads[{index}]", value)
    if not 1 <= value <= _MAX_PATCHES:
        raise ValueError(f"encoder_loads[{index}]: an image has 1 to {_MAX_PATCHES} patches; "
                         f"got {value} (leave an image out rather than give it 0)")
    return value


def image_table(encoder_loads, count):
    """The ImageTable of ``encoder_loads`` (None stays None), one entry per sample."""
    if encoder_loads is None:
        return None
    if isinstance(encoder_loads, (str, bytes)) or not hasattr(encoder_loads, "__len__"):
        raise TypeError("encoder_loads must be a sequence with one entry per sample (a list of "
                        f"image patch counts each); got {type(encoder_loads).__name__}")
    if len(encoder_loads) != count:
        raise ValueError(f"encoder_loads has {len(encoder_loads)} entries but there are {count} "
                         "samples: give one entry per sample (0 or [] for a sample without "
                         "images)")
    return ImageTable(encoder_loads)
