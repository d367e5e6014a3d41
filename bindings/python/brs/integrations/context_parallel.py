"""The reference context-parallel attention under the integrations' name: brs/context_parallel.py
holds it (the core's calibration times it, and the core imports no integration); this module is
where docs/python.md and existing jobs import it from."""

from ..context_parallel import Shard, TinyDecoder, attention, gather, shard

__all__ = ["Shard", "TinyDecoder", "attention", "gather", "shard"]
