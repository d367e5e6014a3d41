/* every_layering.c - the layers (layers.c) with every cut, on the exact
 * layer times, where that search is small: the fastest layering under the
 * cap, so that no plan of that shape beats the planner's within the budget
 * under per-micro-step sync (docs/algorithm.md, step 5, "every
 * layering"). A bisection over the one cut of two layers, a dynamic
 * programme over the cut positions of more. It meets the polished plan and
 * looks only for a layering faster than it (`beat`).
 */
#include "planner/candidates/candidate.h"
#include "planner/internal.h"
#include "util/wide.h"

#include <stdlib.h>

/* Layer times the programme may compute, each costing O(ranks) per probe:
 * (EXACT_WORK_PER_SAMPLE n + EXACT_WORK_BASE) / ranks of them. */
enum { EXACT_WORK_PER_SAMPLE = 16, EXACT_WORK_BASE = 8192 };

#define UNKNOWN (BRS_LAYERING_NO_TIME - 1)

struct cuts {
    struct brs_layering *l;
    size_t slack;   /* the positions each cut can take: n - ranks * count + 1 */
    brs_wide *memo; /* layer times by (start, length - ranks) */
    brs_wide *best; /* (count + 1) * (n + 1): least time of m layers over [0, b) */
    uint32_t *from; /* where the m-th layer of that best starts */
    brs_wide beat;  /* only layerings at most this fast are of interest */
};

/* The exact time of [a, b), computed once where layers in the middle repeat. */
static brs_wide memo_time(struct cuts *c, size_t a, size_t b)
{
    brs_wide *slot = &c->memo[a * c->slack + (b - a - c->l->ranks)];
    if (*slot == UNKNOWN) *slot = brs_layering_time(c->l, a, b);
    return *slot;
}

/* best[m][b] = min over a of best[m - 1][a] + time(a, b), where that can
 * lead to a layering within c->beat: `tail` bounds the later layers' time
 * from below (the estimate of [b, n) as one layer is at most their sum).
 * A start whose estimate cannot beat the best so far, or c->beat, is
 * skipped without its exact time. */
static void relax(struct cuts *c, size_t m, size_t b, brs_wide tail)
{
    size_t r = c->l->ranks, width = c->l->n + 1;
    brs_wide *prev = c->best + (m - 1) * width, found = BRS_LAYERING_NO_TIME;
    uint32_t at = 0;
    for (size_t a = (m - 1) * r; a + r <= b; a++) {
        if (prev[a] == BRS_LAYERING_NO_TIME) continue;
        brs_wide low = prev[a] + brs_layering_estimate(c->l, a, b);
        if (low + tail > c->beat || (found != BRS_LAYERING_NO_TIME && low >= found)) continue;
        brs_wide t = memo_time(c, a, b);
        if (t == BRS_LAYERING_NO_TIME || prev[a] + t + tail > c->beat || prev[a] + t >= found)
            continue;
        found = prev[a] + t;
        at = (uint32_t)a;
    }
    c->best[m * width + b] = found;
    c->from[m * width + b] = at;
}

static brs_status run_cuts(struct cuts *c)
{
    struct brs_layering *l = c->l;
    size_t r = l->ranks, g = l->count, n = l->n, width = n + 1;
    for (size_t b = 0; b <= n; b++) c->best[b] = b == 0 ? 0 : BRS_LAYERING_NO_TIME;
    for (size_t m = 1; m <= g; m++) {
        size_t last = m == g ? n : n - (g - m) * r;
        for (size_t b = 0; b <= n; b++) c->best[m * width + b] = BRS_LAYERING_NO_TIME;
        for (size_t b = m == g ? n : m * r; b <= last; b++) {
            brs_wide tail = m == g ? 0 : brs_layering_estimate(l, b, n);
            /* m layers over [0, b) take at least the estimate of it as one */
            if (brs_layering_estimate(l, 0, b) + tail <= c->beat) relax(c, m, b, tail);
        }
    }
    if (c->best[g * width + n] == BRS_LAYERING_NO_TIME)
        return BRS_ERR_TOO_LARGE; /* none beats c->beat */
    size_t b = n;
    for (size_t m = g; m > 0; m--) {
        size_t a = c->from[m * width + b];
        l->cut[m - 1] = a;
        l->time[m - 1] = memo_time(c, a, b);
        b = a;
    }
    return BRS_OK;
}

/* Two layers: the cut c in [lo, hi] whose T(0, c) + T(c, n) is least
 * at most `beat`. T(0, c) never falls as c grows and T(c, n) never
 * rises, so T(0, lo) + T(hi, n) bounds every cut between them from below:
 * an interval whose bound cannot beat the best so far is left unexplored,
 * others are halved (the ends' times are known: T(0, lo) and T(hi, n)).
 * The recursion is as deep as log2(n). */
struct halves {
    struct brs_layering *l;
    brs_wide best; /* the least sum found, or beat + 1 */
    size_t cut;
};

