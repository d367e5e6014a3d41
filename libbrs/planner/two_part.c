/* two_part.c - the split of a step whose samples carry images. A
 * micro-batch then costs its text (padded: its size times the weight of its
 * longest sample; packed: the sum of its samples' weights) plus the encoder
 * cost of its images, which does not follow the text length: the contiguous
 * splits of the length order that the text planner searches are no longer
 * enough. Small steps are searched whole (every set partition); larger ones
 * start from greedy splits and from the text planner's, each improved by
 * moves and swaps off the costliest group, and the best by the objective
 * (objective.c) wins. docs/algorithm.md, "Two parts", says what is exact
 * and what is certified. */
#include "planner/internal.h"
#include "util/stable_sort.h"

#include <stdlib.h>
#include <string.h>

/* What a group's cost and caps need. Members are kept in sample order, so
 * the longest is the first (the samples are sorted longest first). */
struct group {
    size_t size;
    uint32_t head;    /* the longest length; 0 when empty */
    uint64_t tokens;  /* lengths summed */
    brs_wide weights; /* text weights summed (the packed cost) */
    brs_wide encoder; /* encoder costs summed */
    uint64_t patches;
};

struct work {
    const struct brs_step *step;
    const uint32_t *lengths; /* n: what a micro-batch pads to (padded) or its tokens (packed) */
    brs_wide *weight;        /* n: each sample's text weight */
    brs_wide *encoder;       /* n: each sample's encoder cost */
    struct group *groups;
    brs_wide *costs;
    uint32_t *group_of;
    uint32_t *members_a, *members_b, *order, *slots; /* n, n, n, k */
};

static brs_wide group_cost(const struct work *w, const struct group *g)
{
    const struct brs_cost_model *model = &w->step->model;
    brs_wide text = w->step->packed ? brs_packed_cost(model, g->weights)
                                    : brs_group_cost(model, g->head, g->size);
    return text + g->encoder;
}

/* The tokens a group holds in memory: padded, or its packed row. */
static uint64_t group_tokens(const struct work *w, const struct group *g)
{
    return w->step->packed ? g->tokens : (uint64_t)g->size * g->head;
}

static int group_fits(const struct work *w, const struct group *g)
{
    const struct brs_cost_model *model = &w->step->model;
    if (model->max_tokens && group_tokens(w, g) > model->max_tokens) return 0;
    return !model->max_encoder_tokens || g->patches <= model->max_encoder_tokens;
}

static struct group with_sample(const struct work *w, struct group g, uint32_t i)
{
    uint32_t length = w->lengths[i];
    g.size++;
    if (length > g.head) g.head = length;
    g.tokens += length;
    g.weights += w->weight[i];
    g.encoder += w->encoder[i];
    g.patches += w->step->loads[i].patches;
    return g;
}

/* g without member i; members lists g's samples in order (longest first). */
static struct group without_sample(const struct work *w, struct group g, uint32_t i,
                                   const uint32_t *members)
{
    g.size--;
    if (i == members[0]) g.head = g.size ? w->lengths[members[1]] : 0;
    g.tokens -= w->lengths[i];
    g.weights -= w->weight[i];
    g.encoder -= w->encoder[i];
    g.patches -= w->step->loads[i].patches;
    return g;
}

/* Every group rebuilt from group_of, with its cost; 0 when one breaks a cap. */
static int rebuild(struct work *w)
{
    size_t k = w->step->k;
    memset(w->groups, 0, k * sizeof *w->groups);
    for (size_t i = 0; i < w->step->n; i++)
        w->groups[w->group_of[i]] = with_sample(w, w->groups[w->group_of[i]], (uint32_t)i);
    int fits = 1;
    for (size_t g = 0; g < k; g++) {
        w->costs[g] = group_cost(w, &w->groups[g]);
        fits &= w->groups[g].size > 0 && group_fits(w, &w->groups[g]);
    }
    return fits;
}

static brs_status score_of(struct brs_score *score, struct work *w)
{
    uint64_t peak = 0;
    for (size_t g = 0; g < w->step->k; g++) {
        uint64_t tokens = group_tokens(w, &w->groups[g]);
        if (tokens > peak) peak = tokens;
    }
    return brs_assign_score_groups(score, w->costs, NULL, peak, w->step, w->slots);
}

