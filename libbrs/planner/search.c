/* search.c - the exact min-max threshold of a padded split into k groups,
 * and the exact least peak of padded tokens at a given max cost.
 *
 * Samples arrive sorted longest first. By the contiguity theorem (DESIGN.md
 * section 3) an optimal split is contiguous in that order, and a contiguous
 * group [i, i + s) costs intercept + s * w(L_i) and holds s * L_i padded
 * tokens. The least threshold T for which the greedy probe (each group as
 * long as cost <= T and the cap allow) needs at most k groups is the exact
 * optimum, and a realised group cost. The least peak P at a cost T is found
 * the same way, with the probe bounded by both T and P. Every probe is
 * exact, so where the search probes only decides its speed, never its
 * answer (docs/algorithm.md, step 4).
 */
#include "planner/internal.h"
#include "util/wide.h"

#include <string.h>

/* What a probe reads: the sorted lengths and 1 / w(L) (brs_probe_cache), so
 * a group's size costs a multiplication instead of a 128-bit division. */
struct probe_input {
    const uint32_t *lengths;
    struct brs_probe_cache cache;
    size_t n, k;
    const struct brs_cost_model *model;
    brs_wide time; /* the peak probe's bound on a group's cost */
    int narrow;    /* every group cost the probes form fits 64 bits */
    int runs;      /* fewer distinct lengths than groups: some groups share a head */
};

static struct probe_input probe_input(const uint32_t *lengths, struct brs_probe_cache cache,
                                      size_t n, size_t k, const struct brs_cost_model *model,
                                      brs_wide time)
{
    size_t runs = brs_probe_cache_runs(cache, n);
    return (struct probe_input){lengths,
                                cache,
                                n,
                                k,
                                model,
                                time,
                                brs_fits_64_bits(lengths, n, model),
                                runs > 0 && runs <= k};
}

/* 1 / w(L_i), computed where first used: the probes read it only at the
 * heads of their groups, a few of the lengths. */
static BRS_ALWAYS_INLINE double inverse_weight(const struct probe_input *in, size_t i)
{
    double *known = in->cache.inverse_weight + (in->cache.rank ? in->cache.rank[i] : i);
    double inverse = *known;
    if (inverse == 0) {
        brs_wide w = brs_sample_weight(in->model, in->lengths[i]);
        /* The same correctly rounded value either way; the 64-bit
         * conversion is an instruction, the 128-bit one a library call. */
        inverse = 1.0 / ((w >> 64) == 0 ? (double)(uint64_t)w : (double)w);
        *known = inverse;
    }
    return inverse;
}

/* The largest s <= limit with s * w <= budget: a floating-point estimate,
 * then corrected with exact integer products (a step or two at most), so
 * the result is exact whatever the rounding. limit <= n < 2^63, so both
 * conversions are the signed kind, one instruction each. */
static BRS_ALWAYS_INLINE size_t fitting_size(const struct probe_input *in, size_t i,
                                             brs_wide budget, double budget_estimate, size_t limit,
                                             int narrow)
{
    double estimate = budget_estimate * inverse_weight(in, i);
    size_t s = estimate >= (double)(int64_t)limit ? limit : (size_t)(int64_t)estimate;
    uint32_t length = in->lengths[i];
    if (narrow) {
        uint64_t w = brs_sample_weight_narrow(in->model, length), b = (uint64_t)budget;
        while (s > 0 && s * w > b) s--;
        while (s < limit && (s + 1) * w <= b) s++;
        return s;
    }
    return brs_exact_size(s, limit, brs_sample_weight(in->model, length), budget);
}

struct probe_result {
    int feasible;
    brs_wide realised; /* the largest group cost of the greedy split */
    brs_wide next;     /* the least threshold above this one that changes the split */
    size_t covered;    /* samples covered by the first k groups */
    double growth;     /* samples the first k groups gain per unit the point rises */
    double excess;     /* the last group's excess over the point (negative: room) */
};

typedef struct probe_result (*probe_fn)(const struct probe_input *in, brs_wide point);

/* How many greedy groups from i on have the head, size and cost of the one
 * at i, which has `size` samples: those that start inside its run of equal
 * lengths and end before the last sample. A probe takes them at once, so on
 * many samples of few distinct lengths it costs O(runs), not O(k). At most
 * `left`; 1 without looking where the lengths outnumber the groups. */
