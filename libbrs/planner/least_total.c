/* least_total.c - the second objective: among the splits whose largest
 * cost is the optimum T, the one of least total cost; and, where that
 * search is too large, a heuristic that falls back on the greedy groups.
 *
 * Boundary j (the end of group j, 1 <= j <= k) of any such split lies in a
 * window [R_j, L_j]: L_j is where the greedy from the long end gets with j
 * groups (no prefix of j groups reaches further), R_j where the greedy from
 * the short end leaves off with k - j groups (no suffix of k - j groups
 * starts earlier), both tightened so every group keeps a sample. Inside
 * the windows, total(j, b) = min_a total(j-1, a) + cost(a, b) is a dynamic
 * programme whose cost matrix is Monge (cost(a,b) = intercept + (b-a)w(a)
 * with w non-increasing, infeasible groups as +infinity along a staircase),
 * so the leftmost best a is monotone in b and each layer is solved by
 * divide and conquer in O(W log W). */
#include "planner/internal.h"
#include "util/cost_sort.h"
#include "util/wide.h"

#include <stdlib.h>

struct layer_window {
    size_t low, high; /* boundary j lies in [low, high] */
    size_t offset;    /* where its choices start in the choice array */
};

struct refine_input {
    const uint32_t *lengths;
    size_t n, k;
    const struct brs_cost_model *model;
    brs_wide threshold;
    int narrow;    /* brs_fits_64_bits */
    double budget; /* threshold - intercept, approximately */
    /* equal_length_size's answer for the last length it was asked */
    uint32_t known_length;
    size_t known_size;
};

static BRS_ALWAYS_INLINE brs_wide feasible_cost(const struct refine_input *in, size_t a, size_t b)
{
    size_t size = b - a;
    uint32_t head = in->lengths[a];
    if (in->model->max_tokens && (uint64_t)size * head > in->model->max_tokens) return BRS_WIDE_MAX;
    brs_wide cost = in->narrow ? brs_group_cost_narrow(in->model, head, size, 1)
                               : brs_group_cost(in->model, head, size);
    return cost <= in->threshold ? cost : BRS_WIDE_MAX;
}

/* Whether the group of `size` samples ending at b fits. */
static int group_fits(const struct refine_input *in, size_t b, size_t size)
{
    return feasible_cost(in, b - size, b) != BRS_WIDE_MAX;
}

/* The largest feasible size in [1, b] of a group that ends at b; size 1
 * always fits, and a longer group only costs more. Galloping from `guess`,
 * then bisecting: a check or two where the guess is right, O(log s) where
 * it is off by s. */
static size_t largest_group_to(const struct refine_input *in, size_t b, size_t guess)
{
    if (guess < 1) guess = 1;
    if (guess > b) guess = b;
    size_t fits = 0, fails = b + 1; /* size 0 stands for "none checked" */
    if (group_fits(in, b, guess)) {
        fits = guess;
        for (size_t step = 1; fits < b; step *= 2) {
            size_t size = step < b - fits ? fits + step : b;
            if (!group_fits(in, b, size)) {
                fails = size;
                break;
            }
            fits = size;
        }
    } else {
        fails = guess;
        for (size_t step = 1; fits == 0; step *= 2) {
            size_t size = step < fails - 1 ? fails - step : 1;
            if (group_fits(in, b, size))
                fits = size;
            else
                fails = size;
        }
    }
    while (fails - fits > 1) {
        size_t mid = fits + (fails - fits) / 2;
        if (group_fits(in, b, mid))
            fits = mid;
        else
            fails = mid;
    }
    return fits;
}

/* The most samples a group of this head length may hold (cost and cap), at
 * most n: what the greedies ask again and again along a run of equal
 * lengths, so the last answer is kept. */
static size_t equal_length_size(struct refine_input *in, uint32_t length)
{
    if (length != in->known_length) {
        /* a floating-point estimate, corrected with exact products */
        brs_wide budget = in->threshold - in->model->intercept;
        brs_wide w = brs_sample_weight(in->model, length);
        double estimate = in->budget / (double)w;
        size_t size = estimate >= (double)in->n ? in->n : (size_t)estimate;
        in->known_size = brs_cap_size(in->model, length, brs_exact_size(size, in->n, w, budget));
        in->known_length = length;
    }
    return in->known_size;
}

