"""calibrate's arguments, checked and turned into what it runs: the model (built only once the
lengths, grid and budget are known good), its device, the dataset's lengths, the memory budget
and whether it holds the model, the optimizer and the vocabulary ids are drawn from."""

from . import memory as _memory, shapes as _shapes
from .._lengths import read_file as read_lengths_file


class ModelSpec:
    """The model to calibrate, checked but not built yet: a torch module as given, or a config
    (from itself, a shape name or a directory) that build() turns into one."""

    def __init__(self, model, device, dtype):
        import torch

        if model is None:
            raise TypeError("calibrate: model is required (a torch module, a transformers "
                            "config, a built-in shape name or a directory with config.json)")
        self.module = self.config = None
        if isinstance(model, torch.nn.Module):
            if dtype is not None:
                raise TypeError("calibrate: dtype is for a model calibrate builds from a "
                                "config; convert the module itself (module.to(dtype))")
            self.module, self.name = model, type(model).__name__
            self.device = _device(device) if device is not None else parameter_device(model)
            return
        self.config = model
        if isinstance(model, str) or hasattr(model, "__fspath__"):
            self.config = _shapes.load_config(model)
        elif not hasattr(model, "to_dict") or not hasattr(model, "model_type"):
            raise TypeError(f"calibrate: model must be a torch.nn.Module, a transformers "
                            f"config, a shape name or a directory; got {type(model).__name__}")
        self.device = _device(device) if device is not None else _default_device()
        self.dtype = dtype or (torch.bfloat16 if self.device.type == "cuda" else torch.float32)
        self.name = str(model) if isinstance(model, str) else self.config.model_type

    def max_positions(self):
        return _shapes.max_positions(self.module if self.module is not None else self.config)

    def held_bytes(self, optimizer):
        """memory.model_bytes of the model, counted on the meta device for a config: nothing
        is allocated before the budget is known to hold it."""
        import torch

        if self.module is not None:
            return _memory.model_bytes(self.module, optimizer)
        with torch.device("meta"):
            meta = _shapes.build_model(self.config, device="meta", dtype=self.dtype)
        return _memory.model_bytes(meta, optimizer)

    def build(self):
        if self.module is not None:
            return self.module.to(self.device)
        return _shapes.build_model(self.config, device=self.device, dtype=self.dtype)


def check_budget(budget, rule, held):
    """A budget below the model's own bytes (parameters, gradients, optimizer state) cannot
    run one micro-batch: refused before anything is built or timed."""
    if budget is not None and budget <= held:
        raise ValueError(f"calibrate: memory_budget {budget} bytes ({rule}) cannot hold the "
                         f"model: its parameters, gradients and optimizer state take {held} "
                         f"bytes ({held / 2**30:.2f} GiB) before any batch; raise "
                         "memory_budget above that")


def check_callable(name, value):
    if value is not None and not callable(value):
        raise TypeError(f"calibrate: {name} must be a callable or None; got "
                        f"{type(value).__name__}")
    return value


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
    """int64 array of the token counts of a sequence, an array, a lengths file's path or a
    tokenized dataset (its "length" column, else each row's input_ids)."""
    import numpy as np

    if isinstance(lengths, str) or hasattr(lengths, "__fspath__"):
        try:  # the format of docs/formats.md, as `brs plan --lengths` reads it
            data = np.asarray(read_lengths_file(lengths), dtype=np.int64)
        except ValueError as exc:
            raise ValueError(f"calibrate: {exc}") from None
    elif is_dataset(lengths):
        from ..dataset_lengths import dataset_lengths

        try:
            data = dataset_lengths(lengths, column="length", input_name="input_ids",
                                   show_progress=False)
        except ValueError as exc:
            raise ValueError(f"calibrate: {exc}") from None
    else:
        try:
            data = np.asarray(lengths, dtype=np.int64).reshape(-1)
        except (TypeError, ValueError):
            raise TypeError("calibrate: lengths must be a sequence of token counts, a lengths "
                            "file's path or a tokenized dataset; got "
                            f"{type(lengths).__name__}") from None
    if data.size == 0 or data.min() < 1:
        raise ValueError("calibrate: lengths must hold at least one token count, each >= 1")
    return data


def is_dataset(value):
    """A datasets.Dataset, or a sized sequence whose rows are dicts."""
    from collections.abc import Mapping

    if hasattr(value, "column_names"):
        return True
    try:
        return len(value) > 0 and isinstance(value[0], Mapping)
    except (TypeError, KeyError, IndexError):
        return False


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


#: Token ids a vision-language model reserves for its images and videos: a random text holding
#: one would ask the model for image features the batch does not carry.
_MEDIA_TOKENS = ("image_token_id", "video_token_id", "vision_start_token_id",
                 "vision_end_token_id", "vision_token_id", "image_token_index")


def vocabulary(module):
    """How many token ids the model embeds: random ids are drawn below it, and below the ids
    a vision-language model reserves for media (Qwen2-VL's come after its text vocabulary)."""
    import torch

    config = getattr(module, "config", None)
    text = getattr(config, "text_config", None)
    size = getattr(config, "vocab_size", None) or getattr(text, "vocab_size", None)
    if not size:
        size = next((sub.num_embeddings for sub in module.modules()
                     if isinstance(sub, torch.nn.Embedding)), 1)
    media = [getattr(config, name, None) for name in _MEDIA_TOKENS]
    media = [i for i in media if isinstance(i, int) and 0 < i < size]
    return min([int(size)] + media)
