"""brs.dataset_lengths.dataset_encoder_loads: each sample's image patch counts read from a
dataset column (the sampler's encoder_loads=), or from Qwen2-VL's image_grid_thw column, or
none; the forms a column may take, its summary line, and what is refused."""

import numpy as np
import pytest

import brs
from brs.dataset_lengths import dataset_encoder_loads


class Columns:
    """A map-style dataset with whole columns, the way datasets.Dataset offers them; reading a
    row is an error, since the images must come from the column alone."""

    def __init__(self, **columns):
        self.columns = columns
        self.column_names = list(columns)

    def __len__(self):
        return len(next(iter(self.columns.values())))

    def __getitem__(self, key):
        if isinstance(key, str):
            return self.columns[key]
        raise AssertionError(f"row {key} was read")


def test_the_encoder_loads_column_in_every_form_a_sample_may_take():
    torch = pytest.importorskip("torch")
    entries = [[256, 1024], 4096, 0, [], None, np.array([16, 32]), torch.tensor([8])]
    images = dataset_encoder_loads(Columns(encoder_loads=entries))
    assert images.loads == [[256, 1024], [4096], [], [], [], [16, 32], [8]]
    assert images.column == "encoder_loads"
    assert (images.samples, images.samples_with_images, images.images, images.patches,
            images.most_patches) == (7, 4, 6, 5432, 4096)


def test_without_the_column_the_images_come_from_their_patch_grids():
    torch = pytest.importorskip("torch")
    grids = [[[1, 4, 6]], [], None, [[1, 2, 2], [2, 4, 4]], [1, 8, 8], torch.tensor([[1, 6, 6]])]
    images = dataset_encoder_loads(Columns(input_ids=[[1]] * 6, image_grid_thw=grids))
    assert images.loads == [[24], [], [], [4, 32], [64], [36]]
    assert images.column == "image_grid_thw"
    assert images.describe() == ("images from column 'image_grid_thw' (t*h*w patches per "
                                 "image): 4 of 6 samples have images (5 images, 160 patches, at "
                                 "most 64 in one sample)")


def test_the_encoder_loads_column_wins_over_the_grids():
    dataset = Columns(encoder_loads=[[5], []], image_grid_thw=[[[1, 2, 2]], [[1, 2, 2]]])
    assert dataset_encoder_loads(dataset).loads == [[5], []]
    assert dataset_encoder_loads(dataset, column="patches").loads == [[4], [4]]
    assert dataset_encoder_loads(dataset, column="patches", grid_column=None).loads is None


def test_no_column_no_images():
    images = dataset_encoder_loads(Columns(input_ids=[[1], [2]]))
    assert (images.loads, images.column, images.samples) == (None, None, 2)
    assert images.describe() == "no image column: planning the text only"
    assert dataset_encoder_loads([{"image_grid_thw": [[1, 2, 2]]}]).loads is None  # no columns


def test_a_required_column_must_be_there_even_beside_the_grids():
    dataset = Columns(image_grid_thw=[[[1, 2, 2]]])
    with pytest.raises(ValueError, match=r"no column 'patches' of image patch counts \(its "
                                         r"columns: \['image_grid_thw'\]\)"):
        dataset_encoder_loads(dataset, column="patches", required=True)


def test_a_datasets_dataset_is_read_as_arrow_through_its_index_mapping():
    datasets = pytest.importorskip("datasets")
    table = datasets.Dataset.from_dict({
        "input_ids": [[1], [2], [3]],
        "image_grid_thw": [[[1, 2, 4]], [], [[1, 2, 2], [1, 4, 4]]]})
    assert dataset_encoder_loads(table).loads == [[8], [], [4, 16]]
    # select/shuffle keep the rows in their new order, as the lengths' column does
    assert dataset_encoder_loads(table.select([2, 0])).loads == [[4, 16], [8]]
    with_column = table.add_column("encoder_loads", [[3], [], [1, 2]])
    assert dataset_encoder_loads(with_column).loads == [[3], [], [1, 2]]


def test_the_loads_plan_as_the_sampler_takes_them():
    loads = [[64], [], [16, 16], 0] * 8
    images = dataset_encoder_loads(Columns(encoder_loads=loads))
    plan = brs.plan_batch([40] * 32, dp_size=2, grad_accum=2, encoder_loads=images.loads)
    assert sorted(i for rank in plan for micro in rank for i in micro) == list(range(32))


@pytest.mark.parametrize("column, entries, error, phrase", [
    ("encoder_loads", [["x"]], TypeError, "column 'encoder_loads', sample 0: expected the image "
                                          "patch counts"),
    ("encoder_loads", [1.5], TypeError, "sample 0"),
    ("image_grid_thw", [[[1, 2]]], ValueError, "column 'image_grid_thw', sample 0: expected one "
                                               r"\(t, h, w\) patch grid"),
    ("image_grid_thw", [[[1, 0, 4]]], ValueError, "positive ints"),
])
def test_a_bad_entry_names_its_column_and_sample(column, entries, error, phrase):
    with pytest.raises(error, match=phrase):
        dataset_encoder_loads(Columns(**{column: entries}))