/* The longest feasible group starting at `a` (a < n): its cost depends on
 * its head, lengths[a], alone. */
static size_t longest_from(struct refine_input *in, size_t a)
{
    size_t size = equal_length_size(in, in->lengths[a]);
    return size < in->n - a ? size : in->n - a;
}

/* The earliest start of a feasible group ending at `b` (b > 0). Where the
 * group that size allows for length L = lengths[b - 1] holds only samples
 * of length L, it is the answer: one sample more brings a head at least as
 * long. Otherwise the search, from that size (the longer head only allows
 * fewer). */
static size_t earliest_to(struct refine_input *in, size_t b)
{
    uint32_t length = in->lengths[b - 1];
    size_t size = equal_length_size(in, length);
    if (size <= b && in->lengths[b - size] == length) return b - size;
    return b - largest_group_to(in, b, size);
}

/* The windows' lower ends: the greedy from the short end, whose group
 * boundaries from the right are also written to starts[k], starts[k - 1],
 * ... down to the 0 where it ends. Returns its number of groups (more than
 * k when `threshold` needs more groups). */
static size_t fill_lows(struct layer_window *w, size_t *starts, struct refine_input *in)
{
    size_t n = in->n, k = in->k, start = n, groups = 0;
    for (size_t i = 0; i <= k; i++) {
        size_t j = k - i;
        w[j].low = start > j ? start : j;
        starts[j] = start;
        if (start > 0) {
            start = earliest_to(in, start);
            groups++;
        }
    }
    return start == 0 ? groups : k + 1;
}

/* The windows' upper ends and offsets, from the greedy from the long end;
 * returns the sum of the windows' sizes, or budget + 1 as soon as it is
 * over the budget. */
static size_t fill_highs(struct layer_window *w, struct refine_input *in, size_t budget)
{
    size_t n = in->n, k = in->k, reach = 0, total = 0;
    for (size_t j = 0; j <= k; j++) {
        w[j].high = reach < n - (k - j) ? reach : n - (k - j);
        w[j].offset = total;
        total += w[j].high - w[j].low + 1;
        if (total > budget) return budget + 1;
        if (reach < n) reach += longest_from(in, reach);
    }
    return total;
}

struct layer {
    const struct refine_input *in;
    const struct layer_window *prev, *cur;
    const brs_wide *prev_total; /* by a - prev->low */
    brs_wide *cur_total;        /* by b - cur->low */
    uint32_t *choice;           /* by b - cur->low: the best a */
};

/* Best a for every b in [b_low, b_high], knowing it lies in [a_low, a_high]. */
static void solve_range(const struct layer *l, size_t b_low, size_t b_high, size_t a_low,
                        size_t a_high)
{
    while (b_low <= b_high) {
        size_t b = b_low + (b_high - b_low) / 2;
        size_t best_a = a_low, last = a_high < b - 1 ? a_high : b - 1;
        brs_wide best = BRS_WIDE_MAX;
        for (size_t a = a_low; a <= last; a++) {
            brs_wide before = l->prev_total[a - l->prev->low];
            if (before == BRS_WIDE_MAX) continue;
            brs_wide c = feasible_cost(l->in, a, b);
            if (c != BRS_WIDE_MAX && before + c < best) {
                best = before + c;
                best_a = a;
            }
        }
        l->cur_total[b - l->cur->low] = best;
        l->choice[b - l->cur->low] = (uint32_t)best_a;
        if (b > b_low) solve_range(l, b_low, b - 1, a_low, best_a);
        a_low = best_a;
        b_low = b + 1;
    }
}

