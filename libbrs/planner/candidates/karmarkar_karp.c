/* karmarkar_karp.c - the multiway largest differencing method (Karmarkar-
 * Karp, k-way) on the samples' packed weights, a candidate of packed mode.
 *
 * Each sample starts as a k-tuple of subsets: itself and k - 1 empty ones.
 * The two tuples of largest spread (largest subset sum minus smallest) are
 * combined by pairing the largest subset of one with the smallest of the
 * other, the second largest with the second smallest, and so on, until one
 * tuple is left: its k subsets are the groups. Settling the large spreads
 * first leaves the many small ones to even out the rest, which is where it
 * beats LPT, whose last placements can only add.
 *
 * A tuple stores only its non-empty subsets, sorted by sum (largest first,
 * ties by smallest sample index); subsets are disjoint and non-empty, so all
 * tuples together hold at most n of them, and a subset is a linked list of
 * its samples, so joining two costs O(1). A tuple is named by the smallest
 * sample index it holds; ties between tuples go to the smaller name. The
 * result is then a function of the weights alone.
 */
#include "planner/candidates/candidate.h"
#include "planner/internal.h"
#include "util/heap.h"
#include "util/wide.h"

#include <stdlib.h>

/* The most subset entries the combinations may write: each of the n - 1
 * writes at most k, and steps measured write 40-100% of that, so the bound
 * decides up front (no work is thrown away) and keeps KK within a few tens
 * of milliseconds; B = 4096 at K = 1024 is inside it. Larger steps hold many
 * samples per group, where LPT is already close to the bound. */
#define KK_MAX_WORK ((uint64_t)1 << 22)

struct kk {
    size_t k;
    /* by subset, a subset being named by the first sample of its list */
    brs_wide *sum;
    uint32_t *tail, *next, *low; /* last sample, next in the list, smallest index */
    /* by tuple name */
    uint32_t **subsets; /* sorted; a singleton points into `self` */
    uint32_t *count, *self;
    brs_wide *spread;
    uint32_t *sort_scratch; /* k */
};

static int subset_before(const struct kk *s, uint32_t a, uint32_t b)
{
    if (s->sum[a] != s->sum[b]) return s->sum[a] > s->sum[b];
    return s->low[a] < s->low[b];
}

/* Below this many, insertion sort (no calls, no copies) is faster. */
enum { SORT_BY_INSERTION = 12 };

/* Top-down merge sort of ids by subset_before. Runs already in order are not
 * merged, so the concatenation of a few sorted runs (what a combination
 * mostly writes) sorts in near-linear time. */
static void sort_subsets(const struct kk *s, uint32_t *ids, size_t count)
{
    if (count <= SORT_BY_INSERTION) {
        for (size_t i = 1; i < count; i++)
            for (size_t j = i; j > 0 && subset_before(s, ids[j], ids[j - 1]); j--) {
                uint32_t t = ids[j];
                ids[j] = ids[j - 1];
                ids[j - 1] = t;
            }
        return;
    }
    size_t half = count / 2;
    sort_subsets(s, ids, half);
    sort_subsets(s, ids + half, count - half);
    if (!subset_before(s, ids[half], ids[half - 1])) return;
    uint32_t *tmp = s->sort_scratch;
    for (size_t i = 0; i < half; i++) tmp[i] = ids[i];
    size_t i = 0, j = half, out = 0;
    while (i < half && j < count)
        ids[out++] = subset_before(s, ids[j], tmp[i]) ? ids[j++] : tmp[i++];
    while (i < half) ids[out++] = tmp[i++];
}

static void join(struct kk *s, uint32_t a, uint32_t b)
{
    s->next[s->tail[a]] = b;
    s->tail[a] = s->tail[b];
    s->sum[a] += s->sum[b];
    if (s->low[b] < s->low[a]) s->low[a] = s->low[b];
}

static brs_wide spread_of(const struct kk *s, const uint32_t *subsets, size_t count)
{
    brs_wide smallest = count == s->k ? s->sum[subsets[count - 1]] : 0;
    return s->sum[subsets[0]] - smallest;
}

/* A singleton's subset list is its entry of `self`; the others are owned. */
static void release(struct kk *s, uint32_t tuple)
{
    if (s->subsets[tuple] != s->self + tuple) free(s->subsets[tuple]);
}

/* Tuple a's i-th largest subset with tuple b's i-th smallest (the empty ones
 * last in each); the result is named min(a, b). 0 when out of memory. */
