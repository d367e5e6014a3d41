/* vocabulary.c - the sampler's shape vocabulary: at most max_shapes
 * (batch size, padded length) pairs that every micro-batch of the run has,
 * chosen once from the lengths and the configuration, the same on every
 * rank and for every epoch (docs/algorithm.md, "Shape vocabulary").
 *
 * Two parts. The safety shapes make every step plannable whatever it
 * draws: a step of n samples in K groups can always be cut into groups of
 * n / K and n / K + 1 samples, each padded to the longest sample of the
 * dataset. The rest are chosen from the data: the steps of two epochs,
 * planned without a vocabulary, give the shapes balanced plans want and how
 * often; shapes are added one at a time, each the one that most lowers the
 * modelled cost of running those micro-batches at their vocabulary shapes
 * (a micro-batch whose size has no shape long enough is priced at the
 * longest sample's length). With max_shapes_search, a seeded search then
 * moves one shape at a time against the sampled steps' planned time. */
#include "api/internal.h"
#include "draw/prng.h"
#include "planner/planner.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Steps planned to see what shapes balanced plans want: up to this many
 * per epoch, evenly spread, over the first SAMPLED_EPOCHS epochs. */
#define SAMPLED_STEPS 128
#define SAMPLED_EPOCHS 2
#define SAMPLED_GROUPS ((size_t)1 << 20)
/* Of those, the full steps that candidate vocabularies are tried on, and
 * how many candidates each round tries. */
#define TRIAL_STEPS 64
#define TRIAL_LENGTHS ((size_t)1 << 22)
#define CANDIDATES 40
/* The fallback ladder takes at most 1 / FALLBACK_SHARE of the room. */
#define FALLBACK_SHARE 4
/* The percentage of the room the iso-cost ladder takes (two shapes a rung). */
#define ISO_COST_SHARE 50
/* The cells of the planner's tables that trying candidates may fill in all
 * (about a second here). */
#define TRIAL_WORK ((uint64_t)400000000)
/* The same for the swaps that follow. */
#define SWAP_WORK ((uint64_t)2000000000)
/* The search of max_shapes_search moves starts by keeping a move that makes
 * the trial steps up to this many thousandths slower, a threshold that
 * falls linearly to zero (threshold accepting, Dueck and Scheuer 1990):
 * early moves leave the greedy choice's local optimum, late ones only
 * improve. On lognormal (4x2x8, padded to 64, 5,000 moves), 2 planned a
 * held-out epoch 0.5% faster than 5. */
#define SEARCH_THRESHOLD 2

/* A shape the plans used, and how often. */
struct used {
    uint32_t size, length;
    uint64_t count;
};

/* The shapes chosen so far. */
struct chosen {
    uint32_t *sizes, *lengths;
    size_t count;
};

/* The steps that candidate vocabularies are tried on: their samples'
 * padded lengths, sorted longest first, n each. */
struct trial_steps {
    uint32_t *lengths; /* count x n, room for capacity x n */
    size_t count, capacity, n, k, dp_size;
    int sync;
    const struct brs_cost_model *model;
};

static int has_shape(const struct chosen *c, uint32_t size, uint32_t length)
{
    for (size_t i = 0; i < c->count; i++)
        if (c->sizes[i] == size && c->lengths[i] == length) return 1;
    return 0;
}

static void add_shape(struct chosen *c, uint32_t size, uint32_t length)
{
    if (has_shape(c, size, length)) return;
    c->sizes[c->count] = size;
    c->lengths[c->count++] = length;
}

/* The step sizes a run plans: B, and a kept last step's (topped up to K). */
static size_t step_sizes(size_t *sizes, const brs_sampler *s)
{
    const struct brs_config *c = &s->config;
    size_t k = (size_t)(c->dp_size * c->grad_accum), b = (size_t)c->batch_size * k, count = 0;
    if (s->count >= b) sizes[count++] = b;
    if (!c->drop_last && s->count % b != 0) {
        size_t rest = s->count % b;
        sizes[count++] = rest < k ? k : rest;
    }
    return count;
}

/* The safety shapes (n / K and n / K + 1 samples at the longest padded
 * length) of every step size the cap admits; *guaranteed says whether
 * every one did. */
static void add_safety(struct chosen *c, int *guaranteed, const brs_sampler *s, uint32_t longest)
{
    size_t sizes[2], k = (size_t)(s->config.dp_size * s->config.grad_accum);
    size_t count = step_sizes(sizes, s);
    uint64_t cap = (uint64_t)s->config.max_tokens;
    *guaranteed = 1;
    for (size_t i = 0; i < count; i++) {
        size_t q = sizes[i] / k, r = sizes[i] % k;
        for (size_t b = q; b <= q + (r > 0); b++) {
            if (cap && (uint64_t)b * longest > cap)
                *guaranteed = 0;
            else
                add_shape(c, (uint32_t)b, longest);
        }
    }
}

