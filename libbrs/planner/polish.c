/* polish.c - the last pass of the padded planner: boundary moves on the
 * chosen split, kept while the score (step time, peak, total) improves and
 * the memory budget holds.
 *
 * Only the groups that set the step time can shorten it: under per-micro-
 * step sync the costliest group of each micro-step, under per-step sync the
 * groups of the slowest rank; the group at the memory peak can lower the
 * peak. Each of them gives samples to a neighbour, from its head or its
 * tail, by 1, 2, 4, ... samples; the best move of a round is kept. Every
 * kept move strictly improves the score, so the pass ends; it is also
 * bounded by a number of rounds.
 */
#include "planner/internal.h"
#include "util/cost_sort.h"
#include "util/wide.h"

#include <stdlib.h>
#include <string.h>

/* Rounds, and trial scores: each costs O(k log k), so (8 n + 2048) / k of
 * them (at most 256) keep the pass within a small multiple of the rest of
 * the planner. */
enum {
    POLISH_MAX_GROUPS = 1024,
    POLISH_ROUNDS = 256,
    TRIAL_WORK_PER_SAMPLE = 8,
    TRIAL_WORK_BASE = 2048,
    MAX_TRIALS = 256
};

static size_t trial_budget(size_t n, size_t k)
{
    if (k > POLISH_MAX_GROUPS) return 0; /* a trial costs too much there */
    size_t trials = (TRIAL_WORK_PER_SAMPLE * n + TRIAL_WORK_BASE) / k;
    return trials < MAX_TRIALS ? trials : MAX_TRIALS;
}

struct polish {
    size_t *starts; /* the split being polished */
    brs_wide *costs;
    const uint32_t *lengths;
    const struct brs_step *step; /* n, k and the deal's topology and sync model */
    size_t n, k;
    const struct brs_cost_model *model; /* the cap is the memory budget */
    struct brs_score score;
    size_t trials_left;
    uint32_t *slots;     /* k: the deal of the current split */
    uint32_t *order;     /* k: its groups in cost order; a move changes two costs, so
                          * a trial's order is merged from it instead of sorted */
    uint8_t *setter;     /* k: whether a group is tried this round */
    uint32_t *try_slots; /* k */
    uint32_t *try_order; /* k */
    brs_wide *by_slot;   /* k: the costs by slot, for the slowest rank */
};

/* The score of a split (starts, costs) whose groups are in cost order. */
static brs_status score(const struct polish *p, struct brs_score *out, const size_t *starts,
                        const brs_wide *costs, const uint32_t *order, uint32_t *slots)
{
    return brs_assign_score_groups(
        out, costs, order, brs_objective_padded_peak(starts, p->lengths, p->k), p->step, slots);
}

/* Marks the groups that set the step time (and the one at the peak). */
static void mark_setters(struct polish *p)
{
    size_t ga = p->k / p->step->dp_size;
    memset(p->setter, 0, p->k);
    uint32_t *group_at = p->try_slots; /* free until the next trial */
    for (size_t g = 0; g < p->k; g++) group_at[p->slots[g]] = (uint32_t)g;
    if (p->step->sync == BRS_SYNC_STEP) {
        for (size_t g = 0; g < p->k; g++) p->by_slot[p->slots[g]] = p->costs[g];
        size_t slow = brs_objective_slowest_rank(p->by_slot, p->step->dp_size, ga);
        for (size_t m = 0; m < ga; m++) p->setter[group_at[slow * ga + m]] = 1;
    } else {
        /* the costliest group of each micro-step and the runner-up, which
         * becomes the costliest once the first shrinks */
        for (size_t m = 0; m < ga; m++) {
            size_t top = group_at[m], second = p->k;
            for (size_t r = 1; r < p->step->dp_size; r++) {
                size_t g = group_at[r * ga + m];
                if (p->costs[g] > p->costs[top]) {
                    second = top;
                    top = g;
                } else if (second == p->k || p->costs[g] > p->costs[second]) {
                    second = g;
                }
            }
            p->setter[top] = 1;
            if (second < p->k) p->setter[second] = 1;
        }
    }
    p->setter[brs_objective_peak_group(p->starts, p->lengths, p->k)] = 1;
}

static int fits(const struct polish *p, size_t from, size_t to)
{
    return !p->model->max_tokens ||
           (uint64_t)(to - from) * p->lengths[from] <= p->model->max_tokens;
}

