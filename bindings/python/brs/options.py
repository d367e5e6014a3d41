"""The library's option table, read-only: every option's name, type, bounds, default, help and
value names, as libbrs reports them (brs_option_*).

For code that builds on brs (the integrations, tools) and must not restate a default, a range or
a value's name: ``BY_NAME["sync"].value_names``, ``BY_NAME["alpha"].default_value``. ``TABLE``
holds one ``Option`` per option in the library's order; ``keyword(option)`` is its keyword in
``BatchRebalanceSampler`` (``per_device_batch_size`` for the library's ``batch_size``).
"""

from ._options import BY_KEYWORD, BY_NAME, TABLE, Option, keyword

__all__ = ["TABLE", "BY_NAME", "BY_KEYWORD", "Option", "keyword"]