static BRS_ALWAYS_INLINE size_t same_groups(const struct probe_input *in, size_t i, size_t size,
                                            size_t left)
{
    if (!in->runs) return 1;
    size_t rest = in->n - i;
    size_t run = in->cache.run_end[in->cache.rank[i]] - (in->cache.first + i);
    if (run > rest) run = rest;
    if (run <= size) return 1; /* the next group starts past the run (and saves two divisions) */
    size_t by_run = (run + size - 1) / size, by_end = (rest - 1) / size;
    size_t m = by_run < by_end ? by_run : by_end;
    if (m > left) m = left;
    return m > 0 ? m : 1;
}

/* Where a probe's greedy groups stopped, after `groups` of them took the
 * first i samples: feasible if they took all, and then each group left
 * unused is a whole `budget` of room (negative excess). */
static BRS_ALWAYS_INLINE struct probe_result probe_end(struct probe_result r,
                                                       const struct probe_input *in, size_t i,
                                                       size_t groups, double budget)
{
    r.covered = i;
    r.feasible = i == in->n;
    if (r.feasible && groups < in->k) r.excess = -(double)(in->k - groups) * budget;
    return r;
}

/* Greedy probe: the fewest contiguous groups of cost <= threshold. It stops
 * as soon as k groups do not suffice. For every threshold below `next` the
 * first k + 1 groups are the same, so the answer is the same. */
static BRS_ALWAYS_INLINE struct probe_result probe_body(const struct probe_input *in,
                                                        brs_wide threshold, int narrow)
{
    const struct brs_cost_model *model = in->model;
    struct probe_result r = {0, 0, BRS_WIDE_MAX, 0, 0, 0};
    brs_wide budget = threshold - model->intercept; /* threshold >= LB > intercept */
    double budget_estimate = (double)budget;
    size_t i = 0, groups = 0;
    while (i < in->n && groups < in->k) {
        size_t limit = brs_cap_size(model, in->lengths[i], in->n - i);
        size_t size = fitting_size(in, i, budget, budget_estimate, limit, narrow);
        if (size < limit) {
            brs_wide grown = brs_group_cost_narrow(model, in->lengths[i], size + 1, narrow);
            if (grown < r.next) r.next = grown;
        }
        if (size == 0) return r; /* cannot happen for threshold >= LB */
        size_t same = same_groups(in, i, size, in->k - groups);
        if (size < limit) r.growth += (double)same * inverse_weight(in, i);
        /* the rest as the last group: its cost above the threshold */
        if (groups + same == in->k) {
            size_t last = i + (same - 1) * size;
            r.excess = (double)(in->n - last) / inverse_weight(in, i) - budget_estimate;
        }
        brs_wide cost = brs_group_cost_narrow(model, in->lengths[i], size, narrow);
        if (cost > r.realised) r.realised = cost;
        i += same * size;
        groups += same;
    }
    return probe_end(r, in, i, groups, budget_estimate);
}

/* Each probe is written once and instantiated twice, `narrow` a constant
 * in each: 64-bit arithmetic where every group cost fits (the common case),
 * 128-bit otherwise. */
static struct probe_result probe(const struct probe_input *in, brs_wide threshold)
{
    return in->narrow ? probe_body(in, threshold, 1) : probe_body(in, threshold, 0);
}

/* Peak probe: the fewest contiguous groups of cost <= in->time and at most
 * `peak` padded tokens, with `next` and `realised` in tokens. Only groups
 * that the peak (not the cost or the cap) stops can grow with it. */
static BRS_ALWAYS_INLINE struct probe_result peak_probe_body(const struct probe_input *in,
                                                             brs_wide peak, int narrow)
{
    const struct brs_cost_model *model = in->model;
    struct probe_result r = {0, 0, BRS_WIDE_MAX, 0, 0, 0};
    brs_wide budget = in->time - model->intercept;
    double budget_estimate = (double)budget;
    size_t i = 0, groups = 0;
    while (i < in->n && groups < in->k) {
        uint32_t head = in->lengths[i];
        size_t limit = brs_cap_size(model, head, in->n - i);
        size_t by_cost = fitting_size(in, i, budget, budget_estimate, limit, narrow);
        uint64_t by_peak = (uint64_t)peak / head; /* peak < 2^56: n * L */
        size_t size = by_peak < by_cost ? (size_t)by_peak : by_cost;
        if (size < by_cost && (brs_wide)(size + 1) * head < r.next)
            r.next = (brs_wide)(size + 1) * head;
        if (size == 0) return r; /* cannot happen for peak >= the longest sample */
        size_t same = same_groups(in, i, size, in->k - groups);
        if (size < by_cost) r.growth += (double)same / head;
        if (groups + same == in->k) {
            size_t last = i + (same - 1) * size;
            r.excess = (double)(in->n - last) * head - (double)peak;
        }
        if ((brs_wide)size * head > r.realised) r.realised = (brs_wide)size * head;
        i += same * size;
        groups += same;
    }
    return probe_end(r, in, i, groups, (double)peak);
}

