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


def analytic_terms(config, *, causal=True):
    """linear_per_token, attention_per_token_per_length and a rough activation memory."""
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
