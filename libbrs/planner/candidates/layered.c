/* layered.c - a candidate split for the synchronised step: the sorted step
 * cut into grad_accum contiguous layers, one per micro-step, each split into
 * dp_size groups at its own exact min-max (docs/algorithm.md, step 5, "the layers").
 *
 * Under per-micro-step sync a layered plan takes sum over layers of the
 * layer's min-max; long samples share a layer, so only one micro-step pays
 * for them. The cuts come from a dynamic programme over a grid of at most
 * GRID + 1 cut positions with a cheap estimate of each layer's time (its
 * average and its longest sample), then a descent on the exact layer times
 * moving one cut at a time by 1, 2, 4, ... 64 samples, then a push: each layer grows as far as its own
 * time allows, which only shrinks the layers after it. Inside each layer the
 * groups take the least memory peak that keeps the layer's time, then the
 * least total cost (brs_layered_split_one): with one layer (grad_accum 1) that is
 * the exact lexicographic optimum, and the planner's whole answer.
 * `model` carries the memory budget as its token cap.
 *
 * brs_layered_split_fastest is the same candidate with every cut, on the exact
 * layer times, where its work is small: a bisection over the one cut of two
 * layers, a dynamic programme over the cut positions of more. It finds the fastest layering under the cap, so that no
 * plan of that shape beats the planner's within the budget.
 */
#include "planner/candidates.h"
#include "planner/cost_model.h"
#include "planner/search.h"
#include "planner/split_heuristic.h"
#include "util/wide.h"

#include <stdlib.h>

#define NO_TIME (~(brs_wide)0)

enum { GRID = 64, DESCENT_ROUNDS = 1, DESCENT_MAX_GROUPS = 1024, DESCENT_REACH = 64 };

struct layers {
    const uint32_t *lengths;
    struct brs_probe_cache cache;
    size_t n, ranks, count; /* count: the number of layers */
    const struct brs_cost_model *model;
    size_t *cut;     /* count + 1: layer m is [cut[m], cut[m + 1]) */
    brs_wide *time;  /* count: exact min-max of each layer */
    brs_wide *before;       /* the weight before each run (by rank from the first
                             * sample's), or without runs before each sample */
};

/* ---- sample weights, summed run by run ------------------------------------ */

/* The step position where the run of `rank` starts among these samples. */
static size_t run_start(const struct layers *l, uint32_t rank)
{
    size_t start = rank > 0 ? l->cache.run_end[rank - 1] : 0;
    return start > l->cache.first ? start : l->cache.first;
}

/* The weight before each run, from the first sample's run on: O(distinct
 * lengths) instead of a prefix sum per sample, which is what it is without
 * runs. */
static void sum_weights(struct layers *l)
{
    l->before[0] = 0;
    if (!l->cache.rank) {
        for (size_t i = 0; i < l->n; i++)
            l->before[i + 1] = l->before[i] + brs_sample_weight(l->model, l->lengths[i]);
        return;
    }
    uint32_t first = l->cache.rank[0], last = l->cache.rank[l->n - 1];
    size_t end = l->cache.first + l->n;
    for (uint32_t r = first; r <= last; r++) {
        size_t start = run_start(l, r), stop = l->cache.run_end[r] < end ? l->cache.run_end[r] : end;
        brs_wide w = brs_sample_weight(l->model, l->lengths[start - l->cache.first]);
        l->before[r - first + 1] = l->before[r - first] + (brs_wide)(stop - start) * w;
    }
}

/* The weight of the i longest samples. */
static brs_wide weight_before(const struct layers *l, size_t i)
{
    if (!l->cache.rank) return l->before[i];
    uint32_t first = l->cache.rank[0];
    if (i == l->n) return l->before[brs_probe_cache_runs(l->cache, l->n)];
    uint32_t r = l->cache.rank[i];
    size_t within = l->cache.first + i - run_start(l, r);
    return l->before[r - first] + (brs_wide)within * brs_sample_weight(l->model, l->lengths[i]);
}

/* A layer's time estimated from below: its average group and its longest
 * sample alone. */
