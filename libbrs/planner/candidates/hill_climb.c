/* hill_climb.c - transformers' batch_rebalance split, as one more candidate
 * of the padded planner (docs/algorithm.md, step 5, "the peer's split").
 *
 * Users compare brs with the sampler they replace. Its split is contiguous
 * in the sorted order, so it lies in the planner's search space; carrying it
 * as a candidate (re-derived here from its documented algorithm, on the
 * library's exact integer costs) makes sure the planner never returns a
 * slower plan than it, at no more memory, where the heuristics would.
 *
 * The algorithm: K groups of near-equal size; then, while the group counts
 * do not repeat, move one sample from the costliest active group (first by
 * index on ties) to the cheapest one; a costliest group down to one sample
 * instead freezes its micro-step's groups (those ranked with it when all are
 * sorted by cost), after topping them up from the cheapest active outside
 * group without passing its cost. The counts of least spread seen win. The
 * counts are remembered by a 64-bit hash; the work is bounded (CLIMB_WORK
 * groups priced), after which the best counts so far stand, as upstream's
 * own iteration bound does. Beyond CLIMB_MAX_GROUPS groups that bound
 * leaves fewer rounds than groups, too few to move each group once, while
 * each move still reprices up to all of them: the climb is not run there.
 */
#include "draw/prng.h"
#include "planner/candidates/candidate.h"
#include "planner/internal.h"
#include "util/wide.h"

#include <stdlib.h>
#include <string.h>

/* BLOCK: the groups whose extremes are kept together (see struct climb). */
enum { CLIMB_ROUNDS_PER_GROUP = 30, CLIMB_WORK = 1 << 24, CLIMB_MAX_GROUPS = 1 << 12, BLOCK = 32 };

struct ranked {
    brs_wide cost;
    size_t group;
};

struct climb {
    const uint32_t *lengths;
    size_t k, dp_size;
    const struct brs_cost_model *model;
    size_t *counts, *best, *start; /* start: k + 1, group g is [start[g], start[g + 1]) */
    struct ranked *rank;
    brs_wide *costs;
    uint8_t *frozen, *member;
    /* The costliest and the cheapest active group of each block of BLOCK
     * groups (k: none): a round finds the extremes among the blocks', and
     * only blocks repriced since (stale) are scanned again. */
    size_t *block_hi, *block_lo;
    uint8_t *stale;
    size_t active;  /* groups not frozen */
    uint64_t *seen; /* open addressing, 0 = empty */
    size_t seen_mask;
    uint64_t hash; /* of the counts: a sum over groups, so one move updates it */
    size_t work_left;
    int narrow; /* brs_fits_64_bits */
};

static uint64_t count_hash(size_t g, size_t count)
{
    return brs_splitmix64(((uint64_t)g << 40) ^ count);
}

static void spend(struct climb *c, size_t work)
{
    c->work_left = c->work_left > work ? c->work_left - work : 0;
}

/* Whether group a costs more than group b; narrow costs compare as 64 bits. */
static BRS_ALWAYS_INLINE int costlier(const struct climb *c, size_t a, size_t b, int narrow)
{
    return brs_wide_below(c->costs[b], c->costs[a], narrow);
}

/* Candidates for the costliest (hi) and the cheapest (lo) met in index
 * order, so that ties keep the first (k: none yet, or no candidate). */
static BRS_ALWAYS_INLINE void meet(const struct climb *c, size_t *hi, size_t *lo,
                                   size_t hi_candidate, size_t lo_candidate, int narrow)
{
    if (hi_candidate != c->k && (*hi == c->k || costlier(c, hi_candidate, *hi, narrow)))
        *hi = hi_candidate;
    if (lo_candidate != c->k && (*lo == c->k || costlier(c, *lo, lo_candidate, narrow)))
        *lo = lo_candidate;
}

/* Block b's extremes found again from its groups' costs. */
static BRS_ALWAYS_INLINE void block_extremes(struct climb *c, size_t b, int narrow)
{
    size_t hi = c->k, lo = c->k, end = (b + 1) * BLOCK < c->k ? (b + 1) * BLOCK : c->k;
    brs_wide top = 0, bottom = 0; /* the costs of hi and lo */
    for (size_t g = b * BLOCK; g < end; g++) {
        if (c->frozen[g]) continue;
        brs_wide cost = c->costs[g];
        if (hi == c->k || brs_wide_below(top, cost, narrow)) hi = g, top = cost;
        if (lo == c->k || brs_wide_below(cost, bottom, narrow)) lo = g, bottom = cost;
    }
    c->block_hi[b] = hi;
    c->block_lo[b] = lo;
    c->stale[b] = 0;
}