/* The even split of a full step (batch_size samples a group) at halves of
 * the longest padded length, down to `floor`: whatever a step
 * draws, a fallback no worse than fixed-size groups padded to about twice
 * their longest sample, where the safety shapes alone pad every group to
 * the longest of the dataset. At most `rungs` lengths, within the cap. */
static void add_fallback(struct chosen *c, size_t rungs, const brs_sampler *s, uint32_t longest,
                         uint32_t floor)
{
    const struct brs_config *cfg = &s->config;
    uint64_t multiple = (uint64_t)cfg->pad_to_multiple_of, cap = (uint64_t)cfg->max_tokens;
    uint64_t size = (uint64_t)cfg->batch_size, length = longest;
    for (size_t r = 0; r < rungs; r++) {
        length = (length / 2 + multiple - 1) / multiple * multiple;
        if (length < floor || length == 0) break;
        if (cap && size * length > cap) continue;
        add_shape(c, (uint32_t)size, (uint32_t)length);
    }
}

/* The steps of an epoch that are planned to see what plans want: up to
 * SAMPLED_STEPS, fewer where a step has so many micro-batches that their
 * shapes would pass SAMPLED_GROUPS; at least one. */
static size_t sampled_steps(uint64_t steps, size_t k)
{
    size_t most = SAMPLED_GROUPS / (SAMPLED_EPOCHS * k);
    if (most > SAMPLED_STEPS) most = SAMPLED_STEPS;
    if (most == 0) most = 1;
    return steps < most ? (size_t)steps : most;
}

static int compare_used(const void *a, const void *b)
{
    const struct used *x = a, *y = b;
    if (x->size != y->size) return x->size < y->size ? -1 : 1;
    return x->length < y->length ? -1 : x->length > y->length;
}

/* The distinct shapes of every group of the sampled steps, with counts;
 * *count gets how many. */
static brs_status collect_used(struct used **out, size_t *count, struct trial_steps *t,
                               const brs_sampler *s, brs_plan *plan)
{
    uint64_t steps = brs_settings_steps(s);
    size_t k = (size_t)(s->config.dp_size * s->config.grad_accum);
    size_t per_epoch = sampled_steps(steps, k);
    size_t total = per_epoch * SAMPLED_EPOCHS * k, kept = 0;
    struct used *all = malloc(total * sizeof *all);
    if (!all) return BRS_ERR_NO_MEMORY;
    for (uint64_t epoch = 0; epoch < SAMPLED_EPOCHS; epoch++)
        for (size_t i = 0; i < per_epoch; i++) {
            uint64_t step = (uint64_t)i * steps / per_epoch;
            brs_status status = brs_step_plan(plan, s, epoch, step, NULL);
            if (status != BRS_OK) {
                free(all);
                return status;
            }
            size_t every = per_epoch * SAMPLED_EPOCHS / t->capacity + 1,
                   seen = epoch * per_epoch + i;
            if (plan->num_samples == t->n && seen % every == 0 && t->count < t->capacity)
                memcpy(t->lengths + t->n * t->count++, plan->planned_length,
                       t->n * sizeof *t->lengths);
            for (size_t slot = 0; slot < k; slot++) {
                uint32_t size = (uint32_t)(plan->slot_start[slot + 1] - plan->slot_start[slot]);
                if (size == 0) continue;
                /* a packed micro-batch is one row: its shape is (1, padded total) */
                all[kept++] = s->config.packed
                                  ? (struct used){1, (uint32_t)plan->padded[slot], 1}
                                  : (struct used){size, (uint32_t)(plan->padded[slot] / size), 1};
            }
        }
    qsort(all, kept, sizeof *all, compare_used);
    size_t distinct = 0;
    for (size_t i = 0; i < kept; i++) {
        if (distinct > 0 && compare_used(&all[distinct - 1], &all[i]) == 0)
            all[distinct - 1].count++;
        else
            all[distinct++] = all[i];
    }
    *out = all;
    *count = distinct;
    return BRS_OK;
}

/* What running the used shapes at the chosen ones costs above their own
 * cost, in cost units: the modelled price of the vocabulary. */
static brs_wide excess(const struct chosen *c, const struct used *used, size_t used_count,
                       const struct brs_cost_model *model, uint32_t longest)
{
    brs_wide total = 0;
    for (size_t u = 0; u < used_count; u++) {
        uint32_t best = 0;
        for (size_t i = 0; i < c->count; i++)
            if (c->sizes[i] == used[u].size && c->lengths[i] >= used[u].length &&
                (best == 0 || c->lengths[i] < best))
                best = c->lengths[i];
        uint32_t at = best ? best : (longest > used[u].length ? longest : used[u].length);
        total += (brs_wide)used[u].count * (brs_group_cost(model, at, used[u].size) -
                                            brs_group_cost(model, used[u].length, used[u].size));
    }
    return total;
}