static brs_wide estimate(const struct layers *l, size_t a, size_t b)
{
    if (b <= a || b - a < l->ranks) return NO_TIME;
    brs_wide average = (weight_before(l, b) - weight_before(l, a) + l->ranks - 1) / l->ranks;
    brs_wide head = brs_sample_weight(l->model, l->lengths[a]);
    return l->model->intercept + (average > head ? average : head);
}

/* The exact min-max of [a, b) into `ranks` groups under the cap; NO_TIME
 * when the layer cannot hold them. */
static brs_wide layer_time(const struct layers *l, size_t a, size_t b)
{
    size_t size = b - a;
    if (b <= a || size < l->ranks) return NO_TIME;
    if (l->model->max_tokens &&
        brs_search_groups_for_cap(l->lengths + a, size, l->model) > l->ranks)
        return NO_TIME;
    return brs_search_min_max(l->lengths + a, brs_probe_cache_at(l->cache, a), size, l->ranks,
                              l->model, estimate(l, a, b));
}

/* ---- the estimate and the dynamic programme over grid cuts ---------------- */

/* best[m][i]: the least estimated time of m layers covering the first
 * grid[i] samples; from[m][i] the grid point where the m-th layer starts. */
static brs_status grid_cuts(struct layers *l)
{
    size_t points = l->n < GRID ? l->n : GRID, g = l->count;
    size_t *grid = malloc((points + 1) * sizeof *grid);
    brs_wide *best = malloc((g + 1) * (points + 1) * sizeof *best);
    uint32_t *from = malloc((g + 1) * (points + 1) * sizeof *from);
    brs_status status = grid && best && from ? BRS_OK : BRS_ERR_NO_MEMORY;
    if (status == BRS_OK) {
        for (size_t i = 0; i <= points; i++) grid[i] = i * l->n / points;
        for (size_t i = 0; i <= points; i++) best[i] = i == 0 ? 0 : NO_TIME;
        for (size_t m = 1; m <= g; m++) {
            brs_wide *row = best + m * (points + 1), *prev = row - (points + 1);
            for (size_t i = 0; i <= points; i++) {
                row[i] = NO_TIME;
                from[m * (points + 1) + i] = 0;
                for (size_t h = 0; h < i; h++) {
                    brs_wide e = estimate(l, grid[h], grid[i]);
                    if (prev[h] == NO_TIME || e == NO_TIME || prev[h] + e >= row[i]) continue;
                    row[i] = prev[h] + e;
                    from[m * (points + 1) + i] = (uint32_t)h;
                }
            }
        }
        if (best[g * (points + 1) + points] == NO_TIME) status = BRS_ERR_INVALID_ARGUMENT;
        size_t i = points;
        for (size_t m = g; m > 0 && status == BRS_OK; m--) {
            l->cut[m] = grid[i];
            i = from[m * (points + 1) + i];
        }
        l->cut[0] = 0;
    }
    free(grid);
    free(best);
    free(from);
    return status;
}

/* ---- exact refinement of the cuts ----------------------------------------- */

static brs_wide sum_of_times(const struct layers *l)
{
    brs_wide sum = 0;
    for (size_t m = 0; m < l->count; m++) {
        if (l->time[m] == NO_TIME) return NO_TIME;
        sum += l->time[m];
    }
    return sum;
}

/* Moves cut m (between layers m - 1 and m) by growing steps either way and
 * keeps the move that lowers the two layers' time the most. */
static void descend_cut(struct layers *l, size_t m)
{
    size_t a = l->cut[m - 1], here = l->cut[m], b = l->cut[m + 1];
    brs_wide now = l->time[m - 1] == NO_TIME || l->time[m] == NO_TIME
                       ? NO_TIME
                       : l->time[m - 1] + l->time[m];
    size_t best_cut = here;
    brs_wide best_left = l->time[m - 1], best_right = l->time[m];
    for (int side = -1; side <= 1; side += 2) {
        for (size_t step = 1; step < b - a && step <= DESCENT_REACH; step *= 2) {
            if (side < 0 ? here < a + step : here + step >= b) break;
            size_t c = side < 0 ? here - step : here + step;
            brs_wide left = layer_time(l, a, c), right = layer_time(l, c, b);
            if (left == NO_TIME || right == NO_TIME) continue;
            if (now == NO_TIME || left + right < now) {
                now = left + right;
                best_cut = c;
                best_left = left;
                best_right = right;
            }
        }
    }
    l->cut[m] = best_cut;
    l->time[m - 1] = best_left;
    l->time[m] = best_right;
}

