/* context_parallel.c - a step planned across context-parallel groups: the
 * world is dp_size blocks of cp_size ranks and every rank runs grad_accum
 * micro-steps. Each micro-batch gets a degree c (a power of two the layout
 * allows) and c ranks; a sequence of length L puts ceil(L / c) tokens on each
 * of them (a head-tail split, brs_cp_shard), never more than the cap per
 * rank. A micro-step's micro-batches fit its ranks whenever their degrees sum
 * to at most dp_size x cp_size: laid out largest degree first, each starts at
 * a multiple of its degree and stays within one block (every degree divides
 * cp_size). So a plan is: each sample's degree and micro-batch, each
 * micro-batch's micro-step, with the degrees of a micro-step within the
 * world. The objective is docs/algorithm.md's ("Context parallelism"): the
 * sum over micro-steps of the costliest micro-batch, then the most tokens a
 * rank holds, then the ranks' total cost. Small steps are searched
 * exhaustively (branch and bound within a node budget); every step first gets
 * the best of greedy candidates: a threshold on a sample's cost alone sets the
 * degrees (a long sample is spread wider when its cost would stand above the
 * rest; or one degree for every sample, as a fixed CP size would), then the
 * samples, costliest first, go where they raise the step time
 * least, spread under a target height (the area bound) or packed into the
 * first micro-steps. */
#include "planner/internal.h"
#include "util/stable_sort.h"

#include <stdlib.h>
#include <string.h>

/* The exhaustive search runs on steps of at most this many samples, and
 * gives up (keeping the greedy plan) after this many nodes. */
#define EXACT_MAX_SAMPLES 9
#define EXACT_NODE_BUDGET 2000000
/* The greedy's degree thresholds: the costs alone of this many of the
 * longest distinct lengths at each allowed degree. */
#define THRESHOLD_SAMPLES 4

/* The exchange and the latency are paid once per micro-batch by each rank
 * of its group: the keys and values of the other c - 1 ranks' tokens, and
 * the c - 1 steps of a ring (docs/algorithm.md, "Context parallelism"). The
 * work and the exchange share one ceiling, so degree 1 costs what it costs
 * without context parallelism. */
brs_wide brs_cp_cost(const struct brs_cost_model *model, const struct brs_cp_layout *cp,
                     brs_wide weights, uint64_t tokens, uint64_t degree)
{
    brs_wide exchange = (brs_wide)cp->comm * (degree - 1) * tokens;
    return model->intercept + (weights + exchange + degree - 1) / degree +
           (brs_wide)cp->latency * (degree - 1);
}

uint64_t brs_cp_least_degree(const struct brs_cp_layout *cp, uint64_t length)
{
    for (uint64_t c = 1; c <= cp->size; c <<= 1) {
        if (!(cp->degrees & (uint32_t)c)) continue;
        if (cp->max_tokens == 0 || (length + c - 1) / c <= cp->max_tokens) return c;
    }
    return 0;
}

size_t brs_cp_shard(uint64_t *ranges, uint64_t length, uint64_t degree, uint64_t i)
{
    uint64_t chunks = 2 * degree, q = length / chunks, r = length % chunks;
    uint64_t first[2] = {i, chunks - 1 - i};
    size_t count = 0;
    for (int k = 0; k < 2; k++) {
        uint64_t j = first[k];
        uint64_t start = j * q + (j < r ? j : r), end = start + q + (j < r);
        if (start == end) continue;
        if (count > 0 && ranges[2 * count - 1] == start) {
            ranges[2 * count - 1] = end; /* chunks c - 1 and c touch */
            continue;
        }
        ranges[2 * count] = start;
        ranges[2 * count + 1] = end;
        count++;
    }
    return count;
}

/* A micro-batch being built. */
struct group {
    uint32_t micro, degree, first; /* first: its smallest sorted position */
    brs_wide weights;
    uint64_t tokens, held; /* sum L, sum ceil(L / degree) */
    brs_wide cost;
};

/* A plan being built: groups, each micro-step's height (its costliest
 * group) and free ranks, each sample's group. */
struct state {
    struct group *groups;
    size_t count;
    brs_wide *height;
    uint64_t *free;
    uint32_t *group_of;
};

/* The search over one step's plans: what it keeps by sample, the plan being
 * built and the best so far. The step itself (its samples, cost model,
 * layout and topology) is read where it is, from `step`. */
struct cp_search {
    const struct brs_step *step;
    brs_wide *weight; /* n */
    uint32_t *least;  /* n: the least allowed degree */
    uint32_t *degree; /* n: the candidate's degrees */
    uint32_t *order;  /* n */
    brs_wide *alone;  /* n: each sample's cost alone at its candidate degree */
    struct state now, best;
    struct brs_score best_score;
    int have_best;
    size_t nodes;
    int exact;
};

