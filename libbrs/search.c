/* search.c - the exact min-max threshold of a padded split into k groups,
 * and the exact least peak of padded tokens at a given max cost.
 *
 * Samples arrive sorted longest first. By the contiguity theorem (DESIGN.md
 * section 3) an optimal split is contiguous in that order, and a contiguous
 * group [i, i + s) costs intercept + s * w(L_i) and holds s * L_i padded
 * tokens. The least threshold T for which the greedy probe (each group as
 * long as cost <= T and the cap allow) needs at most k groups is the exact
 * optimum, and a realised group cost. The least peak P at a cost T is found
 * the same way, with the probe bounded by both T and P.
 */
#include "internal.h"

#define WIDE_MAX (~(brs_wide)0)

/* What a probe reads: the sorted lengths and 1 / w(L) per sample, so a
 * group's size costs a multiplication instead of a 128-bit division. */
struct probe_input {
    const uint32_t *lengths;
    const double *inverse_weight;
    size_t n, k;
    const struct brs_cost_model *model;
    brs_wide time; /* the peak probe's bound on a group's cost */
};

/* The largest s <= limit with s * w <= budget: a floating-point estimate,
 * then corrected with exact integer products (a step or two at most), so
 * the result is exact whatever the rounding. */
static size_t fitting_size(const struct probe_input *in, size_t i, brs_wide budget,
                           double budget_estimate, size_t limit)
{
    brs_wide w = brs_sample_weight(in->model, in->lengths[i]);
    double estimate = budget_estimate * in->inverse_weight[i];
    size_t s = estimate >= (double)limit ? limit : (size_t)estimate;
    if ((w >> 64) == 0 && (budget >> 64) == 0) {
        /* Common case: 64-bit products; one that overflows exceeds budget. */
        uint64_t w64 = (uint64_t)w, b64 = (uint64_t)budget, product;
        while (s > 0 && (__builtin_mul_overflow(s, w64, &product) || product > b64)) s--;
        while (s < limit && !__builtin_mul_overflow(s + 1, w64, &product) && product <= b64) s++;
        return s;
    }
    while (s > 0 && (brs_wide)s * w > budget) s--;
    while (s < limit && (brs_wide)(s + 1) * w <= budget) s++;
    return s;
}

struct probe_result {
    int feasible;
    brs_wide realised; /* the largest group cost of the greedy split */
    brs_wide next;     /* the least threshold above this one that changes the split */
    size_t covered;    /* samples covered by the first k groups */
};

typedef struct probe_result (*probe_fn)(const struct probe_input *in, brs_wide point);

/* Greedy probe: the fewest contiguous groups of cost <= threshold. It stops
 * as soon as k groups do not suffice. For every threshold below `next` the
 * first k + 1 groups are the same, so the answer is the same. */
static struct probe_result probe(const struct probe_input *in, brs_wide threshold)
{
    const struct brs_cost_model *model = in->model;
    struct probe_result r = {0, 0, WIDE_MAX, 0};
    brs_wide budget = threshold - model->intercept; /* threshold >= LB > intercept */
    double budget_estimate = (double)budget;
    size_t i = 0, groups = 0;
    while (i < in->n) {
        if (groups == in->k) {
            r.covered = i;
            return r;
        }
        size_t limit = brs_cap_size(model, in->lengths[i], in->n - i);
        size_t size = fitting_size(in, i, budget, budget_estimate, limit);
        if (size < limit) {
            brs_wide grown = brs_group_cost(model, in->lengths[i], size + 1);
            if (grown < r.next) r.next = grown;
        }
        if (size == 0) return r; /* cannot happen for threshold >= LB */
        brs_wide cost = brs_group_cost(model, in->lengths[i], size);
        if (cost > r.realised) r.realised = cost;
        i += size;
        groups++;
    }
    r.feasible = 1;
    r.covered = i;
    return r;
}

/* Peak probe: the fewest contiguous groups of cost <= in->time and at most
 * `peak` padded tokens, with `next` and `realised` in tokens. Only groups
 * that the peak (not the cost or the cap) stops can grow with it. */
static struct probe_result peak_probe(const struct probe_input *in, brs_wide peak)
{
    const struct brs_cost_model *model = in->model;
    struct probe_result r = {0, 0, WIDE_MAX, 0};
    brs_wide budget = in->time - model->intercept;
    double budget_estimate = (double)budget;
    size_t i = 0, groups = 0;
    while (i < in->n) {
        if (groups == in->k) {
            r.covered = i;
            return r;
        }
        uint32_t head = in->lengths[i];
        size_t limit = brs_cap_size(model, head, in->n - i);
        size_t by_cost = fitting_size(in, i, budget, budget_estimate, limit);
        uint64_t by_peak = (uint64_t)peak / head; /* peak < 2^56: n * L */
        size_t size = by_peak < by_cost ? (size_t)by_peak : by_cost;
        if (size < by_cost && (brs_wide)(size + 1) * head < r.next)
            r.next = (brs_wide)(size + 1) * head;
        if (size == 0) return r; /* cannot happen for peak >= the longest sample */
        if ((brs_wide)size * head > r.realised) r.realised = (brs_wide)size * head;
        i += size;
        groups++;
    }
    r.feasible = 1;
    r.covered = i;
    return r;
}

