"""calibrate's arguments, checked and turned into what it runs: the torch module, its device,
the dataset's lengths, the memory budget, the optimizer and the vocabulary ids are drawn from."""

from . import memory as _memory, shapes as _shapes
from .._lengths import read_file as read_lengths_file


def resolve_module(model, device):
    import torch

    if model is None:
        raise TypeError("calibrate: model is required (a torch module, a transformers config, a "
                        "built-in shape name or a directory with config.json)")
    if isinstance(model, torch.nn.Module):
        if device is not None:
            model = model.to(_device(device))
        return model, type(model).__name__
    config = model
    if isinstance(model, str) or hasattr(model, "__fspath__"):
        config = _shapes.load_config(model)
    elif not hasattr(model, "to_dict") or not hasattr(model, "model_type"):
        raise TypeError(f"calibrate: model must be a torch.nn.Module, a transformers config, a "
                        f"shape name or a directory; got {type(model).__name__}")
    target = _device(device) if device is not None else _default_device()
    dtype = torch.bfloat16 if target.type == "cuda" else torch.float32
    label = str(model) if isinstance(model, str) else config.model_type
    return _shapes.build_model(config, device=target, dtype=dtype), label


def _device(device):
    import torch

    try:
        return torch.device(device)
    except (RuntimeError, TypeError) as exc:
        raise ValueError(f"calibrate: device {device!r} is not a torch device: {exc}") from None


def _default_device():
    import torch

    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


def parameter_device(module):
    import torch

    for parameter in module.parameters():
        return parameter.device
    return torch.device("cpu")


def resolve_lengths(lengths):
    import numpy as np

    if isinstance(lengths, str) or hasattr(lengths, "__fspath__"):
        try:  # the format of docs/formats.md, as `brs plan --lengths` reads it
            data = np.asarray(read_lengths_file(lengths), dtype=np.int64)
        except ValueError as exc:
            raise ValueError(f"calibrate: {exc}") from None
    else:
        try:
            data = np.asarray(lengths, dtype=np.int64).reshape(-1)
        except (TypeError, ValueError):
            raise TypeError("calibrate: lengths must be a sequence of token counts or a "
                            f"lengths file's path; got {type(lengths).__name__}") from None
    if data.size == 0 or data.min() < 1:
        raise ValueError("calibrate: lengths must hold at least one token count, each >= 1")
    return data


def positive_int(name, value):
    import numbers

    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise ValueError(f"calibrate: {name} must be an int >= 1; got {value!r}")
    return int(value)


def resolve_budget(memory_budget, device):
    if memory_budget is None:
        return _memory.default_budget(device)
    return _memory.parse_bytes(memory_budget), "given"


def resolve_optimizer(module, optimizer):
    import torch

    if optimizer is None:
        return None
    if callable(optimizer) and not isinstance(optimizer, torch.optim.Optimizer):
        optimizer = optimizer(module.parameters())
    if not isinstance(optimizer, torch.optim.Optimizer):
        raise TypeError("calibrate: optimizer must be None, a torch.optim.Optimizer or a "
                        f"callable params -> Optimizer; got {type(optimizer).__name__}")
    return optimizer


def vocabulary(module):
    """How many token ids the model embeds: random ids are drawn below it."""
    import torch

    size = getattr(getattr(module, "config", None), "vocab_size", None)
    if size:
        return int(size)
    for sub in module.modules():
        if isinstance(sub, torch.nn.Embedding):
            return sub.num_embeddings
    return 1