static int combine(struct kk *s, uint32_t a, uint32_t b, uint32_t *name)
{
    size_t k = s->k, ca = s->count[a], cb = s->count[b];
    size_t c = ca + cb < k ? ca + cb : k;
    uint32_t *out = malloc(c * sizeof *out);
    if (!out) return 0;
    const uint32_t *sa = s->subsets[a], *sb = s->subsets[b];
    size_t m = 0;
    for (size_t i = 0; i < ca; i++) {
        size_t j = k - 1 - i; /* b's partner, counted from its largest */
        if (j < cb) join(s, sa[i], sb[j]);
        out[m++] = sa[i];
    }
    size_t unpaired = cb < k - ca ? cb : k - ca;
    for (size_t j = 0; j < unpaired; j++) out[m++] = sb[j];
    sort_subsets(s, out, c);
    release(s, a);
    release(s, b);
    *name = a < b ? a : b;
    s->subsets[*name] = out;
    s->count[*name] = (uint32_t)c;
    s->spread[*name] = spread_of(s, out, c);
    return 1;
}

static void free_tuples(struct kk *s, const struct brs_heap *alive)
{
    for (size_t i = 0; i < alive->size; i++) release(s, alive->entries[i].id);
}

/* Differencing until one tuple is left (heap of tuple names by spread). */
static brs_status difference(struct kk *s, struct brs_heap *h)
{
    while (h->size > 1) {
        uint32_t a = brs_heap_top(h), name;
        brs_heap_pop(h);
        uint32_t b = brs_heap_top(h);
        if (!combine(s, a, b, &name)) {
            brs_heap_push(h, a); /* still alive: freed with the others */
            return BRS_ERR_NO_MEMORY;
        }
        brs_heap_replace_top(h, name); /* the combined tuple replaces both */
    }
    return BRS_OK;
}

static void write_groups(uint32_t *group_of, const struct kk *s, uint32_t tuple)
{
    for (uint32_t g = 0; g < s->count[tuple]; g++) {
        uint32_t i = s->subsets[tuple][g];
        for (;;) {
            group_of[i] = g;
            if (i == s->tail[s->subsets[tuple][g]]) break;
            i = s->next[i];
        }
    }
}

/* group_of[i] in [0, k) for n >= k samples (sorted longest first), every
 * group non-empty, blind to the cap (packed.c checks it); BRS_ERR_TOO_LARGE
 * when the combinations would write more than KK_MAX_WORK entries. */
static brs_status build(const struct brs_candidate_input *in, struct brs_candidate_output *out)
{
    const uint32_t *lengths = in->lengths;
    size_t n = in->step->n, k = in->step->k;
    uint32_t *group_of = out->group_of;
    const struct brs_cost_model *model = in->model;
    if ((uint64_t)(n - 1) * k > KK_MAX_WORK) return BRS_ERR_TOO_LARGE;
    struct kk s = {.k = k};
    s.sum = malloc(2 * n * sizeof *s.sum);
    s.tail = malloc((5 * n + k) * sizeof *s.tail);
    s.subsets = malloc(n * sizeof *s.subsets);
    struct brs_heap h = {malloc(n * sizeof *h.entries), 0, NULL, 1};
    brs_status status = s.sum && s.tail && s.subsets && h.entries ? BRS_OK : BRS_ERR_NO_MEMORY;
    if (status == BRS_OK) {
        s.spread = s.sum + n;
        s.next = s.tail + n;
        s.low = s.next + n;
        s.count = s.low + n;
        s.self = s.count + n;
        s.sort_scratch = s.self + n;
        h.keys = s.spread;
        /* Longest first with ties by index is already a max-heap of spreads. */
        for (size_t i = 0; i < n; i++) {
            s.sum[i] = s.spread[i] = brs_sample_weight(model, lengths[i]);
            s.tail[i] = s.low[i] = s.self[i] = (uint32_t)i;
            s.subsets[i] = s.self + i;
            s.count[i] = 1;
        }
        brs_heap_fill_in_order(&h, n);
        status = difference(&s, &h);
    }
    if (status == BRS_OK && s.count[brs_heap_top(&h)] != k) status = BRS_ERR_INVALID_ARGUMENT;
    if (status == BRS_OK) write_groups(group_of, &s, brs_heap_top(&h));
    free_tuples(&s, &h); /* the tuples left in the heap: none where nothing was allocated */
    free(s.sum);
    free(s.tail);
    free(s.subsets);
    free(h.entries);
    return status;
}

const struct brs_candidate brs_karmarkar_karp_candidate = {"Karmarkar-Karp", NULL, build, 0};