/* The ranks of the world: dp_size blocks of cp_size. */
static uint64_t ranks_of(const struct brs_step *step)
{
    return (uint64_t)step->dp_size * step->cp.size;
}

/* The cost on each rank of sample i alone at `degree`. */
static brs_wide alone_cost(const struct cp_search *w, size_t i, uint64_t degree)
{
    return brs_cp_cost(&w->step->model, &w->step->cp, w->weight[i], w->step->lengths[i], degree);
}

static uint64_t held_of(uint32_t length, uint64_t degree)
{
    return (length + degree - 1) / degree;
}

static void state_reset(struct state *s, const struct cp_search *w)
{
    s->count = 0;
    for (size_t m = 0; m < w->step->grad_accum; m++) {
        s->height[m] = 0;
        s->free[m] = ranks_of(w->step);
    }
}

/* The objective's score (objective.c): the step time is the sum over
 * micro-steps of the costliest micro-batch, the peak the most tokens a rank
 * holds, the total the ranks' costs summed. */
static struct brs_score score_of(const struct state *s, const struct cp_search *w)
{
    struct brs_score sc = {0, 0, 0};
    for (size_t m = 0; m < w->step->grad_accum; m++) sc.time += s->height[m];
    for (size_t g = 0; g < s->count; g++) {
        if (s->groups[g].held > sc.peak) sc.peak = s->groups[g].held;
        sc.total += s->groups[g].cost * s->groups[g].degree;
    }
    return sc;
}

static void state_copy(struct state *to, const struct state *from, const struct cp_search *w)
{
    to->count = from->count;
    memcpy(to->groups, from->groups, from->count * sizeof *from->groups);
    memcpy(to->height, from->height, w->step->grad_accum * sizeof *from->height);
    memcpy(to->free, from->free, w->step->grad_accum * sizeof *from->free);
    memcpy(to->group_of, from->group_of, w->step->n * sizeof *from->group_of);
}

/* Keeps the plan being built where it scores better than the best. */
static void offer(struct cp_search *w)
{
    struct brs_score sc = score_of(&w->now, w);
    if (w->have_best && !brs_objective_better(&sc, &w->best_score)) return;
    state_copy(&w->best, &w->now, w);
    w->best_score = sc;
    w->have_best = 1;
}

/* Sample i joins group g (g == count: a new group of `degree` in `micro`). */
static void place(struct state *s, const struct cp_search *w, size_t i, size_t g, uint32_t micro,
                  uint32_t degree)
{
    uint32_t length = w->step->lengths[i];
    if (g == s->count) {
        s->groups[g] = (struct group){micro, degree, (uint32_t)i, 0, 0, 0, 0};
        s->free[micro] -= degree;
        s->count++;
    }
    struct group *gr = &s->groups[g];
    gr->weights += w->weight[i];
    gr->tokens += length;
    gr->held += held_of(length, gr->degree);
    if ((uint32_t)i < gr->first) gr->first = (uint32_t)i;
    gr->cost = brs_cp_cost(&w->step->model, &w->step->cp, gr->weights, gr->tokens, gr->degree);
    if (gr->cost > s->height[gr->micro]) s->height[gr->micro] = gr->cost;
    s->group_of[i] = (uint32_t)g;
}

/* ---- the greedy candidates ---- */

/* Costliest alone first, then widest, then in sorted order: a total order. */
static int before_by_alone(const void *context, uint32_t a, uint32_t b)
{
    const struct cp_search *w = context;
    if (w->alone[a] != w->alone[b]) return w->alone[a] > w->alone[b];
    if (w->degree[a] != w->degree[b]) return w->degree[a] > w->degree[b];
    return a < b;
}

/* The best place of sample i at `degree` in the plan being built: in a
 * group of that degree with room, or a new group where a micro-step has the
 * ranks; least rise of its micro-step above max(height, target), then least
 * cost of its group. 0 where there is none. */
