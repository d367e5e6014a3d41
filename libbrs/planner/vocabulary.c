/* vocabulary.c - a step planned within a shape vocabulary: each group of b
 * samples whose longest is l runs at the vocabulary's shortest length of
 * size b that holds l (docs/algorithm.md, "Shape vocabulary"); a packed
 * row, planned as packed.c plans it, at the shortest row that holds its
 * total.
 *
 * That length is a non-decreasing function of l, so the contiguity theorem
 * holds and the search is over contiguous splits whose sizes are vocabulary
 * sizes. Where such splits are few, every one is scored with the objective
 * (objective.c): the exact answer. Elsewhere dynamic programmes over (groups,
 * samples) give the exact min-max cost T*, the least peak at T* and the
 * least total under it (the exact answer with one micro-step), then the
 * least-total splits under a few thresholds above T*; the best of them is
 * polished by moving one boundary at a time. */
#include "planner/internal.h"

#include <stdlib.h>
#include <string.h>

/* Splits scored one by one where the compositions are at most this many. */
#define EXACT_LIMIT 20000
/* Thresholds between T* and the least-total split's largest cost. */
#define THRESHOLDS 8
/* The (groups, samples) and (samples, sizes) tables hold at most this many
 * entries each. */
#define TABLE_LIMIT BRS_VOCABULARY_CELLS

struct pair {
    uint32_t size, length;
};

static int compare_pairs(const void *a, const void *b)
{
    const struct pair *x = a, *y = b;
    if (x->size != y->size) return x->size < y->size ? -1 : 1;
    return x->length < y->length ? -1 : x->length > y->length;
}

void brs_vocabulary_free(struct brs_vocabulary *v)
{
    free(v->sizes);
    free(v->lengths);
    free(v->size_values);
    free(v->size_first);
    memset(v, 0, sizeof *v);
}

brs_status brs_vocabulary_build(struct brs_vocabulary *v, const uint32_t *sizes,
                                const uint32_t *lengths, size_t count)
{
    memset(v, 0, sizeof *v);
    struct pair *pairs = malloc((count ? count : 1) * sizeof *pairs);
    v->sizes = malloc((count ? count : 1) * sizeof *v->sizes);
    v->lengths = malloc((count ? count : 1) * sizeof *v->lengths);
    v->size_values = malloc((count ? count : 1) * sizeof *v->size_values);
    v->size_first = malloc((count + 1) * sizeof *v->size_first);
    if (!pairs || !v->sizes || !v->lengths || !v->size_values || !v->size_first) {
        free(pairs);
        brs_vocabulary_free(v);
        return BRS_ERR_NO_MEMORY;
    }
    for (size_t i = 0; i < count; i++) pairs[i] = (struct pair){sizes[i], lengths[i]};
    qsort(pairs, count, sizeof *pairs, compare_pairs);
    for (size_t i = 0; i < count; i++) {
        if (v->count > 0 && compare_pairs(&pairs[i], &pairs[i - 1]) == 0) continue;
        if (v->size_count == 0 || v->size_values[v->size_count - 1] != pairs[i].size) {
            v->size_values[v->size_count] = pairs[i].size;
            v->size_first[v->size_count++] = v->count;
        }
        v->sizes[v->count] = pairs[i].size;
        v->lengths[v->count++] = pairs[i].length;
    }
    v->size_first[v->size_count] = v->count;
    free(pairs);
    return BRS_OK;
}

/* The index of `size` among the distinct sizes, or size_count. */
static size_t size_index(const struct brs_vocabulary *v, size_t size)
{
    size_t lo = 0, hi = v->size_count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (v->size_values[mid] < size)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < v->size_count && v->size_values[lo] == size ? lo : v->size_count;
}

static uint32_t length_of_index(const struct brs_vocabulary *v, size_t t, uint32_t head)
{
    for (size_t i = v->size_first[t]; i < v->size_first[t + 1]; i++)
        if (v->lengths[i] >= head) return v->lengths[i];
    return 0;
}

