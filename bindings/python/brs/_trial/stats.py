"""The trial's statistics, numpy only (scipy's t quantile where scipy is installed).

paired: brs and upstream run the same steps (the same samples), so each step gives one
log-ratio log(brs / upstream); their mean's 95% Student t interval, exponentiated, is the
interval of the geometric-mean time ratio, and the exact two-sided sign test (binomial, ties
dropped) asks whether brs is faster on more steps than chance. unpaired: the other strategies
run other samples, so the geometric-mean ratio of step times gets a seeded percentile
bootstrap interval (each side resampled on its own).
"""

import math

#: Student t 0.975 quantiles by degrees of freedom, for a machine without scipy.
_T975 = {1: 12.7062047, 2: 4.30265273, 3: 3.18244631, 4: 2.77644511, 5: 2.57058184,
         6: 2.44691185, 7: 2.36462425, 8: 2.30600414, 9: 2.26215716, 10: 2.22813885,
         11: 2.20098516, 12: 2.17881283, 13: 2.16036866, 14: 2.14478669, 15: 2.13144955,
         16: 2.11990530, 17: 2.10981558, 18: 2.10092204, 19: 2.09302405, 20: 2.08596345,
         21: 2.07961384, 22: 2.07387307, 23: 2.06865761, 24: 2.06389856, 25: 2.05953855,
         26: 2.05552944, 27: 2.05183052, 28: 2.04840714, 29: 2.04522964, 30: 2.04227246,
         40: 2.02107539, 60: 2.00029782, 120: 1.97993041}
_Z975 = 1.95996398
BOOTSTRAP_RESAMPLES = 2000


def t975(df):
    """The 0.975 quantile of Student's t with ``df`` degrees of freedom (df >= 1)."""
    try:
        from scipy.stats import t
    except ImportError:
        t = None
    if t is not None:
        return float(t.ppf(0.975, df))
    if df in _T975:
        return _T975[df]
    # between table rows: linear in 1/df, which t's quantile nearly is for df >= 30
    keys = sorted(_T975) + [math.inf]
    upper = next(k for k in keys if k > df)
    lower = max(k for k in keys if k < df)
    value = {**_T975, math.inf: _Z975}
    x, x0, x1 = 1 / df, 1 / lower, (0.0 if upper == math.inf else 1 / upper)
    return value[upper] + (value[lower] - value[upper]) * (x - x1) / (x0 - x1)


def paired(ours, theirs):
    """The paired comparison of two lists of step seconds (same steps): ratio (geometric mean
    of ours/theirs), ci95 (its 95% t interval; [nan, nan] below 2 steps), sign_test_p, steps,
    faster_steps (steps where ours took less time)."""
    if len(ours) != len(theirs) or not ours:
        raise ValueError("paired needs two equally long, non-empty lists of step seconds")
    d = [math.log(a / b) for a, b in zip(ours, theirs)]
    n = len(d)
    mean = sum(d) / n
    if n >= 2:
        sd = math.sqrt(sum((x - mean) ** 2 for x in d) / (n - 1))
        half = t975(n - 1) * sd / math.sqrt(n)
        ci = [math.exp(mean - half), math.exp(mean + half)]
    else:
        ci = [math.nan, math.nan]
    faster = sum(a < b for a, b in zip(ours, theirs))
    slower = sum(a > b for a, b in zip(ours, theirs))
    return {"ratio": math.exp(mean), "ci95": ci, "sign_test_p": sign_test(faster, slower),
            "steps": n, "faster_steps": faster, "log_ratios": d}


def sign_test(wins, losses):
    """Exact two-sided binomial (p = 1/2) p-value of ``wins`` against ``losses`` (ties left
    out): twice the smaller tail, at most 1."""
    n = wins + losses
    if n == 0:
        return 1.0
    k = min(wins, losses)
    tail = sum(math.comb(n, i) for i in range(k + 1)) / 2 ** n
    return min(1.0, 2 * tail)


def bootstrap_ratio(ours, theirs, seed, resamples=BOOTSTRAP_RESAMPLES):
    """Geometric-mean ratio of ours over theirs (unpaired) and its 95% percentile bootstrap
    interval, each list resampled with replacement on its own (seeded)."""
    import numpy as np

    a, b = np.log(np.asarray(ours, dtype=float)), np.log(np.asarray(theirs, dtype=float))
    rng = np.random.default_rng(seed)
    draws = (rng.choice(a, (resamples, a.size)).mean(axis=1)
             - rng.choice(b, (resamples, b.size)).mean(axis=1))
    low, high = np.quantile(draws, [0.025, 0.975])
    return {"ratio": float(np.exp(a.mean() - b.mean())),
            "ci95": [float(np.exp(low)), float(np.exp(high))], "resamples": resamples,
            "steps": [int(a.size), int(b.size)]}


def prediction_error(records, seed):
    """brs's CostModel fitted (brs.calibration's fit: c0 + c1*bs*L + c2*bs*L^2, relative
    weights, one robust refit) to the measured warm micro-batches of some shapes, and its
    relative error on the micro-batches of the other shapes (held out: a seeded third of the
    distinct shapes; a seeded third of the micro-batches where there are too few shapes).
    A dict with median, p90 (None where no fit is possible), the fit and how it was held out."""
    import numpy as np

    from ..calibration import fit as _fit
    from ..cost_model import CostModel, from_seconds

    bs = np.array([r["batch_size"] for r in records], dtype=float)
    length = np.array([r["padded_length"] for r in records], dtype=float)
    seconds = np.array([r["seconds"] for r in records], dtype=float)
    rng = np.random.default_rng(seed)
    shapes = sorted({(int(b), int(l)) for b, l in zip(bs, length)})
    splits = []
    if len(shapes) >= 6:
        held = {shapes[i] for i in rng.permutation(len(shapes))[:len(shapes) // 3]}
        splits.append(("a third of the distinct shapes",
                       np.array([(int(b), int(l)) in held for b, l in zip(bs, length)])))
    if len(records) >= 6:
        mask = np.zeros(len(records), dtype=bool)
        mask[rng.permutation(len(records))[:len(records) // 3]] = True
        splits.append(("a third of the micro-batches", mask))
    for how, held in splits:
        try:
            fit = _fit.fit_three_terms(bs[~held], length[~held], seconds[~held], robust=True)
        except ValueError:
            continue
        predicted = fit["c0"] + fit["c1"] * bs[held] * length[held] \
            + fit["c2"] * bs[held] * length[held] ** 2
        error = np.abs(predicted - seconds[held]) / seconds[held]
        result = {"median": float(np.median(error)), "p90": float(np.quantile(error, 0.9)),
                  "held_out": how, "fitted_micro_batches": int((~held).sum()),
                  "held_out_micro_batches": int(held.sum()),
                  "fit": {k: fit[k] for k in ("c0", "c1", "c2", "r2")}}
        if fit["c1"] > 0:
            alpha, intercept, per_unit = from_seconds((fit["c0"], fit["c1"], fit["c2"]))
            model = CostModel(alpha, intercept, seconds_per_unit=per_unit, source="calibrated")
            result["cost_model"] = {"alpha": model.alpha, "intercept": model.intercept,
                                    "seconds_per_unit": model.seconds_per_unit}
        return result
    return {"median": None, "p90": None,
            "note": "too few distinct micro-batches to fit and hold out (need 6, and three "
                    "shapes whose bs*L differ)"}
