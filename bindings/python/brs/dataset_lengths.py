"""The token length of every sample of a training dataset, as the sampler needs it.

brs.calibrate reads a dataset's lengths with it, and so does the Trainer integration before it
builds its sampler.

A precomputed column (``TrainingArguments.length_column_name``, "length" by default) is read as
a whole, without touching a row. Without one, every row is read once to measure its model input,
with a progress bar: on a large dataset that scan is the slow part, which is why the column is
worth adding (``dataset.map(lambda x: {"length": len(x["input_ids"])})``).

A vision-language dataset's images are read the same way, by ``dataset_encoder_loads``: each
sample's image patch counts (the sampler's ``encoder_loads=``) from a column, never by a scan
(reading a row may decode and process its images).
"""

import dataclasses
import numbers
from collections.abc import Mapping

import numpy as np

# The column of each sample's image patch counts, as the sampler's encoder_loads= takes them.
ENCODER_LOADS_COLUMN = "encoder_loads"
# Qwen2-VL's processors (and those of the models derived from it) give every image its grid of
# patches (t, h, w); the vision encoder runs on t*h*w patches.
IMAGE_GRID_COLUMN = "image_grid_thw"


def dataset_lengths(dataset, *, column, input_name, show_progress):
    """int64 array of the lengths: ``dataset[column]`` if the dataset has that column, else a scan.

    A dataset "has a column" the way ``datasets.Dataset`` does: ``column in dataset.column_names``
    and ``dataset[column]`` returns the whole column.
    """
    if column in (getattr(dataset, "column_names", None) or ()):
        return _column(_whole_column(dataset, column), column)
    return _scan(dataset, input_name, column, show_progress)


def _whole_column(dataset, column):
    if hasattr(dataset, "with_format"):
        # datasets.Dataset: as one Arrow array (its Python Column iterates row by row, ~10 us
        # per row); with_format respects select/shuffle/filter index mappings.
        return dataset.with_format("arrow")[column]
    return dataset[column]


def _column(values, column):
    if hasattr(values, "numpy") and callable(values.numpy):  # a torch tensor
        values = values.numpy()
    array = np.asarray(values)
    if array.ndim != 1 or not np.issubdtype(array.dtype, np.integer):
        raise ValueError(f"the length column {column!r} must hold one integer per sample "
                         f"(got an array of dtype {array.dtype} and shape {array.shape})")
    return array.astype(np.int64, copy=False)


def _scan(dataset, input_name, column, show_progress):
    from tqdm.auto import tqdm

    lengths = np.empty(len(dataset), dtype=np.int64)
    rows = tqdm(range(len(dataset)), desc="brs: measuring sample lengths", unit="sample",
                disable=not show_progress)
    for index in rows:
        lengths[index] = _row_length(dataset[index], index, input_name, column)
    return lengths


def _row_length(row, index, input_name, column):
    if not isinstance(row, Mapping) or input_name not in row:
        raise ValueError(
            f"cannot measure sample {index}: rows must be dicts with an {input_name!r} key "
            f"(got {type(row).__name__}); add a {column!r} column holding each sample's token "
            "count, or set TrainingArguments.length_column_name to the column that does")
    value = row[input_name]
    shape = getattr(value, "shape", None)
    return int(shape[-1]) if shape is not None and len(shape) > 0 else len(value)


@dataclasses.dataclass(frozen=True)
class DatasetImages:
    """The images ``dataset_encoder_loads`` read: ``loads`` (per sample a list of patch counts,
    ``[]`` without images; None when the dataset has neither column), the ``column`` read, and
    the totals a log line reports."""

    loads: list | None = dataclasses.field(repr=False)
    column: str | None
    samples: int
    samples_with_images: int = 0
    images: int = 0
    patches: int = 0
    most_patches: int = 0  # of one sample: the least max_encoder_tokens that holds every sample

    def describe(self):
        if self.loads is None:
            return "no image column: planning the text only"
        how = " (t*h*w patches per image)" if self.column == IMAGE_GRID_COLUMN else ""
        return (f"images from column {self.column!r}{how}: {self.samples_with_images} of "
                f"{self.samples} samples have images ({self.images} images, {self.patches} "
                f"patches, at most {self.most_patches} in one sample)")