static BRS_ALWAYS_INLINE void price_groups(struct climb *c, size_t first, size_t last, int narrow)
{
    for (size_t g = first; g <= last; g++) {
        c->start[g + 1] = c->start[g] + c->counts[g];
        uint32_t head = c->lengths[c->start[g]];
        c->costs[g] = brs_group_cost_narrow(c->model, head, c->counts[g], narrow);
    }
    memset(c->stale + first / BLOCK, 1, last / BLOCK - first / BLOCK + 1);
}

/* Prices groups first..last from their counts (start[first] is current). */
static void price(struct climb *c, size_t first, size_t last)
{
    if (c->narrow)
        price_groups(c, first, last, 1);
    else
        price_groups(c, first, last, 0);
    spend(c, last - first + 1);
}

/* One sample from group `from` to group `to`: only the groups between
 * them shift, so only they are priced again. */
static void move_sample(struct climb *c, size_t from, size_t to)
{
    c->hash += count_hash(from, c->counts[from] - 1) - count_hash(from, c->counts[from]);
    c->hash += count_hash(to, c->counts[to] + 1) - count_hash(to, c->counts[to]);
    c->counts[from]--;
    c->counts[to]++;
    price(c, from < to ? from : to, from < to ? to : from);
}

/* Whether these counts were seen before; remembers them if not. */
static int seen_before(struct climb *c)
{
    uint64_t h = c->hash | 1;
    for (size_t slot = h & c->seen_mask;; slot = (slot + 1) & c->seen_mask) {
        if (c->seen[slot] == h) return 1;
        if (c->seen[slot] == 0) {
            c->seen[slot] = h;
            return 0;
        }
    }
}

/* The cheapest active group outside the frozen micro-steps and `member`,
 * with more than one sample (first by index); k if none. */
static BRS_ALWAYS_INLINE size_t cheapest_donor_as(const struct climb *c, int narrow)
{
    size_t donor = c->k;
    brs_wide least = 0; /* donor's cost */
    for (size_t g = 0; g < c->k; g++) {
        if (c->frozen[g] || c->member[g] || c->counts[g] <= 1) continue;
        if (donor == c->k || brs_wide_below(c->costs[g], least, narrow))
            donor = g, least = c->costs[g];
    }
    return donor;
}

static size_t cheapest_donor(const struct climb *c)
{
    return c->narrow ? cheapest_donor_as(c, 1) : cheapest_donor_as(c, 0);
}

/* Costliest first, ties by index (upstream's stable descending sort). */
static int by_cost_descending(const void *x, const void *y)
{
    const struct ranked *a = x, *b = y;
    if (a->cost != b->cost) return a->cost > b->cost ? -1 : 1;
    return a->group < b->group ? -1 : a->group > b->group;
}

/* Marks the groups ranked in the same micro-step as `pivot` when all k are
 * sorted by cost. */
static void mark_micro_step(struct climb *c, size_t pivot)
{
    for (size_t g = 0; g < c->k; g++) c->rank[g] = (struct ranked){c->costs[g], g};
    qsort(c->rank, c->k, sizeof *c->rank, by_cost_descending);
    size_t at = 0;
    while (c->rank[at].group != pivot) at++;
    size_t first = at / c->dp_size * c->dp_size;
    memset(c->member, 0, c->k);
    for (size_t i = first; i < first + c->dp_size && i < c->k; i++) c->member[c->rank[i].group] = 1;
}

/* Tops up the micro-step of `pivot` (its groups cheaper than its cost), then
 * freezes it. */
static void relieve_and_freeze(struct climb *c, size_t pivot)
{
    brs_wide cap = c->costs[pivot];
    mark_micro_step(c, pivot);
    for (size_t g = 0; g < c->k; g++) {
        if (!c->member[g] || c->frozen[g] || g == pivot) continue;
        while (c->work_left > 0) {
            if (brs_group_cost(c->model, c->lengths[c->start[g]], c->counts[g] + 1) > cap) break;
            size_t donor = cheapest_donor(c);
            spend(c, c->k);
            if (donor == c->k) break;
            move_sample(c, donor, g);
        }
    }
    for (size_t g = 0; g < c->k; g++)
        if (c->member[g] && !c->frozen[g]) {
            c->frozen[g] = 1;
            c->active--;
        }
    memset(c->stale, 1, (c->k + BLOCK - 1) / BLOCK); /* without the frozen groups */
}

/* The costliest and the cheapest active group (first by index on ties),
 * from the blocks' in index order. */
static BRS_ALWAYS_INLINE void find_extremes(struct climb *c, size_t *hi, size_t *lo, int narrow)
{
    *hi = *lo = c->k;
    for (size_t b = 0; b * BLOCK < c->k; b++) {
        if (c->stale[b]) block_extremes(c, b, narrow);
        meet(c, hi, lo, c->block_hi[b], c->block_lo[b], narrow);
    }
}

