"""Encoder loads through brs_swig: a list of patch-count lists per sample changes the split, every
sample is planned once, each micro-batch's encoder figures are its samples' images, the encoder
cap holds, and bad lists are refused (in Python, or by the library with its message); a batch
with images (plan_batch) plans every position once within the cap."""
import unittest

import brs_swig as b

OPTIONS = dict(batch_size=2, grad_accum=2, dp_size=2, seed=5)


def dataset(n):
    """Long texts without images alternating with short captions of two large images: by text
    alone the captions form one cheap micro-batch holding every image of the step."""
    lengths = [800 + i * 13 % 200 if i % 2 == 0 else 40 + i % 7 for i in range(n)]
    images = [[] if i % 2 == 0 else [256 * (1 + i % 3)] * 2 for i in range(n)]
    return lengths, images


def slots(sampler, step):
    """(indices, [encoder_tokens, images, encoder_cost], [padded, real, cost]) of every slot."""
    plan = sampler.plan(step)
    flat = lambda per_rank: [slot for rank in per_rank for slot in rank]
    return list(zip(flat(plan), flat(sampler.encoder_stats()), flat(sampler.stats())))


def with_loads(lengths, images, **options):
    sampler = b.Sampler(lengths, **OPTIONS, **options)
    sampler.set_encoder_loads(images)
    sampler.validate()
    return sampler


