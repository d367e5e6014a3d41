"""Built-in model shapes (published sizes, built in code: nothing is downloaded) and the one
way calibration and the benchmarks turn a model argument into a torch module.

A shape name, a transformers config, or a local directory holding config.json all become
``AutoModelForCausalLM.from_config`` (``AutoModelForImageTextToText`` for a vision-language
config) with random weights: timing and memory do not depend on the weights, and no hub access
is needed.
"""

import os

#: name -> (config class name in transformers, keyword arguments)
SHAPES = {
    # Two layers of GPT-2's layout, narrow and with a small vocabulary so that calibrating it
    # on two CPU cores takes well under a minute.
    "gpt2-tiny": ("GPT2Config", dict(n_layer=2, n_embd=128, n_head=4, vocab_size=8192,
                                      n_positions=1024, bos_token_id=0, eos_token_id=0)),
    "gpt2": ("GPT2Config", dict(n_layer=12, n_embd=768, n_head=12, vocab_size=50257,
                                 n_positions=1024)),
    "qwen2.5-0.5b": ("Qwen2Config", dict(hidden_size=896, num_hidden_layers=24,
                                          num_attention_heads=14, num_key_value_heads=2,
                                          intermediate_size=4864, vocab_size=151936,
                                          max_position_embeddings=32768, rope_theta=1000000.0,
                                          rms_norm_eps=1e-6, tie_word_embeddings=True,
                                          hidden_act="silu")),
    "llama-3-8b": ("LlamaConfig", dict(hidden_size=4096, num_hidden_layers=32,
                                        num_attention_heads=32, num_key_value_heads=8,
                                        intermediate_size=14336, vocab_size=128256,
                                        max_position_embeddings=8192, rope_theta=500000.0,
                                        rms_norm_eps=1e-5, hidden_act="silu")),
}


def shape_config(name):
    """The transformers config of a built-in shape name."""
    import transformers

    if name not in SHAPES:
        raise ValueError(f"unknown model shape {name!r}; built-in shapes: {', '.join(SHAPES)} "
                         "(or pass a directory holding config.json)")
    class_name, kwargs = SHAPES[name]
    return getattr(transformers, class_name)(**kwargs)


def load_config(spec):
    """A config from a shape name or a local directory with config.json (no hub access)."""
    spec = os.fspath(spec)
    if spec in SHAPES:
        return shape_config(spec)
    if os.path.isdir(spec):
        if not os.path.isfile(os.path.join(spec, "config.json")):
            raise ValueError(f"model directory '{spec}' has no config.json")
        from transformers import AutoConfig

        return AutoConfig.from_pretrained(spec, local_files_only=True)
    raise ValueError(f"model {spec!r} is neither a built-in shape ({', '.join(SHAPES)}) nor a "
                     "local directory holding config.json")


def build_model(config, *, device="cpu", dtype=None, attention="sdpa"):
    """A randomly initialised causal LM of ``config`` on ``device``; a vision-language config
    (one with a vision_config, e.g. Qwen2-VL's) builds its image-text-to-text model."""
    import torch
    import transformers

    torch.manual_seed(0)  # the same weights every run: timings are then comparable
    auto = (transformers.AutoModelForImageTextToText if hasattr(config, "vision_config")
            else transformers.AutoModelForCausalLM)
    model = auto.from_config(config, attn_implementation=attention, dtype=dtype or torch.float32)
    return model.to(device)


def max_positions(model):
    """The longest sequence the model's (or a config's) position table holds, or None if it
    does not say."""
    config = getattr(model, "config", model)
    # a vision-language config keeps its language model's in text_config
    for owner in (config, getattr(config, "text_config", None)):
        for name in ("n_positions", "max_position_embeddings"):
            value = getattr(owner, name, None)
            if value:
                return int(value)
    return None
