"""brs.warmup: run every shape of the run once before step 0, leaving training as it was.

A new (batch size, padded length) costs a first run: cuDNN plans, a torch.compile(dynamic=False)
recompile, a CUDA graph capture, an XLA compile. With max_shapes set the sampler's shape
vocabulary holds every shape of the run, so running each once before training moves those first
runs out of the training steps (where one rank's first run stalls every rank of the step).
"""

import random


def warmup(model, sampler, collate_fn=None, forward=None):
    """Run a forward and a backward pass of ``model`` on each shape of ``sampler``'s shape
    vocabulary (max_shapes set; else the shapes this rank runs in the current epoch,
    ``sampler.shapes()``), on placeholder token ids; returns the shapes run, a list of
    ``(batch_size, padded_length)``.

    The batch of a shape (b, L): ``collate_fn`` (e.g. a brs.PadToPlan) given b samples
    ``{"input_ids": [0] * L, "attention_mask": [1] * L}``, else ``input_ids`` of zeros,
    ``attention_mask`` of ones; ``labels`` equal to input_ids where the batch has none; the
    tensors are moved to the device of the model's first parameter. ``forward(model, batch)``
    returns the loss (default ``model(**batch).loss``, or the mean of the output when the model
    gives a tensor).

    Training afterwards is bit-identical to training without it: the parameters' gradients are
    put back as they were (the same tensors), buffers (BatchNorm statistics) are restored, each
    module's train/eval mode is restored (the passes run in train mode), the RNG states of
    python's random, numpy, torch and CUDA are restored, and no optimizer is touched. A model
    with ``no_sync`` (DDP) runs the passes under it: no gradient is all-reduced.
    """
    import torch

    shapes = sampler.shape_vocabulary()
    if shapes is None:
        shapes = sampler.shapes()
    if forward is None:
        forward = _default_forward
    parameters = list(model.parameters())
    device = parameters[0].device if parameters else torch.device("cpu")
    grads = [p.grad for p in parameters]
    buffers = [(b, b.detach().clone()) for b in model.buffers()]
    modes = [(m, m.training) for m in model.modules()]
    rng = _rng_state()
    try:
        for p in parameters:
            p.grad = None
        model.train()
        no_sync = getattr(model, "no_sync", None)
        for size, length in shapes:
            batch = _batch(int(size), int(length), collate_fn, device)
            context = no_sync() if callable(no_sync) else _nothing()
            with context:
                loss = forward(model, batch)
                loss.backward()
            del loss, batch
    finally:
        for p, grad in zip(parameters, grads):
            p.grad = grad
        with torch.no_grad():
            for buffer, saved in buffers:
                buffer.copy_(saved)
        for module, training in modes:
            module.training = training
        _restore_rng(rng)
    return [(int(size), int(length)) for size, length in shapes]


class _nothing:
    def __enter__(self):
        return None

    def __exit__(self, *exc):
        return False


def _batch(size, length, collate_fn, device):
    import torch

    if collate_fn is None:
        batch = {"input_ids": torch.zeros((size, length), dtype=torch.long),
                 "attention_mask": torch.ones((size, length), dtype=torch.long)}
    else:
        batch = collate_fn([{"input_ids": [0] * length, "attention_mask": [1] * length}
                            for _ in range(size)])
    if "labels" not in batch and isinstance(batch.get("input_ids"), torch.Tensor):
        batch["labels"] = batch["input_ids"].clone()
    return {key: value.to(device) if isinstance(value, torch.Tensor) else value
            for key, value in batch.items()}


def _default_forward(model, batch):
    import torch

    out = model(**batch)
    loss = getattr(out, "loss", None)
    if loss is None and isinstance(out, torch.Tensor):
        loss = out.float().mean()
    if loss is None:
        raise ValueError("brs.warmup: the model's output has no loss; pass forward=(model, "
                         "batch) -> loss")
    return loss


def _rng_state():
    import torch

    state = {"python": random.getstate(), "torch": torch.get_rng_state()}
    try:
        import numpy
    except ImportError:
        numpy = None
    if numpy is not None:
        state["numpy"] = numpy.random.get_state()
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def _restore_rng(state):
    import torch

    random.setstate(state["python"])
    torch.set_rng_state(state["torch"])
    if "numpy" in state:
        import numpy

        numpy.random.set_state(state["numpy"])
    if "cuda" in state:
        torch.cuda.set_rng_state_all(state["cuda"])
