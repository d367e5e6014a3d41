"""The token length of every sample of a training dataset, as the sampler needs it.

brs.calibrate reads a dataset's lengths with it, and so does the Trainer integration before it
builds its sampler.

A precomputed column (``TrainingArguments.length_column_name``, "length" by default) is read as
a whole, without touching a row. Without one, every row is read once to measure its model input,
with a progress bar: on a large dataset that scan is the slow part, which is why the column is
worth adding (``dataset.map(lambda x: {"length": len(x["input_ids"])})``).
"""

from collections.abc import Mapping

import numpy as np


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
