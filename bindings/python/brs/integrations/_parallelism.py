"""The one parallelism check both integrations share."""


def reject_model_parallelism(sizes):
    """Ranks that share one model replica (TP/CP/SP) must see the same samples: not our plan."""
    used = {kind: size for kind, size in sizes.items() if size > 1}
    if used:
        listing = ", ".join(f"{kind}_size={size}" for kind, size in sorted(used.items()))
        raise ValueError(
            f"tensor, context and sequence parallelism are not supported ({listing}): "
            "brs.BatchRebalanceSampler plans one micro-batch per data-parallel rank, while those "
            "modes need several ranks to see the same samples. Use pure data parallelism "
            "(DDP, FSDP, ZeRO) with the sampler, or the framework's own sampler.")
