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
 * candidate split with it and the plan reproduce it.
 */
#include "planner/planner.h"
#include "util/cost_sort.h"
#include "util/wide.h"

#include <stdlib.h>

/* Up to this many groups the per-step partition is searched exactly. */
enum { EXACT_GROUPS = 10, SWAP_ROUNDS = 64, SWAP_WORK = 1 << 22 };

/* The snake: position p of the cost order goes to this rank. */
static size_t snake_rank(size_t position, size_t dp_size)
{
    size_t micro = position / dp_size, within = position % dp_size;
    return (micro % 2 == 0) ? within : dp_size - 1 - within;
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
    uint64_t *tree;    /* 2 * (ranks rounded up to a power of two): LPT's ranks */
    uint32_t *members; /* k: each rank's positions, ascending, per_rank apiece */
};

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

/* Longest first to the least loaded rank with room, ties by rank: each
 * rank keyed (load, rank) in one word, the least found by a tournament
 * tree over the ranks (a full rank leaves it as an all-ones key), so a
 * placement costs O(log ranks) single-word compares. Only where every
 * load fits beside the rank bits; deal_lpt otherwise. */
static int deal_lpt_tree(struct deal *d, brs_wide sum)
{
    unsigned bits = rank_bits(d->ranks);
    if (bits >= 64 || sum >= ((brs_wide)1 << (64 - bits)) - 1) return 0; /* keys below all-ones */
    size_t leaves = (size_t)1 << bits;
    uint64_t *tree = d->tree, none = ~(uint64_t)0;
    for (size_t r = 0; r < leaves; r++) tree[leaves + r] = r < d->ranks ? r : none;
    for (size_t i = leaves - 1; i > 0; i--)
        tree[i] = tree[2 * i] < tree[2 * i + 1] ? tree[2 * i] : tree[2 * i + 1];
    for (size_t r = 0; r < d->ranks; r++) {
        d->load[r] = 0;
        d->count[r] = 0;
    }
    uint64_t mask = leaves - 1;
    for (size_t p = 0; p < d->k; p++) {
        size_t best = (size_t)(tree[1] & mask);
        d->rank_of[p] = (uint32_t)best;
        d->load[best] += d->cost_at[p];
        size_t i = leaves + best;
        tree[i] = ++d->count[best] == d->per_rank ? none : ((uint64_t)d->load[best] << bits) | best;
        for (i /= 2; i > 0; i /= 2)
            tree[i] = tree[2 * i] < tree[2 * i + 1] ? tree[2 * i] : tree[2 * i + 1];
    }
    return 1;
}

/* The same deal by a scan of the ranks per placement. */
static void deal_lpt(struct deal *d, brs_wide sum)
{
    if (deal_lpt_tree(d, sum)) return;
    for (size_t r = 0; r < d->ranks; r++) {
        d->load[r] = 0;
        d->count[r] = 0;
    }
    for (size_t p = 0; p < d->k; p++) {
        size_t best = d->ranks;
        for (size_t r = 0; r < d->ranks; r++)
            if (d->count[r] < d->per_rank && (best == d->ranks || d->load[r] < d->load[best]))
                best = r;
        d->rank_of[p] = (uint32_t)best;
        d->load[best] += d->cost_at[p];
        d->count[best]++;
    }
}

/* The first position of the cost order from `from` on whose cost is below
 * `bound` (costs fall along the order): a galloping search, as the answer
 * is usually near `from`. */