brs_status brs_least_total_search(struct brs_split *split, const uint32_t *lengths, size_t n,
                                  size_t k, const struct brs_cost_model *model, brs_wide threshold,
                                  size_t budget, size_t *greedy_groups)
{
    struct refine_input in = {lengths,
                              n,
                              k,
                              model,
                              threshold,
                              brs_fits_64_bits(lengths, n, model),
                              (double)(threshold - model->intercept),
                              0,
                              0};
    struct layer_window *w = malloc((k + 1) * sizeof *w);
    if (!w) return BRS_ERR_NO_MEMORY;
    size_t groups = fill_lows(w, split->starts, &in);
    if (groups > k) {
        free(w);
        return BRS_ERR_INVALID_ARGUMENT; /* the threshold is below the optimum */
    }
    size_t cells = fill_highs(w, &in, budget);
    if (cells > budget) {
        free(w);
        /* the greedy's starts, from the left */
        for (size_t g = 0; g <= groups; g++) split->starts[g] = split->starts[k - groups + g];
        if (greedy_groups) *greedy_groups = groups;
        return BRS_ERR_TOO_LARGE;
    }
    uint32_t *choice = malloc(cells * sizeof *choice);
    brs_wide *totals = malloc(cells * sizeof *totals);
    if (!choice || !totals) {
        free(w);
        free(choice);
        free(totals);
        return BRS_ERR_NO_MEMORY;
    }
    totals[0] = 0; /* layer 0: boundary 0 */
    for (size_t j = 1; j <= k; j++) {
        struct layer l = {&in,
                          &w[j - 1],
                          &w[j],
                          totals + w[j - 1].offset,
                          totals + w[j].offset,
                          choice + w[j].offset};
        solve_range(&l, w[j].low, w[j].high, w[j - 1].low, w[j - 1].high);
    }
    /* Walk the choices back from boundary k = n. */
    size_t b = n;
    for (size_t j = k; j > 0; j--) {
        size_t a = choice[w[j].offset + (b - w[j].low)];
        split->starts[j - 1] = a;
        split->costs[j - 1] = feasible_cost(&in, a, b);
        b = a;
    }
    split->starts[k] = n;
    free(w);
    free(choice);
    free(totals);
    return BRS_OK;
}

/* ---- k groups of cost <= T when the exact second objective is too large to search: the greedy
 * groups from the short end (which the search, least_total.c, hands back), the costliest split in
 * halves until there are k; and the least-total split that falls back on it. */

/* The groups while they are split: group g is [begin[g], begin[g] + size[g]),
 * and next[g] the group after it (the groups in position order, from 0). */
struct groups {
    size_t *begin, *size;
    uint32_t *next;
    brs_wide *costs;
    size_t count;
};

/* A group that can still be split, with its cost and the cost of its first
 * half (the costlier one: as many samples or more, and the longer head). */
struct splittable {
    brs_wide cost, half;
    uint32_t id;
};

/* Room for the batches' sort (cost_sort.c), k ids each. */
struct batch_sort {
    uint32_t *ids, *scratch;
    uint64_t *keys; /* 2k */
};

/* Appends group id to the pool if it has two samples or more. */
static void add_splittable(struct splittable *pool, size_t *size, const struct groups *g,
                           uint32_t id, const uint32_t *lengths, const struct brs_cost_model *model)
{
    if (g->size[id] < 2) return;
    brs_wide half = brs_group_cost(model, lengths[g->begin[id]], (g->size[id] + 1) / 2);
    pool[(*size)++] = (struct splittable){g->costs[id], half, id};
}

/* Splits group id in halves: the first keeps the id, the second is a new
 * group right after it. */
static uint32_t split_group(struct groups *g, uint32_t id, const uint32_t *lengths,
                            const struct brs_cost_model *model)
{
    uint32_t added = (uint32_t)g->count++;
    size_t first = (g->size[id] + 1) / 2;
    g->begin[added] = g->begin[id] + first;
    g->size[added] = g->size[id] - first;
    g->size[id] = first;
    g->next[added] = g->next[id];
    g->next[id] = added;
    g->costs[id] = brs_group_cost(model, lengths[g->begin[id]], g->size[id]);
    g->costs[added] = brs_group_cost(model, lengths[g->begin[added]], g->size[added]);
    return added;
}