/* Boundary b (1 <= b < k) moved to `to`; the trial's score if it fits. */
static int trial(struct polish *p, size_t b, size_t to, struct brs_score *out, brs_status *status)
{
    if (to <= p->starts[b - 1] || to >= p->starts[b + 1] || p->trials_left == 0) return 0;
    p->trials_left--;
    if (!fits(p, p->starts[b - 1], to) || !fits(p, to, p->starts[b + 1])) return 0;
    /* the split itself is tried, and restored: a move changes three words */
    size_t here = p->starts[b];
    brs_wide before = p->costs[b - 1], after = p->costs[b];
    p->starts[b] = to;
    p->costs[b - 1] = brs_group_cost(p->model, p->lengths[p->starts[b - 1]], to - p->starts[b - 1]);
    p->costs[b] = brs_group_cost(p->model, p->lengths[to], p->starts[b + 1] - to);
    brs_cost_sort_moved(p->try_order, p->order, p->k, p->costs, (uint32_t)(b - 1), (uint32_t)b);
    *status = score(p, out, p->starts, p->costs, p->try_order, p->try_slots);
    p->starts[b] = here;
    p->costs[b - 1] = before;
    p->costs[b] = after;
    return *status == BRS_OK;
}

struct move {
    size_t boundary, to;
    struct brs_score score;
    int found;
};

/* Group g's boundary b moved by growing steps in direction `shrink_g`. */
static brs_status try_boundary(struct polish *p, size_t b, int forward, struct move *best)
{
    brs_status status = BRS_OK;
    for (size_t step = 1;; step *= 2) {
        size_t here = p->starts[b];
        if (forward ? here + step >= p->starts[b + 1] : here <= p->starts[b - 1] + step) break;
        size_t to = forward ? here + step : here - step;
        struct brs_score s;
        if (!trial(p, b, to, &s, &status)) {
            if (status != BRS_OK) return status;
            continue;
        }
        const struct brs_score *bar = best->found ? &best->score : &p->score;
        if (brs_objective_better(&s, bar)) *best = (struct move){b, to, s, 1};
    }
    return status;
}

/* One round: the best move of any setter; 0 when none improves. */
static brs_status round_once(struct polish *p, int *moved)
{
    struct move best = {0, 0, {0, 0, 0}, 0};
    brs_status status = BRS_OK;
    mark_setters(p);
    for (size_t g = 0; g < p->k && status == BRS_OK; g++) {
        if (!p->setter[g]) continue;
        if (g > 0) status = try_boundary(p, g, 1, &best); /* head to the group before */
        if (status == BRS_OK && g + 1 < p->k)
            status = try_boundary(p, g + 1, 0, &best); /* tail to the group after */
    }
    *moved = best.found;
    if (status != BRS_OK || !best.found) return status;
    size_t b = best.boundary;
    p->starts[b] = best.to;
    p->costs[b - 1] =
        brs_group_cost(p->model, p->lengths[p->starts[b - 1]], best.to - p->starts[b - 1]);
    p->costs[b] = brs_group_cost(p->model, p->lengths[best.to], p->starts[b + 1] - best.to);
    brs_cost_sort_moved(p->try_order, p->order, p->k, p->costs, (uint32_t)(b - 1), (uint32_t)b);
    uint32_t *order = p->order;
    p->order = p->try_order;
    p->try_order = order;
    return score(p, &p->score, p->starts, p->costs, p->order, p->slots);
}

brs_status brs_polish(size_t *starts, brs_wide *costs, const uint32_t *lengths,
                      const struct brs_step *step, const struct brs_cost_model *model)
{
    size_t n = step->n, k = step->k;
    /* no trial to make: the split stays as it is, without scoring it */
    if (trial_budget(n, k) == 0) return BRS_OK;
    struct polish p = {starts,
                       costs,
                       lengths,
                       step,
                       n,
                       k,
                       model,
                       {0, 0, 0},
                       trial_budget(n, k),
                       malloc(k * sizeof(uint32_t)),
                       malloc(k * sizeof(uint32_t)),
                       malloc(k),
                       malloc(k * sizeof(uint32_t)),
                       malloc(k * sizeof(uint32_t)),
                       malloc(k * sizeof(brs_wide))};
    uint64_t *keys = malloc(2 * k * sizeof *keys); /* the sort's */
    brs_status status =
        p.slots && p.order && p.setter && p.try_slots && p.try_order && p.by_slot && keys
            ? BRS_OK
            : BRS_ERR_NO_MEMORY;
    if (status == BRS_OK) {
        for (size_t g = 0; g < k; g++) p.order[g] = (uint32_t)g;
        brs_cost_sort_ids(p.order, k, k, costs, p.try_slots, keys);
        status = score(&p, &p.score, starts, costs, p.order, p.slots);
    }
    free(keys);
    int moved = 1;
    for (int round = 0; round < POLISH_ROUNDS && moved && status == BRS_OK; round++)
        status = round_once(&p, &moved);
    free(p.slots);
    free(p.order);
    free(p.setter);
    free(p.try_slots);
    free(p.try_order);
    free(p.by_slot);
    return status;
}