static size_t first_below(const struct deal *d, size_t from, brs_wide bound)
{
    size_t lo = from, hi = from, step = 1;
    while (hi < d->k && d->cost_at[hi] >= bound) {
        lo = hi + 1;
        hi = d->k - hi > step ? hi + step : d->k;
        step *= 2;
    }
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (d->cost_at[mid] < bound)
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

/* One improving swap between the slowest rank and another: the pair whose
 * exchange lowers the larger of the two loads the most, the first such
 * pair in cost order. Returns 0 when no swap improves, or the slowest rank
 * is at the floor already. A swap of x for y beats `best_after` only if
 * cy < cx - (top - best_after) and cy > cx - best_after + (the least load),
 * so each x of the slowest rank scans that window of the cost order alone:
 * the same pair as a scan of every pair, found in O(window) instead of
 * O(k) per x. */
static int improve_once(struct deal *d, brs_wide floor)
{
    size_t slow = 0, light = 0;
    for (size_t r = 1; r < d->ranks; r++) {
        if (d->load[r] > d->load[slow]) slow = r;
        if (d->load[r] < d->load[light]) light = r;
    }
    brs_wide top = d->load[slow], best_after = top, least = d->load[light];
    if (top <= floor) return 0; /* nothing is below the floor */
    size_t best_x = 0, best_y = 0, start = 0;
    for (size_t i = 0; i < d->per_rank; i++) {
        size_t x = d->members[slow * d->per_rank + i];
        brs_wide cx = d->cost_at[x];
        if (cx <= top - best_after) continue;
        /* x falls in cost and best_after only drops: the window's start only
         * advances, and it lies past x (its cost is below cx) */
        start = first_below(d, start > x ? start : x + 1, cx - (top - best_after));
        for (size_t y = start; y < d->k; y++) {
            brs_wide cy = d->cost_at[y];
            if (cy + best_after <= cx + least) break; /* costs only fall from here */
            size_t other = d->rank_of[y];
            if (other == slow) continue;
            brs_wide delta = cx - cy, mine = top - delta, theirs = d->load[other] + delta;
            brs_wide after = mine > theirs ? mine : theirs;
            if (after < best_after) {
                best_after = after;
                best_x = x;
                best_y = y;
            }
        }
    }
    if (best_after == top) return 0;
    uint32_t other = d->rank_of[best_y];
    brs_wide delta = d->cost_at[best_x] - d->cost_at[best_y];
    d->rank_of[best_x] = other;
    d->rank_of[best_y] = (uint32_t)slow;
    d->load[slow] -= delta;
    d->load[other] += delta;
    replace_member(d, slow, (uint32_t)best_x, (uint32_t)best_y);
    replace_member(d, other, (uint32_t)best_y, (uint32_t)best_x);
    return 1;
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

/* max(largest cost, ceil(sum / ranks)): no deal is below it. */
static brs_wide deal_floor(const struct deal *d)
{
    brs_wide sum = 0;
    for (size_t p = 0; p < d->k; p++) sum += d->cost_at[p];
    brs_wide average = (sum + d->ranks - 1) / d->ranks, largest = d->cost_at[0];
    return average > largest ? average : largest;
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
    deal_lpt(d, sum);
    size_t rounds = d->k * d->per_rank <= SWAP_WORK ? SWAP_ROUNDS : 0;
    d->members = spare + d->k; /* free until the exact search */
    if (rounds) list_members(d);
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

/* Both synchronised times of a deal given as slot_of. */
static void sync_times_of_slots(brs_wide *micro_sync, brs_wide *step_sync, const brs_wide *costs,
                                const uint32_t *slot_of, size_t k, size_t dp_size,
                                brs_wide *by_slot)
{
    size_t grad_accum = k / dp_size;
    for (size_t g = 0; g < k; g++) by_slot[slot_of[g]] = costs[g];
    *micro_sync = 0;
    for (size_t m = 0; m < grad_accum; m++) {
        brs_wide worst = 0;
        for (size_t r = 0; r < dp_size; r++)
            if (by_slot[r * grad_accum + m] > worst) worst = by_slot[r * grad_accum + m];
        *micro_sync += worst;
    }
    *step_sync = 0;
    for (size_t r = 0; r < dp_size; r++) {
        brs_wide sum = 0;
        for (size_t m = 0; m < grad_accum; m++) sum += by_slot[r * grad_accum + m];
        if (sum > *step_sync) *step_sync = sum;
    }
}

brs_status brs_assign(uint32_t *slot_of, brs_wide *micro_sync, brs_wide *step_sync,
                      const brs_wide *costs, size_t k, size_t dp_size, int sync)
{
    size_t grad_accum = k / dp_size;
    uint32_t *order = malloc(4 * k * sizeof *order);
    brs_wide *wide = malloc((k + dp_size) * sizeof *wide);
    uint32_t *count = malloc(dp_size * sizeof *count);
    uint64_t *tree = malloc(4 * dp_size * sizeof *tree); /* 2 * leaves, leaves < 2 * dp_size */
    brs_wide *cost_at = malloc(k * sizeof *cost_at);
    brs_status status = order && wide && count && tree && cost_at ? BRS_OK : BRS_ERR_NO_MEMORY;
    if (status == BRS_OK) {
        uint32_t *rank_of = order + k, *spare = order + 2 * k; /* spare: 2k */
        /* wide is free until the deal: it holds the sort's keys (2k words) */
        for (size_t g = 0; g < k; g++) order[g] = (uint32_t)g;
        brs_cost_sort_ids(order, k, k, costs, rank_of, (uint64_t *)(void *)wide);
        for (size_t p = 0; p < k; p++) cost_at[p] = costs[order[p]];
        struct deal d = {cost_at, order, k, dp_size, grad_accum, rank_of, count, wide + k, tree, NULL};
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
        sync_times_of_slots(micro_sync, step_sync, costs, slot_of, k, dp_size, wide);
    }
    free(order);
    free(wide);
    free(count);
    free(tree);
    free(cost_at);
    return status;
}