uint32_t brs_vocabulary_length(const struct brs_vocabulary *v, size_t size, uint32_t head)
{
    size_t t = size_index(v, size);
    return t == v->size_count ? 0 : length_of_index(v, t, head);
}

struct brs_shape brs_shape_of(uint64_t samples, uint64_t padded_tokens, int packed)
{
    if (packed) return (struct brs_shape){samples, padded_tokens};
    return (struct brs_shape){samples, samples ? padded_tokens / samples : 0};
}

struct brs_shape brs_vocabulary_row_shape(uint64_t samples, uint64_t padded_tokens, int packed)
{
    struct brs_shape shape = brs_shape_of(samples, padded_tokens, packed);
    if (packed) shape.size = 1;
    return shape;
}

uint64_t brs_packed_row_length(const struct brs_step *step, uint64_t tokens)
{
    uint64_t padded = brs_padding_apply(&step->padding, tokens);
    if (!step->vocabulary || padded > UINT32_MAX) return padded;
    uint32_t row = brs_vocabulary_length(step->vocabulary, 1, (uint32_t)padded);
    return row ? row : padded;
}

brs_wide brs_packed_row_padding_cost(const struct brs_step *step, uint64_t tokens)
{
    if (!step->vocabulary) return 0;
    uint64_t added =
        brs_packed_row_length(step, tokens) - brs_padding_apply(&step->padding, tokens);
    return (brs_wide)added * brs_sample_weight(&step->model, 1);
}

void brs_vocabulary_pad_rows(struct brs_split *split, const struct brs_step *step, uint64_t *tokens)
{
    memset(tokens, 0, step->k * sizeof *tokens);
    for (size_t i = 0; i < step->n; i++) tokens[split->group_of[i]] += step->lengths[i];
    split->max_cost = 0;
    for (size_t g = 0; g < step->k; g++) {
        split->costs[g] += brs_packed_row_padding_cost(step, tokens[g]);
        if (split->costs[g] > split->max_cost) split->max_cost = split->costs[g];
    }
}

/* The step's shapes priced once: cost[j * m + t] and tokens of a group
 * of the t-th vocabulary size starting at sorted position j (BRS_WIDE_MAX where
 * it does not fit the vocabulary or the cap). */
struct priced {
    const struct brs_step *step; /* its planned lengths and its vocabulary */
    size_t m;                    /* the vocabulary's distinct sizes */
    brs_wide *cost;
    uint64_t *tokens;
    uint16_t *choice; /* (k + 1) x (n + 1): size index + 1 of the last group, 0 unreachable */
    brs_wide *row[2];
    uint32_t *slots;
};

static void price_shapes(struct priced *s)
{
    for (size_t j = 0; j < s->step->n; j++)
        for (size_t t = 0; t < s->m; t++) {
            size_t b = s->step->vocabulary->size_values[t], at = j * s->m + t;
            uint32_t length = j + b <= s->step->n
                                  ? length_of_index(s->step->vocabulary, t, s->step->planned[j])
                                  : 0;
            uint64_t tokens = (uint64_t)b * length;
            int fits =
                length != 0 && (!s->step->model.max_tokens || tokens <= s->step->model.max_tokens);
            s->cost[at] = fits ? brs_group_cost(&s->step->model, length, b) : BRS_WIDE_MAX;
            s->tokens[at] = tokens;
        }
}

/* What a dynamic programme minimises over the groups of a split. */
enum measure { MAX_COST, MAX_TOKENS, TOTAL_COST };

/* The least `measure` of a split into k groups whose costs stay within
 * cost_limit and tokens within token_limit; the split's starts written
 * into `starts`. BRS_WIDE_MAX when none exists. */
