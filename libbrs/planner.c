/* planner.c - the exact min-max planner of padded micro-batches.
 *
 * Samples arrive sorted longest first. By the contiguity theorem (DESIGN.md
 * section 3) an optimal split into k groups is contiguous in that order, and
 * a contiguous group [i, i + s) costs intercept + s * w(L_i), w(L) = L +
 * alpha L^2: its head is its longest sample. The planner:
 *   1. checks the token cap alone can be met with k groups;
 *   2. finds the least threshold T for which the greedy probe (each group
 *      as long as cost <= T and the cap allow) needs at most k groups; that
 *      T is the exact optimum, and a realised cost of some group;
 *   3. builds k groups of cost <= T, spending the freedom on less cost.
 */
#include "internal.h"

#include <stdlib.h>

#define WIDE_MAX (~(brs_wide)0)

/* Cells the exact second objective may search: a few per sample. */
enum { REFINE_BUDGET_PER_SAMPLE = 4, REFINE_BUDGET_BASE = 4096 };

brs_wide brs_sample_weight(const struct brs_cost_model *model, uint32_t length)
{
    return (brs_wide)length * BRS_COST_UNITS_PER_ONE +
           (brs_wide)model->alpha * length * length;
}

static brs_wide group_cost(const struct brs_cost_model *model, uint32_t head, size_t size)
{
    return model->intercept + (brs_wide)size * brs_sample_weight(model, head);
}

/* The largest group allowed by the token cap for a head of this length. */
static size_t cap_size(const struct brs_cost_model *model, uint32_t head, size_t remaining)
{
    if (model->max_tokens == 0) return remaining;
    uint64_t s = model->max_tokens / head;
    return s < remaining ? (size_t)s : remaining;
}

/* What a probe reads: the sorted lengths and 1 / w(L) per sample, so a
 * group's size costs a multiplication instead of a 128-bit division. */
struct probe_input {
    const uint32_t *lengths;
    const double *inverse_weight;
    size_t n, k;
    const struct brs_cost_model *model;
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
        size_t limit = cap_size(model, in->lengths[i], in->n - i);
        size_t size = fitting_size(in, i, budget, budget_estimate, limit);
        if (size < limit) {
            brs_wide grown = group_cost(model, in->lengths[i], size + 1);
            if (grown < r.next) r.next = grown;
        }
        if (size == 0) return r; /* cannot happen for threshold >= LB */
        brs_wide cost = group_cost(model, in->lengths[i], size);
        if (cost > r.realised) r.realised = cost;
        i += size;
        groups++;
    }
    r.feasible = 1;
    r.covered = i;
    return r;
}

/* The fewest groups that meet the token cap alone. */
static size_t groups_for_cap(const uint32_t *lengths, size_t n,
                             const struct brs_cost_model *model)
{
    size_t i = 0, groups = 0;
    while (i < n) {
        i += cap_size(model, lengths[i], n - i);
        groups++;
    }
    return groups;
}

/* LB = max(intercept + ceil(sum w / k), max_m intercept + m * w(L_((m-1)k))):
 * the average, and the pigeonhole bound (among the (m-1)k + 1 longest
 * samples some group holds m, and its head is at least that long). */