/* The best split seen: kept when group_of scores better. */
struct best {
    uint32_t *group_of;
    brs_wide *costs;
    struct brs_score score;
    int found;
};

static brs_status offer(struct best *best, struct work *w)
{
    if (!rebuild(w)) return BRS_OK;
    struct brs_score score;
    brs_status status = score_of(&score, w);
    if (status != BRS_OK) return status;
    if (best->found && !brs_objective_better(&score, &best->score)) return BRS_OK;
    best->score = score;
    best->found = 1;
    memcpy(best->group_of, w->group_of, w->step->n * sizeof *w->group_of);
    memcpy(best->costs, w->costs, w->step->k * sizeof *w->costs);
    return BRS_OK;
}

/* ---- the exact search: every set partition into k blocks ---------------- */

/* S(n, k), the number of splits of n samples into k non-empty groups,
 * saturated just above `limit`. */
static size_t split_count(size_t n, size_t k, size_t limit)
{
    if (k > n) return 0;
    if (k == 1 || k == n) return 1;
    /* S(n, k) is least at k = 2 or k = n - 1 (2^(n-1) - 1 and n(n-1)/2),
     * both above any limit here from n = 400 on: no O(nk) count then. */
    if (n >= 400) return limit + 1;
    size_t *row = calloc(k + 1, sizeof *row);
    if (!row) return limit + 1;
    row[0] = 1;
    for (size_t i = 1; i <= n; i++)
        for (size_t j = (i < k ? i : k); j >= 1; j--) {
            size_t next = j * row[j] + row[j - 1];
            row[j] = next > limit ? limit + 1 : next;
            if (j == 1) row[0] = 0;
        }
    size_t count = row[k];
    free(row);
    return count;
}

/* Sample i joins a used group or opens the next one (restricted growth
 * strings: each split once). */
static brs_status enumerate(struct best *best, struct work *w, size_t i, size_t used)
{
    size_t n = w->step->n, k = w->step->k;
    if (used + (n - i) < k) return BRS_OK;
    if (i == n) return offer(best, w);
    size_t limit = used < k ? used + 1 : k;
    for (size_t g = 0; g < limit; g++) {
        w->group_of[i] = (uint32_t)g;
        brs_status status = enumerate(best, w, i + 1, g == used ? used + 1 : used);
        if (status != BRS_OK) return status;
    }
    return BRS_OK;
}

/* ---- greedy starts -------------------------------------------------------- */

/* How full a group is: the larger of its two fractions of a cap (tokens and
 * patches), as num / den; a cap not set counts 0. Compared exactly. */
struct fill {
    brs_wide num, den;
};

static struct fill fill_of(const struct work *w, const struct group *g)
{
    const struct brs_cost_model *model = &w->step->model;
    struct fill text = {group_tokens(w, g), model->max_tokens};
    struct fill image = {g->patches, model->max_encoder_tokens};
    if (!model->max_tokens) text = (struct fill){0, 1};
    if (!model->max_encoder_tokens) image = (struct fill){0, 1};
    return text.num * image.den >= image.num * text.den ? text : image;
}

static int fuller(struct fill a, struct fill b)
{
    return a.num * b.den > b.num * a.den;
}

/* Greedy starts: samples in `order` each join a group within the caps (an
 * empty one while as many samples are left as groups are empty): the one it
 * leaves cheapest, or, when the caps are tight, the fullest it fits in (best
 * fit, which packs where cheapest-first strands a sample). */
enum greedy_rule { CHEAPEST, FULLEST };

static int better_group(const struct work *w, enum greedy_rule rule, const struct group *joined,
                        const struct group *chosen)
{
    if (rule == FULLEST) return fuller(fill_of(w, joined), fill_of(w, chosen));
    return group_cost(w, joined) < group_cost(w, chosen);
}

static int greedy(struct work *w, enum greedy_rule rule)
{
    size_t n = w->step->n, k = w->step->k, empty = k;
    memset(w->groups, 0, k * sizeof *w->groups);
    for (size_t t = 0; t < n; t++) {
        uint32_t i = w->order[t];
        int must_open = n - t == empty;
        size_t chosen = k;
        struct group chosen_group = {0};
        int tried_empty = 0;
        for (size_t g = 0; g < k; g++) {
            int is_empty = w->groups[g].size == 0;
            if ((must_open && !is_empty) || (is_empty && tried_empty)) continue;
            tried_empty |= is_empty;
            struct group joined = with_sample(w, w->groups[g], i);
            if (!group_fits(w, &joined)) continue;
            if (chosen == k || better_group(w, rule, &joined, &chosen_group))
                chosen = g, chosen_group = joined;
        }
        if (chosen == k) return 0;
        if (w->groups[chosen].size == 0) empty--;
        w->groups[chosen] = chosen_group;
        w->group_of[i] = (uint32_t)chosen;
    }
    return 1;
}