/* The fewest groups that meet the token cap alone. */
size_t brs_groups_for_cap(const uint32_t *lengths, size_t n, const struct brs_cost_model *model)
{
    size_t i = 0, groups = 0;
    while (i < n) {
        i += brs_cap_size(model, lengths[i], n - i);
        groups++;
    }
    return groups;
}

/* LB = max(intercept + ceil(sum w / k), max_m intercept + m * w(L_((m-1)k))):
 * the average, and the pigeonhole bound (among the (m-1)k + 1 longest
 * samples some group holds m, and its head is at least that long). */
brs_wide brs_lower_bound(const uint32_t *lengths, size_t n, size_t k,
                         const struct brs_cost_model *model, brs_wide *weight_sum)
{
    /* sum w = 1e6 sum L + alpha sum L^2: sum L < 2^56 and each L^2 < 2^64. */
    uint64_t tokens = 0;
    brs_wide squares = 0;
    for (size_t i = 0; i < n; i++) {
        tokens += lengths[i];
        squares += (uint64_t)lengths[i] * lengths[i];
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

/* Whether an infeasible probe fell short by less than one average group:
 * then its `next` is likely the optimum itself, and worth a probe. */
static int near_miss(const struct probe_input *in, const struct probe_result *r)
{
    return !r->feasible && (in->n - r->covered) * in->k < in->n;
}

/* The least feasible threshold. Infeasible probes raise `low` to their
 * `next` and feasible ones lower `high` to their realised cost, so both ends
 * stay realisable and the search ends exactly on the optimum, whatever
 * point in [low, high) each probe takes. The points are chosen for speed:
 * the optimum is usually within a few percent of the lower bound, so the
 * search climbs from it by growing steps (1/128, 1/64, ... of it), then
 * bisects, probing `low` itself after a near miss. */
static brs_wide optimal_threshold(const struct probe_input *in, probe_fn probe_at, brs_wide low)
{
    const brs_wide bound = low, unit = bound >> 7 ? bound >> 7 : 1;
    brs_wide high, threshold = low;
    for (unsigned attempt = 0;; attempt++) {
        struct probe_result r = probe_at(in, threshold);
        if (r.feasible) {
            high = r.realised;
            break;
        }
        low = r.next;
        brs_wide step = unit << (attempt < 100 ? attempt : 100);
        threshold = near_miss(in, &r) || bound + step <= low ? low : bound + step;
    }
    while (low < high) {
        struct probe_result r = probe_at(in, low + (high - low) / 2);
        if (r.feasible) {
            high = r.realised;
            continue;
        }
        low = r.next;
        if (near_miss(in, &r) && low < high) {
            r = probe_at(in, low);
            if (r.feasible) high = r.realised;
            else low = r.next;
        }
    }
    return high;
}

/* 1 / w(L) for every sample, computed once per distinct length (the samples
 * are sorted, so equal lengths are adjacent). */
void brs_fill_inverse_weights(double *inverse, const uint32_t *lengths, size_t n,
                              const struct brs_cost_model *model)
{
    for (size_t i = 0; i < n; i++) {
        if (i > 0 && lengths[i] == lengths[i - 1]) {
            inverse[i] = inverse[i - 1];
            continue;
        }
        brs_wide w = brs_sample_weight(model, lengths[i]);
        /* The same correctly rounded value either way; the 64-bit
         * conversion is an instruction, the 128-bit one a library call. */
        inverse[i] = 1.0 / ((w >> 64) == 0 ? (double)(uint64_t)w : (double)w);
    }
}

brs_wide brs_min_max_threshold(const uint32_t *lengths, const double *inverse_weight, size_t n,
                               size_t k, const struct brs_cost_model *model,
                               brs_wide lower_bound)
{
    struct probe_input in = {lengths, inverse_weight, n, k, model, 0};
    return optimal_threshold(&in, probe, lower_bound);
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

uint64_t brs_least_peak(const uint32_t *lengths, const double *inverse_weight, size_t n, size_t k,
                        const struct brs_cost_model *model, brs_wide time)
{
    struct probe_input in = {lengths, inverse_weight, n, k, model, time};
    return (uint64_t)optimal_threshold(&in, peak_probe, peak_lower_bound(lengths, n, k));
}
