/* assign.c - deal the k groups to (rank, micro-step) slots for the sync
 * model the planner optimises (docs/algorithm.md, step 6, "Deal").
 *
 * Per-micro-step sync: groups sorted by cost, micro-step m takes the m-th
 * block of dp_size groups, alternating the direction (snake). Sorted blocks
 * minimise the sum over micro-steps of the block maxima for the given
 * costs, so this deal is exact; the snake keeps per-rank sums even.
 *
 * Per-step sync: the slowest rank's sum is what counts, a multiway
 * partition of the costs into dp_size ranks of grad_accum groups. Exact by
 * branch and bound for small k, otherwise the better of the snake and a
 * cardinality-constrained LPT improved by pairwise swaps. Each rank's groups
 * then run costliest first, which keeps the per-micro-step time low too.
 *
 * The deal is a function of the costs alone, so the planner can score a
 * candidate split with it and the plan reproduce it: the score of a split
 * (brs_assign_score_*) is here, beside the deal it is made of.
 */
#include "planner/internal.h"
#include "util/cost_sort.h"
#include "util/wide.h"

#include <stdlib.h>
#include <string.h>

/* Up to this many groups the per-step partition is searched exactly. */
enum { EXACT_GROUPS = 10, SWAP_ROUNDS = 64, SWAP_WORK = 1 << 22 };

/* The snake: position p of the cost order goes to this rank. */
static size_t snake_rank(size_t position, size_t dp_size)
{
    size_t micro = position / dp_size, within = position % dp_size;
    return (micro % 2 == 0) ? within : dp_size - 1 - within;
}

/* Where every load fits beside the rank bits in one word (a narrow deal),
 * ranks are keyed (load, rank) and kept in tournament trees: the least key
 * at node[1], a change in O(log ranks) one-word compares. */
struct rank_tree {
    uint64_t *node; /* 2 * leaves: node[leaves + r] is rank r's key */
    size_t leaves;  /* ranks rounded up to a power of two */
};

static uint64_t least_of(uint64_t a, uint64_t b)
{
    return a < b ? a : b;
}

/* The tree above leaves already keyed. */
static void rank_tree_build(struct rank_tree *t)
{
    for (size_t i = t->leaves - 1; i > 0; i--)
        t->node[i] = least_of(t->node[2 * i], t->node[2 * i + 1]);
}

static void rank_tree_set(struct rank_tree *t, size_t r, uint64_t key)
{
    size_t i = t->leaves + r;
    t->node[i] = key;
    for (i /= 2; i > 0; i /= 2) t->node[i] = least_of(t->node[2 * i], t->node[2 * i + 1]);
}

/* Working state of a per-step deal: rank_of[p] for position p of the cost
 * order, and the ranks' loads and group counts. */
struct deal {
    const brs_wide *cost_at; /* k: the costs in cost order, read in sequence */
    const uint32_t *order;
    size_t k, ranks, per_rank;
    uint32_t *rank_of; /* k */
    uint32_t *count;   /* ranks */
    brs_wide *load;    /* ranks */
    uint32_t *members; /* k: each rank's positions, ascending, per_rank apiece */
    /* narrow: the keys fit (so the costs' sum is below 2^63, and the swaps
     * compare as 64 bits); light and heavy are then the ranks' trees */
    int narrow;
    unsigned bits; /* of a rank id */
    struct rank_tree light, heavy;
};

/* A rank's key in the light tree: the least is the lightest rank, first by
 * index on ties. */
static uint64_t light_key(const struct deal *d, size_t r)
{
    return ((uint64_t)d->load[r] << d->bits) | r;
}

/* In the heavy tree, complemented: the least is the heaviest rank, first by
 * index on ties. */
static uint64_t heavy_key(const struct deal *d, size_t r)
{
    return ~(((uint64_t)d->load[r] << d->bits) | (d->heavy.leaves - 1 - r));
}

/* Keys below all-ones (a rank left out of a tree) need the step's sum below
 * 2^(64 - bits) - 1. */
static int keys_fit(unsigned bits, brs_wide sum)
{
    return bits < 64 && sum < ((brs_wide)1 << (64 - bits)) - 1;
}