static int best_place(size_t *group, uint32_t *micro, const struct cp_search *w, uint32_t i,
                      uint32_t degree, brs_wide target)
{
    const struct state *s = &w->now;
    uint32_t length = w->step->lengths[i];
    uint64_t held = held_of(length, degree);
    int found = 0;
    brs_wide best_delta = 0, best_cost = 0;
    for (size_t g = 0; g < s->count; g++) {
        const struct group *gr = &s->groups[g];
        if (gr->degree != degree) continue;
        if (w->step->cp.max_tokens && gr->held + held > w->step->cp.max_tokens) continue;
        brs_wide cost = brs_cp_cost(&w->step->model, &w->step->cp, gr->weights + w->weight[i],
                                    gr->tokens + length, degree);
        brs_wide floor = s->height[gr->micro] > target ? s->height[gr->micro] : target;
        brs_wide delta = cost > floor ? cost - floor : 0;
        if (!found || delta < best_delta || (delta == best_delta && cost < best_cost)) {
            found = 1;
            best_delta = delta, best_cost = cost, *group = g, *micro = gr->micro;
        }
    }
    brs_wide alone = alone_cost(w, i, degree);
    for (size_t m = 0; m < w->step->grad_accum; m++) {
        if (s->free[m] < degree) continue;
        brs_wide floor = s->height[m] > target ? s->height[m] : target;
        brs_wide delta = alone > floor ? alone - floor : 0;
        if (!found || delta < best_delta || (delta == best_delta && alone < best_cost)) {
            found = 1;
            best_delta = delta, best_cost = alone, *group = s->count, *micro = (uint32_t)m;
        }
    }
    return found;
}

/* One greedy plan of the candidate degrees: each sample, costliest alone
 * first, at its best place (best_place); where its degree has none, at the
 * first other allowed degree that has one (widest first: a wider group
 * takes more samples within the cap). 0 where some sample found no place. */
static int greedy(struct cp_search *w, brs_wide target)
{
    struct state *s = &w->now;
    state_reset(s, w);
    for (size_t k = 0; k < w->step->n; k++) {
        uint32_t i = w->order[k], degree = w->degree[i];
        size_t group = 0;
        uint32_t micro = 0;
        int found = best_place(&group, &micro, w, i, degree, target);
        for (uint64_t c = w->step->cp.size; !found && c >= w->least[i]; c >>= 1) {
            if (!(w->step->cp.degrees & (uint32_t)c) || c == degree) continue;
            degree = (uint32_t)c;
            found = best_place(&group, &micro, w, i, degree, target);
        }
        if (!found) return 0;
        place(s, w, i, group, micro, degree);
    }
    return 1;
}

/* The degrees of threshold h: each sample's least allowed degree at or above
 * its least whose cost alone is at most h, else its widest allowed. */
static void degrees_of(struct cp_search *w, brs_wide h)
{
    const struct brs_cp_layout *cp = &w->step->cp;
    uint64_t widest = 0;
    for (uint64_t c = 1; c <= cp->size; c <<= 1)
        if (cp->degrees & (uint32_t)c) widest = c;
    for (size_t i = 0; i < w->step->n; i++) {
        uint64_t chosen = widest;
        for (uint64_t c = w->least[i]; c <= widest; c <<= 1) {
            if (!(cp->degrees & (uint32_t)c)) continue;
            if (alone_cost(w, i, c) <= h) {
                chosen = c;
                break;
            }
        }
        w->degree[i] = (uint32_t)chosen;
        w->alone[i] = alone_cost(w, i, chosen);
    }
}

/* Greedy plans of one set of degrees: spread under the area bound, and
 * packed from the first micro-step on; each offered. */
static void greedy_candidates(struct cp_search *w, uint32_t *tmp)
{
    size_t n = w->step->n;
    for (size_t i = 0; i < n; i++) w->order[i] = (uint32_t)i;
    brs_stable_sort_ids(w->order, tmp, n, before_by_alone, w);
    brs_wide area = 0;
    for (size_t i = 0; i < n; i++) area += w->alone[i] * w->degree[i];
    brs_wide slots = (brs_wide)ranks_of(w->step) * w->step->grad_accum;
    brs_wide targets[2] = {(area + slots - 1) / slots, 0};
    for (int t = 0; t < 2; t++)
        if (greedy(w, targets[t])) offer(w);
}

/* Every sample at degree c, or the least its length needs where that is
 * wider: a fixed degree, which a plan of mixed degrees must beat. */
static void uniform_degrees(struct cp_search *w, uint64_t c)
{
    for (size_t i = 0; i < w->step->n; i++) {
        uint64_t d = w->least[i] > c ? w->least[i] : c;
        w->degree[i] = (uint32_t)d;
        w->alone[i] = alone_cost(w, i, d);
    }
}

