/* refine.c - the second objective: among the splits whose largest cost is
 * the optimum T, the one of least total cost.
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
 * divide and conquer in O(W log W).
 */
#include "planner/cost_model.h"
#include "planner/refine.h"
#include "util/wide.h"

#include <stdlib.h>

#define INFINITE (~(brs_wide)0)

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
    if (in->model->max_tokens && (uint64_t)size * head > in->model->max_tokens) return INFINITE;
    brs_wide cost = in->narrow ? brs_group_cost_narrow(in->model, head, size, 1)
                               : brs_group_cost(in->model, head, size);
    return cost <= in->threshold ? cost : INFINITE;
}

/* Whether the group of `size` samples ending at b fits. */
static int group_fits(const struct refine_input *in, size_t b, size_t size)
{
    return feasible_cost(in, b - size, b) != INFINITE;
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
        brs_wide best = INFINITE;
        for (size_t a = a_low; a <= last; a++) {
            brs_wide before = l->prev_total[a - l->prev->low];
            if (before == INFINITE) continue;
            brs_wide c = feasible_cost(l->in, a, b);
            if (c != INFINITE && before + c < best) {
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

brs_status brs_refine_least_total(struct brs_split *split, const uint32_t *lengths, size_t n,
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