static brs_wide solve(size_t *starts, struct priced *s, enum measure measure, brs_wide cost_limit,
                      uint64_t token_limit)
{
    size_t n = s->step->n, k = s->step->k, m = s->m;
    brs_wide *prev = s->row[0], *cur = s->row[1];
    for (size_t i = 0; i <= n; i++) prev[i] = i == 0 ? 0 : BRS_WIDE_MAX;
    memset(s->choice, 0, (k + 1) * (n + 1) * sizeof *s->choice);
    for (size_t c = 1; c <= k; c++) {
        for (size_t i = 0; i <= n; i++) cur[i] = BRS_WIDE_MAX;
        for (size_t j = c - 1; j < n; j++) {
            if (prev[j] == BRS_WIDE_MAX) continue;
            for (size_t t = 0; t < m; t++) {
                size_t at = j * m + t, end = j + s->step->vocabulary->size_values[t];
                brs_wide cost = s->cost[at];
                if (cost == BRS_WIDE_MAX || cost > cost_limit || s->tokens[at] > token_limit)
                    continue;
                brs_wide part = measure == MAX_TOKENS ? (brs_wide)s->tokens[at] : cost;
                brs_wide value =
                    measure == TOTAL_COST ? prev[j] + part : (prev[j] > part ? prev[j] : part);
                if (value < cur[end]) {
                    cur[end] = value;
                    s->choice[c * (n + 1) + end] = (uint16_t)(t + 1);
                }
            }
        }
        brs_wide *swap = prev;
        prev = cur;
        cur = swap;
    }
    if (prev[n] == BRS_WIDE_MAX) return BRS_WIDE_MAX;
    starts[k] = n;
    for (size_t c = k, end = n; c > 0; c--) {
        size_t t = s->choice[c * (n + 1) + end] - 1u;
        end -= s->step->vocabulary->size_values[t];
        starts[c - 1] = end;
    }
    return prev[n];
}

/* The costs, lengths and peak of a split from its starts; 0 when a group
 * fits no shape. */
static int describe(brs_wide *costs, uint32_t *group_length, uint64_t *peak, const struct priced *s,
                    const size_t *starts)
{
    *peak = 0;
    for (size_t g = 0; g < s->step->k; g++) {
        size_t b = starts[g + 1] - starts[g], t = size_index(s->step->vocabulary, b);
        if (t == s->step->vocabulary->size_count) return 0;
        size_t at = starts[g] * s->m + t;
        if (s->cost[at] == BRS_WIDE_MAX) return 0;
        costs[g] = s->cost[at];
        if (group_length) group_length[g] = (uint32_t)(s->tokens[at] / b);
        if (s->tokens[at] > *peak) *peak = s->tokens[at];
    }
    return 1;
}

/* The best split so far: its starts, costs and score. */
struct best {
    size_t *starts;
    brs_wide *costs;
    struct brs_score score;
    int found;
};

static brs_status consider(struct best *best, struct priced *s, const size_t *starts,
                           brs_wide *costs)
{
    uint64_t peak;
    if (!describe(costs, NULL, &peak, s, starts)) return BRS_OK;
    struct brs_score score;
    brs_status status = brs_assign_score_groups(&score, costs, NULL, peak, s->step, s->slots);
    if (status != BRS_OK || (best->found && !brs_objective_better(&score, &best->score)))
        return status;
    best->score = score;
    best->found = 1;
    memcpy(best->starts, starts, (s->step->k + 1) * sizeof *starts);
    return BRS_OK;
}

/* Splits of samples [j, n) into c groups, suffix[c * (n + 1) + j], capped
 * at EXACT_LIMIT + 1. */
static uint32_t *count_splits(const struct priced *s)
{
    size_t n = s->step->n, k = s->step->k;
    uint32_t *suffix = calloc((k + 1) * (n + 1), sizeof *suffix);
    if (!suffix) return NULL;
    suffix[n] = 1; /* c = 0, j = n */
    for (size_t c = 1; c <= k; c++)
        for (size_t j = n; j-- > 0;) {
            uint64_t ways = 0;
            for (size_t t = 0; t < s->m; t++) {
                size_t end = j + s->step->vocabulary->size_values[t];
                if (s->cost[j * s->m + t] == BRS_WIDE_MAX) continue;
                ways += suffix[(c - 1) * (n + 1) + end];
            }
            suffix[c * (n + 1) + j] = ways > EXACT_LIMIT ? EXACT_LIMIT + 1 : (uint32_t)ways;
        }
    return suffix;
}