static brs_wide max_load(const struct deal *d)
{
    brs_wide worst = 0;
    for (size_t r = 0; r < d->ranks; r++)
        if (d->load[r] > worst) worst = d->load[r];
    return worst;
}

static void recount(struct deal *d)
{
    for (size_t r = 0; r < d->ranks; r++) {
        d->load[r] = 0;
        d->count[r] = 0;
    }
    for (size_t p = 0; p < d->k; p++) {
        d->load[d->rank_of[p]] += d->cost_at[p];
        d->count[d->rank_of[p]]++;
    }
}

/* The bits of rank ids below `ranks`. */
static unsigned rank_bits(size_t ranks)
{
    unsigned bits = 0;
    while (((size_t)1 << bits) < ranks) bits++;
    return bits;
}

/* Longest first to the least loaded rank with room, ties by rank. A narrow
 * deal finds that rank in the light tree (a full rank leaves it as an
 * all-ones key), in O(log ranks) a placement; others scan the ranks. */
static void deal_lpt(struct deal *d)
{
    for (size_t r = 0; r < d->ranks; r++) {
        d->load[r] = 0;
        d->count[r] = 0;
    }
    struct rank_tree *open = &d->light;
    uint64_t none = ~(uint64_t)0, mask = open->leaves - 1;
    if (d->narrow) {
        for (size_t r = 0; r < open->leaves; r++)
            open->node[open->leaves + r] = r < d->ranks ? r : none;
        rank_tree_build(open);
    }
    for (size_t p = 0; p < d->k; p++) {
        size_t best = d->ranks;
        if (d->narrow) {
            best = (size_t)(open->node[1] & mask);
        } else {
            for (size_t r = 0; r < d->ranks; r++)
                if (d->count[r] < d->per_rank && (best == d->ranks || d->load[r] < d->load[best]))
                    best = r;
        }
        d->rank_of[p] = (uint32_t)best;
        d->load[best] += d->cost_at[p];
        d->count[best]++;
        if (d->narrow)
            rank_tree_set(open, best, d->count[best] == d->per_rank ? none : light_key(d, best));
    }
}

/* The light and heavy trees of a full deal, for the swaps. */
static void key_ranks(struct deal *d)
{
    for (size_t r = 0; r < d->light.leaves; r++) {
        int rank = r < d->ranks;
        d->light.node[d->light.leaves + r] = rank ? light_key(d, r) : ~(uint64_t)0;
        d->heavy.node[d->heavy.leaves + r] = rank ? heavy_key(d, r) : ~(uint64_t)0;
    }
    rank_tree_build(&d->light);
    rank_tree_build(&d->heavy);
}

/* The first position of the cost order from `from` on whose cost is below
 * `bound` (costs fall along the order): a galloping search, as the answer
 * is usually near `from`. */