static void try_cut(struct halves *h, size_t c, brs_wide left, brs_wide right)
{
    if (left == BRS_LAYERING_NO_TIME || right == BRS_LAYERING_NO_TIME || left + right >= h->best)
        return;
    h->best = left + right;
    h->cut = c;
}

static void bisect(struct halves *h, size_t lo, size_t hi, brs_wide left_lo, brs_wide right_hi)
{
    if (hi - lo < 2 || left_lo == BRS_LAYERING_NO_TIME || right_hi == BRS_LAYERING_NO_TIME ||
        left_lo + right_hi >= h->best)
        return;
    size_t mid = lo + (hi - lo) / 2;
    brs_wide left = brs_layering_time(h->l, 0, mid), right = brs_layering_time(h->l, mid, h->l->n);
    try_cut(h, mid, left, right);
    bisect(h, lo, mid, left_lo, right);
    bisect(h, mid, hi, left, right_hi);
}

static brs_status two_layers(struct brs_layering *l, brs_wide beat)
{
    size_t r = l->ranks, n = l->n, lo = r, hi = n - r;
    struct halves h = {l, beat + 1, 0};
    brs_wide left_lo = brs_layering_time(l, 0, lo), right_lo = brs_layering_time(l, lo, n);
    brs_wide left_hi = brs_layering_time(l, 0, hi), right_hi = brs_layering_time(l, hi, n);
    try_cut(&h, lo, left_lo, right_lo);
    try_cut(&h, hi, left_hi, right_hi);
    bisect(&h, lo, hi, left_lo, right_hi);
    if (h.best > beat) return BRS_ERR_TOO_LARGE; /* none beats it */
    l->cut[1] = h.cut;
    l->time[0] = brs_layering_time(l, 0, h.cut);
    l->time[1] = brs_layering_time(l, h.cut, n);
    return BRS_OK;
}

/* Whether the programme's layer times fit its work: two layers need two
 * per cut position, more layers one per (start, end) pair at most. */
static int exact_fits(const struct brs_step *step, size_t slack)
{
    uint64_t times = 2 * (uint64_t)slack;
    if (step->grad_accum > 2) times += (uint64_t)slack * (slack + 1) / 2;
    return times * step->dp_size <= EXACT_WORK_PER_SAMPLE * (uint64_t)step->n + EXACT_WORK_BASE;
}

/* Two layers: the bisection over the cut. */
static brs_status build_two(struct brs_layering *l, brs_wide beat, size_t *starts, brs_wide *costs)
{
    l->cut[0] = 0;
    brs_status status = two_layers(l, beat);
    if (status == BRS_OK) status = brs_layering_build(l, starts, costs);
    return status;
}

/* More layers: the programme over every cut, each layer time computed
 * once. */
static brs_status build_many(struct brs_layering *l, size_t slack, brs_wide beat, size_t *starts,
                             brs_wide *costs)
{
    size_t n = l->n, count = l->count, width = n + 1;
    struct cuts c = {l,
                     slack,
                     malloc((n - l->ranks + 1) * slack * sizeof *c.memo),
                     malloc((count + 1) * width * sizeof *c.best),
                     malloc((count + 1) * width * sizeof *c.from),
                     beat};
    for (size_t i = 0; c.memo && i < (n - l->ranks + 1) * slack; i++) c.memo[i] = UNKNOWN;
    brs_status status = c.memo && c.best && c.from ? BRS_OK : BRS_ERR_NO_MEMORY;
    if (status == BRS_OK) status = run_cuts(&c);
    if (status == BRS_OK) status = brs_layering_build(l, starts, costs);
    free(c.memo);
    free(c.best);
    free(c.from);
    return status;
}

/* Layers are groups of the sync's micro-steps only with several ranks and
 * micro-steps, and their times add up only under per-micro-step sync. */
static int applies(const struct brs_candidate_input *in)
{
    return in->step->dp_size > 1 && in->step->sync == BRS_SYNC_MICRO_STEP;
}

/* The fastest layering under the model's cap with a step time of at most
 * `beat`; BRS_ERR_TOO_LARGE where the step is too large or none is that
 * fast. */
static brs_status build(const struct brs_candidate_input *in, struct brs_candidate_output *out)
{
    size_t n = in->step->n, k = in->step->k, grad_accum = in->step->grad_accum;
    if (grad_accum < 2 || n <= k) return BRS_ERR_TOO_LARGE;
    size_t slack = n - k + 1;
    if (!exact_fits(in->step, slack)) return BRS_ERR_TOO_LARGE;
    struct brs_layering l;
    brs_status status = brs_layering_open(&l, in->lengths, in->cache, in->step, in->model);
    if (status == BRS_OK)
        status = grad_accum == 2 ? build_two(&l, in->beat, out->starts, out->costs)
                                 : build_many(&l, slack, in->beat, out->starts, out->costs);
    brs_layering_close(&l);
    return status;
}

const struct brs_candidate brs_every_layering_candidate = {"every layering", applies, build,
                                                           BRS_CANDIDATE_AFTER_POLISH};