/* Every split, depth first: group g starts at starts[g]. */
static brs_status enumerate(struct best *best, struct priced *s, const uint32_t *suffix,
                            size_t *starts, brs_wide *costs, size_t g)
{
    size_t n = s->step->n;
    if (g == s->step->k) return consider(best, s, starts, costs);
    for (size_t t = 0; t < s->m; t++) {
        size_t j = starts[g], end = j + s->step->vocabulary->size_values[t];
        if (end > n || s->cost[j * s->m + t] == BRS_WIDE_MAX) continue;
        if (suffix[(s->step->k - g - 1) * (n + 1) + end] == 0) continue;
        starts[g + 1] = end;
        brs_status status = enumerate(best, s, suffix, starts, costs, g + 1);
        if (status != BRS_OK) return status;
    }
    return BRS_OK;
}

/* One pass of boundary moves over the best split: two neighbouring groups
 * trade samples where both sizes stay in the vocabulary and the score
 * improves. Returns whether any move was kept. */
static brs_status polish_pass(int *moved, struct best *best, struct priced *s, size_t *trial,
                              brs_wide *costs)
{
    *moved = 0;
    for (size_t g = 1; g < s->step->k; g++) {
        size_t first = best->starts[g - 1], end = best->starts[g + 1];
        for (size_t t = 0; t < s->m; t++) {
            size_t boundary = first + s->step->vocabulary->size_values[t];
            if (boundary >= end || boundary == best->starts[g]) continue;
            if (size_index(s->step->vocabulary, end - boundary) == s->step->vocabulary->size_count)
                continue;
            memcpy(trial, best->starts, (s->step->k + 1) * sizeof *trial);
            trial[g] = boundary;
            struct brs_score before = best->score;
            brs_status status = consider(best, s, trial, costs);
            if (status != BRS_OK) return status;
            if (brs_objective_better(&best->score, &before)) *moved = 1;
        }
    }
    return BRS_OK;
}

/* The dynamic programmes' candidates, then the polish of the best. */
static brs_status search(struct best *best, struct priced *s, size_t *trial, brs_wide *costs,
                         brs_wide min_max, brs_wide *least_total)
{
    uint64_t peak = (uint64_t)solve(trial, s, MAX_TOKENS, min_max, UINT64_MAX);
    solve(trial, s, TOTAL_COST, min_max, peak);
    brs_status status = consider(best, s, trial, costs);
    /* the least total with no threshold, then thresholds between */
    *least_total = solve(trial, s, TOTAL_COST, BRS_WIDE_MAX - 1, UINT64_MAX);
    if (status == BRS_OK) status = consider(best, s, trial, costs);
    brs_wide loosest = 0;
    for (size_t g = 0; g < s->step->k && status == BRS_OK; g++)
        if (costs[g] > loosest) loosest = costs[g];
    for (int i = 1; i < THRESHOLDS && status == BRS_OK && loosest > min_max; i++) {
        brs_wide limit = min_max + (loosest - min_max) * (brs_wide)i / THRESHOLDS;
        if (solve(trial, s, TOTAL_COST, limit, UINT64_MAX) != BRS_WIDE_MAX)
            status = consider(best, s, trial, costs);
    }
    for (size_t pass = 0; status == BRS_OK && pass < 4 * s->step->k; pass++) {
        int moved;
        status = polish_pass(&moved, best, s, trial, costs);
        if (!moved) break;
    }
    return status;
}

