/* packed.c - packed mode (varlen attention, no padding): a group costs
 * intercept + sum w(L) and holds sum L tokens. Contiguity does not hold
 * here: the first plan is LPT (packed.c), and the rows of
 * candidates/packed.def are tried against it, each scored under the
 * planner's objective (docs/algorithm.md, step 7) and kept where it meets
 * the cap and scores better; ties keep the earlier plan. A cap that no
 * packing meets is reported with the fewest groups that do where a search
 * settles it (below). */
#include "planner/internal.h"
#include "planner/candidates/candidate.h"
#include "util/heap.h"
#include "util/wide.h"

#include <stdlib.h>
#include <string.h>

/* ---- packed mode's cap is bin packing: the count of groups a bound proves necessary, first-fit
 * decreasing, and for small steps an exact search for any packing and for the fewest groups that
 * pack. LPT falls back on them where it misses a packing under the cap, and the packed
 * planner names the fewest groups when the cap cannot be met. */

static size_t bin_packing_bound(const uint32_t *lengths, size_t n, uint64_t cap)
{
    brs_wide tokens = 0;
    size_t over_half = 0;
    for (size_t i = 0; i < n; i++) {
        tokens += lengths[i];
        if ((uint64_t)lengths[i] * 2 > cap) over_half++;
    }
    size_t by_tokens = (size_t)((tokens + cap - 1) / cap);
    return by_tokens > over_half ? by_tokens : over_half;
}

/* First-fit decreasing, the second try when LPT misses a packing under the
 * cap: each sample (longest first) to the lowest-numbered group with room,
 * found in O(log k) by a max tree of the room left. Groups left empty then
 * take a sample from a group holding several (room only grows there). */
struct room_tree {
    uint64_t *room; /* 2 * size nodes; leaves at size + g */
    size_t size;
};

static void room_set(struct room_tree *t, size_t g, uint64_t room)
{
    size_t i = t->size + g;
    t->room[i] = room;
    for (i /= 2; i >= 1; i /= 2)
        t->room[i] = t->room[2 * i] > t->room[2 * i + 1] ? t->room[2 * i] : t->room[2 * i + 1];
}

static size_t room_first_fit(const struct room_tree *t, uint64_t need)
{
    if (t->room[1] < need) return SIZE_MAX;
    size_t i = 1;
    while (i < t->size) i = t->room[2 * i] >= need ? 2 * i : 2 * i + 1;
    return i - t->size;
}

static void fill_empty_groups(uint32_t *group_of, size_t k, size_t *count)
{
    size_t donor = 0;
    for (size_t g = 0; g < k; g++) {
        if (count[g] > 0) continue;
        while (count[group_of[donor]] < 2) donor++; /* n >= k: a donor exists */
        count[group_of[donor]]--;
        group_of[donor] = (uint32_t)g;
        count[g] = 1;
    }
}

static int bin_packing_first_fit(uint32_t *group_of, const uint32_t *lengths, size_t n, size_t k,
                                 uint64_t cap)
{
    struct room_tree t = {NULL, 1};
    while (t.size < k) t.size *= 2;
    t.room = calloc(2 * t.size, sizeof *t.room);
    size_t *count = calloc(k, sizeof *count);
    int packed = t.room && count;
    for (size_t g = 0; packed && g < k; g++) room_set(&t, g, cap);
    for (size_t i = 0; packed && i < n; i++) {
        size_t g = room_first_fit(&t, lengths[i]);
        if (g == SIZE_MAX) {
            packed = 0;
            break;
        }
        group_of[i] = (uint32_t)g;
        count[g]++;
        room_set(&t, g, t.room[t.size + g] - lengths[i]);
    }
    if (packed) fill_empty_groups(group_of, k, count);
    free(t.room);
    free(count);
    return packed;
}

/* When LPT misses a packing under the cap, a depth-first search over
 * placements (longest first; groups of equal tokens are interchangeable, so
 * only the first is tried) settles small steps exactly. */
enum { SEARCH_MAX_SAMPLES = 256, SEARCH_MAX_NODES = 200000 };

struct search {
    const uint32_t *lengths;
    size_t n, k, empty, nodes;
    uint64_t cap, *tokens;
    uint32_t *group_of;
};

/* 1: packed, 0: proven impossible, -1: gave up. */
static int search_from(struct search *s, size_t i)
{
    if (i == s->n) return 1;
    if (s->n - i < s->empty) return 0; /* every group needs a sample */
    if (++s->nodes > SEARCH_MAX_NODES) return -1;
    for (size_t g = 0; g < s->k; g++) {
        if (s->tokens[g] + s->lengths[i] > s->cap) continue;
        size_t twin = 0;
        while (twin < g && s->tokens[twin] != s->tokens[g]) twin++;
        if (twin < g) continue;
        s->empty -= s->tokens[g] == 0;
        s->tokens[g] += s->lengths[i];
        s->group_of[i] = (uint32_t)g;
        int found = search_from(s, i + 1);
        s->tokens[g] -= s->lengths[i];
        s->empty += s->tokens[g] == 0;
        if (found != 0) return found;
    }
    return 0;
}