class EncoderLoads(unittest.TestCase):
    def test_images_change_the_split_of_a_step(self):
        lengths, images = dataset(16)
        text_only = b.Sampler(lengths, **OPTIONS, shuffle=0)
        sampler = with_loads(lengths, images, shuffle=0)
        self.assertNotEqual(text_only.plan(0), sampler.plan(0))
        text_peak = max(sum(sum(images[i]) for i in batch) for batch, _, _ in slots(text_only, 0))
        sampler.plan(0)
        self.assertLess(sampler.plan_int(b.BRS_PLAN_MAX_ENCODER_TOKENS), text_peak)
        self.assertEqual(text_only.plan_int(b.BRS_PLAN_TOTAL_ENCODER_TOKENS), 0)
        self.assertGreater(sampler.plan_double(b.BRS_PLAN_ENCODER_COST), 0)

    def test_every_sample_once_and_each_micro_batch_has_its_samples_images(self):
        lengths, images = dataset(64)
        sampler = with_loads(lengths, images)
        for i, sample in enumerate(images):
            self.assertEqual(sampler.encoder_load(i), [len(sample), sum(sample)])
        for epoch in range(2):
            sampler.set_epoch(epoch)
            seen = [0] * len(lengths)
            for step in range(sampler.steps_per_epoch()):
                total = peak = cost = 0
                for batch, (tokens, count, encoder_cost), (_, _, batch_cost) in slots(sampler,
                                                                                      step):
                    self.assertEqual(tokens, sum(sum(images[i]) for i in batch))
                    self.assertEqual(count, sum(len(images[i]) for i in batch))
                    self.assertLessEqual(encoder_cost, batch_cost)
                    total, peak, cost = total + tokens, max(peak, tokens), cost + encoder_cost
                    for i in batch:
                        seen[i] += 1
                self.assertEqual(sampler.plan_int(b.BRS_PLAN_TOTAL_ENCODER_TOKENS), total)
                self.assertEqual(sampler.plan_int(b.BRS_PLAN_MAX_ENCODER_TOKENS), peak)
                self.assertAlmostEqual(sampler.plan_double(b.BRS_PLAN_ENCODER_COST), cost)
            self.assertEqual(seen, [1] * len(lengths), f"epoch {epoch}")

    def test_max_encoder_tokens_caps_every_micro_batch(self):
        lengths, images = dataset(64)
        cap = 1536
        uncapped = with_loads(lengths, images)
        peaks = []
        for step in range(uncapped.steps_per_epoch()):
            uncapped.plan(step)
            peaks.append(uncapped.plan_int(b.BRS_PLAN_MAX_ENCODER_TOKENS))
        self.assertGreater(max(peaks), cap)
        sampler = with_loads(lengths, images)
        sampler.set_int(b.BRS_OPT_MAX_ENCODER_TOKENS, cap)
        for step in range(sampler.steps_per_epoch()):
            for batch, (tokens, _, _), _ in slots(sampler, step):
                self.assertLessEqual(tokens, cap, batch)

    def test_bad_loads_are_refused(self):
        lengths, images = dataset(16)
        sampler = with_loads(lengths, images)
        loaded = sampler.encoder_load(1)
        with self.assertRaises(ValueError) as caught:  # an image of 0 patches
            sampler.set_encoder_loads(images[:3] + [[64, 0]] + images[4:])
        self.assertIn("is 0", str(caught.exception))
        self.assertEqual(sampler.encoder_load(1), loaded)  # the loads are kept
        for bad, error in (([[-1]] * 16, ValueError), ([[2**32]] * 16, ValueError),
                           ([["x"]] * 16, ValueError), ([5] * 16, TypeError),
                           (iter(images), TypeError), (7, TypeError)):
            with self.subTest(bad=bad), self.assertRaises(error):
                sampler.set_encoder_loads(bad)
        self.assertEqual(sampler.encoder_load(1), loaded)
        sampler.set_encoder_loads(images[:15])  # not one per sample: validate() says so
        with self.assertRaises(ValueError) as caught:
            sampler.validate()
        self.assertIn("one load list per sample", str(caught.exception))
        with self.assertRaises(ValueError):
            sampler.plan(0)
        sampler.set_encoder_loads(images)
        sampler.set_int(b.BRS_OPT_MAX_ENCODER_TOKENS, 300)  # below one sample's patches
        with self.assertRaises(ValueError) as caught:
            sampler.validate()
        self.assertIn("max_encoder_tokens", str(caught.exception))
        sampler.set_int(b.BRS_OPT_MAX_ENCODER_TOKENS, 0)
        sampler.set_encoder_loads([])  # clears them
        self.assertEqual(sampler.encoder_load(1), [0, 0])
        sampler.plan(0)
        self.assertEqual(sampler.encoder_stats()[0][0], [0, 0, 0.0])

    def test_a_batch_with_images_plans_every_position_once_within_the_encoder_cap(self):
        lengths, images = dataset(16)
        cap = 2048
        # The configuration's own lengths and loads play no part.
        config = b.Sampler([1], **OPTIONS, drop_last=0)
        config.plan_batch(lengths, images)
        self.assertGreater(config.plan_int(b.BRS_PLAN_MAX_ENCODER_TOKENS), cap)
        config.set_int(b.BRS_OPT_MAX_ENCODER_TOKENS, cap)
        plan = config.plan_batch(lengths, images)
        positions = sorted(i for rank in plan for batch in rank for i in batch)
        self.assertEqual(positions, list(range(len(lengths))))
        flat = lambda per_rank: [slot for rank in per_rank for slot in rank]
        for batch, (tokens, count, _) in zip(flat(plan), flat(config.encoder_stats())):
            self.assertEqual(tokens, sum(sum(images[i]) for i in batch))
            self.assertEqual(count, sum(len(images[i]) for i in batch))
            self.assertLessEqual(tokens, cap, batch)
        self.assertEqual(config.plan_int(b.BRS_PLAN_TOTAL_ENCODER_TOKENS), sum(map(sum, images)))
        self.assertEqual(config.plan_batch(lengths), config.plan_batch(lengths, [[]] * 16))
        with self.assertRaises(ValueError) as caught:  # an image of 0 patches
            config.plan_batch(lengths, images[:3] + [[64, 0]] + images[4:])
        self.assertIn("is 0", str(caught.exception))
        with self.assertRaises(ValueError) as caught:  # not one list per length
            config.plan_batch(lengths, images[:15])
        self.assertIn("15 lists for 16 lengths", str(caught.exception))


if __name__ == "__main__":
    unittest.main()