/* Each layer in turn as far as its time allows (greedy groups at it),
 * leaving a sample for every group after it; the next layer only shrinks. */
static void push(struct layers *l)
{
    for (size_t m = 0; m + 1 < l->count; m++) {
        if (l->time[m] == NO_TIME) return;
        size_t pos = l->cut[m], after = l->ranks * (l->count - m - 1);
        for (size_t r = 0; r < l->ranks; r++)
            pos += brs_staircase_greedy_group(l->lengths, l->n, pos, after + l->ranks - 1 - r,
                                              l->model, l->time[m]);
        if (pos > l->cut[m + 1]) {
            l->cut[m + 1] = pos;
            l->time[m + 1] = layer_time(l, l->cut[m + 1], l->cut[m + 2]);
        }
    }
}

static void refine_cuts(struct layers *l)
{
    for (size_t m = 0; m < l->count; m++) l->time[m] = layer_time(l, l->cut[m], l->cut[m + 1]);
    /* the descent's layer times cost O(ranks) probes each: skipped for very wide steps */
    int rounds = l->ranks * l->count > DESCENT_MAX_GROUPS ? 0 : DESCENT_ROUNDS;
    for (int round = 0; round < rounds; round++)
        for (size_t m = 1; m < l->count; m++) descend_cut(l, m);
    push(l);
}

/* ---- the groups of one layer ---------------------------------------------- */

brs_status brs_layered_split_one(size_t *starts, brs_wide *costs, const uint32_t *lengths,
                                 struct brs_probe_cache cache, size_t n, size_t ranks,
                                 const struct brs_cost_model *model, brs_wide time)
{
    struct brs_cost_model held = *model;
    held.max_tokens = brs_search_least_peak(lengths, cache, n, ranks, model, time);
    struct brs_split part = {starts, NULL, costs, 0, 0, 0, 0, 0};
    return brs_split_heuristic_least_total(&part, lengths, n, ranks, &held, time);
}

/* Layer m's `ranks` groups into starts/costs (absolute positions). */
static brs_status build_layer(const struct layers *l, size_t m, size_t *starts, brs_wide *costs)
{
    size_t a = l->cut[m];
    brs_status status =
        brs_layered_split_one(starts, costs, l->lengths + a, brs_probe_cache_at(l->cache, a),
                              l->cut[m + 1] - a, l->ranks, l->model, l->time[m]);
    for (size_t r = 0; r < l->ranks && status == BRS_OK; r++) starts[r] += a;
    return status;
}

/* The layers' buffers and weight sums; `cut[count]` is n. */
static brs_status layers_open(struct layers *l, const uint32_t *lengths,
                              struct brs_probe_cache cache, size_t n, size_t dp_size,
                              size_t grad_accum, const struct brs_cost_model *model)
{
    size_t entries = (cache.rank ? brs_probe_cache_runs(cache, n) : n) + 1;
    *l = (struct layers){lengths, cache, n, dp_size, grad_accum, model,
                         malloc((grad_accum + 1) * sizeof *l->cut),
                         malloc(grad_accum * sizeof *l->time), malloc(entries * sizeof *l->before)};
    if (!l->cut || !l->time || !l->before) return BRS_ERR_NO_MEMORY;
    sum_weights(l);
    l->cut[grad_accum] = n;
    return BRS_OK;
}

static void layers_close(struct layers *l)
{
    free(l->cut);
    free(l->time);
    free(l->before);
}