static int bin_packing_search(uint32_t *group_of, const uint32_t *lengths, size_t n, size_t k,
                              uint64_t cap)
{
    if (n > SEARCH_MAX_SAMPLES) return -1;
    uint64_t *tokens = calloc(k, sizeof *tokens);
    if (!tokens) return -1;
    struct search s = {lengths, n, k, k, 0, cap, tokens, group_of};
    int found = search_from(&s, 0);
    free(tokens);
    return found;
}

static size_t bin_packing_fewest_groups(uint32_t *group_of, const uint32_t *lengths, size_t n,
                                        size_t k, uint64_t cap)
{
    for (size_t groups = k + 1; groups <= n; groups++) {
        int found = bin_packing_search(group_of, lengths, n, groups, cap);
        if (found == 1) return groups;
        if (found < 0) return 0;
    }
    return n;
}

/* ---- packed mode's first plan: longest sample first, each to the least loaded group that has room
 * under the token cap (LPT). Where it misses a packing under the cap, first-fit decreasing and
 * then (small steps) an exact search try (below) before the cap is reported infeasible. */

/* Place sample i in the least loaded group with room; groups without room
 * are set aside (in `full`) and put back after. Returns 0 if none has room. */
static int place(struct brs_heap *h, brs_wide *loads, uint64_t *tokens, uint32_t *full,
                 uint32_t *group_of, size_t i, uint32_t length, brs_wide weight, uint64_t cap)
{
    size_t set_aside = 0;
    int placed = 0;
    while (h->size > 0) {
        uint32_t g = brs_heap_top(h);
        if (cap == 0 || tokens[g] + length <= cap) {
            loads[g] += weight;
            tokens[g] += length;
            group_of[i] = g;
            brs_heap_update_top(h);
            placed = 1;
            break;
        }
        full[set_aside++] = g;
        brs_heap_pop(h);
    }
    for (size_t j = 0; j < set_aside; j++) brs_heap_push(h, full[j]);
    return placed;
}

static brs_status lpt_split(struct brs_split *split, const uint32_t *lengths, size_t n, size_t k,
                            const struct brs_cost_model *model, uint32_t *scratch)
{
    uint64_t cap = model->max_tokens;
    brs_wide *loads = split->costs;
    uint64_t *tokens = calloc(k, sizeof *tokens);
    struct brs_heap h = {malloc(k * sizeof *h.entries), 0, loads, 0};
    if (!tokens || !h.entries) {
        free(tokens);
        free(h.entries);
        return BRS_ERR_NO_MEMORY;
    }
    uint32_t *full = scratch;
    /* All loads start equal, so ids in order already form a heap. */
    for (size_t g = 0; g < k; g++) loads[g] = model->intercept;
    brs_heap_fill_in_order(&h, k);
    int packed = 1;
    for (size_t i = 0; packed && i < n; i++)
        packed = place(&h, loads, tokens, full, split->group_of, i, lengths[i],
                       brs_sample_weight(model, lengths[i]), cap);
    free(tokens);
    free(h.entries);
    if (packed) return BRS_OK;
    if (!bin_packing_first_fit(split->group_of, lengths, n, k, cap)) {
        int found = bin_packing_search(split->group_of, lengths, n, k, cap);
        if (found != 1) {
            split->needed =
                found == 0 ? bin_packing_fewest_groups(split->group_of, lengths, n, k, cap) : 0;
            return BRS_ERR_CAP_INFEASIBLE;
        }
    }
    for (size_t g = 0; g < k; g++) loads[g] = model->intercept;
    for (size_t i = 0; i < n; i++)
        loads[split->group_of[i]] += brs_sample_weight(model, lengths[i]);
    return BRS_OK;
}

/* A packing's costs and tokens per group and its score under the planner's
 * objective (objective.c); 0 when it breaks the cap. */
struct packing {
    uint32_t *group_of;
    brs_wide *costs;
    uint64_t *tokens;
    struct brs_score score;
};

