"""python -m brs calibrate --model PATH_OR_SHAPE --lengths FILE [--device cuda]
[--memory-budget 70GiB] -o cost.json

Builds the model from a built-in shape name or a local directory with config.json (random
weights, no hub access), runs brs.calibrate and writes the cost model's JSON atomically. Bad
input exits with status 2 and one line on stderr naming what to change; no file is written.
"""

import sys
import time
import warnings

USAGE_ERROR = 2
_DTYPES = ("float32", "bfloat16", "float16")


def register(commands):
    """Add the calibrate subcommand to python -m brs's subparsers."""
    from .shapes import SHAPES

    p = commands.add_parser("calibrate", help="time the model and fit alpha, intercept and "
                            "max_tokens to it (docs/calibration.md)")
    p.add_argument("--model", required=True, metavar="PATH_OR_SHAPE",
                   help=f"a directory with config.json, or one of: {', '.join(SHAPES)}")
    p.add_argument("--lengths", required=True, metavar="FILE",
                   help="the dataset's token counts, one per line")
    p.add_argument("-o", "--output", required=True, metavar="COST.json")
    p.add_argument("--device", default=None, help="torch device (default: cuda if available)")
    p.add_argument("--dtype", choices=_DTYPES, default=None,
                   help="default: bfloat16 on CUDA, float32 on CPU")
    p.add_argument("--memory-budget", default=None, metavar="SIZE",
                   help="e.g. 70GiB (default: free CUDA memory minus a margin; on CPU no cap "
                   "unless given)")
    p.add_argument("--batch-sizes", default=None, metavar="LIST", help="e.g. 1,2,4,8")
    p.add_argument("--seq-lens", default=None, metavar="LIST",
                   help="e.g. 64,256,1024 (default: quantiles of the lengths)")
    p.add_argument("--image-sizes", default=None, metavar="LIST",
                   help="also calibrate the vision encoder (a Qwen2-VL-style model's tower) on "
                   "images of these sizes: patch counts or HxW grids of patches, e.g. "
                   "64,256,32x32 (docs/calibration.md, encoder)")
    p.add_argument("--image-counts", default=None, metavar="LIST",
                   help="images per timed encoder call, e.g. 1,2,4 (default with "
                   "--image-sizes: brs.calibrate's)")
    p.add_argument("--repeats", type=int, default=None,
                   help="timed rounds over the grid, each shape keeping its fastest (default: "
                   "brs.calibrate's)")
    p.add_argument("--optimizer", choices=("none", "adamw"), default="none",
                   help="also time an AdamW step (changes the random weights only)")
    p.add_argument("--threads", type=int, default=None,
                   help="torch CPU threads (default: torch's); 1 gives steadier timings on a "
                   "machine other jobs share")
    p.add_argument("--no-progress", action="store_true")
    p.add_argument("--cp-size", type=int, default=None, metavar="C",
                   help="fit context parallelism's cost on this group of C processes "
                        "(torchrun --nproc_per_node=C; gloo on CPU, nccl on CUDA): --model is "
                        "'reference' (brs's CP decoder) or MODULE:FUNCTION returning a module "
                        "with loss_sum(shard, groups)")
    p.set_defaults(handler=run)


def run(args):
    try:
        _calibrate(args)
    except (ValueError, TypeError) as exc:
        print(f"python -m brs calibrate: {str(exc).removeprefix('calibrate: ')}",
              file=sys.stderr)
        raise SystemExit(USAGE_ERROR) from None