/* The two greedy orders: longest text first (the order of the step), and
 * costliest sample (text and images) first. */
static int costlier(const void *context, uint32_t a, uint32_t b)
{
    const struct work *w = context;
    return w->weight[a] + w->encoder[a] > w->weight[b] + w->encoder[b];
}

/* Stable, costliest first (members_a is free scratch here). */
static void sort_by_standalone_cost(struct work *w)
{
    brs_stable_sort_ids(w->order, w->members_a, w->step->n, costlier, w);
}

/* ---- the descent: moves and swaps off the costliest group ---------------- */

enum { DESCENT_TARGETS = 4, SWAP_MEMBERS = 32 };

static size_t members_of(const struct work *w, uint32_t g, uint32_t *out)
{
    size_t count = 0;
    for (size_t i = 0; i < w->step->n; i++)
        if (w->group_of[i] == g) out[count++] = (uint32_t)i;
    return count;
}

/* The DESCENT_TARGETS cheapest groups other than `skip`, cheapest first. */
static size_t cheapest(const struct work *w, uint32_t skip, uint32_t *targets)
{
    size_t count = 0;
    for (size_t g = 0; g < w->step->k; g++) {
        if (g == skip) continue;
        size_t at = count < DESCENT_TARGETS ? count++ : DESCENT_TARGETS;
        if (at == DESCENT_TARGETS && w->costs[g] >= w->costs[targets[DESCENT_TARGETS - 1]])
            continue;
        if (at == DESCENT_TARGETS) at--;
        while (at > 0 && w->costs[targets[at - 1]] > w->costs[g]) {
            targets[at] = targets[at - 1];
            at--;
        }
        targets[at] = (uint32_t)g;
    }
    return count;
}

struct change {
    uint32_t from, to, sample, back; /* back: the sample swapped from `to`, or UINT32_MAX */
    struct group a, b;
    brs_wide top;
};

static void consider(struct change *best, const struct work *w, struct change c)
{
    if (!group_fits(w, &c.a) || !group_fits(w, &c.b)) return;
    brs_wide ca = group_cost(w, &c.a), cb = group_cost(w, &c.b);
    c.top = ca > cb ? ca : cb;
    if (c.top < best->top) *best = c;
}

static void try_moves(struct change *best, const struct work *w, uint32_t from, size_t na,
                      uint32_t to)
{
    const uint32_t *ma = w->members_a;
    struct group a = w->groups[from], b = w->groups[to];
    for (size_t x = 0; x < na && na > 1; x++)
        consider(best, w,
                 (struct change){from, to, ma[x], UINT32_MAX, without_sample(w, a, ma[x], ma),
                                 with_sample(w, b, ma[x]), 0});
}

static void try_swaps(struct change *best, const struct work *w, uint32_t from, size_t na,
                      uint32_t to, size_t nb)
{
    const uint32_t *ma = w->members_a, *mb = w->members_b;
    struct group a = w->groups[from], b = w->groups[to];
    size_t sa = na < SWAP_MEMBERS ? na : SWAP_MEMBERS, sb = nb < SWAP_MEMBERS ? nb : SWAP_MEMBERS;
    for (size_t x = 0; x < sa; x++)
        for (size_t y = 0; y < sb; y++) {
            uint32_t i = ma[x], j = mb[y];
            if (w->lengths[i] == w->lengths[j] &&
                w->step->loads[i].patches == w->step->loads[j].patches &&
                w->encoder[i] == w->encoder[j])
                continue; /* the same sample twice over: nothing changes */
            consider(best, w,
                     (struct change){from, to, i, j, with_sample(w, without_sample(w, a, i, ma), j),
                                     with_sample(w, without_sample(w, b, j, mb), i), 0});
        }
}