static void run_greedy(struct cp_search *w, uint32_t *tmp)
{
    /* No threshold: every sample at its least degree. */
    degrees_of(w, BRS_WIDE_MAX >> 1);
    greedy_candidates(w, tmp);
    for (uint64_t c = 2; c <= w->step->cp.size; c <<= 1) {
        if (!(w->step->cp.degrees & (uint32_t)c)) continue;
        uniform_degrees(w, c);
        greedy_candidates(w, tmp);
    }
    size_t seen = 0;
    uint32_t last = 0;
    for (size_t i = 0; i < w->step->n && seen < THRESHOLD_SAMPLES; i++) {
        uint32_t length = w->step->lengths[i];
        if (i > 0 && length == last) continue;
        last = length;
        seen++;
        for (uint64_t c = w->least[i]; c <= w->step->cp.size; c <<= 1) {
            if (!(w->step->cp.degrees & (uint32_t)c)) continue;
            degrees_of(w, alone_cost(w, i, c));
            greedy_candidates(w, tmp);
        }
    }
}

/* ---- the exhaustive search ---- */

static brs_wide partial_time(const struct state *s, const struct cp_search *w)
{
    brs_wide t = 0;
    for (size_t m = 0; m < w->step->grad_accum; m++) t += s->height[m];
    return t;
}

/* Every place of sample i and the samples after it, in sorted order: each
 * allowed degree, each group of that degree with room, or a new group in a
 * micro-step used so far or the first unused one (the micro-steps are
 * interchangeable). Prunes on the step time, which only grows. */
static void search(struct cp_search *w, size_t i, size_t used)
{
    if (w->nodes++ > EXACT_NODE_BUDGET) {
        w->exact = 0;
        return;
    }
    struct state *s = &w->now;
    if (w->have_best && partial_time(s, w) > w->best_score.time) return;
    if (i == w->step->n) {
        offer(w);
        return;
    }
    uint32_t length = w->step->lengths[i];
    const struct brs_cp_layout *cp = &w->step->cp;
    size_t micro_steps = w->step->grad_accum;
    for (uint64_t c = w->least[i]; c <= cp->size; c <<= 1) {
        if (!(cp->degrees & (uint32_t)c)) continue;
        uint64_t held = held_of(length, c);
        size_t count = s->count;
        for (size_t g = 0; g <= count; g++) {
            uint32_t first_micro = 0, last_micro = 0;
            if (g < count) {
                const struct group *gr = &s->groups[g];
                if (gr->degree != c || (cp->max_tokens && gr->held + held > cp->max_tokens))
                    continue;
                first_micro = last_micro = gr->micro;
            } else {
                last_micro = (uint32_t)(used < micro_steps ? used : micro_steps - 1);
            }
            for (uint32_t m = first_micro; m <= last_micro; m++) {
                if (g == count && s->free[m] < c) continue;
                /* Save what place changes: the group (or the count), the
                 * micro-step's height and free ranks. */
                struct group saved = g < count ? s->groups[g] : (struct group){0};
                brs_wide height = s->height[m];
                uint64_t free = s->free[m];
                place(s, w, i, g, m, (uint32_t)c);
                search(w, i + 1, used + (g == count && m == used));
                if (g < count)
                    s->groups[g] = saved;
                else
                    s->count = count;
                s->height[m] = height;
                s->free[m] = free;
                if (!w->exact) return;
            }
        }
    }
}

/* ---- the layout and the result ---- */

/* Orders the groups of each micro-step widest first, then costliest, then by
 * their first sample (a total order), and gives them consecutive ranks. */
static int layout_before(const void *context, uint32_t a, uint32_t b)
{
    const struct group *x = &((const struct group *)context)[a],
                       *y = &((const struct group *)context)[b];
    if (x->micro != y->micro) return x->micro < y->micro;
    if (x->degree != y->degree) return x->degree > y->degree;
    if (x->cost != y->cost) return x->cost > y->cost;
    return x->first < y->first;
}

static brs_status finish(struct brs_cp_plan *out, struct cp_search *w)
{
    struct state *s = &w->best;
    size_t count = s->count, micro_steps = w->step->grad_accum;
    uint64_t ranks = ranks_of(w->step);
    uint32_t *rank_of = malloc((count + 1) * sizeof *rank_of);
    uint32_t *id = malloc((count + 1) * sizeof *id);
    uint32_t *scratch = malloc((count + 1) * sizeof *scratch);
    /* each rank's cost at each micro-step, rank-major as the sync times read them */
    brs_wide *by_slot = calloc(ranks * micro_steps, sizeof *by_slot);
    if (!rank_of || !id || !scratch || !by_slot) {
        free(rank_of), free(id), free(scratch), free(by_slot);
        return BRS_ERR_NO_MEMORY;
    }
    for (size_t g = 0; g < count; g++) id[g] = (uint32_t)g;
    brs_stable_sort_ids(id, scratch, count, layout_before, s->groups);
    uint64_t next = 0;
    uint32_t micro = 0;
    for (size_t k = 0; k < count; k++) {
        const struct group *gr = &s->groups[id[k]];
        if (k == 0 || gr->micro != micro) next = 0, micro = gr->micro;
        rank_of[id[k]] = (uint32_t)k; /* the group's new id */
        out->micro[k] = gr->micro;
        out->first_rank[k] = (uint32_t)next;
        out->degree[k] = gr->degree;
        out->tokens[k] = gr->held;
        out->cost[k] = gr->cost;
        for (uint64_t r = next; r < next + gr->degree; r++)
            by_slot[r * micro_steps + gr->micro] = gr->cost;
        next += gr->degree;
    }
    for (size_t i = 0; i < w->step->n; i++) out->group_of[i] = rank_of[s->group_of[i]];
    out->count = count;
    brs_objective_sync_times(&out->micro_sync, &out->step_sync, by_slot, ranks, micro_steps);
    out->exact = w->exact;
    free(rank_of), free(id), free(scratch), free(by_slot);
    return BRS_OK;
}