def _calibrate(args):
    import os

    if args.cp_size is not None:
        return _calibrate_cp(args)

    import torch

    folder = os.path.dirname(os.path.abspath(args.output))
    if not os.path.isdir(folder):
        raise ValueError(f"-o '{args.output}': folder '{folder}' does not exist")

    from . import shapes as _shapes
    from .run import calibrate

    device = torch.device(args.device) if args.device else torch.device(
        "cuda" if torch.cuda.is_available() else "cpu")
    if device.type == "cuda" and not torch.cuda.is_available():
        raise ValueError("--device cuda: this torch has no CUDA device")
    if args.threads is not None:
        if args.threads < 1:
            raise ValueError(f"--threads must be >= 1; got {args.threads}")
        torch.set_num_threads(args.threads)
    dtype = getattr(torch, args.dtype) if args.dtype else (
        torch.bfloat16 if device.type == "cuda" else torch.float32)
    optimizer = (lambda params: torch.optim.AdamW(params, lr=1e-5)) \
        if args.optimizer == "adamw" else None
    start = time.perf_counter()
    repeats = {} if args.repeats is None else {"repeats": args.repeats}
    images = _image_arguments(args)
    with warnings.catch_warnings(record=True) as caught:  # one line each, not a source line
        warnings.simplefilter("always")
        # calibrate reads the lengths and checks the grid and the budget before it builds
        # the model from its name: a bad input costs no model
        cm = calibrate(args.model, args.lengths, device=device, dtype=dtype,
                       batch_sizes=_ints("--batch-sizes", args.batch_sizes),
                       seq_lens=_ints("--seq-lens", args.seq_lens),
                       memory_budget=args.memory_budget, optimizer=optimizer,
                       progress=not args.no_progress, **repeats, **images)
    for warning in caught:
        text = str(warning.message).removeprefix("calibrate: ")
        print(f"python -m brs calibrate: warning: {text}", file=sys.stderr)
    cm.model = str(args.model)
    seconds = time.perf_counter() - start
    try:
        cm.save(args.output)
    except OSError as exc:
        raise ValueError(f"cannot write -o '{args.output}': {exc.strerror}") from None
    config = _shapes.load_config(args.model)
    print(summary(cm, config, seconds, args.output, str(dtype).replace("torch.", "")))


def _calibrate_cp(args):
    """--cp-size: every process of the group times, rank 0 writes the file."""
    import importlib

    import torch
    import torch.distributed as dist

    from .run import calibrate

    model = args.model
    if model != "reference":
        if ":" not in model:
            raise ValueError("--cp-size: --model is 'reference' or MODULE:FUNCTION")
        module, function = model.split(":", 1)
        model = getattr(importlib.import_module(module), function)()
    if not dist.is_initialized():
        dist.init_process_group("nccl" if torch.cuda.is_available() else "gloo")
    repeats = {} if args.repeats is None else {"repeats": args.repeats}
    cm = calibrate(model, args.lengths, cp_size=args.cp_size,
                   seq_lens=_ints("--seq-lens", args.seq_lens), **repeats)
    if dist.get_rank() == 0:
        cm.model = str(args.model)
        # the command line as torchrun ran it (sys.argv[1:] starts with "calibrate")
        cm.timing["command"] = " ".join(["torchrun", f"--nproc_per_node={args.cp_size}", "-m",
                                         "brs"] + sys.argv[1:])
        cm.save(args.output)
        t = cm.timing
        print(f"calibrated context parallelism on {t['cp_size']} processes ({t['backend']}, "
              f"degrees {t['degrees']}, load average {t['load_average']}): alpha "
              f"{cm.alpha:.6g}, intercept {cm.intercept:.6g}, cp_comm_cost "
              f"{cm.cp_comm_cost:.6g}, cp_latency {cm.cp_latency:.6g}; held-out median error "
              f"{100 * t['cp_held_out_median_error']:.1f}% on {len(t['cp_held_out'])} CP "
              f"micro-batches not fitted on (fitted on {len(t['cp_fitted_on'])}); wrote "
              f"{args.output}")
    dist.destroy_process_group()


def _ints(flag, text):
    if text is None:
        return None
    try:
        return [int(word) for word in text.split(",") if word.strip()]
    except ValueError:
        raise ValueError(f"{flag} must be comma-separated integers, e.g. 1,2,4; got "
                         f"{text!r}") from None


def _image_arguments(args):
    """calibrate's encoder keywords of --image-sizes and --image-counts: none without them."""
    if args.image_sizes is None and args.image_counts is None:
        return {}
    if args.image_sizes is None:
        raise ValueError("--image-counts times the vision encoder: give --image-sizes too")
    return {"encoder": "auto", "image_sizes": _image_sizes(args.image_sizes),
            "image_counts": _ints("--image-counts", args.image_counts)}


def _image_sizes(text):
    sizes = []
    for word in (w.strip() for w in text.split(",")):
        try:
            sides = [int(x) for x in word.lower().split("x")]
        except ValueError:
            sides = []
        if len(sides) not in (1, 2):
            raise ValueError(f"--image-sizes must be comma-separated patch counts or HxW grids, "
                             f"e.g. 64,256,32x32; got {text!r}")
        sizes.append(sides[0] if len(sides) == 1 else tuple(sides))
    return sizes