static BRS_ALWAYS_INLINE size_t first_below(const struct deal *d, size_t from, brs_wide bound,
                                            int narrow)
{
    size_t lo = from, hi = from, step = 1;
    while (hi < d->k && !brs_wide_below(d->cost_at[hi], bound, narrow)) {
        lo = hi + 1;
        hi = d->k - hi > step ? hi + step : d->k;
        step *= 2;
    }
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (brs_wide_below(d->cost_at[mid], bound, narrow))
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

/* The members of every rank, each rank's in ascending position order. */
static void list_members(struct deal *d)
{
    for (size_t r = 0; r < d->ranks; r++) d->count[r] = 0;
    for (size_t p = 0; p < d->k; p++) {
        uint32_t r = d->rank_of[p];
        d->members[r * d->per_rank + d->count[r]++] = (uint32_t)p;
    }
}

/* Position `from` of rank r's members becomes `to`, the list kept ascending. */
static void replace_member(struct deal *d, size_t r, uint32_t from, uint32_t to)
{
    uint32_t *list = d->members + r * d->per_rank;
    size_t i = 0;
    while (list[i] != from) i++;
    for (; i > 0 && list[i - 1] > to; i--) list[i] = list[i - 1];
    for (; i + 1 < d->per_rank && list[i + 1] < to; i++) list[i] = list[i + 1];
    list[i] = to;
}

/* The best swap so far: x of the slowest rank for y, and the larger of the
 * two loads after it. */
struct swap {
    brs_wide after;
    size_t x, y;
};

/* The slowest and the lightest rank (first by index on ties): a narrow
 * deal's trees hold them at their roots. */
static BRS_ALWAYS_INLINE void load_extremes(const struct deal *d, size_t *slow, size_t *light,
                                            int narrow)
{
    if (narrow) {
        uint64_t mask = d->light.leaves - 1;
        *slow = (size_t)(mask - (~d->heavy.node[1] & mask));
        *light = (size_t)(d->light.node[1] & mask);
        return;
    }
    *slow = *light = 0;
    for (size_t r = 1; r < d->ranks; r++) {
        if (d->load[r] > d->load[*slow]) *slow = r;
        if (d->load[r] < d->load[*light]) *light = r;
    }
}

/* Rank r's load changed: its keys too. */
static void rekey(struct deal *d, size_t r)
{
    rank_tree_set(&d->light, r, light_key(d, r));
    rank_tree_set(&d->heavy, r, heavy_key(d, r));
}

/* x's partners y from `start` on, for a swap better than `best`: the costs
 * fall along the order, so once cy + best->after <= cx + least no later y
 * lowers the larger load below best->after. Narrow deals run the same loop
 * in 64 bits, where every sum below fits. */
static BRS_ALWAYS_INLINE void scan_partners(const struct deal *d, size_t slow, size_t x,
                                            size_t start, brs_wide top, brs_wide least,
                                            struct swap *best, int narrow)
{
    if (narrow) {
        uint64_t cx = (uint64_t)d->cost_at[x], bar = (uint64_t)best->after;
        uint64_t top64 = (uint64_t)top, least64 = (uint64_t)least;
        for (size_t y = start; y < d->k; y++) {
            uint64_t cy = (uint64_t)d->cost_at[y];
            if (cy + bar <= cx + least64) break;
            size_t other = d->rank_of[y];
            if (other == slow) continue;
            uint64_t delta = cx - cy, mine = top64 - delta,
                     theirs = (uint64_t)d->load[other] + delta;
            uint64_t after = mine > theirs ? mine : theirs;
            if (after < bar) {
                bar = after;
                *best = (struct swap){after, x, y};
            }
        }
        return;
    }
    brs_wide cx = d->cost_at[x];
    for (size_t y = start; y < d->k; y++) {
        brs_wide cy = d->cost_at[y];
        if (cy + best->after <= cx + least) break;
        size_t other = d->rank_of[y];
        if (other == slow) continue;
        brs_wide delta = cx - cy, mine = top - delta, theirs = d->load[other] + delta;
        brs_wide after = mine > theirs ? mine : theirs;
        if (after < best->after) *best = (struct swap){after, x, y};
    }
}

/* One improving swap between the slowest rank and another: the pair whose
 * exchange lowers the larger of the two loads the most, the first such
 * pair in cost order. Returns 0 when no swap improves, or the slowest rank
 * is at the floor already. A swap of x for y beats `best_after` only if
 * cy < cx - (top - best_after) and cy > cx - best_after + (the least load),
 * so each x of the slowest rank scans that window of the cost order alone:
 * the same pair as a scan of every pair, found in O(window) instead of
 * O(k) per x. */
static BRS_ALWAYS_INLINE int improve_once_as(struct deal *d, brs_wide floor, int narrow)
{
    size_t slow, light;
    load_extremes(d, &slow, &light, narrow);
    brs_wide top = d->load[slow], least = d->load[light];
    if (top <= floor) return 0; /* nothing is below the floor */
    struct swap best = {top, 0, 0};
    size_t start = 0;
    for (size_t i = 0; i < d->per_rank; i++) {
        size_t x = d->members[slow * d->per_rank + i];
        brs_wide cx = d->cost_at[x];
        if (cx <= top - best.after) continue;
        /* x falls in cost and best.after only drops: the window's start only
         * advances, and it lies past x (its cost is below cx) */
        start = first_below(d, start > x ? start : x + 1, cx - (top - best.after), narrow);
        scan_partners(d, slow, x, start, top, least, &best, narrow);
    }
    if (best.after == top) return 0;
    uint32_t other = d->rank_of[best.y];
    brs_wide delta = d->cost_at[best.x] - d->cost_at[best.y];
    d->rank_of[best.x] = other;
    d->rank_of[best.y] = (uint32_t)slow;
    d->load[slow] -= delta;
    d->load[other] += delta;
    if (narrow) {
        rekey(d, slow);
        rekey(d, other);
    }
    replace_member(d, slow, (uint32_t)best.x, (uint32_t)best.y);
    replace_member(d, other, (uint32_t)best.y, (uint32_t)best.x);
    return 1;
}

static int improve_once(struct deal *d, brs_wide floor)
{
    return d->narrow ? improve_once_as(d, floor, 1) : improve_once_as(d, floor, 0);
}

/* Exact search state: positions are placed in cost order. */
struct exact_search {
    struct deal *d;
    uint32_t *trial; /* k: rank of each placed position */
    brs_wide best, floor;
};

static void place(struct exact_search *s, size_t p)
{
    struct deal *d = s->d;
    if (s->best <= s->floor) return; /* the bound is met: nothing is better */
    if (p == d->k) {
        brs_wide worst = max_load(d);
        if (worst < s->best) {
            s->best = worst;
            for (size_t i = 0; i < d->k; i++) d->rank_of[i] = s->trial[i];
        }
        return;
    }
    brs_wide c = d->cost_at[p];
    for (size_t r = 0; r < d->ranks; r++) {
        if (d->count[r] == d->per_rank || d->load[r] + c >= s->best) continue;
        s->trial[p] = (uint32_t)r;
        d->load[r] += c;
        d->count[r]++;
        place(s, p + 1);
        d->load[r] -= c;
        d->count[r]--;
        if (d->count[r] == 0) break; /* empty ranks are interchangeable */
    }
}

/* Whether branch and bound found a deal better than `incumbent`, written to
 * d->rank_of. */
static void deal_exact(struct deal *d, brs_wide incumbent, brs_wide floor, uint32_t *trial)
{
    uint32_t *kept = trial + d->k;
    for (size_t p = 0; p < d->k; p++) kept[p] = d->rank_of[p];
    for (size_t r = 0; r < d->ranks; r++) {
        d->load[r] = 0;
        d->count[r] = 0;
    }
    struct exact_search s = {d, trial, incumbent, floor};
    place(&s, 0);
    if (s.best == incumbent)
        for (size_t p = 0; p < d->k; p++) d->rank_of[p] = kept[p];
    recount(d);
}

/* No deal is below the objective's floor of these costs. */
static brs_wide deal_floor(const struct deal *d)
{
    brs_wide sum = 0;
    for (size_t p = 0; p < d->k; p++) sum += d->cost_at[p];
    return brs_objective_time_floor(d->cost_at[0], sum, d->ranks);
}

/* The per-step deal into d->rank_of: the best of snake, LPT + swaps, and
 * the exact search where it is small. */
static void deal_per_step(struct deal *d, uint32_t *spare)
{
    for (size_t p = 0; p < d->k; p++) d->rank_of[p] = (uint32_t)snake_rank(p, d->ranks);
    recount(d);
    brs_wide snake = max_load(d), floor = deal_floor(d);
    if (snake == floor) return;
    for (size_t p = 0; p < d->k; p++) spare[p] = d->rank_of[p];
    brs_wide sum = 0;
    for (size_t r = 0; r < d->ranks; r++) sum += d->load[r];
    d->narrow = keys_fit(d->bits, sum);
    deal_lpt(d);
    size_t rounds = d->k * d->per_rank <= SWAP_WORK ? SWAP_ROUNDS : 0;
    d->members = spare + d->k; /* free until the exact search */
    if (rounds) list_members(d);
    if (rounds && d->narrow) key_ranks(d);
    for (size_t i = 0; i < rounds && improve_once(d, floor); i++) continue;
    if (max_load(d) >= snake) { /* ties keep the snake */
        for (size_t p = 0; p < d->k; p++) d->rank_of[p] = spare[p];
        recount(d);
    }
    if (d->k <= EXACT_GROUPS && max_load(d) > floor) deal_exact(d, max_load(d), floor, spare);
}

/* Slots from ranks: each rank's groups costliest first (cost order). */
static void slots_from_ranks(uint32_t *slot_of, const struct deal *d)
{
    for (size_t r = 0; r < d->ranks; r++) d->count[r] = 0;
    for (size_t p = 0; p < d->k; p++) {
        uint32_t r = d->rank_of[p];
        slot_of[d->order[p]] = (uint32_t)(r * d->per_rank + d->count[r]++);
    }
}

brs_status brs_assign(uint32_t *slot_of, brs_wide *micro_sync, brs_wide *step_sync,
                      const brs_wide *costs, const uint32_t *cost_order,
                      const struct brs_step *step)
{
    size_t k = step->k, dp_size = step->dp_size, grad_accum = k / dp_size;
    int sync = step->sync;
    uint32_t *order = malloc(4 * k * sizeof *order);
    brs_wide *wide = malloc((k + dp_size) * sizeof *wide);
    uint32_t *count = malloc(dp_size * sizeof *count);
    unsigned bits = rank_bits(dp_size);
    size_t leaves = (size_t)1 << bits;
    uint64_t *tree = malloc(4 * leaves * sizeof *tree); /* the light and the heavy tree */
    brs_wide *cost_at = malloc(k * sizeof *cost_at);
    brs_status status = order && wide && count && tree && cost_at ? BRS_OK : BRS_ERR_NO_MEMORY;
    if (status == BRS_OK) {
        uint32_t *rank_of = order + k, *spare = order + 2 * k; /* spare: 2k */
        /* wide is free until the deal: it holds the sort's keys (2k words) */
        if (cost_order) {
            memcpy(order, cost_order, k * sizeof *order);
        } else {
            for (size_t g = 0; g < k; g++) order[g] = (uint32_t)g;
            brs_cost_sort_ids(order, k, k, costs, rank_of, (uint64_t *)(void *)wide);
        }
        for (size_t p = 0; p < k; p++) cost_at[p] = costs[order[p]];
        struct deal d = {.cost_at = cost_at,
                         .order = order,
                         .k = k,
                         .ranks = dp_size,
                         .per_rank = grad_accum,
                         .rank_of = rank_of,
                         .count = count,
                         .load = wide + k,
                         .bits = bits,
                         .light = {tree, leaves},
                         .heavy = {tree + 2 * leaves, leaves}};
        if (sync == BRS_SYNC_STEP && dp_size > 1 && grad_accum > 1) {
            deal_per_step(&d, spare);
        } else {
            for (size_t p = 0; p < k; p++) {
                /* the snake's micro-step is the block index */
                size_t micro = p / dp_size;
                slot_of[order[p]] = (uint32_t)(snake_rank(p, dp_size) * grad_accum + micro);
            }
        }
        if (sync == BRS_SYNC_STEP && dp_size > 1 && grad_accum > 1) slots_from_ranks(slot_of, &d);
        /* the times asked for, of the costs by slot (wide is free again) */
        for (size_t g = 0; g < k; g++) wide[slot_of[g]] = costs[g];
        brs_objective_sync_times(micro_sync, step_sync, wide, dp_size, grad_accum);
    }
    free(order);
    free(wide);
    free(count);
    free(tree);
    free(cost_at);
    return status;
}

/* ---- the score every candidate split is compared by, padded and packed alike (docs/algorithm.md):
 * the step time of the deal the plan will use (assign.c), then the peak tokens of a group, then
 * the total cost. */

brs_status brs_assign_score_groups(struct brs_score *score, const brs_wide *costs,
                                   const uint32_t *cost_order, uint64_t peak,
                                   const struct brs_step *step, uint32_t *slot_scratch)
{
    size_t k = step->k;
    int per_step = step->sync == BRS_SYNC_STEP;
    brs_status status = brs_assign(slot_scratch, per_step ? NULL : &score->time,
                                   per_step ? &score->time : NULL, costs, cost_order, step);
    score->peak = peak;
    score->total = 0;
    for (size_t g = 0; g < k; g++) score->total += costs[g];
    return status;
}

brs_status brs_assign_score_split(struct brs_score *score, const size_t *starts,
                                  const brs_wide *costs, const uint32_t *lengths,
                                  const struct brs_step *step, uint32_t *slot_scratch)
{
    return brs_assign_score_groups(score, costs, NULL,
                                   brs_objective_padded_peak(starts, lengths, step->k), step,
                                   slot_scratch);
}
