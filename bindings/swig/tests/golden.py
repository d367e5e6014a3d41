"""The golden vectors of tests/vectors, and a brs_swig sampler for each."""
import json
import os
import pathlib

import brs_swig


def load_vectors():
    """Every golden vector, sorted by name; fails loudly if none is found."""
    directory = pathlib.Path(os.environ["BRS_VECTORS"])
    vectors = [json.loads(p.read_text()) for p in sorted(directory.glob("*.json"))]
    if not vectors:
        raise RuntimeError(f"no golden vectors in {directory}")
    return vectors


def swig_sampler(vector):
    """A brs_swig.Sampler configured as the vector says (length_buckets, in the options only
    when set, through set_length_buckets; the other options, max_shapes and sync of the
    shapes/ vectors included, by name)."""
    options = dict(vector["options"])
    buckets = options.pop("length_buckets", None)
    sampler = brs_swig.Sampler(vector["lengths"], **options)
    if buckets is not None:
        sampler.set_length_buckets(buckets)
        sampler.validate()
    return sampler


def expected_indices(plan):
    """[rank][micro] -> indices, the shape brs_swig.Sampler.plan returns."""
    return [[micro["indices"] for micro in rank] for rank in plan["micro_batches"]]


def expected_stats(plan):
    """[rank][micro] -> [padded, real, cost], the shape Sampler.stats returns."""
    return [[[m["padded_tokens"], m["real_tokens"], m["cost"]] for m in rank]
            for rank in plan["micro_batches"]]