def dataset_encoder_loads(dataset, *, column=ENCODER_LOADS_COLUMN, grid_column=IMAGE_GRID_COLUMN,
                          required=False):
    """Each sample's images as the sampler's ``encoder_loads=`` takes them: a DatasetImages.

    ``dataset[column]`` if the dataset has that column: per sample a list of image patch counts,
    one int for one image, 0 / [] / None for none. Else ``dataset[grid_column]`` (None: do not
    look), per sample its images' (t, h, w) patch grids, each image t*h*w patches. Else no images
    (``loads`` None). With ``required``, a missing ``column`` is a ValueError instead of a fall
    back: a column someone named must be there.
    Columns only, as for the lengths' column: a dataset "has" one when it is in
    ``dataset.column_names`` and ``dataset[name]`` returns it whole.
    """
    names = getattr(dataset, "column_names", None) or ()
    if column in names:
        loads = [_patch_counts(entry, index, column)
                 for index, entry in enumerate(_entries(dataset, column))]
    elif required:
        raise ValueError(f"the dataset has no column {column!r} of image patch counts (its "
                         f"columns: {list(names)}); name the column that holds them, or leave "
                         f"the default {ENCODER_LOADS_COLUMN!r}, which falls back to "
                         f"{IMAGE_GRID_COLUMN!r} and else to text only")
    elif grid_column is not None and grid_column in names:
        loads = [_grid_patches(entry, index, grid_column)
                 for index, entry in enumerate(_entries(dataset, grid_column))]
        column = grid_column
    else:
        return DatasetImages(None, None, len(dataset))
    sums = [sum(images) for images in loads]
    return DatasetImages(loads, column, len(loads), sum(1 for images in loads if images),
                         sum(map(len, loads)), sum(sums), max(sums, default=0))


def _entries(dataset, column):
    values = _whole_column(dataset, column)
    # An Arrow column converts as a whole, far faster than scalar by scalar.
    return values.to_pylist() if hasattr(values, "to_pylist") else values


def _plain(value):
    """A tensor or array entry as nested Python lists, the way Arrow gives them."""
    return value.tolist() if hasattr(value, "tolist") else value


def _patch_counts(entry, index, column):
    entry = _plain(entry)
    if entry is None:
        return []
    if isinstance(entry, numbers.Integral) and not isinstance(entry, bool):
        return [int(entry)] if entry else []
    if isinstance(entry, (list, tuple)) and all(
            isinstance(p, numbers.Integral) and not isinstance(p, bool) for p in entry):
        # Ranges (1 .. 2**32-1 patches per image) are the sampler's to check, by sample index.
        return [int(p) for p in entry]
    raise TypeError(f"column {column!r}, sample {index}: expected the image patch counts (a list "
                    f"of ints, an int for one image, 0 or [] for none); got {entry!r}")


def _grid_patches(entry, index, column):
    entry = _plain(entry)
    if not entry:  # None or no image
        return []
    if len(entry) == 3 and all(isinstance(x, numbers.Integral) for x in entry):
        entry = [entry]  # one image's (t, h, w), not a list of them
    patches = []
    for grid in entry:
        grid = _plain(grid)
        if (not isinstance(grid, (list, tuple)) or len(grid) != 3
                or not all(isinstance(x, numbers.Integral) and x >= 1 for x in grid)):
            raise ValueError(f"column {column!r}, sample {index}: expected one (t, h, w) patch "
                             f"grid of positive ints per image; got {entry!r}")
        t, h, w = map(int, grid)
        patches.append(t * h * w)
    return patches