/* One round; 0 when the climb is over. */
static int climb_once(struct climb *c, brs_wide *best_spread)
{
    if (seen_before(c)) return 0;
    if (c->active <= 1) return 0;
    size_t hi, lo;
    if (c->narrow)
        find_extremes(c, &hi, &lo, 1);
    else
        find_extremes(c, &hi, &lo, 0);
    brs_wide spread = c->costs[hi] - c->costs[lo];
    if (spread < *best_spread) {
        *best_spread = spread;
        memcpy(c->best, c->counts, c->k * sizeof *c->best);
    }
    if (spread == 0) return 0;
    if (c->counts[hi] > 1) {
        move_sample(c, hi, lo);
    } else {
        relieve_and_freeze(c, hi);
    }
    return 1;
}

static size_t next_power_of_two(size_t x)
{
    size_t p = 1;
    while (p < x) p <<= 1;
    return p;
}

/* The split of the step's n sorted samples into its k contiguous groups (no cap; the
 * planner checks it); BRS_ERR_TOO_LARGE beyond CLIMB_MAX_GROUPS groups. */
static brs_status climb(size_t *starts, brs_wide *costs, const uint32_t *lengths,
                        const struct brs_step *step, const struct brs_cost_model *model)
{
    size_t n = step->n, k = step->k;
    if (k > CLIMB_MAX_GROUPS) return BRS_ERR_TOO_LARGE;
    size_t rounds = CLIMB_ROUNDS_PER_GROUP * k > n ? CLIMB_ROUNDS_PER_GROUP * k : n;
    if (rounds > CLIMB_WORK / k + 1) rounds = CLIMB_WORK / k + 1;
    struct climb c = {.lengths = lengths,
                      .k = k,
                      .dp_size = step->dp_size,
                      .model = model,
                      .active = k,
                      .seen_mask = next_power_of_two(2 * rounds) - 1,
                      .work_left = CLIMB_WORK,
                      .narrow = brs_fits_64_bits(lengths, n, model)};
    size_t blocks = (k + BLOCK - 1) / BLOCK;
    c.counts = malloc(k * sizeof *c.counts);
    c.best = malloc(k * sizeof *c.best);
    c.start = malloc((k + 1) * sizeof *c.start);
    c.rank = malloc(k * sizeof *c.rank);
    c.costs = malloc(k * sizeof *c.costs);
    c.frozen = calloc(k, 1);
    c.member = calloc(k, 1);
    c.block_hi = malloc(blocks * sizeof *c.block_hi);
    c.block_lo = malloc(blocks * sizeof *c.block_lo);
    c.stale = malloc(blocks);
    c.seen = calloc(c.seen_mask + 1, sizeof *c.seen);
    brs_status status = c.counts && c.best && c.start && c.rank && c.costs && c.frozen &&
                                c.member && c.block_hi && c.block_lo && c.stale && c.seen
                            ? BRS_OK
                            : BRS_ERR_NO_MEMORY;
    if (status == BRS_OK) {
        for (size_t g = 0; g < k; g++) {
            c.counts[g] = n / k + (g < n % k);
            c.hash += count_hash(g, c.counts[g]);
        }
        c.start[0] = 0;
        price(&c, 0, k - 1);
        memcpy(c.best, c.counts, k * sizeof *c.best);
        brs_wide best_spread = BRS_WIDE_MAX;
        for (size_t r = 0; r < rounds && c.work_left > 0 && climb_once(&c, &best_spread); r++) {
        }
        starts[0] = 0;
        for (size_t g = 0; g < k; g++) {
            starts[g + 1] = starts[g] + c.best[g];
            costs[g] = brs_group_cost(model, lengths[starts[g]], c.best[g]);
        }
    }
    free(c.counts);
    free(c.best);
    free(c.start);
    free(c.rank);
    free(c.costs);
    free(c.frozen);
    free(c.member);
    free(c.block_hi);
    free(c.block_lo);
    free(c.stale);
    free(c.seen);
    return status;
}

/* Upstream's split balances ranks: with one rank there is nothing to
 * compare it with. */
static int applies(const struct brs_candidate_input *in)
{
    return in->step->dp_size > 1;
}

static brs_status build(const struct brs_candidate_input *in, struct brs_candidate_output *out)
{
    return climb(out->starts, out->costs, in->lengths, in->step, in->model);
}

/* the split of the sampler users replace, so that it never beats the plan */
const struct brs_candidate brs_hill_climb_candidate = {"transformers' batch_rebalance split",
                                                       applies, build, BRS_CANDIDATE_POLISHED};
