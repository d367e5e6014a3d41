"""A tiny vision-language model and dataset, for the Trainer's image-aware tests and the scripts
they launch under torchrun.

The model is a Qwen2-VL built from a config (one text layer, one vision layer, random weights,
nothing downloaded). The dataset is what a Qwen2-VL processor would have made of synthetic
samples: per sample its text (gsm8k lengths, scaled down as in _support) behind 0 to 2 images,
each image a (1, h, w) patch grid whose h*w patches are random pixel rows for the vision tower,
and h*w/4 image placeholder tokens (the 2x2 spatial merge) between vision start and end tokens
in input_ids. The images are drawn independently of the text, so a short caption may carry the
largest image: what text-only planning cannot see.
"""

import numpy as np
import torch

from _support import PAD, VOCAB as TEXT_VOCAB, scaled_lengths, tokens

VOCAB = TEXT_VOCAB + 4  # the text ids of _support.tokens, then the four vision ids
VISION_START, VISION_END, IMAGE, VIDEO = range(TEXT_VOCAB, VOCAB)
PATCH = 2  # pixels per patch side
TEMPORAL_PATCH = 2  # an image is repeated over the temporal patch, as Qwen2-VL's processor does
MERGE = 2  # the vision tower merges 2x2 patches into one LLM token
CHANNELS = 3
PATCH_DIM = CHANNELS * TEMPORAL_PATCH * PATCH * PATCH  # one row of pixel_values
GRID_SIDES = (2, 4, 8, 12)  # patches per side: 4 to 144 patches per image
IMAGES_PER_SAMPLE = (0, 0, 1, 1, 1, 2)  # drawn uniformly: a third of the samples have none


def tiny_qwen2_vl(seed=0, resumable=True):
    """The model, of random weights drawn from ``seed``; ``resumable``: its checkpoints come
    back whole when the Trainer resumes them (below), else upstream's class as it is."""
    from transformers import Qwen2VLConfig, Qwen2VLForConditionalGeneration

    class ResumableQwen2VL(Qwen2VLForConditionalGeneration):
        """Checkpoints in the model's own key layout. By default save_pretrained writes
        Qwen2-VL's original layout (model.embed_tokens, visual.*), while transformers 5.23's
        Trainer resumes with a plain load_state_dict that matches none of those keys: only
        lm_head would come back, and no resume could end with the uninterrupted weights."""

        def save_pretrained(self, *args, **kwargs):
            kwargs.setdefault("save_original_format", False)
            return super().save_pretrained(*args, **kwargs)

    torch.manual_seed(seed)
    # No dropout anywhere: a resumed run must reproduce the uninterrupted one bit for bit.
    # mrope_section splits the text head's 8 rotary frequencies over (t, h, w).
    text = dict(vocab_size=VOCAB, hidden_size=32, intermediate_size=64, num_hidden_layers=1,
                num_attention_heads=2, num_key_value_heads=1, max_position_embeddings=512,
                attention_dropout=0.0, pad_token_id=PAD, bos_token_id=TEXT_VOCAB - 1,
                eos_token_id=TEXT_VOCAB - 1,
                rope_parameters={"rope_type": "default", "rope_theta": 10000.0,
                                 "mrope_section": [2, 3, 3]})
    vision = dict(depth=1, embed_dim=16, hidden_size=32, num_heads=2, mlp_ratio=2,
                  patch_size=PATCH, temporal_patch_size=TEMPORAL_PATCH, spatial_merge_size=MERGE,
                  in_channels=CHANNELS)
    config = Qwen2VLConfig(text_config=text, vision_config=vision, image_token_id=IMAGE,
                           video_token_id=VIDEO, vision_start_token_id=VISION_START,
                           vision_end_token_id=VISION_END)
    return (ResumableQwen2VL if resumable else Qwen2VLForConditionalGeneration)(config)


def image_grids(count, seed=0):
    """Per sample its images' (t, h, w) patch grids."""
    rng = np.random.default_rng(seed)
    return [[[1, int(rng.choice(GRID_SIDES)), int(rng.choice(GRID_SIDES))]
             for _ in range(int(rng.choice(IMAGES_PER_SAMPLE)))] for _ in range(count)]


def patches(grids):
    """The vision tower's patches of one sample's images: t*h*w per image."""
    return [t * h * w for t, h, w in grids]


def row(index, text_length, grids):
    """Sample ``index`` as the processor gives it (pixel_values as nested lists, Arrow's way)."""
    ids, types = [], []
    for t, h, w in grids:
        placeholders = t * h * w // (MERGE * MERGE)
        ids += [VISION_START] + [IMAGE] * placeholders + [VISION_END]
        types += [0] + [1] * placeholders + [0]
    ids += tokens(index, text_length)
    types += [0] * text_length
    pixels = torch.randn(sum(patches(grids)), PATCH_DIM,
                         generator=torch.Generator().manual_seed(1000 + index))
    return {"input_ids": ids, "mm_token_type_ids": types, "image_grid_thw": grids,
            "pixel_values": pixels.tolist(), "length": len(ids), "sample_idx": index}


def vlm_dataset(count, seed=0):
    """A datasets.Dataset of ``count`` samples, with the "length" column (image placeholder
    tokens included) and the processor's "image_grid_thw" column, but no "encoder_loads"."""
    import datasets

    rows = [row(i, int(n), grids)
            for i, (n, grids) in enumerate(zip(scaled_lengths(count), image_grids(count, seed)))]
    return datasets.Dataset.from_list(rows)


def vlm_collate(rows):
    """Right-pads the text (labels -100 on padding and image tokens); concatenates the images'
    pixel rows and grids in sample order, as Qwen2-VL's processor batches them; keeps
    sample_idx for the logs."""
    width = max(len(r["input_ids"]) for r in rows)

    def padded(key, value):
        return torch.tensor([r[key] + [value] * (width - len(r[key])) for r in rows])

    ids = padded("input_ids", PAD)
    mask = torch.tensor([[1] * len(r["input_ids"]) + [0] * (width - len(r["input_ids"]))
                         for r in rows])
    batch = {"input_ids": ids, "attention_mask": mask,
             "mm_token_type_ids": padded("mm_token_type_ids", 0),
             "labels": ids.masked_fill((mask == 0) | (ids == IMAGE), -100),
             "sample_idx": torch.tensor([r["sample_idx"] for r in rows])}
    grids = [grid for r in rows for grid in r["image_grid_thw"]]
    if grids:  # a micro-batch of captions only has no pixel_values, as with the processor
        batch["pixel_values"] = torch.cat([torch.tensor(r["pixel_values"], dtype=torch.float32)
                                           for r in rows if r["image_grid_thw"]])
        batch["image_grid_thw"] = torch.tensor(grids)
    return batch
