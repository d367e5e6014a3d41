/* vocabulary_choice.c - the choice of a run's shape vocabulary: at most
 * max_shapes (batch size, padded length) pairs that every micro-batch of
 * the run has, chosen once from the shapes that balanced plans of sampled
 * steps use and from those steps themselves, the same on every rank and for
 * every epoch (docs/algorithm.md, "Shape vocabulary"). api/vocabulary.c
 * draws the sampled steps, keeps the choice and exports it.
 *
 * Padded mode, in six stages:
 * 1. safety: a step of n samples in K groups can always be cut into groups
 *    of n / K and n / K + 1 samples, each padded to the longest sample of
 *    the dataset, so these shapes make every step plannable whatever it
 *    draws;
 * 2. fallback: the even split of a full step at halves of the longest
 *    length, a fallback no worse than fixed-size groups padded to about
 *    twice their longest sample;
 * 3. iso-cost ladder: pairs of batch sizes of about the median cost at
 *    quantiles of the used lengths, and at halves of the longest of them;
 * 4. from the data: shapes added one at a time, each of those that most
 *    lower the modelled cost of running the used micro-batches at their
 *    vocabulary shapes the one whose vocabulary plans the trial steps
 *    fastest;
 * 5. swaps: a chosen shape swapped for a used one wherever that plans the
 *    trial steps faster;
 * 6. search (max_shapes_search): a seeded threshold-accepting search that
 *    moves one shape at a time against the trial steps' planned time.
 * Packed mode: the longest row the cap admits, and the shorter rows that
 * pad the sampled rows least (an optimal quantisation). */
#include "draw/prng.h"
#include "planner/internal.h"
#include "util/message.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- The tuned constants, in one place. ---- */

/* Steps planned to see what shapes balanced plans want: up to SAMPLED_STEPS
 * per epoch, evenly spread, over the first SAMPLED_EPOCHS epochs, and fewer
 * where their micro-batches would pass SAMPLED_GROUPS. */
#define SAMPLED_STEPS 128
#define SAMPLED_EPOCHS 2
#define SAMPLED_GROUPS ((size_t)1 << 20)
/* Of those, the full steps that candidate vocabularies are tried on (all
 * of them for a search, against over-fitting a few), at most TRIAL_LENGTHS
 * lengths in all; and how many candidates each round of stage 4 tries. */
#define TRIAL_STEPS 64
#define TRIAL_LENGTHS ((size_t)1 << 22)
#define CANDIDATES 40
/* The fallback ladder (stage 2) takes at most 1 / FALLBACK_SHARE of the
 * room left; the iso-cost ladder (stage 3) ISO_COST_SHARE percent of the
 * rest, two shapes a rung, and a TAIL_SHARE-th of its rungs halve the
 * longest used length. */
#define FALLBACK_SHARE 4
#define ISO_COST_SHARE 50
#define TAIL_SHARE 3
/* The cells of the planner's tables (trial_work) that stage 4 may fill in
 * all (about a second here), and stage 5. */
#define TRIAL_WORK ((uint64_t)400000000)
#define SWAP_WORK ((uint64_t)2000000000)
/* Stage 6 starts by keeping a move that makes the trial steps up to
 * SEARCH_THRESHOLD thousandths slower, a threshold that falls linearly to
 * zero (threshold accepting, Dueck and Scheuer 1990): early moves leave the
 * greedy choice's local optimum, late ones only improve. On lognormal
 * (4x2x8, padded to 64, 5,000 moves), 2 planned a held-out epoch 0.5%
 * faster than 5. A move changes a batch size by up to SIZE_MOVE samples or
 * a length by up to LENGTH_MOVE used lengths; SEARCH_SALT keys its moves
 * apart from the epoch permutation's. */
#define SEARCH_THRESHOLD 2
#define SIZE_MOVE 2
#define LENGTH_MOVE 4
#define SEARCH_SALT 0x5eedc0de5eedc0deULL
/* Packed mode: the lengths the rows' optimal quantisation chooses among,
 * the distinct padded totals of the sampled rows, thinned by count to this
 * many. */