/* Split the costliest splittable group in halves until there are k groups:
 * every split lowers cost where it is highest, which is what the other
 * ranks wait for. n >= k guarantees a splittable group remains.
 *
 * A heap would split one group at a time. The splits come in batches
 * instead: no half is costlier than `limit`, the costliest half in the
 * pool, so the groups above it are split before any half and in the
 * heap's order, costliest first and ties by id (brs_cost_sort_ids); the same
 * splits, with the same new ids, as one at a time. */
static void split_costliest(struct groups *g, struct splittable *pool, struct splittable *next,
                            const struct batch_sort *sort, const uint32_t *lengths, size_t k,
                            const struct brs_cost_model *model)
{
    size_t size = 0;
    for (size_t id = 0; id < g->count; id++)
        add_splittable(pool, &size, g, (uint32_t)id, lengths, model);
    while (g->count < k) {
        brs_wide limit = 0;
        for (size_t i = 0; i < size; i++)
            if (pool[i].half > limit) limit = pool[i].half;
        size_t batch = 0, kept = 0;
        for (size_t i = 0; i < size; i++) {
            if (pool[i].cost > limit)
                sort->ids[batch++] = pool[i].id;
            else
                next[kept++] = pool[i];
        }
        brs_cost_sort_ids(sort->ids, batch, k, g->costs, sort->scratch, sort->keys);
        for (size_t i = 0; i < batch && g->count < k; i++) {
            uint32_t id = sort->ids[i], added = split_group(g, id, lengths, model);
            add_splittable(next, &kept, g, id, lengths, model);
            add_splittable(next, &kept, g, added, lengths, model);
        }
        struct splittable *swap = pool;
        pool = next;
        next = swap;
        size = kept;
    }
}

/* The groups left to right into split->starts and split->costs. */
static void write_in_position_order(struct brs_split *split, const struct groups *g, size_t n,
                                    brs_wide *costs_in_order)
{
    size_t out = 0;
    for (uint32_t id = 0; out < g->count; id = g->next[id]) {
        split->starts[out] = g->begin[id];
        costs_in_order[out++] = g->costs[id];
    }
    split->starts[out] = n;
    for (size_t i = 0; i < out; i++) split->costs[i] = costs_in_order[i];
}

brs_status brs_least_total_to_k(struct brs_split *split, const uint32_t *lengths, size_t n,
                                size_t groups, size_t k, const struct brs_cost_model *model)
{
    struct groups g = {malloc(k * sizeof(size_t)), malloc(k * sizeof(size_t)),
                       malloc(k * sizeof(uint32_t)), split->costs, groups};
    struct splittable *pool = malloc(2 * k * sizeof *pool);
    struct batch_sort sort = {malloc(2 * k * sizeof(uint32_t)), NULL,
                              malloc(2 * k * sizeof(uint64_t))};
    brs_wide *costs_in_order = malloc(k * sizeof *costs_in_order);
    brs_status status = BRS_ERR_NO_MEMORY;
    if (g.begin && g.size && g.next && pool && sort.ids && sort.keys && costs_in_order) {
        sort.scratch = sort.ids + k;
        for (size_t id = 0; id < groups; id++) {
            g.begin[id] = split->starts[id];
            g.size[id] = split->starts[id + 1] - split->starts[id];
            g.next[id] = (uint32_t)id + 1;
            g.costs[id] = brs_group_cost(model, lengths[g.begin[id]], g.size[id]);
        }
        split_costliest(&g, pool, pool + k, &sort, lengths, k, model);
        write_in_position_order(split, &g, n, costs_in_order);
        status = BRS_OK;
    }
    free(g.begin);
    free(g.size);
    free(g.next);
    free(pool);
    free(sort.ids);
    free(sort.keys);
    free(costs_in_order);
    return status;
}

brs_status brs_least_total_split(struct brs_split *split, const uint32_t *lengths, size_t n,
                                 size_t k, const struct brs_cost_model *model, brs_wide limit)
{
    size_t groups;
    brs_status status = brs_least_total_search(
        split, lengths, n, k, model, limit,
        BRS_LEAST_TOTAL_CELLS_PER_SAMPLE * n + BRS_LEAST_TOTAL_CELLS_BASE, &groups);
    if (status != BRS_ERR_TOO_LARGE) return status;
    return brs_least_total_to_k(split, lengths, n, groups, k, model);
}