def summary(cm, config, seconds, output, dtype):
    """The lines the CLI prints: the three numbers, the fit quality, the peers' alphas and
    what a shape's first run costs."""
    from ..cost_model import CostModel

    analytic = _analytic_alpha(config)
    shapes = len(cm.timings)
    outliers = sum(1 for row in cm.timings if row.get("outlier"))
    memory = cm.memory
    budget = memory.get("budget_bytes")
    lines = [
        f"brs calibrate: {cm.model} ({dtype}) on {cm.device}: {shapes} shapes in {seconds:.1f} s",
        f"  alpha       {cm.alpha:.6g}   (fixed default {CostModel.fixed().alpha:g}"
        + (f", analytic from the config {analytic:.3g})" if analytic else ")"),
        f"  intercept   {cm.intercept:.6g}   (fixed cost of a micro-batch, in padded tokens)",
        f"  max_tokens  {cm.max_tokens}   (memory budget "
        + (f"{budget / 2**30:.2f} GiB, {memory.get('budget_rule')}" if budget else "unknown")
        + f"; memory probe: {memory.get('method')})",
        f"  time fit    R^2 {cm.r2:.4f}, worst relative residual {cm.worst_residual:.1%}"
        + (f", {outliers} outlier shape(s) left out" if outliers else ""),
    ]
    lines.append(f"  first shape {_first_shape_line(cm)}")
    if cm.encoder:
        lines.append(f"  encoder     {_encoder_line(cm)}")
    if cm.timing:
        lines.append(f"  timing      {_timing_line(cm.timing)}")
    if "r2" in memory:
        lines.append(f"  memory fit  R^2 {memory['r2']:.4f}, "
                     f"{memory['bytes_per_token'] / 1024:.1f} KiB per padded token, "
                     f"{memory['bytes_per_token_length']:.3g} B per bs*L^2"
                     + _reserved_note(memory))
    lines.append(f"  wrote {output}")
    return "\n".join(lines)


def _encoder_line(cm):
    record = cm.encoder
    return (f"encoder_weight {cm.encoder_weight:.6g} per patch, encoder_alpha "
            f"{cm.encoder_alpha:.6g}, encoder_intercept {cm.encoder_intercept:.6g} per image "
            f"(padded tokens); fit R^2 {record['r2']:.4f}, worst relative residual "
            f"{record['worst_residual']:.1%} over {len(record['timings'])} calls"
            + (" (encoder_weight not fitted: too few distinct sizes ran)"
               if record.get("note") else "")
            + "; max_encoder_tokens left to you")


def _first_shape_line(cm):
    rows = sorted(r["seconds"] for r in cm.timings)
    median = rows[len(rows) // 2] if rows else 0.0
    measured = sum(1 for r in cm.timings if r.get("first_seconds") is not None)
    share = f", {cm.first_shape_seconds / median:.0%} of the median warm micro-batch" \
        if median > 0 else ""
    return (f"{cm.first_shape_seconds * 1e3:.2f} ms more than a warm run (median over "
            f"{measured} shapes{share}): paid once per distinct (batch size, padded length)")


def _reserved_note(memory):
    if memory.get("measure") != "reserved":
        return ""
    return (f"; reserved bytes: {memory['reserved_over_allocated']:.2f}x allocated over the "
            f"shuffled shapes, expandable_segments "
            f"{'on' if memory.get('expandable_segments') else 'off'}")


def _timing_line(timing):
    loads = [x for x in timing.get("load_average", []) if x is not None]
    line = (f"{timing.get('estimator')} of {timing.get('rounds')} interleaved rounds, clock "
            f"{timing.get('clock')}, repeats spread {timing.get('median_spread', 0):.0%} (median)")
    if loads:
        line += (f", load average {max(loads):.1f} on {timing.get('cpus')} CPUs"
                 + (" (busy)" if timing.get("busy") else ""))
    if timing.get("extended_batch_sizes"):
        line += f"; grid extended with batch sizes {timing['extended_batch_sizes']}"
    return line


def _analytic_alpha(config):
    from ..cost_model import CostModel

    try:
        return CostModel.from_config(config).alpha
    except (AttributeError, ValueError, TypeError, ZeroDivisionError):
        return None
