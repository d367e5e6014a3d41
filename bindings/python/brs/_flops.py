"""FLOPs (multiply-adds) per token of a decoder, read from a transformers config:
CostModel.from_config's alpha (brs/cost_model.py), nothing timed.

Only ratios matter for alpha, so everything is counted in multiply-adds of the forward pass:
the backward pass scales the linear and the attention work by the same factor (about 2).
Attribute names differ between model families (GPT-2's n_embd/n_layer/n_head/n_inner, Llama's
hidden_size/num_hidden_layers/...); both are read.
"""

_GATED_ACTIVATIONS = ("silu", "swish", "swiglu")


def _first(config, names, default=None):
    for name in names:
        value = getattr(config, name, None)
        if value is not None:
            return value
    return default


def _shape(config):
    hidden = _first(config, ("hidden_size", "n_embd", "d_model"))
    layers = _first(config, ("num_hidden_layers", "n_layer", "num_layers"))
    heads = _first(config, ("num_attention_heads", "n_head"))
    vocab = _first(config, ("vocab_size",))
    missing = [n for n, v in (("hidden size", hidden), ("number of layers", layers),
                              ("attention heads", heads), ("vocab_size", vocab)) if v is None]
    if missing:
        raise ValueError(f"config {type(config).__name__} does not say its {', '.join(missing)}: "
                         "pass a decoder's transformers config (e.g. model.config)")
    head_dim = _first(config, ("head_dim",)) or hidden // heads
    kv_heads = _first(config, ("num_key_value_heads",)) or heads
    return int(hidden), int(layers), int(heads), int(kv_heads), int(head_dim), int(vocab)


def _mlp_per_token(config, hidden):
    """Multiply-adds of one layer's MLP (or MoE block) for one token."""
    activation = str(_first(config, ("hidden_act", "activation_function"), "")).lower()
    gated = activation in _GATED_ACTIVATIONS or "gemma" in str(getattr(config, "model_type", ""))
    matrices = 3 if gated else 2
    experts = _first(config, ("num_experts", "num_local_experts", "n_routed_experts"))
    top_k = _first(config, ("num_experts_per_tok", "moe_topk", "top_k"))
    if experts and top_k:
        width = _first(config, ("moe_intermediate_size", "intermediate_size"))
        shared = (_first(config, ("shared_expert_intermediate_size",))
                  or (_first(config, ("n_shared_experts",), 0) or 0) * width)
        return matrices * hidden * (int(top_k) * width + shared) + hidden * int(experts)
    width = _first(config, ("intermediate_size", "n_inner")) or 4 * hidden
    return matrices * hidden * int(width)


def text_config(config):
    """The language model's config: a vision-language config's ``text_config`` (Qwen2-VL,
    LLaVA, ...; its top level may not say the decoder's sizes at all), else the config itself."""
    text = getattr(config, "text_config", None)
    return config if text is None else text


def analytic_terms(config, *, causal=True):
    """linear_per_token, attention_per_token_per_length and a rough activation memory, of a
    vision-language config's text_config where it has one."""
    config = text_config(config)
    hidden, layers, heads, kv_heads, head_dim, vocab = _shape(config)
    projections = hidden * head_dim * (2 * heads + 2 * kv_heads)  # q and o; k and v
    linear = layers * (projections + _mlp_per_token(config, hidden)) + hidden * vocab
    # QK^T and AV: heads*head_dim multiply-adds each, per key; a causal kernel does half.
    attention = layers * 2 * heads * head_dim * (0.5 if causal else 1.0)
    # Activations kept for backward, 16-bit, no recomputation, fused attention: about 34*hidden
    # bytes per token per layer (Korthikanti et al. 2022), plus fp32 logits and their gradient.
    activation = layers * 34 * hidden + 8 * vocab
    return {"linear_per_token": float(linear), "attention_per_token_per_length": float(attention),
            "activation_bytes_per_token": float(activation)}


def vision_terms(config):
    """Multiply-adds of a vision-language config's vision tower (its ``vision_config``), per
    patch and per patch per patch of the same image, or None when the config has no vision
    tower (or does not say its sizes).

    Read as Qwen2-VL's and Qwen2.5-VL's towers are built: a patch embedding (channels x
    temporal patch x patch^2 x width), per block the q, k, v and output projections (4 x
    width^2), the MLP (mlp_ratio x width, or intermediate_size, three matrices when gated), full
    (non-causal) attention within an image, 2 x width per key; the merger, per patch,
    width^2 x merge^2 + width x the language model's width. ``linear_per_patch`` and
    ``attention_per_patch_per_patch`` price an image of p patches as linear * p + attention *
    p^2: the encoder part's encoder_weight and encoder_alpha in the text part's units."""
    vision = getattr(config, "vision_config", None)
    if vision is None:
        return None
    embed = _first(vision, ("embed_dim",))
    width = embed or _first(vision, ("hidden_size", "width"))
    depth = _first(vision, ("depth", "num_hidden_layers", "num_layers"))
    if not width or not depth:
        return None
    width, depth = int(width), int(depth)
    # Qwen2-VL's vision hidden_size is the language model's width (the merger's output); in
    # Qwen2.5-VL it is the tower's own and out_hidden_size the merger's.
    out = (_first(vision, ("out_hidden_size",)) or (embed and _first(vision, ("hidden_size",)))
           or _first(text_config(config), ("hidden_size", "n_embd", "d_model")) or width)
    inner = _first(vision, ("intermediate_size",))
    activation = str(_first(vision, ("hidden_act",), "")).lower()
    if inner is None:
        inner, matrices = int(float(_first(vision, ("mlp_ratio",), 4)) * width), 2
    else:
        matrices = 3 if activation in _GATED_ACTIVATIONS else 2
    patch = int(_first(vision, ("patch_size",), 14))
    pixels = (int(_first(vision, ("in_channels", "num_channels"), 3))
              * int(_first(vision, ("temporal_patch_size",), 1)) * patch * patch)
    merge = int(_first(vision, ("spatial_merge_size",), 1))
    linear = (pixels * width + depth * (4 * width * width + matrices * width * int(inner))
              + width * width * merge * merge + width * int(out))
    return {"linear_per_patch": float(linear),
            "attention_per_patch_per_patch": float(depth * 2 * width)}
