"""Synthetic vision-language datasets for brsbench.vlm: text lengths and each sample's images.

An image is its (h, w) in 14-pixel patches, as Qwen2-VL cuts it: h and w even (the 2x2 merge),
h * w patches in the vision encoder, h * w / 4 tokens in the LLM's text. Resolutions are those
a VLM dataset holds (thumbnails, 448 squares, photos, documents), drawn with weights that make
small images common and large ones rare. Everything is drawn from one seeded random.Random, so
a dataset is the same on every machine.
"""

import random
from dataclasses import dataclass

from .datasets import lognormal

PATCH = 14  # pixels per patch side (Qwen2-VL)
MERGE = 2  # the 2x2 merge: 4 patches become one LLM token
VISION_MARKERS = 2  # <|vision_start|> and <|vision_end|> around each image's tokens

# (width, height) in pixels, weight
RESOLUTIONS = (((224, 224), 20), ((336, 336), 15), ((448, 448), 25), ((672, 448), 15),
               ((896, 672), 12), ((1008, 756), 8), ((1344, 896), 5))
IMAGES_PER_SAMPLE = (0, 1, 2, 3, 4)
IMAGE_COUNT_WEIGHTS = (30, 35, 17, 10, 8)


@dataclass
class VlmData:
    name: str
    lengths: list[int]  # text tokens the LLM reads per sample
    grids: list[list[tuple[int, int]]]  # each sample's images as (h, w) in patches
    source: str  # how it was drawn, for the report

    @property
    def loads(self) -> list[list[int]]:
        """Per sample its images' patch counts: the encoder loads the library takes."""
        return [[h * w for h, w in images] for images in self.grids]

    def image_tokens(self, index: int) -> int:
        """LLM tokens sample ``index``'s images take: merged patches and the two markers each."""
        return sum(h * w // (MERGE * MERGE) + VISION_MARKERS for h, w in self.grids[index])


def grid(width: int, height: int, scale: int) -> tuple[int, int]:
    """(h, w) in patches of an image shrunk by ``scale`` per side, rounded to the merge's grid
    (a multiple of 28 pixels) as Qwen2-VL's processor resizes."""
    unit = PATCH * MERGE
    side = lambda pixels: max(unit, round(pixels / scale / unit) * unit) // PATCH
    return side(height), side(width)


def draw_images(rng: random.Random, scale: int) -> list[tuple[int, int]]:
    count = rng.choices(IMAGES_PER_SAMPLE, IMAGE_COUNT_WEIGHTS)[0]
    sizes = rng.choices([r for r, _ in RESOLUTIONS], [w for _, w in RESOLUTIONS], k=count)
    return [grid(w, h, scale) for w, h in sizes]


def independent(n: int, seed: int, scale: int = 1) -> VlmData:
    """Text lengths lognormal, images drawn apart from them: a caption's length says nothing
    about its images (what a length-only sampler assumes is the whole cost)."""
    rng = random.Random(seed)
    lengths, grids = [], []
    for _ in range(n):
        lengths.append(lognormal(rng, 6.0, 1.0, 16, 8192))
        grids.append(draw_images(rng, scale))
    return VlmData("independent", lengths, grids,
                   f"text clamp(round(lognormvariate(6, 1)), 16, 8192); images apart; n={n}, "
                   f"seed={seed}" + (f", resolutions / {scale}" if scale > 1 else ""))


def correlated(n: int, seed: int, scale: int = 1) -> VlmData:
    """The text is what Qwen2-VL's LLM reads: each image's merged patches (patches / 4) between
    two markers, then a caption (lognormal), so text length grows with the images."""
    rng = random.Random(seed)
    data = VlmData("correlated", [], [],
                   f"text = caption clamp(round(lognormvariate(5, 1)), 8, 4096) + per image "
                   f"patches/4 + 2; n={n}, seed={seed}"
                   + (f", resolutions / {scale}" if scale > 1 else ""))
    for index in range(n):
        data.grids.append(draw_images(rng, scale))
        caption = lognormal(rng, 5.0, 1.0, 8, 4096)
        data.lengths.append(caption + data.image_tokens(index))
    return data


def describe(data: VlmData) -> str:
    """One line of what the dataset holds: text, images per sample, patches."""
    loads = data.loads
    images = sum(len(x) for x in loads)
    patches = sorted(p for x in loads for p in x)
    with_images = sum(1 for x in loads if x)
    mean_text = sum(data.lengths) / len(data.lengths)
    return (f"{data.name}: n={len(data.lengths)}, text mean {mean_text:.0f} (max "
            f"{max(data.lengths)}), {with_images / len(loads):.0%} of samples with images, "
            f"{images / len(loads):.2f} images per sample, patches per image median "
            f"{patches[len(patches) // 2]} (max {patches[-1]}), per sample mean "
            f"{sum(patches) / len(loads):.0f}")