#define PACKED_CANDIDATES 512

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

struct brs_vocabulary_choice {
    struct brs_vocabulary_request request;
    /* a full step of the run without its lengths: the trial steps' */
    struct brs_step step;
    struct chosen chosen;
    size_t fixed; /* the first `fixed` chosen shapes stay (the safety shapes, then the fallback) */
    int guaranteed; /* every safety shape is within the cap: every step plans */
    size_t samples; /* the sampled steps, SAMPLED_EPOCHS epochs of them */
    size_t observed;
    /* the used shapes: one entry per micro-batch while observing, then distinct with counts */
    struct used *used;
    size_t used_count;
    /* the trial steps: their padded lengths sorted longest first, step.n each */
    uint32_t *trials;
    size_t trial_count, trial_capacity;
    /* the buffers a sampled step is planned in */
    struct brs_planned planned;
    uint64_t *scratch, *tokens;
    uint32_t *pack_scratch;
};

/* One rung down a halving ladder: half of `length`, rounded up to the
 * padding's multiple (stages 2 and 3). */
static uint64_t halve(uint64_t length, uint64_t multiple)
{
    return (length / 2 + multiple - 1) / multiple * multiple;
}

/* The cells of the planner's tables that planning the trial steps within
 * `shapes` shapes fills, about: the work budgets' unit. */
static uint64_t trial_work(const struct brs_vocabulary_choice *t, size_t shapes)
{
    return (uint64_t)t->trial_count * t->step.k * (t->step.n + 1) * (shapes + 1) * 2 + 1;
}

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