static int score_packing(struct packing *p, const struct brs_candidate_input *in,
                         uint32_t *slot_scratch, brs_status *status)
{
    size_t k = in->step->k;
    const struct brs_cost_model *model = in->model;
    for (size_t g = 0; g < k; g++) {
        p->costs[g] = model->intercept;
        p->tokens[g] = 0;
    }
    for (size_t i = 0; i < in->step->n; i++) {
        p->costs[p->group_of[i]] += brs_sample_weight(model, in->lengths[i]);
        p->tokens[p->group_of[i]] += in->lengths[i];
    }
    uint64_t peak = 0;
    for (size_t g = 0; g < k; g++)
        if (p->tokens[g] > peak) peak = p->tokens[g];
    if (model->max_tokens && peak > model->max_tokens) return 0;
    *status = brs_assign_score_groups(&p->score, p->costs, NULL, peak, in->step, slot_scratch);
    return *status == BRS_OK;
}

/* The best packing so far (in the caller's split), its score once a row
 * has been built (scored), and room for a row's packing. */
struct contest {
    struct brs_split *split;
    struct brs_candidate_input in;
    struct brs_candidate_output out;
    uint64_t *tokens; /* k */
    uint32_t *slots;  /* k */
    struct brs_score best;
    int scored;
};

/* The row's packing in c->out replaces the plan when it meets the cap and
 * scores better. */
static brs_status consider(struct contest *c)
{
    brs_status status = BRS_OK;
    if (!c->scored) {
        struct packing kept = {c->split->group_of, c->split->costs, c->tokens, {0, 0, 0}};
        score_packing(&kept, &c->in, c->slots, &status);
        c->best = kept.score;
        c->scored = 1;
        if (status != BRS_OK) return status;
    }
    struct packing row = {c->out.group_of, c->out.costs, c->tokens, {0, 0, 0}};
    if (!score_packing(&row, &c->in, c->slots, &status) ||
        !brs_objective_better(&row.score, &c->best))
        return status;
    c->best = row.score;
    memcpy(c->split->group_of, row.group_of, c->in.step->n * sizeof *row.group_of);
    memcpy(c->split->costs, row.costs, c->in.step->k * sizeof *row.costs);
    return BRS_OK;
}

static const struct brs_candidate *const CANDIDATES[] = {
#define BRS_CANDIDATE(file) &brs_##file##_candidate,
#include "planner/candidates/packed.def"
#undef BRS_CANDIDATE
};

/* The table's rows against the plan in c->split. A row over its work
 * bound (BRS_ERR_TOO_LARGE) gives no candidate; its other errors are the
 * step's. */
static brs_status walk(struct contest *c)
{
    for (size_t i = 0; i < sizeof CANDIDATES / sizeof CANDIDATES[0]; i++) {
        const struct brs_candidate *row = CANDIDATES[i];
        if (row->applies && !row->applies(&c->in)) continue;
        brs_status status = row->build(&c->in, &c->out);
        if (status == BRS_ERR_TOO_LARGE) continue;
        if (status == BRS_OK) status = consider(c);
        if (status != BRS_OK) return status;
    }
    return BRS_OK;
}

static brs_status try_candidates(struct brs_split *split, const struct brs_step *step,
                                 uint32_t *scratch)
{
    size_t n = step->n, k = step->k;
    struct contest c = {split,
                        {.step = step, .lengths = step->lengths, .model = &step->model},
                        {NULL, malloc(n * sizeof(uint32_t)), malloc(k * sizeof(brs_wide))},
                        malloc(k * sizeof(uint64_t)),
                        scratch,
                        {0, 0, 0},
                        0};
    brs_status status = c.out.group_of && c.out.costs && c.tokens ? walk(&c) : BRS_ERR_NO_MEMORY;
    free(c.out.group_of);
    free(c.out.costs);
    free(c.tokens);
    return status;
}

brs_status brs_packed_split(struct brs_split *split, const struct brs_step *step, uint32_t *scratch)
{
    const uint32_t *lengths = step->lengths;
    const struct brs_cost_model *model = &step->model;
    size_t n = step->n, k = step->k;
    uint64_t cap = model->max_tokens;
    if (cap) {
        size_t needed = bin_packing_bound(lengths, n, cap);
        if (needed > k) {
            /* The bound is only a floor: name the least count that packs
             * where the search settles it (brs.h promises that number). */
            size_t least = bin_packing_fewest_groups(split->group_of, lengths, n, needed - 1, cap);
            split->needed = least > 0 ? least : needed;
            return BRS_ERR_CAP_INFEASIBLE;
        }
    }
    brs_status status = lpt_split(split, lengths, n, k, model, scratch);
    if (status == BRS_OK) status = try_candidates(split, step, scratch);
    if (status != BRS_OK) return status;
    split->lower_bound = brs_objective_packed_bound(lengths, n, k, model, &split->weight_sum);
    split->max_cost = brs_objective_largest(split->costs, k);
    return BRS_OK;
}