/* The summed quick step time (planner/vocabulary.c) of the trial steps
 * within the shapes chosen, or the all-ones value where one cannot plan. */
static brs_wide trial_time(const struct chosen *c, const struct trial_steps *t)
{
    struct brs_vocabulary v;
    if (brs_vocabulary_build(&v, c->sizes, c->lengths, c->count) != BRS_OK) return BRS_WIDE_MAX;
    brs_wide total = 0;
    for (size_t i = 0; i < t->count && total != BRS_WIDE_MAX; i++) {
        brs_wide time = brs_vocabulary_quick_time(t->lengths + i * t->n, t->n, t->k, t->dp_size,
                                                  t->sync, t->model, &v);
        total = time == BRS_WIDE_MAX ? time : total + time;
    }
    brs_vocabulary_free(&v);
    return total;
}

/* The used shapes not chosen yet, the CANDIDATES that lower the excess
 * most first, into pick[]; returns how many. */
static size_t best_by_excess(size_t *pick, const struct chosen *c, const struct used *used,
                             size_t used_count, const struct brs_cost_model *model,
                             uint32_t longest)
{
    brs_wide gain[CANDIDATES];
    size_t picked = 0;
    brs_wide current = excess(c, used, used_count, model, longest);
    for (size_t u = 0; u < used_count; u++) {
        struct chosen trial = *c;
        size_t before = trial.count;
        add_shape(&trial, used[u].size, used[u].length);
        if (trial.count == before) continue;
        brs_wide g = current - excess(&trial, used, used_count, model, longest);
        size_t at = picked < CANDIDATES ? picked++ : CANDIDATES;
        while (at > 0 && gain[at - 1] < g) {
            if (at < CANDIDATES) {
                gain[at] = gain[at - 1];
                pick[at] = pick[at - 1];
            }
            at--;
        }
        if (at < CANDIDATES) {
            gain[at] = g;
            pick[at] = u;
        }
    }
    return picked;
}