/* Every layer's groups into starts/costs, at the layer times found. */
static brs_status build_layers(const struct layers *l, size_t *starts, brs_wide *costs)
{
    brs_status status = BRS_OK;
    for (size_t m = 0; m < l->count && status == BRS_OK; m++)
        status = build_layer(l, m, starts + m * l->ranks, costs + m * l->ranks);
    starts[l->count * l->ranks] = l->n;
    return status;
}

brs_status brs_layered_split(size_t *starts, brs_wide *costs, const uint32_t *lengths,
                             struct brs_probe_cache cache, size_t n, size_t dp_size,
                             size_t grad_accum, const struct brs_cost_model *model)
{
    struct layers l;
    brs_status status = layers_open(&l, lengths, cache, n, dp_size, grad_accum, model);
    if (status == BRS_OK) status = grid_cuts(&l);
    if (status == BRS_OK) {
        refine_cuts(&l);
        if (sum_of_times(&l) == NO_TIME) status = BRS_ERR_INVALID_ARGUMENT;
    }
    if (status == BRS_OK) status = build_layers(&l, starts, costs);
    layers_close(&l);
    return status;
}

/* ---- every cut: the exact dynamic programme -------------------------------- */

/* Layer times the programme may compute, each costing O(ranks) per probe:
 * (EXACT_WORK_PER_SAMPLE n + EXACT_WORK_BASE) / ranks of them. */
enum { EXACT_WORK_PER_SAMPLE = 16, EXACT_WORK_BASE = 8192 };

#define UNKNOWN (NO_TIME - 1)

struct cuts {
    struct layers *l;
    size_t slack;     /* the positions each cut can take: n - ranks * count + 1 */
    brs_wide *memo;   /* layer times by (start, length - ranks); NULL: two layers */
    brs_wide *best;   /* (count + 1) * (n + 1): least time of m layers over [0, b) */
    uint32_t *from;   /* where the m-th layer of that best starts */
    brs_wide beat;    /* only layerings at most this fast are of interest */
};

/* The exact time of [a, b), computed once where layers in the middle repeat. */
static brs_wide memo_time(struct cuts *c, size_t a, size_t b)
{
    if (!c->memo) return layer_time(c->l, a, b);
    brs_wide *slot = &c->memo[a * c->slack + (b - a - c->l->ranks)];
    if (*slot == UNKNOWN) *slot = layer_time(c->l, a, b);
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
    brs_wide *prev = c->best + (m - 1) * width, found = NO_TIME;
    uint32_t at = 0;
    for (size_t a = (m - 1) * r; a + r <= b; a++) {
        if (prev[a] == NO_TIME) continue;
        brs_wide low = prev[a] + estimate(c->l, a, b);
        if (low + tail > c->beat || (found != NO_TIME && low >= found)) continue;
        brs_wide t = memo_time(c, a, b);
        if (t == NO_TIME || prev[a] + t + tail > c->beat || prev[a] + t >= found) continue;
        found = prev[a] + t;
        at = (uint32_t)a;
    }
    c->best[m * width + b] = found;
    c->from[m * width + b] = at;
}

static brs_status run_cuts(struct cuts *c)
{
    struct layers *l = c->l;
    size_t r = l->ranks, g = l->count, n = l->n, width = n + 1;
    for (size_t b = 0; b <= n; b++) c->best[b] = b == 0 ? 0 : NO_TIME;
    for (size_t m = 1; m <= g; m++) {
        size_t last = m == g ? n : n - (g - m) * r;
        for (size_t b = 0; b <= n; b++) c->best[m * width + b] = NO_TIME;
        for (size_t b = m == g ? n : m * r; b <= last; b++) {
            brs_wide tail = m == g ? 0 : estimate(l, b, n);
            /* m layers over [0, b) take at least the estimate of it as one */
            if (estimate(l, 0, b) + tail <= c->beat) relax(c, m, b, tail);
        }
    }
    if (c->best[g * width + n] == NO_TIME) return BRS_ERR_TOO_LARGE; /* none beats c->beat */
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
    struct layers *l;
    brs_wide best; /* the least sum found, or beat + 1 */
    size_t cut;
};

