"""The type checks of brs's keyword arguments, with the messages the sampler gives.

For wrappers that take the sampler's arguments under their own names (the Trainer
integration's RebalanceOptions checks its fields at construction), so that a wrong type reads
the same wherever it is passed. Each takes the name to show and the value, and returns the value
converted (``integer``, ``optional_integer``, ``real``, ``flag``).
"""

from ._args import flag, integer, optional_integer, real

__all__ = ["flag", "integer", "optional_integer", "real"]