static struct probe_result peak_probe(const struct probe_input *in, brs_wide peak)
{
    return in->narrow ? peak_probe_body(in, peak, 1) : peak_probe_body(in, peak, 0);
}

/* The fewest groups that meet the token cap alone. */
size_t brs_search_groups_for_cap(const uint32_t *lengths, size_t n,
                                 const struct brs_cost_model *model)
{
    return brs_search_groups_for_cap_upto(lengths, n, model, n);
}

/* The greedy from the long end is exact for the cap alone (contiguity:
 * each group as large as its head allows). It stops past `limit` groups,
 * which is all a feasibility question needs. */
size_t brs_search_groups_for_cap_upto(const uint32_t *lengths, size_t n,
                                      const struct brs_cost_model *model, size_t limit)
{
    size_t i = 0, groups = 0;
    while (i < n && groups <= limit) {
        i += brs_cap_size(model, lengths[i], n - i);
        groups++;
    }
    return groups;
}

/* LB = max(intercept + ceil(sum w / k), max_m intercept + m * w(L_((m-1)k))):
 * the average, and the pigeonhole bound (among the (m-1)k + 1 longest
 * samples some group holds m, and its head is at least that long). */
size_t brs_search_greedy_group(const uint32_t *lengths, size_t n, size_t pos, size_t groups_after,
                               const struct brs_cost_model *model, brs_wide threshold)
{
    size_t limit = brs_cap_size(model, lengths[pos], n - pos - groups_after);
    brs_wide w = brs_sample_weight(model, lengths[pos]);
    brs_wide budget = threshold - model->intercept;
    size_t size = 1; /* a single sample always fits: threshold >= its cost */
    /* Exponential then binary search on the size: cost grows with it. */
    size_t step = 1;
    while (size + step <= limit && (brs_wide)(size + step) * w <= budget) {
        size += step;
        step *= 2;
    }
    for (; step > 0; step /= 2)
        if (size + step <= limit && (brs_wide)(size + step) * w <= budget) size += step;
    return size;
}

brs_wide brs_search_lower_bound(const uint32_t *lengths, size_t n, size_t k,
                                const struct brs_cost_model *model, brs_wide *weight_sum)
{
    /* sum w = 1e6 sum L + alpha sum L^2: sum L < 2^56 and each L^2 < 2^64.
     * Below 2^16 (lengths[0] is the longest) the squares sum in 64 bits:
     * 2^24 samples of them stay below 2^56, and the loop vectorises. */
    uint64_t tokens = 0;
    brs_wide squares = 0;
    if (n > 0 && lengths[0] < (UINT32_C(1) << 16)) {
        uint64_t narrow = 0;
        for (size_t i = 0; i < n; i++) {
            tokens += lengths[i];
            narrow += lengths[i] * lengths[i];
        }
        squares = narrow;
    } else {
        for (size_t i = 0; i < n; i++) {
            tokens += lengths[i];
            squares += (uint64_t)lengths[i] * lengths[i];
        }
    }
    brs_wide sum = (brs_wide)tokens * BRS_COST_UNITS_PER_ONE + (brs_wide)model->alpha * squares;
    *weight_sum = sum;
    brs_wide bound = model->intercept + (sum + k - 1) / k;
    for (size_t m = 1; (m - 1) * k < n; m++) {
        brs_wide pigeonhole = brs_group_cost(model, lengths[(m - 1) * k], m);
        if (pigeonhole > bound) bound = pigeonhole;
    }
    return bound;
}

/* One end of the interpolation: a probe's point and its last group's excess
 * (positive where the probe was infeasible). */
struct side {
    double point, excess;
};

/* The next point to probe in [low, high): between the last infeasible and
 * the last feasible probe where the excess of the last group crosses zero,
 * or half way when the last two probes fell on the same side (the excess
 * is far from linear, and interpolation alone can crawl). Before any
 * feasible probe, Newton's step from the infeasible one: the uncovered
 * samples over the growth rate, which overshoots (the groups' heads move to
 * shorter samples as they grow) and so brackets the optimum quickly. */