/* Bounds every plan of the step meets: a sample alone at its cheapest
 * degree (lower_bound, and a micro-step holding it), and the least rank-time of
 * every sample spread over the world (c ceil(W / c) >= W, and the
 * communication grows with the degree): objective.c's time floor. */
static void bounds(struct brs_cp_plan *out, const struct cp_search *w)
{
    const struct brs_cp_layout *cp = &w->step->cp;
    brs_wide largest = 0, area = 0;
    for (size_t i = 0; i < w->step->n; i++) {
        uint64_t c = w->least[i];
        brs_wide alone = 0; /* its cost alone at the degree where that is least */
        for (uint64_t d = c; d <= cp->size; d <<= 1) {
            if (!(cp->degrees & (uint32_t)d)) continue;
            brs_wide at = alone_cost(w, i, d);
            if (d == c || at < alone) alone = at;
        }
        if (alone > largest) largest = alone;
        /* the latency is the micro-batch's, shared by its samples: left out */
        area += w->weight[i] + (brs_wide)cp->comm * (c - 1) * w->step->lengths[i];
    }
    out->lower_bound = largest;
    out->time_lower_bound = brs_objective_time_floor(largest, area, ranks_of(w->step));
}

static int state_alloc(struct state *s, size_t n, size_t micro_steps)
{
    s->groups = malloc((n + 1) * sizeof *s->groups);
    s->height = malloc((micro_steps + 1) * sizeof *s->height);
    s->free = malloc((micro_steps + 1) * sizeof *s->free);
    s->group_of = malloc((n + 1) * sizeof *s->group_of);
    return s->groups && s->height && s->free && s->group_of;
}

static void state_free(struct state *s)
{
    free(s->groups), free(s->height), free(s->free), free(s->group_of);
}

brs_status brs_cp_plan(struct brs_cp_plan *out, const struct brs_step *step)
{
    struct cp_search w = {.step = step, .exact = 1};
    size_t n = step->n, micro_steps = step->grad_accum;
    for (size_t i = 0; i < n; i++)
        if (brs_cp_least_degree(&step->cp, step->lengths[i]) == 0) return BRS_ERR_SAMPLE_TOO_LONG;
    w.weight = malloc((n + 1) * sizeof *w.weight);
    w.alone = malloc((n + 1) * sizeof *w.alone);
    w.least = malloc((n + 1) * sizeof *w.least);
    w.degree = malloc((n + 1) * sizeof *w.degree);
    w.order = malloc((n + 1) * sizeof *w.order);
    uint32_t *tmp = malloc((n + 1) * sizeof *tmp);
    brs_status status = BRS_ERR_NO_MEMORY;
    if (w.weight && w.alone && w.least && w.degree && w.order && tmp &&
        state_alloc(&w.now, n, micro_steps) && state_alloc(&w.best, n, micro_steps)) {
        for (size_t i = 0; i < n; i++) {
            w.weight[i] = brs_sample_weight(&step->model, step->lengths[i]);
            w.least[i] = (uint32_t)brs_cp_least_degree(&step->cp, step->lengths[i]);
        }
        run_greedy(&w, tmp);
        if (n <= EXACT_MAX_SAMPLES) {
            state_reset(&w.now, &w);
            search(&w, 0, 0);
        } else {
            w.exact = 0;
        }
        status = w.have_best ? finish(out, &w) : BRS_ERR_CAP_INFEASIBLE;
        if (status == BRS_OK) bounds(out, &w);
    }
    free(w.weight), free(w.alone), free(w.least), free(w.degree), free(w.order), free(tmp);
    state_free(&w.now), state_free(&w.best);
    return status;
}