static brs_status plan(struct brs_split *split, uint32_t *group_length, struct priced *s)
{
    size_t k = s->step->k, n = s->step->n;
    struct best best = {split->starts, split->costs, {0, 0, 0}, 0};
    size_t *trial = malloc((k + 1) * sizeof *trial);
    brs_wide *costs = malloc(k * sizeof *costs);
    if (!trial || !costs) {
        free(trial);
        free(costs);
        return BRS_ERR_NO_MEMORY;
    }
    brs_wide min_max = solve(trial, s, MAX_COST, BRS_WIDE_MAX - 1, UINT64_MAX), least_total = 0;
    brs_status status = min_max == BRS_WIDE_MAX ? BRS_ERR_CAP_INFEASIBLE : BRS_OK;
    uint32_t *suffix = status == BRS_OK ? count_splits(s) : NULL;
    if (status == BRS_OK && !suffix) status = BRS_ERR_NO_MEMORY;
    if (status == BRS_OK && suffix[k * (n + 1)] <= EXACT_LIMIT) {
        trial[0] = 0;
        status = enumerate(&best, s, suffix, trial, costs, 0);
        least_total = solve(trial, s, TOTAL_COST, BRS_WIDE_MAX - 1, UINT64_MAX);
    } else if (status == BRS_OK) {
        status = search(&best, s, trial, costs, min_max, &least_total);
    }
    free(suffix);
    if (status == BRS_OK) {
        uint64_t peak;
        describe(split->costs, group_length, &peak, s, split->starts);
        split->max_cost = brs_objective_largest(split->costs, k);
        /* every split within the vocabulary has a group costing at least
         * T* and costs summing to at least the least total */
        split->time_lower_bound = brs_objective_time_floor(min_max, least_total, s->step->dp_size);
    }
    free(trial);
    free(costs);
    return status;
}

static void close_step(struct priced *s)
{
    free(s->cost);
    free(s->tokens);
    free(s->choice);
    free(s->row[0]);
    free(s->row[1]);
    free(s->slots);
}

/* The step's tables, its shapes priced. */
static brs_status open_step(struct priced *s, const struct brs_step *step)
{
    size_t n = step->n, k = step->k;
    const struct brs_vocabulary *v = step->vocabulary;
    *s = (struct priced){step, v->size_count, NULL, NULL, NULL, {NULL, NULL}, NULL};
    if (v->size_count == 0 || v->size_count > UINT16_MAX) return BRS_ERR_CAP_INFEASIBLE;
    if ((k + 1) > TABLE_LIMIT / (n + 1) || n > TABLE_LIMIT / s->m) return BRS_ERR_TOO_LARGE;
    s->cost = malloc(n * s->m * sizeof *s->cost);
    s->tokens = malloc(n * s->m * sizeof *s->tokens);
    s->choice = malloc((k + 1) * (n + 1) * sizeof *s->choice);
    s->row[0] = malloc((n + 1) * sizeof *s->row[0]);
    s->row[1] = malloc((n + 1) * sizeof *s->row[1]);
    s->slots = malloc(k * sizeof *s->slots);
    if (!s->cost || !s->tokens || !s->choice || !s->row[0] || !s->row[1] || !s->slots)
        return BRS_ERR_NO_MEMORY;
    price_shapes(s);
    return BRS_OK;
}

brs_wide brs_vocabulary_quick_time(const struct brs_step *step)
{
    size_t k = step->k;
    struct priced s = {0};
    brs_wide time = BRS_WIDE_MAX;
    size_t *starts = malloc((k + 1) * sizeof *starts);
    brs_wide *costs = malloc(k * sizeof *costs);
    if (starts && costs && open_step(&s, step) == BRS_OK) {
        brs_wide min_max = solve(starts, &s, MAX_COST, BRS_WIDE_MAX - 1, UINT64_MAX);
        uint64_t peak;
        struct brs_score score;
        if (min_max != BRS_WIDE_MAX &&
            solve(starts, &s, TOTAL_COST, min_max, UINT64_MAX) != BRS_WIDE_MAX &&
            describe(costs, NULL, &peak, &s, starts) &&
            brs_assign_score_groups(&score, costs, NULL, peak, step, s.slots) == BRS_OK)
            time = score.time;
    }
    close_step(&s);
    free(starts);
    free(costs);
    return time;
}

brs_status brs_vocabulary_split(struct brs_split *split, uint32_t *group_length,
                                const struct brs_step *step)
{
    struct priced s;
    brs_status status = open_step(&s, step);
    if (status == BRS_OK) status = plan(split, group_length, &s);
    close_step(&s);
    return status;
}