/* The median cost of the used micro-batches, by bisection over costs. */
static brs_wide median_cost(const struct used *used, size_t used_count, uint64_t groups,
                            const struct brs_cost_model *model)
{
    brs_wide lo = 0, hi = 0;
    for (size_t u = 0; u < used_count; u++) {
        brs_wide cost = brs_group_cost(model, used[u].length, used[u].size);
        if (cost > hi) hi = cost;
    }
    while (lo < hi) {
        brs_wide mid = lo + (hi - lo) / 2;
        uint64_t below = 0;
        for (size_t u = 0; u < used_count; u++)
            if (brs_group_cost(model, used[u].length, used[u].size) <= mid) below += used[u].count;
        if (2 * below >= groups)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

/* The shortest used length at or above which `want` of the used
 * micro-batches lie, counted from the shortest (used is sorted by size). */
static uint32_t quantile_length(const struct used *used, size_t used_count, uint64_t want)
{
    uint32_t last = 0;
    uint64_t seen = 0;
    for (;;) {
        uint32_t next = UINT32_MAX;
        for (size_t u = 0; u < used_count; u++)
            if (used[u].length > last && used[u].length < next) next = used[u].length;
        if (next == UINT32_MAX) return last;
        for (size_t u = 0; u < used_count; u++)
            if (used[u].length == next) seen += used[u].count;
        last = next;
        if (seen >= want) return last;
    }
}

/* A rung: the two batch sizes at `length` whose cost is nearest `cost`
 * (below and above), within the cap. */
static void add_rung(struct chosen *c, uint32_t length, brs_wide cost,
                     const struct brs_cost_model *model)
{
    brs_wide weight = brs_sample_weight(model, length);
    if (weight == 0) return; /* no length: no rung */
    uint64_t size = cost > model->intercept ? (uint64_t)((cost - model->intercept) / weight) : 0;
    if (size == 0) size = 1;
    if (size > UINT32_MAX - 1) size = UINT32_MAX - 1;
    if (model->max_tokens && (size + 1) * length > model->max_tokens) return;
    add_shape(c, (uint32_t)size, length);
    add_shape(c, (uint32_t)size + 1, length);
}

/* An iso-cost ladder of `rungs` rungs: balanced plans make micro-batches of
 * about equal cost, and two sizes a rung let a step's sizes add up to its
 * sample count. Most rungs sit at quantiles of the used micro-batches'
 * lengths, where the micro-batches are; a third halve the longest of them
 * down to the one below, so that a rare long sample is padded at most to
 * twice its length instead of to the longest. */
static void add_iso_cost(struct chosen *c, size_t rungs, const struct used *used, size_t used_count,
                         const struct brs_cost_model *model, uint64_t multiple)
{
    uint64_t groups = 0;
    for (size_t u = 0; u < used_count; u++) groups += used[u].count;
    if (groups == 0 || rungs == 0) return;
    brs_wide cost = median_cost(used, used_count, groups, model);
    size_t tail = rungs / 3, body = rungs - tail;
    uint32_t top = 0, below_top = 0;
    for (size_t r = 1; r <= body; r++) {
        uint32_t length = quantile_length(used, used_count, (groups * r + body - 1) / body);
        if (length > top) {
            below_top = top;
            top = length;
        } else if (length < top && length > below_top) {
            below_top = length;
        }
        add_rung(c, length, cost, model);
    }
    for (size_t r = 0, length = top; r < tail; r++) {
        length = (size_t)((length / 2 + multiple - 1) / multiple * multiple);
        if (length <= below_top) break;
        add_rung(c, (uint32_t)length, cost, model);
    }
}

/* Swaps a chosen shape (past the first `fixed`, the safety shapes) for a
 * used one wherever that plans the trial steps faster, first improvement
 * first, until a pass changes nothing or the work budget (cells of the
 * planner's tables, SWAP_WORK) is spent. */
static void improve_by_swaps(struct chosen *c, size_t fixed, const struct used *used,
                             size_t used_count, const struct trial_steps *t)
{
    uint64_t per_trial = (uint64_t)t->count * t->k * (t->n + 1) * (c->count + 1) * 2 + 1;
    uint64_t trials_left = SWAP_WORK / per_trial;
    brs_wide current = trial_time(c, t);
    for (int moved = 1; moved && trials_left > 0;) {
        moved = 0;
        for (size_t i = fixed; i < c->count && trials_left > 0; i++)
            for (size_t u = 0; u < used_count && trials_left > 0; u++) {
                if (has_shape(c, used[u].size, used[u].length)) continue;
                uint32_t size = c->sizes[i], length = c->lengths[i];
                c->sizes[i] = used[u].size;
                c->lengths[i] = used[u].length;
                trials_left--;
                brs_wide time = trial_time(c, t);
                if (time < current) {
                    current = time;
                    moved = 1;
                } else {
                    c->sizes[i] = size;
                    c->lengths[i] = length;
                }
            }
    }
}

/* The distinct lengths of the used shapes, ascending, into lengths[];
 * returns how many. */
static size_t used_lengths(uint32_t *lengths, const struct used *used, size_t used_count)
{
    size_t count = 0;
    for (size_t u = 0; u < used_count; u++) {
        size_t at = count;
        while (at > 0 && lengths[at - 1] > used[u].length) at--;
        if (at > 0 && lengths[at - 1] == used[u].length) continue;
        memmove(lengths + at + 1, lengths + at, (count - at) * sizeof *lengths);
        lengths[at] = used[u].length;
        count++;
    }
    return count;
}

/* A move of the search: chosen shape i (past the fixed ones) changed to a
 * neighbouring batch size, a neighbouring used length, or a used shape;
 * 0 where the move gives a shape already chosen or above the cap. */
static int move_shape(struct chosen *c, size_t i, uint64_t random, const struct used *used,
                      size_t used_count, const uint32_t *lengths, size_t length_count,
                      const struct trial_steps *t)
{
    uint32_t size = c->sizes[i], length = c->lengths[i];
    uint64_t step = random >> 8;
    switch (random % 3) {
    case 0: { /* one or two samples more or fewer */
        int64_t next = (int64_t)size + ((step & 1) ? 1 : -1) * (int64_t)(1 + (step >> 1) % 2);
        if (next < 1 || next > (int64_t)t->n) return 0;
        size = (uint32_t)next;
        break;
    }
    case 1: { /* up to four used lengths longer or shorter */
        size_t at = 0;
        while (at + 1 < length_count && lengths[at] < length) at++;
        int64_t next = (int64_t)at + ((step & 1) ? 1 : -1) * (int64_t)(1 + (step >> 1) % 4);
        if (next < 0 || next >= (int64_t)length_count) return 0;
        length = lengths[next];
        break;
    }
    default: size = used[step % used_count].size; length = used[step % used_count].length;
    }
    if (has_shape(c, size, length)) return 0;
    if (t->model->max_tokens && (uint64_t)size * length > t->model->max_tokens) return 0;
    c->sizes[i] = size;
    c->lengths[i] = length;
    return 1;
}

/* max_shapes_search moves, each kept where the trial steps plan at most a
 * falling threshold slower; the best vocabulary seen is the answer. The
 * moves are drawn from the seed alone, so every rank finds the same. */
static brs_status search_moves(struct chosen *c, size_t fixed, const struct used *used,
                               size_t used_count, const struct trial_steps *t, uint64_t moves,
                               uint64_t seed)
{
    if (moves == 0 || c->count <= fixed || used_count == 0) return BRS_OK;
    uint32_t *lengths = malloc(used_count * sizeof *lengths);
    uint32_t *best_sizes = malloc(c->count * sizeof *best_sizes);
    uint32_t *best_lengths = malloc(c->count * sizeof *best_lengths);
    if (!lengths || !best_sizes || !best_lengths) {
        free(lengths);
        free(best_sizes);
        free(best_lengths);
        return BRS_ERR_NO_MEMORY;
    }
    size_t length_count = used_lengths(lengths, used, used_count);
    memcpy(best_sizes, c->sizes, c->count * sizeof *best_sizes);
    memcpy(best_lengths, c->lengths, c->count * sizeof *best_lengths);
    brs_wide current = trial_time(c, t), best = current;
    brs_wide start = current == BRS_WIDE_MAX ? 0 : current * SEARCH_THRESHOLD / 1000;
    uint64_t random = brs_splitmix64(seed ^ 0x5eedc0de5eedc0deULL);
    for (uint64_t m = 0; m < moves; m++) {
        random = brs_splitmix64(random);
        size_t i = fixed + (size_t)(random % (c->count - fixed));
        uint32_t size = c->sizes[i], length = c->lengths[i];
        if (!move_shape(c, i, brs_splitmix64(random ^ m), used, used_count, lengths, length_count,
                        t))
            continue;
        brs_wide time = trial_time(c, t), threshold = start * (moves - m) / moves;
        if (time != BRS_WIDE_MAX && time <= current + threshold) {
            current = time;
            if (time < best) {
                best = time;
                memcpy(best_sizes, c->sizes, c->count * sizeof *best_sizes);
                memcpy(best_lengths, c->lengths, c->count * sizeof *best_lengths);
            }
        } else {
            c->sizes[i] = size;
            c->lengths[i] = length;
        }
    }
    memcpy(c->sizes, best_sizes, c->count * sizeof *best_sizes);
    memcpy(c->lengths, best_lengths, c->count * sizeof *best_lengths);
    free(lengths);
    free(best_sizes);
    free(best_lengths);
    return BRS_OK;
}

/* Adds shapes while there is room: each round, of the used shapes that
 * lower the excess most, the one whose vocabulary plans the trial steps
 * fastest (the first of equals). */
static void add_from_data(struct chosen *c, size_t room, const struct used *used, size_t used_count,
                          const struct brs_cost_model *model, uint32_t longest,
                          const struct trial_steps *t)
{
    /* the trials a round may run within the work budget (the cells of
     * the planner's tables), at least one: large steps try fewer */
    uint64_t per_trial = (uint64_t)t->count * t->k * (t->n + 1) * (room + 1) * 2 + 1;
    uint64_t rounds = room > c->count ? room - c->count : 1;
    uint64_t tries = TRIAL_WORK / per_trial / rounds;
    if (tries > CANDIDATES) tries = CANDIDATES;
    if (tries == 0) tries = 1;
    while (c->count < room) {
        size_t pick[CANDIDATES], picked = best_by_excess(pick, c, used, used_count, model, longest);
        if (picked == 0) break;
        if (picked > tries) picked = (size_t)tries;
        size_t best = pick[0];
        brs_wide best_time = BRS_WIDE_MAX;
        for (size_t i = 0; i < picked; i++) {
            struct chosen trial = *c;
            add_shape(&trial, used[pick[i]].size, used[pick[i]].length);
            brs_wide time = trial_time(&trial, t);
            if (time < best_time) {
                best = pick[i];
                best_time = time;
            }
        }
        add_shape(c, used[best].size, used[best].length);
    }
}

/* Whether the sampled steps plan within the vocabulary: the check of a
 * vocabulary whose safety shapes the cap refused. */
static brs_status check_sampled(const brs_sampler *s, brs_plan *plan,
                                const struct brs_vocabulary *v, char *why)
{
    uint64_t steps = brs_settings_steps(s);
    size_t per_epoch = sampled_steps(steps, (size_t)(s->config.dp_size * s->config.grad_accum));
    for (uint64_t epoch = 0; epoch < SAMPLED_EPOCHS; epoch++)
        for (size_t i = 0; i < per_epoch; i++) {
            uint64_t step = (uint64_t)i * steps / per_epoch;
            brs_status status = brs_step_plan(plan, s, epoch, step, v);
            if (status != BRS_OK) {
                snprintf(why, BRS_MESSAGE_SIZE, "%s", brs_message_text(&plan->message));
                return status;
            }
        }
    return BRS_OK;
}

brs_status brs_vocabulary_check(const brs_sampler *s, const struct brs_message *message)
{
    const struct brs_config *c = &s->config;
    if (c->max_shapes == 0 || c->strategy != BRS_STRATEGY_BALANCED) return BRS_OK;
    if (s->encoder)
        return brs_fail(message, BRS_ERR_UNSUPPORTED,
                        "max_shapes plans micro-batches of text: set max_shapes to 0 for samples "
                        "with images");
    if (c->packed && brs_settings_cost_model(s).max_tokens == 0)
        return brs_fail(message, BRS_ERR_UNSUPPORTED,
                        "max_shapes in packed mode needs a longest row, the vocabulary's longest "
                        "shape: set max_tokens (or length_buckets)");
    return BRS_OK;
}

/* ---- Packed mode: a row's shape is (1, padded total). ---- */

/* The lengths the rows' optimal quantisation chooses among: the distinct
 * padded totals of the sampled rows, thinned by count to this many. */
#define PACKED_CANDIDATES 512

/* Prefix sums over the sampled rows' distinct totals (sorted): rows[i] and
 * tokens[i] count those below index i. */
struct row_sums {
    const struct used *used;
    uint64_t *rows, *tokens;
};

/* The padding tokens of the rows with totals used[a + 1 .. b] (a = -1: from
 * the first) run at `length`, which holds them all. */
static uint64_t padding_of(const struct row_sums *r, size_t a, size_t b, uint64_t length)
{
    size_t from = a == SIZE_MAX ? 0 : a + 1;
    return length * (r->rows[b + 1] - r->rows[from]) - (r->tokens[b + 1] - r->tokens[from]);
}

/* Up to `room` candidate indices into used (increasing): every one, or
 * those at evenly spaced counts of rows; returns how many. */
static size_t packed_candidates(size_t *out, size_t room, const struct row_sums *r,
                                size_t used_count)
{
    if (used_count <= room) {
        for (size_t i = 0; i < used_count; i++) out[i] = i;
        return used_count;
    }
    size_t count = 0;
    uint64_t rows = r->rows[used_count];
    for (size_t q = 1, i = 0; q <= room; q++) {
        uint64_t want = (rows * q + room - 1) / room;
        while (i + 1 < used_count && r->rows[i + 1] < want) i++;
        if (count == 0 || out[count - 1] != i) out[count++] = i;
    }
    return count;
}

/* The at most `extra` row lengths below `top` that pad the sampled rows
 * least in all (an optimal quantisation, by dynamic programming over the
 * candidates: best[m][j] the least padding of the rows up to candidate j
 * with m lengths, the last at j), added to c. */
static brs_status add_packed_rows(struct chosen *c, size_t extra, const struct used *used,
                                  size_t used_count, uint64_t top)
{
    uint64_t *rows = calloc(used_count + 1, sizeof *rows);
    uint64_t *tokens = calloc(used_count + 1, sizeof *tokens);
    size_t *cand = malloc(PACKED_CANDIDATES * sizeof *cand);
    size_t p = 0;
    if (rows && tokens && cand) {
        for (size_t i = 0; i < used_count; i++) {
            rows[i + 1] = rows[i] + used[i].count;
            tokens[i + 1] = tokens[i] + used[i].count * used[i].length;
        }
        p = packed_candidates(cand, PACKED_CANDIDATES, &(struct row_sums){used, rows, tokens},
                              used_count);
    }
    if (extra > p) extra = p;
    uint64_t *best = extra ? malloc(extra * p * sizeof *best) : NULL;
    uint16_t *from = extra ? malloc(extra * p * sizeof *from) : NULL;
    brs_status status =
        rows && tokens && cand && (extra == 0 || (best && from)) ? BRS_OK : BRS_ERR_NO_MEMORY;
    if (status == BRS_OK && extra > 0) {
        struct row_sums r = {used, rows, tokens};
        for (size_t j = 0; j < p; j++)
            best[j] = padding_of(&r, SIZE_MAX, cand[j], used[cand[j]].length);
        for (size_t m = 1; m < extra; m++)
            for (size_t j = 0; j < p; j++) {
                uint64_t least = UINT64_MAX;
                for (size_t i = 0; i < j; i++) {
                    if (best[(m - 1) * p + i] == UINT64_MAX) continue;
                    uint64_t value = best[(m - 1) * p + i] +
                                     padding_of(&r, cand[i], cand[j], used[cand[j]].length);
                    if (value < least) {
                        least = value;
                        from[m * p + j] = (uint16_t)i;
                    }
                }
                best[m * p + j] = least;
            }
        /* the best last length, the rows above it at top; then back */
        uint64_t least = padding_of(&r, SIZE_MAX, used_count - 1, top);
        size_t at_m = SIZE_MAX, at_j = 0;
        for (size_t m = 0; m < extra; m++)
            for (size_t j = 0; j < p; j++) {
                if (best[m * p + j] == UINT64_MAX) continue;
                uint64_t value =
                    best[m * p + j] +
                    (cand[j] + 1 < used_count ? padding_of(&r, cand[j], used_count - 1, top) : 0);
                if (value < least) {
                    least = value;
                    at_m = m;
                    at_j = j;
                }
            }
        for (size_t m = at_m; m != SIZE_MAX; m--) {
            add_shape(c, 1, used[cand[at_j]].length);
            if (m > 0) at_j = from[m * p + at_j];
        }
    }
    free(best);
    free(from);
    free(rows);
    free(tokens);
    free(cand);
    return status;
}

/* Packed mode: the longest row the cap admits, padded (which every row
 * fits, so every step plans), and up to max_shapes - 1 shorter rows chosen
 * from the rows of the sampled steps, planned without a vocabulary. */
static brs_status choose_packed(struct brs_vocabulary *v, const brs_sampler *s, char *why)
{
    struct brs_padding padding = brs_settings_padding(s);
    uint64_t top = brs_padding_apply(&padding, brs_settings_cost_model(s).max_tokens);
    if (top > UINT32_MAX) {
        snprintf(why, BRS_MESSAGE_SIZE,
                 "max_shapes in packed mode: the longest row (%llu tokens, max_tokens padded) "
                 "must be below 2^32: lower max_tokens or set max_shapes to 0",
                 (unsigned long long)top);
        return BRS_ERR_OUT_OF_RANGE;
    }
    size_t room = (size_t)s->config.max_shapes;
    struct chosen chosen = {malloc((room + 1) * sizeof(uint32_t)),
                            malloc((room + 1) * sizeof(uint32_t)), 0};
    /* collect_used fills trial steps too, which packed mode does not try:
     * room for one of one sample */
    struct trial_steps trials = {.lengths = malloc(sizeof(uint32_t)), .capacity = 1, .n = 1};
    struct used *used = NULL;
    size_t used_count = 0;
    brs_plan *plan = NULL;
    brs_status status =
        chosen.sizes && chosen.lengths && trials.lengths && brs_plan_new(&plan) == BRS_OK
            ? BRS_OK
            : BRS_ERR_NO_MEMORY;
    if (status == BRS_OK) {
        status = collect_used(&used, &used_count, &trials, s, plan);
        if (status != BRS_OK)
            snprintf(why, BRS_MESSAGE_SIZE, "%s", brs_message_text(&plan->message));
    }
    if (status == BRS_OK) {
        add_shape(&chosen, 1, (uint32_t)top);
        if (used_count > 0) status = add_packed_rows(&chosen, room - 1, used, used_count, top);
    }
    if (status == BRS_OK)
        status = brs_vocabulary_build(v, chosen.sizes, chosen.lengths, chosen.count);
    if (status == BRS_ERR_NO_MEMORY)
        snprintf(why, BRS_MESSAGE_SIZE, "cannot allocate the shape vocabulary");
    free(used);
    free(trials.lengths);
    free(chosen.sizes);
    free(chosen.lengths);
    brs_plan_free(plan);
    return status;
}

static brs_status choose(struct brs_vocabulary *v, const brs_sampler *s, char *why)
{
    if (s->config.packed) return choose_packed(v, s, why);
    const struct brs_config *c = &s->config;
    size_t k = (size_t)(c->dp_size * c->grad_accum), b = (size_t)c->batch_size * k;
    if (k + 1 > BRS_VOCABULARY_CELLS / (b + 1)) {
        snprintf(why, BRS_MESSAGE_SIZE,
                 "max_shapes: a step of %zu samples in %zu micro-batches is too large to plan "
                 "within a vocabulary (K x B at most %zu): set max_shapes to 0",
                 b, k, (size_t)BRS_VOCABULARY_CELLS);
        return BRS_ERR_TOO_LARGE;
    }
    struct brs_padding padding = brs_settings_padding(s);
    uint32_t longest = (uint32_t)brs_padding_apply(&padding, s->max_length);
    size_t room = (size_t)c->max_shapes;
    struct chosen chosen = {malloc((room + 4) * sizeof(uint32_t)),
                            malloc((room + 4) * sizeof(uint32_t)), 0};
    struct used *used = NULL;
    size_t used_count = 0;
    brs_plan *plan = NULL;
    brs_status status = chosen.sizes && chosen.lengths && brs_plan_new(&plan) == BRS_OK
                            ? BRS_OK
                            : BRS_ERR_NO_MEMORY;
    int guaranteed = 0;
    if (status == BRS_OK) add_safety(&chosen, &guaranteed, s, longest);
    size_t fixed = chosen.count;
    if (status == BRS_OK && chosen.count > room) {
        snprintf(why, BRS_MESSAGE_SIZE,
                 "max_shapes %zu is below the %zu shapes that make every step plannable (each "
                 "step size split evenly, at the longest sample's padded length %u): set "
                 "max_shapes to at least %zu",
                 room, chosen.count, longest, chosen.count);
        status = BRS_ERR_CAP_INFEASIBLE;
    }
    struct brs_cost_model model = brs_settings_cost_model(s);
    struct trial_steps trials = {
        NULL,         0,     TRIAL_STEPS, (size_t)c->batch_size * k, k, (size_t)c->dp_size,
        (int)c->sync, &model};
    /* a search tries its moves on every sampled step, against over-fitting a few */
    if (c->max_shapes_search > 0) trials.capacity = SAMPLED_STEPS * SAMPLED_EPOCHS;
    /* large steps keep fewer trial steps: at most TRIAL_LENGTHS lengths in all */
    if (trials.capacity > TRIAL_LENGTHS / trials.n) trials.capacity = TRIAL_LENGTHS / trials.n;
    if (trials.capacity == 0) trials.capacity = 1;
    trials.lengths = malloc(trials.capacity * trials.n * sizeof *trials.lengths);
    if (!trials.lengths) status = BRS_ERR_NO_MEMORY;
    if (status == BRS_OK) {
        status = collect_used(&used, &used_count, &trials, s, plan);
        if (status != BRS_OK)
            snprintf(why, BRS_MESSAGE_SIZE, "%s", brs_message_text(&plan->message));
    }
    if (status == BRS_OK) {
        uint64_t groups = 0;
        for (size_t u = 0; u < used_count; u++) groups += used[u].count;
        add_fallback(&chosen, (room - chosen.count) / FALLBACK_SHARE, s, longest,
                     quantile_length(used, used_count, (groups + 1) / 2));
        fixed = chosen.count;
        add_iso_cost(&chosen, (room - chosen.count) * ISO_COST_SHARE / 200, used, used_count,
                     &model, (uint64_t)c->pad_to_multiple_of);
        add_from_data(&chosen, room, used, used_count, &model, longest, &trials);
        improve_by_swaps(&chosen, fixed, used, used_count, &trials);
        status = search_moves(&chosen, fixed, used, used_count, &trials,
                              (uint64_t)c->max_shapes_search, (uint64_t)c->seed);
    }
    if (status == BRS_OK)
        status = brs_vocabulary_build(v, chosen.sizes, chosen.lengths, chosen.count);
    free(trials.lengths);
    if (status == BRS_OK && !guaranteed) status = check_sampled(s, plan, v, why);
    if (status == BRS_ERR_NO_MEMORY)
        snprintf(why, BRS_MESSAGE_SIZE, "cannot allocate the shape vocabulary");
    if (status != BRS_OK) brs_vocabulary_free(v);
    free(used);
    free(chosen.sizes);
    free(chosen.lengths);
    brs_plan_free(plan);
    return status;
}

void brs_vocabulary_forget(brs_sampler *s)
{
    brs_vocabulary_free(&s->vocabulary);
    s->vocabulary_chosen = 0;
}

brs_status brs_vocabulary_of(const struct brs_vocabulary **out, const brs_sampler *sampler,
                             const struct brs_message *message)
{
    /* The vocabulary is a cache of the sampler's lengths and options: a
     * read-only call may fill it (one at a time), as a const handle's
     * message may be written (api/internal.h). */
    brs_sampler *s = (brs_sampler *)sampler;
    uint64_t fingerprint;
    brs_status status = brs_vocabulary_check(sampler, message);
    if (status != BRS_OK) return status;
    status = brs_sampler_fingerprint(&fingerprint, sampler);
    if (status != BRS_OK) return status;
    while (atomic_flag_test_and_set_explicit(&s->vocabulary_busy, memory_order_acquire)) {
    }
    if (!s->vocabulary_chosen || s->vocabulary_fingerprint != fingerprint) {
        brs_vocabulary_forget(s);
        s->vocabulary_message[0] = '\0';
        s->vocabulary_status = choose(&s->vocabulary, s, s->vocabulary_message);
        s->vocabulary_fingerprint = fingerprint;
        s->vocabulary_chosen = 1;
    }
    status = s->vocabulary_status;
    atomic_flag_clear_explicit(&s->vocabulary_busy, memory_order_release);
    if (status != BRS_OK) return brs_fail(message, status, "%s", s->vocabulary_message);
    *out = &s->vocabulary;
    return BRS_OK;
}

brs_status brs_sampler_shape_vocabulary(uint64_t *shapes, size_t *count, const brs_sampler *sampler,
                                        size_t capacity)
{
    if (!sampler) return BRS_ERR_NULL_POINTER;
    if (!count || (!shapes && capacity > 0))
        return brs_fail(&sampler->message, BRS_ERR_NULL_POINTER,
                        "brs_sampler_shape_vocabulary: %s is NULL", !count ? "count" : "shapes");
    brs_status status = brs_settings_check(sampler, &sampler->message);
    if (status != BRS_OK) return status;
    *count = 0;
    if (sampler->config.max_shapes == 0 || sampler->config.strategy != BRS_STRATEGY_BALANCED)
        return BRS_OK;
    const struct brs_vocabulary *v;
    status = brs_vocabulary_of(&v, sampler, &sampler->message);
    if (status != BRS_OK) return status;
    *count = v->count;
    for (size_t i = 0; i < v->count && i < capacity; i++) {
        shapes[2 * i] = v->sizes[i];
        shapes[2 * i + 1] = v->lengths[i];
    }
    if (v->count > capacity && shapes)
        return brs_fail(&sampler->message, BRS_ERR_OUT_OF_RANGE,
                        "the vocabulary has %zu shapes, more than the capacity %zu: call again "
                        "with room for %zu",
                        v->count, capacity, v->count);
    return BRS_OK;
}