static void try_cut(struct halves *h, size_t c, brs_wide left, brs_wide right)
{
    if (left == NO_TIME || right == NO_TIME || left + right >= h->best) return;
    h->best = left + right;
    h->cut = c;
}

static void bisect(struct halves *h, size_t lo, size_t hi, brs_wide left_lo, brs_wide right_hi)
{
    if (hi - lo < 2 || left_lo == NO_TIME || right_hi == NO_TIME ||
        left_lo + right_hi >= h->best)
        return;
    size_t mid = lo + (hi - lo) / 2;
    brs_wide left = layer_time(h->l, 0, mid), right = layer_time(h->l, mid, h->l->n);
    try_cut(h, mid, left, right);
    bisect(h, lo, mid, left_lo, right);
    bisect(h, mid, hi, left, right_hi);
}

static brs_status two_layers(struct layers *l, brs_wide beat)
{
    size_t r = l->ranks, n = l->n, lo = r, hi = n - r;
    struct halves h = {l, beat + 1, 0};
    brs_wide left_lo = layer_time(l, 0, lo), right_lo = layer_time(l, lo, n);
    brs_wide left_hi = layer_time(l, 0, hi), right_hi = layer_time(l, hi, n);
    try_cut(&h, lo, left_lo, right_lo);
    try_cut(&h, hi, left_hi, right_hi);
    bisect(&h, lo, hi, left_lo, right_hi);
    if (h.best > beat) return BRS_ERR_TOO_LARGE; /* none beats it */
    l->cut[1] = h.cut;
    l->time[0] = layer_time(l, 0, h.cut);
    l->time[1] = layer_time(l, h.cut, n);
    return BRS_OK;
}

/* Whether the programme's layer times fit its work: two layers need two
 * per cut position, more layers one per (start, end) pair at most. */
static int exact_fits(size_t n, size_t ranks, size_t count, size_t slack)
{
    uint64_t times = 2 * (uint64_t)slack;
    if (count > 2) times += (uint64_t)slack * (slack + 1) / 2;
    return times * ranks <= EXACT_WORK_PER_SAMPLE * (uint64_t)n + EXACT_WORK_BASE;
}

brs_status brs_layered_split_fastest(size_t *starts, brs_wide *costs, const uint32_t *lengths,
                                     struct brs_probe_cache cache, size_t n, size_t dp_size,
                                     size_t grad_accum, const struct brs_cost_model *model,
                                     brs_wide beat)
{
    size_t k = dp_size * grad_accum;
    if (grad_accum < 2 || n <= k) return BRS_ERR_TOO_LARGE;
    size_t slack = n - k + 1, width = n + 1;
    if (!exact_fits(n, dp_size, grad_accum, slack)) return BRS_ERR_TOO_LARGE;
    struct layers l;
    brs_status status = layers_open(&l, lengths, cache, n, dp_size, grad_accum, model);
    if (grad_accum == 2) {
        l.cut[0] = 0;
        if (status == BRS_OK) status = two_layers(&l, beat);
        if (status == BRS_OK) status = build_layers(&l, starts, costs);
        layers_close(&l);
        return status;
    }
    struct cuts c = {&l, slack, NULL, malloc((grad_accum + 1) * width * sizeof *c.best),
                     malloc((grad_accum + 1) * width * sizeof *c.from), beat};
    if (grad_accum > 2) {
        c.memo = malloc((n - dp_size + 1) * slack * sizeof *c.memo);
        for (size_t i = 0; c.memo && i < (n - dp_size + 1) * slack; i++) c.memo[i] = UNKNOWN;
    }
    if (status == BRS_OK && (!c.best || !c.from || (grad_accum > 2 && !c.memo)))
        status = BRS_ERR_NO_MEMORY;
    if (status == BRS_OK) status = run_cuts(&c);
    if (status == BRS_OK) status = build_layers(&l, starts, costs);
    free(c.memo);
    free(c.best);
    free(c.from);
    layers_close(&l);
    return status;
}