static brs_wide next_point(const struct probe_input *in, const struct probe_result *r,
                           brs_wide point, const struct side *below, const struct side *above,
                           int same_side, brs_wide low, brs_wide high, brs_wide ceiling)
{
    double guess;
    if (above->excess < 0 && below->excess > 0 && !same_side)
        guess = below->point +
                (above->point - below->point) * below->excess / (below->excess - above->excess);
    else if (high == BRS_WIDE_MAX)
        guess = r->growth > 0 ? (double)point + (double)(in->n - r->covered) / r->growth + 1
                              : 2 * (double)low;
    else
        guess = (double)low + ((double)high - (double)low) / 2;
    brs_wide next = guess < (double)ceiling ? (brs_wide)guess : ceiling;
    if (next < low) next = low;
    if (high != BRS_WIDE_MAX && next >= high) next = low + (high - low) / 2;
    return next;
}

/* The least feasible point, at most `ceiling` (which is feasible).
 * Infeasible probes raise `low` to their `next` and feasible ones lower
 * `high` to their realised cost, so both ends stay realisable, each probe
 * in [low, high) narrows them, and the search ends exactly on the optimum
 * whatever points it takes. */
static brs_wide optimal_threshold(const struct probe_input *in, probe_fn probe_at, brs_wide low,
                                  brs_wide ceiling)
{
    brs_wide high = BRS_WIDE_MAX, point = low;
    struct side below = {0, 0}, above = {0, 0};
    int last_feasible = -1, same_side = 0;
    for (;;) {
        struct probe_result r = probe_at(in, point);
        struct side here = {(double)point, r.excess};
        if (r.feasible) {
            high = r.realised;
            here.excess = r.excess < -1 ? r.excess : -1;
            above = here;
        } else {
            low = r.next;
            here.excess = r.excess > 1 ? r.excess : 1;
            below = here;
        }
        same_side = last_feasible == r.feasible;
        last_feasible = r.feasible;
        if (low >= high) return high;
        point = next_point(in, &r, point, &below, &above, same_side, low, high, ceiling);
    }
}

struct brs_probe_cache brs_probe_cache_build(uint64_t *memory, const uint32_t *lengths, size_t n)
{
    /* n ranks and up to n run ends (32 bits each), then up to n inverses */
    uint32_t *rank = (uint32_t *)(void *)memory, *run_end = rank + n;
    struct brs_probe_cache cache = {rank, run_end, (double *)(void *)(memory + n), 0};
    size_t distinct = n > 0;
    for (size_t i = 1; i < n; i++) distinct += lengths[i] != lengths[i - 1];
    if (n == 0 || BRS_RUNS_SHARE * distinct > n) {
        cache.rank = cache.run_end = NULL;
        memset(cache.inverse_weight, 0, n * sizeof *cache.inverse_weight);
        return cache;
    }
    /* without a branch: on many distinct lengths it would mispredict on
     * every change of length; each run's end is written by its last sample */
    uint32_t r = 0;
    rank[0] = 0;
    run_end[0] = 1;
    for (size_t i = 1; i < n; i++) {
        r += lengths[i] != lengths[i - 1];
        rank[i] = r;
        run_end[r] = (uint32_t)i + 1;
    }
    memset(cache.inverse_weight, 0, (r + 1) * sizeof *cache.inverse_weight);
    return cache;
}

brs_wide brs_search_min_max(const uint32_t *lengths, struct brs_probe_cache cache, size_t n,
                            size_t k, const struct brs_cost_model *model, brs_wide lower_bound)
{
    struct probe_input in = probe_input(lengths, cache, n, k, model, 0);
    /* all samples in one group: within the cap's k groups, so feasible */
    return optimal_threshold(&in, probe, lower_bound, brs_group_cost(model, lengths[0], n));
}

/* max(L_0, ceil(sum L / k), max_m m * L_((m-1)k)): the longest sample, the
 * average group and the pigeonhole bound, in padded tokens. */
static brs_wide peak_lower_bound(const uint32_t *lengths, size_t n, size_t k)
{
    uint64_t tokens = 0;
    for (size_t i = 0; i < n; i++) tokens += lengths[i];
    brs_wide bound = (tokens + k - 1) / k;
    for (size_t m = 1; (m - 1) * k < n; m++) {
        brs_wide pigeonhole = (brs_wide)m * lengths[(m - 1) * k];
        if (pigeonhole > bound) bound = pigeonhole;
    }
    return bound;
}

uint64_t brs_search_least_peak(const uint32_t *lengths, struct brs_probe_cache cache, size_t n,
                               size_t k, const struct brs_cost_model *model, brs_wide time)
{
    struct probe_input in = probe_input(lengths, cache, n, k, model, time);
    /* a peak of all samples bounds nothing: the cost probe at `time` */
    return (uint64_t)optimal_threshold(&in, peak_probe, peak_lower_bound(lengths, n, k),
                                       (brs_wide)n * lengths[0]);
}