static int compare_used(const void *a, const void *b)
{
    const struct used *x = a, *y = b;
    if (x->size != y->size) return x->size < y->size ? -1 : 1;
    return x->length < y->length ? -1 : x->length > y->length;
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
static brs_wide trial_time(const struct chosen *c, const struct brs_vocabulary_choice *t)
{
    struct brs_vocabulary v;
    if (brs_vocabulary_build(&v, c->sizes, c->lengths, c->count) != BRS_OK) return BRS_WIDE_MAX;
    brs_wide total = 0;
    for (size_t i = 0; i < t->trial_count && total != BRS_WIDE_MAX; i++) {
        struct brs_step step = t->step;
        step.lengths = step.planned = t->trials + i * step.n;
        step.vocabulary = &v;
        brs_wide time = brs_vocabulary_quick_time(&step);
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

/* Stage 3: an iso-cost ladder of `rungs` rungs: balanced plans make micro-batches of
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
    size_t tail = rungs / TAIL_SHARE, body = rungs - tail;
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
        length = (size_t)halve(length, multiple);
        if (length <= below_top) break;
        add_rung(c, (uint32_t)length, cost, model);
    }
}

/* Stage 5: swaps a chosen shape (past the first `fixed`, the safety shapes) for a
 * used one wherever that plans the trial steps faster, first improvement
 * first, until a pass changes nothing or the work budget (cells of the
 * planner's tables, SWAP_WORK) is spent. */
static void improve_by_swaps(struct chosen *c, size_t fixed, const struct used *used,
                             size_t used_count, const struct brs_vocabulary_choice *t)
{
    uint64_t trials_left = SWAP_WORK / trial_work(t, c->count);
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
                      const struct brs_vocabulary_choice *t)
{
    uint32_t size = c->sizes[i], length = c->lengths[i];
    uint64_t step = random >> 8;
    switch (random % 3) {
    case 0: { /* one or two samples more or fewer */
        int64_t next =
            (int64_t)size + ((step & 1) ? 1 : -1) * (int64_t)(1 + (step >> 1) % SIZE_MOVE);
        if (next < 1 || next > (int64_t)t->step.n) return 0;
        size = (uint32_t)next;
        break;
    }
    case 1: { /* up to four used lengths longer or shorter */
        size_t at = 0;
        while (at + 1 < length_count && lengths[at] < length) at++;
        int64_t next =
            (int64_t)at + ((step & 1) ? 1 : -1) * (int64_t)(1 + (step >> 1) % LENGTH_MOVE);
        if (next < 0 || next >= (int64_t)length_count) return 0;
        length = lengths[next];
        break;
    }
    default: size = used[step % used_count].size; length = used[step % used_count].length;
    }
    if (has_shape(c, size, length)) return 0;
    if (t->step.model.max_tokens && (uint64_t)size * length > t->step.model.max_tokens) return 0;
    c->sizes[i] = size;
    c->lengths[i] = length;
    return 1;
}

/* Stage 6: max_shapes_search moves, each kept where the trial steps plan at most a
 * falling threshold slower; the best vocabulary seen is the answer. The
 * moves are drawn from the seed alone, so every rank finds the same. */
static brs_status search_moves(struct chosen *c, size_t fixed, const struct used *used,
                               size_t used_count, const struct brs_vocabulary_choice *t,
                               uint64_t moves, uint64_t seed)
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
    uint64_t random = brs_splitmix64(seed ^ SEARCH_SALT);
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

/* Stage 4: adds shapes while there is room: each round, of the used shapes that
 * lower the excess most, the one whose vocabulary plans the trial steps
 * fastest (the first of equals). */
static void add_from_data(struct chosen *c, size_t room, const struct used *used, size_t used_count,
                          const struct brs_cost_model *model, uint32_t longest,
                          const struct brs_vocabulary_choice *t)
{
    /* the trials a round may run within the work budget, at least one:
     * large steps try fewer */
    uint64_t rounds = room > c->count ? room - c->count : 1;
    uint64_t tries = TRIAL_WORK / trial_work(t, room) / rounds;
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

/* ---- Packed mode: a row's shape is (1, padded total). ---- */

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
/* ---- Stages 1 and 2: the shapes that stay. ---- */

/* The step sizes a run plans: B, and a kept last step's (topped up to K). */
static size_t step_sizes(size_t *sizes, const struct brs_vocabulary_choice *t)
{
    size_t k = t->step.k, b = t->step.n, count = 0, all = t->request.count;
    if (all >= b) sizes[count++] = b;
    if (!t->request.drop_last && all % b != 0) {
        size_t rest = all % b;
        sizes[count++] = rest < k ? k : rest;
    }
    return count;
}

/* Stage 1: the safety shapes (n / K and n / K + 1 samples at the longest
 * padded length) of every step size the cap admits; t->guaranteed says
 * whether every one did. */
static void add_safety(struct brs_vocabulary_choice *t, uint32_t longest)
{
    size_t sizes[2], k = t->step.k, count = step_sizes(sizes, t);
    uint64_t cap = t->step.model.max_tokens;
    t->guaranteed = 1;
    for (size_t i = 0; i < count; i++) {
        size_t q = sizes[i] / k, r = sizes[i] % k;
        for (size_t b = q; b <= q + (r > 0); b++) {
            if (cap && (uint64_t)b * longest > cap)
                t->guaranteed = 0;
            else
                add_shape(&t->chosen, (uint32_t)b, longest);
        }
    }
}

/* Stage 2: the even split of a full step (batch_size samples a group) at
 * halves of the longest padded length, down to `floor`: whatever a step
 * draws, a fallback no worse than fixed-size groups padded to about twice
 * their longest sample, where the safety shapes alone pad every group to
 * the longest of the dataset. At most `rungs` lengths, within the cap. */
static void add_fallback(struct brs_vocabulary_choice *t, size_t rungs, uint32_t longest,
                         uint32_t floor)
{
    uint64_t cap = t->step.model.max_tokens, size = t->request.batch_size, length = longest;
    for (size_t r = 0; r < rungs; r++) {
        length = halve(length, t->step.padding.multiple);
        if (length < floor || length == 0) break;
        if (cap && size * length > cap) continue;
        add_shape(&t->chosen, (uint32_t)size, (uint32_t)length);
    }
}

/* ---- The sampled steps. ---- */

/* The steps of an epoch that are planned to see what plans want: up to
 * SAMPLED_STEPS, fewer where a step has so many micro-batches that their
 * shapes would pass SAMPLED_GROUPS; at least one. */
static size_t sampled_per_epoch(uint64_t steps, size_t k)
{
    size_t most = SAMPLED_GROUPS / (SAMPLED_EPOCHS * k);
    if (most > SAMPLED_STEPS) most = SAMPLED_STEPS;
    if (most == 0) most = 1;
    return steps < most ? (size_t)steps : most;
}

size_t brs_vocabulary_choice_samples(const struct brs_vocabulary_choice *t)
{
    return t->samples;
}

void brs_vocabulary_choice_sample(uint64_t *epoch, uint64_t *step,
                                  const struct brs_vocabulary_choice *t, size_t i)
{
    size_t per_epoch = t->samples / SAMPLED_EPOCHS;
    *epoch = i / per_epoch;
    *step = (uint64_t)(i % per_epoch) * t->request.steps / per_epoch;
}

/* Plans a drawn step (its own vocabulary, or none) into t->planned. */
static brs_status plan_drawn(struct brs_vocabulary_choice *t, const struct brs_step *drawn)
{
    return brs_planner_plan(&t->planned, drawn, t->scratch, t->pack_scratch);
}

/* The shape of group g of a sampled step as planned without a vocabulary
 * (brs_vocabulary_row_shape): its size and its head's padded length, a
 * packed row's (1, its padded total); 0 samples: none. */
static struct used used_shape(struct brs_vocabulary_choice *t, const struct brs_step *step,
                              size_t g)
{
    const struct brs_split *split = &t->planned.split;
    uint64_t samples, padded;
    if (!step->packed) {
        samples = split->starts[g + 1] - split->starts[g];
        padded = samples ? samples * step->planned[split->starts[g]] : 0;
    } else {
        samples = t->tokens[g] > 0;
        padded = brs_packed_row_length(step, t->tokens[g]);
    }
    struct brs_shape shape = brs_vocabulary_row_shape(samples, padded, step->packed);
    return (struct used){(uint32_t)shape.size, (uint32_t)shape.length, samples > 0};
}

brs_status brs_vocabulary_choice_observe(struct brs_vocabulary_choice *t,
                                         const struct brs_step *step)
{
    brs_status status = plan_drawn(t, step);
    if (status != BRS_OK) return status;
    size_t seen = t->observed++;
    if (t->trial_capacity > 0 && step->n == t->step.n &&
        seen % (t->samples / t->trial_capacity + 1) == 0 && t->trial_count < t->trial_capacity)
        memcpy(t->trials + step->n * t->trial_count++, step->planned, step->n * sizeof *t->trials);
    if (step->packed) {
        memset(t->tokens, 0, step->k * sizeof *t->tokens);
        for (size_t i = 0; i < step->n; i++)
            t->tokens[t->planned.split.group_of[i]] += step->lengths[i];
    }
    for (size_t g = 0; g < step->k; g++) {
        struct used shape = used_shape(t, step, g);
        if (shape.count) t->used[t->used_count++] = shape;
    }
    return BRS_OK;
}

/* The used shapes sorted, each distinct one once with its count. */
static void count_used(struct brs_vocabulary_choice *t)
{
    struct used *all = t->used;
    qsort(all, t->used_count, sizeof *all, compare_used);
    size_t distinct = 0;
    for (size_t i = 0; i < t->used_count; i++) {
        if (distinct > 0 && compare_used(&all[distinct - 1], &all[i]) == 0)
            all[distinct - 1].count++;
        else
            all[distinct++] = all[i];
    }
    t->used_count = distinct;
}

/* ---- The choice's lifetime. ---- */

/* The choice's buffers: the chosen shapes (room + 4: the safety shapes may
 * pass the room before it is checked), one used shape per sampled
 * micro-batch, the trial steps and a step's plan. */
static brs_status allocate(struct brs_vocabulary_choice *t)
{
    size_t room = t->request.max_shapes, k = t->step.k, n = t->step.n;
    t->chosen.sizes = malloc((room + 4) * sizeof(uint32_t));
    t->chosen.lengths = malloc((room + 4) * sizeof(uint32_t));
    t->used = malloc(t->samples * k * sizeof *t->used);
    t->trials = malloc((t->trial_capacity ? t->trial_capacity : 1) * n * sizeof *t->trials);
    t->planned = (struct brs_planned){.split = {.starts = malloc((k + 1) * sizeof(size_t)),
                                                .group_of = malloc(n * sizeof(uint32_t)),
                                                .costs = malloc(k * sizeof(brs_wide))},
                                      .group_length = malloc(k * sizeof(uint32_t)),
                                      .slot_of = malloc(k * sizeof(uint32_t))};
    t->scratch = malloc(2 * n * sizeof *t->scratch);
    t->tokens = malloc(k * sizeof *t->tokens);
    t->pack_scratch = malloc(2 * k * sizeof *t->pack_scratch);
    const struct brs_split *s = &t->planned.split;
    return t->chosen.sizes && t->chosen.lengths && t->used && t->trials && s->starts &&
                   s->group_of && s->costs && t->planned.group_length && t->planned.slot_of &&
                   t->scratch && t->tokens && t->pack_scratch
               ? BRS_OK
               : BRS_ERR_NO_MEMORY;
}

/* The trial steps a choice keeps: TRIAL_STEPS, every sampled one for a
 * search, at most TRIAL_LENGTHS lengths in all, at least one; none in
 * packed mode, which does not try candidates. */
static size_t trial_capacity(const struct brs_vocabulary_request *r)
{
    if (r->step.packed) return 0;
    size_t capacity = r->search_moves > 0 ? SAMPLED_STEPS * SAMPLED_EPOCHS : TRIAL_STEPS;
    if (capacity > TRIAL_LENGTHS / r->step.n) capacity = TRIAL_LENGTHS / r->step.n;
    return capacity ? capacity : 1;
}

/* The longest padded row of packed mode (the cap padded), which every row
 * fits, or the longest sample padded. */
static uint64_t longest_shape(const struct brs_vocabulary_request *r)
{
    const struct brs_step *step = &r->step;
    return brs_padding_apply(&step->padding, step->packed ? step->model.max_tokens : r->longest);
}

/* What a choice cannot be: too large a step, a packed row past 32 bits. */
static brs_status refuse(const struct brs_vocabulary_request *r, char *why)
{
    size_t k = r->step.k, b = r->step.n;
    if (!r->step.packed && k + 1 > BRS_VOCABULARY_CELLS / (b + 1)) {
        snprintf(why, BRS_MESSAGE_SIZE,
                 "max_shapes: a step of %zu samples in %zu micro-batches is too large to plan "
                 "within a vocabulary (K x B at most %zu): set max_shapes to 0",
                 b, k, (size_t)BRS_VOCABULARY_CELLS);
        return BRS_ERR_TOO_LARGE;
    }
    uint64_t top = longest_shape(r);
    if (r->step.packed && top > UINT32_MAX) {
        snprintf(why, BRS_MESSAGE_SIZE,
                 "max_shapes in packed mode: the longest row (%llu tokens, max_tokens padded) "
                 "must be below 2^32: lower max_tokens or set max_shapes to 0",
                 (unsigned long long)top);
        return BRS_ERR_OUT_OF_RANGE;
    }
    return BRS_OK;
}

brs_status brs_vocabulary_choice_open(struct brs_vocabulary_choice **out,
                                      const struct brs_vocabulary_request *request, char *why)
{
    *out = NULL;
    brs_status status = refuse(request, why);
    if (status != BRS_OK) return status;
    struct brs_vocabulary_choice *t = calloc(1, sizeof *t);
    if (!t) return BRS_ERR_NO_MEMORY;
    *out = t;
    t->request = *request;
    t->step = request->step;
    t->samples = sampled_per_epoch(request->steps, t->step.k) * SAMPLED_EPOCHS;
    t->trial_capacity = trial_capacity(request);
    status = allocate(t);
    if (status != BRS_OK || t->step.packed) return status;
    uint32_t longest = (uint32_t)longest_shape(request);
    add_safety(t, longest);
    t->fixed = t->chosen.count;
    if (t->chosen.count > request->max_shapes) {
        snprintf(why, BRS_MESSAGE_SIZE,
                 "max_shapes %zu is below the %zu shapes that make every step plannable (each "
                 "step size split evenly, at the longest sample's padded length %u): set "
                 "max_shapes to at least %zu",
                 request->max_shapes, t->chosen.count, longest, t->chosen.count);
        return BRS_ERR_CAP_INFEASIBLE;
    }
    return BRS_OK;
}

/* Stages 2 to 6, from the used shapes and the trial steps. */
static brs_status choose_padded(struct brs_vocabulary_choice *t)
{
    struct chosen *chosen = &t->chosen;
    const struct brs_cost_model *model = &t->step.model;
    size_t room = t->request.max_shapes;
    uint32_t longest = (uint32_t)longest_shape(&t->request);
    uint64_t groups = 0;
    for (size_t u = 0; u < t->used_count; u++) groups += t->used[u].count;
    add_fallback(t, (room - chosen->count) / FALLBACK_SHARE, longest,
                 quantile_length(t->used, t->used_count, (groups + 1) / 2));
    t->fixed = chosen->count;
    add_iso_cost(chosen, (room - chosen->count) * ISO_COST_SHARE / 200, t->used, t->used_count,
                 model, t->step.padding.multiple);
    add_from_data(chosen, room, t->used, t->used_count, model, longest, t);
    improve_by_swaps(chosen, t->fixed, t->used, t->used_count, t);
    return search_moves(chosen, t->fixed, t->used, t->used_count, t, t->request.search_moves,
                        t->request.seed);
}

/* Packed mode: the longest row the cap admits, padded, and up to
 * max_shapes - 1 shorter rows chosen from the sampled rows. */
static brs_status choose_packed(struct brs_vocabulary_choice *t)
{
    uint64_t top = longest_shape(&t->request);
    add_shape(&t->chosen, 1, (uint32_t)top);
    if (t->used_count == 0) return BRS_OK;
    return add_packed_rows(&t->chosen, t->request.max_shapes - 1, t->used, t->used_count, top);
}

brs_status brs_vocabulary_choice_choose(struct brs_vocabulary *v, struct brs_vocabulary_choice *t)
{
    count_used(t);
    brs_status status = t->step.packed ? choose_packed(t) : choose_padded(t);
    if (status != BRS_OK) return status;
    return brs_vocabulary_build(v, t->chosen.sizes, t->chosen.lengths, t->chosen.count);
}

int brs_vocabulary_choice_guaranteed(const struct brs_vocabulary_choice *t)
{
    return t->step.packed || t->guaranteed;
}

brs_status brs_vocabulary_choice_check(struct brs_vocabulary_choice *t, const struct brs_step *step)
{
    return plan_drawn(t, step);
}

const struct brs_planned *brs_vocabulary_choice_planned(const struct brs_vocabulary_choice *t)
{
    return &t->planned;
}

void brs_vocabulary_choice_close(struct brs_vocabulary_choice *t)
{
    if (!t) return;
    free(t->chosen.sizes);
    free(t->chosen.lengths);
    free(t->used);
    free(t->trials);
    free(t->planned.split.starts);
    free(t->planned.split.group_of);
    free(t->planned.split.costs);
    free(t->planned.group_length);
    free(t->planned.slot_of);
    free(t->scratch);
    free(t->tokens);
    free(t->pack_scratch);
    free(t);
}