/* One improving change off the costliest group, applied; 0 when none. */
static int descend_once(struct work *w)
{
    uint32_t top = 0, targets[DESCENT_TARGETS];
    for (size_t g = 1; g < w->step->k; g++)
        if (w->costs[g] > w->costs[top]) top = (uint32_t)g;
    size_t na = members_of(w, top, w->members_a);
    struct change best = {.top = w->costs[top]};
    size_t count = cheapest(w, top, targets);
    /* Moves first, then swaps (quadratic: up to SWAP_MEMBERS a side) with each target. */
    for (size_t t = 0; t < count; t++) try_moves(&best, w, top, na, targets[t]);
    for (size_t t = 0; t < count; t++) {
        size_t nb = members_of(w, targets[t], w->members_b);
        try_swaps(&best, w, top, na, targets[t], nb);
    }
    if (best.top == w->costs[top]) return 0;
    w->group_of[best.sample] = best.to;
    if (best.back != UINT32_MAX) w->group_of[best.back] = best.from;
    w->groups[best.from] = best.a;
    w->groups[best.to] = best.b;
    w->costs[best.from] = group_cost(w, &best.a);
    w->costs[best.to] = group_cost(w, &best.b);
    return 1;
}

/* Each accepted change takes a group at the top cost below it and keeps the
 * other below it too, so the count of groups at the top falls: it ends. */
static void descend(struct work *w)
{
    size_t rounds = 4 * w->step->n + 64;
    if (!rebuild(w)) return;
    while (rounds-- > 0 && descend_once(w)) {
    }
}

static brs_status from_start(struct best *best, struct work *w, int ready)
{
    if (!ready) return BRS_OK;
    brs_status status = offer(best, w);
    if (status != BRS_OK) return status;
    descend(w);
    return offer(best, w);
}

static brs_status search(struct best *best, struct work *w, const uint32_t *text_split)
{
    const struct brs_step *s = w->step;
    if (split_count(s->n, s->k, BRS_TWO_PART_EXACT_SPLITS) <= BRS_TWO_PART_EXACT_SPLITS)
        return enumerate(best, w, 0, 0);
    brs_status status = BRS_OK;
    if (text_split) {
        memcpy(w->group_of, text_split, s->n * sizeof *w->group_of);
        status = from_start(best, w, 1);
    }
    for (size_t i = 0; i < s->n; i++) w->order[i] = (uint32_t)i;
    if (status == BRS_OK) status = from_start(best, w, greedy(w, CHEAPEST));
    /* Only where no start met the caps: best fit, longest text first. */
    if (status == BRS_OK && !best->found) status = from_start(best, w, greedy(w, FULLEST));
    sort_by_standalone_cost(w);
    if (status == BRS_OK) status = from_start(best, w, greedy(w, CHEAPEST));
    return status;
}

brs_status brs_two_part_split(uint32_t *group_of, brs_wide *costs, const struct brs_step *step,
                              const uint32_t *text_split)
{
    size_t n = step->n, k = step->k;
    struct work w = {.step = step,
                     .lengths = step->packed ? step->lengths : step->planned,
                     .costs = malloc(k * sizeof(brs_wide)),
                     .weight = malloc(n * sizeof(brs_wide)),
                     .encoder = malloc(n * sizeof(brs_wide)),
                     .groups = malloc(k * sizeof(struct group)),
                     .group_of = malloc(n * sizeof(uint32_t)),
                     .members_a = malloc(n * sizeof(uint32_t)),
                     .members_b = malloc(n * sizeof(uint32_t)),
                     .order = malloc(n * sizeof(uint32_t)),
                     .slots = malloc(k * sizeof(uint32_t))};
    struct best best = {.group_of = group_of, .costs = costs};
    brs_status status = BRS_ERR_NO_MEMORY;
    if (w.costs && w.weight && w.encoder && w.groups && w.group_of && w.members_a && w.members_b &&
        w.order && w.slots) {
        for (size_t i = 0; i < n; i++) {
            w.weight[i] = brs_sample_weight(&step->model, w.lengths[i]);
            w.encoder[i] = brs_encoder_cost(&step->model, &step->loads[i]);
        }
        status = search(&best, &w, text_split);
        if (status == BRS_OK && !best.found) status = BRS_ERR_CAP_INFEASIBLE;
    }
    free(w.costs);
    free(w.weight);
    free(w.encoder);
    free(w.groups);
    free(w.group_of);
    free(w.members_a);
    free(w.members_b);
    free(w.order);
    free(w.slots);
    return status;
}