static brs_wide lower_bound(const uint32_t *lengths, size_t n, size_t k,
                            const struct brs_cost_model *model, brs_wide *weight_sum)
{
    brs_wide sum = 0;
    for (size_t i = 0; i < n; i++) sum += brs_sample_weight(model, lengths[i]);
    *weight_sum = sum;
    brs_wide bound = model->intercept + (sum + k - 1) / k;
    for (size_t m = 1; (m - 1) * k < n; m++) {
        brs_wide pigeonhole = group_cost(model, lengths[(m - 1) * k], m);
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
static brs_wide optimal_threshold(const struct probe_input *in, brs_wide low)
{
    const brs_wide bound = low;
    brs_wide high, threshold = low;
    for (unsigned attempt = 0;; attempt++) {
        struct probe_result r = probe(in, threshold);
        if (r.feasible) {
            high = r.realised;
            break;
        }
        low = r.next;
        brs_wide step = (bound >> 7) << (attempt < 100 ? attempt : 100);
        threshold = near_miss(in, &r) || bound + step <= low ? low : bound + step;
    }
    while (low < high) {
        struct probe_result r = probe(in, low + (high - low) / 2);
        if (r.feasible) {
            high = r.realised;
            continue;
        }
        low = r.next;
        if (near_miss(in, &r) && low < high) {
            r = probe(in, low);
            if (r.feasible) high = r.realised;
            else low = r.next;
        }
    }
    return high;
}

/* 1 / w(L) for every sample, computed once per distinct length (the samples
 * are sorted, so equal lengths are adjacent). */
static void fill_inverse_weights(double *inverse, const uint32_t *lengths, size_t n,
                                 const struct brs_cost_model *model)
{
    for (size_t i = 0; i < n; i++)
        inverse[i] = (i > 0 && lengths[i] == lengths[i - 1])
                         ? inverse[i - 1]
                         : 1.0 / (double)brs_sample_weight(model, lengths[i]);
}

/* Greedy from the short end: each group, taken from the right, as long as
 * the threshold and cap allow. Its group sizes are then split to k below.
 * Returns the number of groups, written as starts[0..groups]. */
static size_t greedy_from_right(size_t *starts, const uint32_t *lengths, size_t n,
                                const struct brs_cost_model *model, brs_wide threshold)
{
    size_t groups = 0, end = n;
    /* Collect group starts from the right, then reverse them. */
    while (end > 0) {
        /* cost of [a, end) is non-increasing in a: find the least a that fits. */
        size_t low = 0, high = end - 1; /* answer in [low, high]; end - 1 always fits */
        size_t probe_step = 1;
        while (probe_step <= end - 1) {
            size_t a = end - 1 - probe_step;
            size_t size = end - a;
            if (group_cost(model, lengths[a], size) > threshold ||
                (model->max_tokens && (uint64_t)size * lengths[a] > model->max_tokens)) {
                low = a + 1;
                break;
            }
            high = a;
            probe_step *= 2;
        }
        while (low < high) {
            size_t a = low + (high - low) / 2;
            size_t size = end - a;
            if (group_cost(model, lengths[a], size) > threshold ||
                (model->max_tokens && (uint64_t)size * lengths[a] > model->max_tokens))
                low = a + 1;
            else
                high = a;
        }
        starts[groups++] = low;
        end = low;
    }
    for (size_t i = 0; i < groups / 2; i++) {
        size_t t = starts[i];
        starts[i] = starts[groups - 1 - i];
        starts[groups - 1 - i] = t;
    }
    starts[groups] = n;
    return groups;
}

/* A binary max-heap of group ids ordered by cost, for the splits. */
struct heap {
    uint32_t *ids;
    size_t size;
    const brs_wide *costs;
};

static int heap_above(const struct heap *h, uint32_t a, uint32_t b)
{
    return h->costs[a] > h->costs[b] || (h->costs[a] == h->costs[b] && a < b);
}

static void heap_sift_down(struct heap *h, size_t i)
{
    for (;;) {
        size_t best = i, l = 2 * i + 1, r = l + 1;
        if (l < h->size && heap_above(h, h->ids[l], h->ids[best])) best = l;
        if (r < h->size && heap_above(h, h->ids[r], h->ids[best])) best = r;
        if (best == i) return;
        uint32_t t = h->ids[i];
        h->ids[i] = h->ids[best];
        h->ids[best] = t;
        i = best;
    }
}

static void heap_sift_up(struct heap *h, size_t i)
{
    while (i > 0 && heap_above(h, h->ids[i], h->ids[(i - 1) / 2])) {
        uint32_t t = h->ids[i];
        h->ids[i] = h->ids[(i - 1) / 2];
        h->ids[(i - 1) / 2] = t;
        i = (i - 1) / 2;
    }
}

/* The groups while they are split: group g is [begin[g], begin[g] + size[g]). */
struct groups {
    size_t *begin, *size;
    brs_wide *costs;
    size_t count;
};

static void push_if_splittable(struct heap *h, const struct groups *g, uint32_t id)
{
    if (g->size[id] < 2) return;
    h->ids[h->size++] = id;
    heap_sift_up(h, h->size - 1);
}

/* Split the costliest splittable group in halves until there are k groups:
 * every split lowers cost where it is highest, which is what the other
 * ranks wait for. n >= k guarantees a splittable group remains. */
static void split_costliest(struct groups *g, struct heap *h, const uint32_t *lengths, size_t k,
                            const struct brs_cost_model *model)
{
    for (size_t id = 0; id < g->count; id++) push_if_splittable(h, g, (uint32_t)id);
    while (g->count < k) {
        uint32_t top = h->ids[0], added = (uint32_t)g->count++;
        size_t first = (g->size[top] + 1) / 2;
        g->begin[added] = g->begin[top] + first;
        g->size[added] = g->size[top] - first;
        g->size[top] = first;
        g->costs[top] = group_cost(model, lengths[g->begin[top]], g->size[top]);
        g->costs[added] = group_cost(model, lengths[g->begin[added]], g->size[added]);
        if (g->size[top] < 2) h->ids[0] = h->ids[--h->size];
        heap_sift_down(h, 0);
        push_if_splittable(h, g, added);
    }
}

/* Renumber the groups left to right into split->starts and split->costs. */
static void write_in_position_order(struct brs_split *split, const struct groups *g, size_t n,
                                    uint32_t *group_at, brs_wide *costs_in_order)
{
    for (size_t id = 0; id < g->count; id++) group_at[g->begin[id]] = (uint32_t)id;
    size_t out = 0;
    for (size_t pos = 0; pos < n; pos += g->size[group_at[pos]]) {
        split->starts[out] = pos;
        costs_in_order[out++] = g->costs[group_at[pos]];
    }
    split->starts[out] = n;
    for (size_t i = 0; i < out; i++) split->costs[i] = costs_in_order[i];
}

static brs_status split_to_k(struct brs_split *split, const uint32_t *lengths, size_t n,
                             size_t groups, size_t k, const struct brs_cost_model *model)
{
    struct groups g = {malloc(k * sizeof(size_t)), malloc(k * sizeof(size_t)), split->costs,
                       groups};
    struct heap h = {malloc(k * sizeof(uint32_t)), 0, split->costs};
    uint32_t *group_at = malloc(n * sizeof *group_at);
    brs_wide *costs_in_order = malloc(k * sizeof *costs_in_order);
    brs_status status = BRS_ERR_NO_MEMORY;
    if (g.begin && g.size && h.ids && group_at && costs_in_order) {
        for (size_t id = 0; id < groups; id++) {
            g.begin[id] = split->starts[id];
            g.size[id] = split->starts[id + 1] - split->starts[id];
            g.costs[id] = group_cost(model, lengths[g.begin[id]], g.size[id]);
        }
        split_costliest(&g, &h, lengths, k, model);
        write_in_position_order(split, &g, n, group_at, costs_in_order);
        status = BRS_OK;
    }
    free(g.begin);
    free(g.size);
    free(h.ids);
    free(group_at);
    free(costs_in_order);
    return status;
}

brs_status brs_plan_padded(struct brs_split *split, const uint32_t *lengths, size_t n, size_t k,
                           const struct brs_cost_model *model, uint64_t *scratch)
{
    /* scratch (2n words) holds 1 / w(L) for the search, then w(L) for the
     * second objective. */
    double *inverse_weight = (double *)scratch;
    if (model->max_tokens) {
        size_t needed = groups_for_cap(lengths, n, model);
        if (needed > k) {
            split->needed = needed;
            return BRS_ERR_CAP_INFEASIBLE;
        }
    }
    split->lower_bound = lower_bound(lengths, n, k, model, &split->weight_sum);
    fill_inverse_weights(inverse_weight, lengths, n, model);
    struct probe_input in = {lengths, inverse_weight, n, k, model};
    brs_wide best = optimal_threshold(&in, split->lower_bound);
    /* Exact second objective where its windows are small (the common case:
     * the optimum is tight); else split the costliest groups. */
    brs_status status = brs_refine_least_total(split, lengths, n, k, model, best,
                                               REFINE_BUDGET_PER_SAMPLE * n + REFINE_BUDGET_BASE,
                                               (brs_wide *)scratch);
    if (status == BRS_ERR_TOO_LARGE) {
        size_t groups = greedy_from_right(split->starts, lengths, n, model, best);
        status = split_to_k(split, lengths, n, groups, k, model);
    }
    if (status != BRS_OK) return status;
    split->max_cost = 0;
    for (size_t g = 0; g < k; g++)
        if (split->costs[g] > split->max_cost) split->max_cost = split->costs[g];
    return BRS_OK;
}
