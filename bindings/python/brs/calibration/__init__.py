"""brs.calibrate: time the user's own model and fit the planner's cost model to it.

    cm = brs.calibrate(model, lengths, device="cuda", memory_budget="70GiB")
    cm.save("cost.json")   # python -m brs calibrate ... -o cost.json does the same
    cm.predict(8, 512)     # seconds of a micro-batch of 8 samples padded to 512 tokens

For every (batch size, length) of a grid spanning the dataset's lengths, a forward and backward
pass (and the optimizer step, when one is given) is timed ``repeats`` times, in rounds over a
shuffled grid, and the fastest repeat is kept: CUDA events on a GPU, the thread's CPU time on a
CPU. Time is fitted as ``c0 + a*bs*L + b*bs*L^2`` by non-negative least squares, which gives
brs's units: alpha = b/a, intercept = c0/a. Memory is fitted the same way and gives
``max_tokens`` for the budget. With ``encoder=`` (a hook, or "auto" for a Qwen2-VL-style model)
the vision tower is timed on images of chosen sizes too, and encoder_weight, encoder_alpha and
encoder_intercept are fitted in the same units. docs/calibration.md explains the choices (grid,
clocks, estimator, memory probes, the encoder part). numpy and torch are imported on the first
call only: ``import brs`` needs neither.

run.py is calibrate itself, the order of its steps; arguments.py checks what it is given;
grid.py and extension.py choose the shapes; timing.py times them (progress.py shows it,
record.py records how); fit.py is the least-squares fit and result.py the CostModel made of
it; encoder.py is the encoder part (its grid, hook, timing and fit) and online.py the refit
from training's micro-batches. timing.py's Clock, TrainingStep and OutOfMemory, memory.py's peak
probes and progress.py are the package's one measurement layer: brs.trial (brs/_trial) times,
probes and reports through them too. memory.py (budgets) and shapes.py (built-in model shapes)
serve the integrations and benchmarks as well; cli.py is ``python -m brs calibrate``. The
analytic cost of a config (CostModel.from_config, nothing timed) is brs/_flops.py, below both
this package and brs/cost_model.py.
"""

from .run import calibrate

__all__ = ["calibrate"]
