/* internal.h - declarations shared by the files of libbrs; not installed. */
#ifndef BRS_INTERNAL_H
#define BRS_INTERNAL_H

#include "brs.h"

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Version of the plan algorithm (permutation, sort, planner, assignment).
 * It enters every fingerprint; bump it with any change of output and
 * regenerate tests/vectors.
 */
#define BRS_PLAN_ALGORITHM_VERSION 10

/* Costs are exact integers in micro cost units (1e-6), held in 128 bits.
 * Bounds (proof of no overflow): a length L < 2^32, alpha_micro <= 1e9 <
 * 2^30, so one sample's weight w(L) = L*1e6 + alpha_micro*L^2 < 2^52 + 2^94
 * < 2^95; a micro-batch holds at most BRS_MAX_STEP_SAMPLES = 2^24 samples,
 * so a cost is below 2^24 * 2^95 + intercept_micro (< 1e18 < 2^60) < 2^120,
 * and a sum over a whole step (each sample counted once, K <= 2^24
 * intercepts) stays below 2^121. Every product below is of a 2^24-bounded
 * count and a weight, so it fits too. */
__extension__ typedef unsigned __int128 brs_wide;
#define BRS_COST_UNITS_PER_ONE 1000000u

/* For the hot loops written once for two widths: inlined, so that the
 * width flag is a constant in each copy. */
#define BRS_ALWAYS_INLINE inline __attribute__((always_inline))

/* The resolved configuration, one field per line of options.def: an INT
 * option is an int64_t of its name, a DOUBLE one a uint64_t name_micro in
 * units of 1e-6 (exact, identical cost arithmetic on every machine). Every
 * field is validated on set. */
#define BRS_CONFIG_FIELD_INT(name) int64_t name;
#define BRS_CONFIG_FIELD_DOUBLE(name) uint64_t name##_micro;
struct brs_config {
#define BRS_OPTION(key, name, type, lower, upper, fallback, fingerprinted, help, values) \
    BRS_CONFIG_FIELD_##type(name)
#include "options.def"
#undef BRS_OPTION
};

/* The last option key of libbrs 1.0: options after it enter the fingerprint
 * only when set to a value other than their default, so that every plan 1.0
 * could make keeps its fingerprint (tests/vectors). */
#define BRS_OPT_LAST_OF_1_0 BRS_OPT_INTERCEPT

#define BRS_MESSAGE_SIZE 512

/* A handle's detail message. Every failing call on a handle writes it, the
 * read-only ones included (libgit2's rule: no message outlives the next
 * failure), so two read-only calls failing at once on one handle both write:
 * `busy` serialises them. */
struct brs_message {
    atomic_flag busy;
    char text[BRS_MESSAGE_SIZE];
};

struct brs_sampler {
    const uint32_t *lengths; /* borrowed, or == owned */
    uint32_t *owned;
    size_t count;
    uint32_t max_length;
    size_t max_length_index;
    uint64_t lengths_hash;
    struct brs_config config;
    struct brs_message message;
};

/* errors.c: brs_fail writes the message and returns `status`. The handles
 * are always heap objects the caller may not write, never const objects, so
 * a const handle's message may be written (the const of the API says the
 * call does not change what the handle describes). */
brs_status brs_fail(const struct brs_message *message, brs_status status, const char *format,
                    ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
void brs_message_clear(struct brs_message *message);
const char *brs_message_text(const struct brs_message *message);

/* options.c */
void brs_config_defaults(struct brs_config *config);
double brs_micro_to_double(uint64_t micro);
/* The fingerprint's share of the configuration: every fingerprinted option
 * of options.def mixed into h in table order. */
uint64_t brs_config_mix(uint64_t h, const struct brs_config *config);
/* brs_config_mix without the options that only split a step among ranks and
 * micro-steps (dp_size, batch_size, grad_accum, sync): the stream's share. */
uint64_t brs_config_mix_stream(uint64_t h, const struct brs_config *config);

/* prng.c: the epoch permutation, a keyed bijection of [0, n). */
struct brs_permutation {
    uint64_t n;
    uint64_t round_keys[4];
    uint64_t right_mask[4];
    unsigned right_bits[4], left_bits[4];
    unsigned bits; /* domain is [0, 2^bits), bits >= 2 */
    int identity;
};
uint64_t brs_splitmix64(uint64_t x);
void brs_permutation_init(struct brs_permutation *perm, uint64_t n, uint64_t seed,
                          uint64_t epoch, int shuffle);
uint64_t brs_permutation_apply(const struct brs_permutation *perm, uint64_t position);
/* out[j] = brs_permutation_apply(perm, first + j) for j < count. */
void brs_permutation_fill(const struct brs_permutation *perm, uint64_t first, size_t count,
                          uint64_t *out);

/* sort.c: items[i] belongs to the sample of length lengths[i]; items_out
 * gets the items ordered by length descending, stable, and `sorted` (unless
 * NULL) the lengths in that order. items_out must not overlap items;
 * scratch must hold 2 * n uint64_t. */
void brs_sort_by_length_desc(uint64_t *items_out, uint32_t *sorted, const uint32_t *lengths,
                             const uint64_t *items, size_t n, uint64_t *scratch);

/* The cost model shared by the planners. */
struct brs_cost_model {
    uint64_t intercept;  /* micro units */
    uint64_t alpha;      /* micro units */
    uint64_t max_tokens; /* 0: no cap */
};
/* The padded cost model, inline: it is on the planner's hot paths. */
static inline brs_wide brs_sample_weight(const struct brs_cost_model *model, uint32_t length)
{
    return (brs_wide)length * BRS_COST_UNITS_PER_ONE + (brs_wide)model->alpha * length * length;
}

/* A micro-batch of `size` samples whose longest has `head` tokens. */
static inline brs_wide brs_group_cost(const struct brs_cost_model *model, uint32_t head,
                                      size_t size)
{
    return model->intercept + (brs_wide)size * brs_sample_weight(model, head);
}

/* Whether intercept + (n + 1) w(L_0) < 2^64 for n samples sorted longest
 * first: then no group of up to n + 1 of them costs more than 64 bits. */
static inline int brs_fits_64_bits(const uint32_t *lengths, size_t n,
                                   const struct brs_cost_model *model)
{
    return brs_group_cost(model, lengths[0], n + 1) >> 64 == 0;
}

/* brs_sample_weight in 64-bit arithmetic, for samples of a narrow step
 * (brs_fits_64_bits). */
static inline uint64_t brs_sample_weight_narrow(const struct brs_cost_model *model,
                                                uint32_t length)
{
    return (uint64_t)length * BRS_COST_UNITS_PER_ONE + model->alpha * length * length;
}

/* brs_group_cost, in 64-bit arithmetic where `narrow` (brs_fits_64_bits of
 * samples that include this group); the hot loops pass a constant. */
static inline brs_wide brs_group_cost_narrow(const struct brs_cost_model *model, uint32_t head,
                                             size_t size, int narrow)
{
    if (!narrow) return brs_group_cost(model, head, size);
    return model->intercept + size * brs_sample_weight_narrow(model, head);
}

/* The largest group the token cap allows for a head of this length. */
static inline size_t brs_cap_size(const struct brs_cost_model *model, uint32_t head,
                                  size_t remaining)
{
    if (model->max_tokens == 0) return remaining;
    uint64_t s = model->max_tokens / head;
    return s < remaining ? (size_t)s : remaining;
}

/* The largest s <= limit with s * w <= budget, from an estimate a step or
 * two off (a floating-point one): exact whatever its rounding. */
static inline size_t brs_exact_size(size_t estimate, size_t limit, brs_wide w, brs_wide budget)
{
    size_t s = estimate < limit ? estimate : limit;
    while (s > 0 && (brs_wide)s * w > budget) s--;
    while (s < limit && (brs_wide)(s + 1) * w <= budget) s++;
    return s;
}

/* search.c, on n samples sorted longest first */
brs_wide brs_lower_bound(const uint32_t *lengths, size_t n, size_t k,
                         const struct brs_cost_model *model, brs_wide *weight_sum);
size_t brs_groups_for_cap(const uint32_t *lengths, size_t n, const struct brs_cost_model *model);
/* The same count, or some count above `limit` once it exceeds it. Every
 * length must be within the cap (else a group could take no sample). */
size_t brs_groups_for_cap_upto(const uint32_t *lengths, size_t n,
                               const struct brs_cost_model *model, size_t limit);
/* What the searches keep of a step's sorted lengths. Where lengths repeat
 * (at most n / BRS_RUNS_SHARE distinct): each sample's rank among the
 * step's distinct lengths (longest first), and by rank where its run of
 * samples ends and 1 / w(L). Elsewhere no runs (rank NULL) and 1 / w(L) by
 * sample, which saves building the ranks and a load per read. 1 / w(L) is
 * computed where first read (0 until then). Built once a step, in 2n
 * words; a search on samples [a, a + n) takes brs_probe_cache_at(c, a). */
enum { BRS_RUNS_SHARE = 4 };
struct brs_probe_cache {
    const uint32_t *rank;     /* by sample, from `first` on; NULL: no runs */
    const uint32_t *run_end;  /* by rank: one past the run's last sample */
    double *inverse_weight;   /* by rank, or without runs by sample from `first` on */
    size_t first;             /* the step position of the first sample */
};
struct brs_probe_cache brs_probe_cache_build(uint64_t *memory, const uint32_t *lengths, size_t n);
/* The distinct lengths among the n samples the cache covers; 0 without
 * runs. */
static inline size_t brs_probe_cache_runs(struct brs_probe_cache cache, size_t n)
{
    return cache.rank ? (size_t)cache.rank[n - 1] - cache.rank[0] + 1 : 0;
}
static inline struct brs_probe_cache brs_probe_cache_at(struct brs_probe_cache cache, size_t a)
{
    if (cache.rank)
        cache.rank += a;
    else
        cache.inverse_weight += a;
    cache.first += a;
    return cache;
}
/* The exact least max cost of k contiguous non-empty groups (n >= k, the
 * cap feasible), searched up from a lower bound. */
brs_wide brs_min_max_threshold(const uint32_t *lengths, struct brs_probe_cache cache, size_t n,
                               size_t k, const struct brs_cost_model *model,
                               brs_wide lower_bound);
/* The exact least peak of padded tokens among splits into k contiguous
 * non-empty groups of cost <= time under the model's cap (time feasible). */
uint64_t brs_least_peak(const uint32_t *lengths, struct brs_probe_cache cache, size_t n, size_t k,
                        const struct brs_cost_model *model, brs_wide time);

/* planner.c / packed.c: split n samples sorted by length descending
 * (`lengths`) into k groups. On success group g is [starts[g], starts[g+1])
 * of the sorted order for the padded planner; the packed planner writes
 * group ids into `group_of`. Both fill costs[g], the max cost, the lower
 * bound of the max cost and the certified lower bound on the step time of
 * the sync model. On BRS_ERR_CAP_INFEASIBLE *needed holds the smallest group
 * count that meets the cap (0 if unknown). The deal to slots is brs_assign
 * of the costs (the padded planner scores its candidates with it). */
struct brs_split {
    size_t *starts;     /* k + 1 entries (padded) */
    uint32_t *group_of; /* n entries (packed) */
    brs_wide *costs;    /* k entries */
    brs_wide max_cost;
    brs_wide lower_bound;
    brs_wide weight_sum; /* sum of sample weights, for the time bound */
    size_t needed;
    brs_wide time_lower_bound;
};
brs_status brs_plan_padded(struct brs_split *split, const uint32_t *lengths, size_t n, size_t k,
                           size_t dp_size, int sync, const struct brs_cost_model *model,
                           uint64_t *scratch);
brs_status brs_plan_packed(struct brs_split *split, const uint32_t *lengths, size_t n, size_t k,
                           size_t dp_size, int sync, const struct brs_cost_model *model,
                           uint32_t *scratch);
/* karmarkar_karp.c: the k-way largest differencing method on the packed
 * weights of n >= k samples (sorted longest first), blind to the cap:
 * group_of[i] in [0, k), every group non-empty. BRS_ERR_TOO_LARGE when it
 * would write more than its work bound (n - 1) * k allows. */
brs_status brs_karmarkar_karp(uint32_t *group_of, const uint32_t *lengths, size_t n, size_t k,
                              const struct brs_cost_model *model);
/* A lower bound on the step time under `sync` of every plan of these
 * samples (sorted longest first) within the model's cap: the min-max
 * `min_max` and the least total cost over dp_size. */
brs_wide brs_time_lower_bound(const uint32_t *lengths, size_t n, size_t k, size_t dp_size,
                              const struct brs_cost_model *model, brs_wide min_max,
                              brs_wide weight_sum);
/* The same bound computed from scratch (the min-max searched here): for
 * plans made elsewhere. A cap the samples cannot meet in k groups is
 * ignored, so the bound holds for every plan. */
brs_wide brs_step_time_bound(const uint32_t *lengths, size_t n, size_t k, size_t dp_size,
                             const struct brs_cost_model *model);

/* cost_sort.c: ids[0..count) (distinct, each below id_bound) reordered by
 * costs[id] descending, ties by the smaller id. scratch holds count
 * uint32_t, keys 2 * count uint64_t. */
void brs_sort_by_cost(uint32_t *ids, size_t count, size_t id_bound, const brs_wide *costs,
                      uint32_t *scratch, uint64_t *keys);

/* heap.c: ids ordered by keys[id] (largest first if max_first, else
 * smallest), ties by id. Each entry keeps a copy of its id's key, so a sift
 * reads the keys it compares side by side; `entries` holds the capacity.
 * After changing the top's key in keys[], call brs_heap_update_top. */
struct brs_heap_entry {
    brs_wide key;
    uint32_t id;
};
struct brs_heap {
    struct brs_heap_entry *entries;
    size_t size;
    const brs_wide *keys;
    int max_first;
};
static inline uint32_t brs_heap_top(const struct brs_heap *h) { return h->entries[0].id; }
/* The heap of ids 0..count-1, whose keys are already in heap order (sorted,
 * or all equal). */
void brs_heap_fill_in_order(struct brs_heap *h, size_t count);
void brs_heap_push(struct brs_heap *h, uint32_t id);
void brs_heap_pop(struct brs_heap *h);
void brs_heap_update_top(struct brs_heap *h);
/* `id` takes the top's place (the top leaves the heap). */
void brs_heap_replace_top(struct brs_heap *h, uint32_t id);

/* split_heuristic.c. brs_least_total_split: the least total cost among
 * splits of max cost <= limit (refine.c, within a budget of
 * BRS_REFINE_CELLS_PER_SAMPLE * n + BRS_REFINE_CELLS_BASE cells), else the
 * greedy from the right split to k. */
enum { BRS_REFINE_CELLS_PER_SAMPLE = 4, BRS_REFINE_CELLS_BASE = 4096 };
brs_status brs_least_total_split(struct brs_split *split, const uint32_t *lengths, size_t n,
                                 size_t k, const struct brs_cost_model *model, brs_wide limit);
brs_status brs_split_to_k(struct brs_split *split, const uint32_t *lengths, size_t n,
                          size_t groups, size_t k, const struct brs_cost_model *model);

/* staircase.c: the greedy group at `threshold` from `pos` (cost and cap),
 * leaving a sample for each of `groups_after` later groups. */
size_t brs_greedy_group(const uint32_t *lengths, size_t n, size_t pos, size_t groups_after,
                        const struct brs_cost_model *model, brs_wide threshold);
/* staircase.c: k groups (starts[0..k], costs[0..k-1]) of cost <= top: the
 * first dp_size greedy at top, the rest greedy at the least max cost their
 * groups allow. cache as for brs_min_max_threshold. */
brs_status brs_plan_staircase(size_t *starts, brs_wide *costs, const uint32_t *lengths,
                              struct brs_probe_cache cache, size_t n, size_t k, size_t dp_size,
                              const struct brs_cost_model *model, brs_wide top);

/* refine.c: the split of least total cost among those with max cost <=
 * threshold (at least the optimum), if its search needs at most `budget`
 * cells. Otherwise BRS_ERR_TOO_LARGE, with split->starts[0..groups] the
 * greedy split from the short end at threshold (the fallback's start) and
 * groups <= k in *greedy_groups unless that is NULL. */
brs_status brs_refine_least_total(struct brs_split *split, const uint32_t *lengths, size_t n,
                                  size_t k, const struct brs_cost_model *model,
                                  brs_wide threshold, size_t budget, size_t *greedy_groups);

/* layered.c: k = dp_size * grad_accum groups, grad_accum contiguous layers
 * of dp_size groups each at the layer's min-max and least peak under the
 * model's cap; BRS_ERR_INVALID_ARGUMENT when no layering fits the cap. */
brs_status brs_plan_layered(size_t *starts, brs_wide *costs, const uint32_t *lengths,
                            struct brs_probe_cache cache, size_t n, size_t dp_size,
                            size_t grad_accum, const struct brs_cost_model *model);
/* layered.c: the same with every cut, where the search over them (a
 * bisection for two layers, a dynamic programme for more) is small: the
 * fastest layering under the model's cap, with a step time of
 * at most `beat`; BRS_ERR_TOO_LARGE where the step is too large or none is
 * that fast. */
brs_status brs_plan_layered_exact(size_t *starts, brs_wide *costs, const uint32_t *lengths,
                                  struct brs_probe_cache cache, size_t n, size_t dp_size,
                                  size_t grad_accum, const struct brs_cost_model *model,
                                  brs_wide beat);
/* hill_climb.c: transformers' batch_rebalance split of the n sorted samples
 * into k contiguous groups (no cap; the caller checks it); BRS_ERR_TOO_LARGE
 * beyond 4096 groups. */
brs_status brs_plan_rebalance_climb(size_t *starts, brs_wide *costs, const uint32_t *lengths,
                                    size_t n, size_t k, size_t dp_size,
                                    const struct brs_cost_model *model);
/* layered.c: n samples into `ranks` contiguous groups of cost <= time (the
 * exact min-max, or any feasible time): the least peak, then the least total
 * cost at that peak where its search is small enough. This is the exact
 * lexicographic optimum of a step of one micro-step. */
brs_status brs_plan_layer(size_t *starts, brs_wide *costs, const uint32_t *lengths,
                          struct brs_probe_cache cache, size_t n, size_t ranks,
                          const struct brs_cost_model *model, brs_wide time);

/* planner.c: a candidate's score, lexicographic: the step time of the sync
 * model (the deal of brs_assign), the peak padded tokens, the total cost.
 * slot_scratch holds k. */
struct brs_score {
    brs_wide time, peak, total;
};
brs_status brs_score_split(struct brs_score *score, const size_t *starts, const brs_wide *costs,
                           const uint32_t *lengths, size_t k, size_t dp_size, int sync,
                           uint32_t *slot_scratch);
int brs_score_better(const struct brs_score *a, const struct brs_score *b);

/* polish.c: boundary moves on a split (starts/costs, changed in place)
 * while its score improves within the model's cap. */
brs_status brs_polish(size_t *starts, brs_wide *costs, const uint32_t *lengths, size_t n, size_t k,
                      size_t dp_size, int sync, const struct brs_cost_model *model);

/* exact.c: every contiguous split of a small step (at most EXACT_SPLITS of
 * them), scored like the planner's candidates; BRS_ERR_TOO_LARGE when the
 * step has more. Writes the best split within the model's cap, if any. */
brs_status brs_plan_exhaustive(size_t *starts, brs_wide *costs, const uint32_t *lengths, size_t n,
                               size_t k, size_t dp_size, int sync,
                               const struct brs_cost_model *model);

/* assign.c: slot_of[g] gets the rank-major slot (rank * grad_accum + micro)
 * of group g for the sync model, and the two synchronised step times of that
 * deal; a function of the costs alone. */
brs_status brs_assign(uint32_t *slot_of, brs_wide *micro_sync, brs_wide *step_sync,
                      const brs_wide *costs, size_t k, size_t dp_size, int sync);

/* baselines.c: the fixed-size strategies. brs_baseline_slots deals the n
 * drawn dataset indices (read order) into K = dp_size * grad_accum chunks,
 * chunk c to slot (c % dp_size) * grad_accum + c / dp_size, writing
 * slot_start[0..K] and the indices slot by slot. */
void brs_baseline_slots(uint64_t *indices, size_t *slot_start, const uint64_t *drawn, size_t n,
                        size_t dp_size, size_t grad_accum);
/* Samples per megabatch of transformers' length grouping of this sampler's
 * dataset (at most N). */
size_t brs_grouped_megabatch(const brs_sampler *sampler);
/* The length-grouped epoch order (N dataset indices), cached in the plan
 * handle for one (sampler fingerprint, epoch); never global state. */
struct brs_grouped_order {
    int valid;
    uint64_t fingerprint, epoch;
    uint64_t *order;
    uint64_t *scratch;
};
brs_status brs_grouped_order_get(const uint64_t **order, struct brs_grouped_order *cache,
                                 const brs_sampler *sampler, uint64_t epoch);
void brs_grouped_order_free(struct brs_grouped_order *cache);

/* The plan handle (plan.c, plan_describe.c, plan_load.c, plan_query.c). */
struct brs_plan {
    int ready;
    int batch; /* planned by brs_plan_compute_batch: errors name the batch */
    uint64_t epoch, step;
    size_t num_samples, k, dp_size, grad_accum;

    /* Results, by rank-major slot (rank * grad_accum + micro). */
    uint64_t *indices;   /* num_samples, slot by slot */
    size_t *slot_start;  /* k + 1 */
    uint64_t *padded;    /* k */
    uint64_t *real;      /* k */
    brs_wide *slot_cost; /* k */
    brs_wide max_cost, lower_bound, total_cost, micro_sync, step_sync, time_lower_bound;
    uint64_t total_padded, total_real, max_padded;
    size_t megabatch_size; /* length_grouped, else 0 */

    /* Workspace, grown on demand and reused across steps. */
    size_t sample_capacity, group_capacity;
    uint64_t *draw_index;    /* n: dataset index of each drawn sample */
    uint32_t *draw_length;   /* n */
    uint64_t *sorted_index;  /* n: draw_index, longest first */
    uint32_t *sorted_length; /* n */
    uint64_t *sort_scratch;  /* 2n */
    uint32_t *group_of;      /* n: packed mode */
    size_t *starts;          /* k + 1: padded mode */
    brs_wide *group_cost;    /* k */
    uint32_t *group_of_slot; /* k: fill_slots */
    uint32_t *slot_of;       /* k */
    uint32_t *pack_scratch;  /* 2k */
    struct brs_grouped_order grouped; /* the length_grouped epoch order */

    struct brs_message message;
};

/* plan.c: buffers for n samples and k micro-batches (BRS_ERR_NO_MEMORY
 * leaves the plan's arrays as they were); the shape of a step of this
 * sampler; its cost model; the step's lengths gathered from draw_index,
 * checked (0, and above max_tokens when cap_checked) and sorted. */
brs_status brs_plan_reserve(brs_plan *p, size_t n, size_t k);
void brs_plan_set_shape(brs_plan *p, const brs_sampler *s, uint64_t epoch, uint64_t step);
struct brs_cost_model brs_plan_cost_model(const brs_sampler *s);
brs_status brs_plan_gather(brs_plan *p, const brs_sampler *s, int cap_checked);
/* plan.c: step `step` of `epoch` of the epoch permutation drawn into p,
 * gathered and sorted as brs_plan_gather does (0 lengths checked, the cap
 * not): what the balanced planner starts from. The sampler is checked. */
brs_status brs_plan_draw_sorted(brs_plan *p, const brs_sampler *s, uint64_t epoch,
                                uint64_t step);
/* plan.c: step `step` of `epoch` of a sampler whose configuration is
 * checked (brs_config_check, or brs_plan_compute_batch's own checks) and
 * the step in range: drawn, gathered, planned with its strategy. */
brs_status brs_plan_step(brs_plan *p, const brs_sampler *s, uint64_t epoch, uint64_t step);
/* epoch_check.c: the least max_tokens above `known` with which k groups
 * hold n >= k lengths sorted longest first (padded), or `known` if that
 * already does. */
uint64_t brs_least_cap(const uint32_t *sorted, size_t n, size_t k, uint64_t known);
/* plan_batch.c: the cap error of a brs_plan_compute_batch step. */
brs_status brs_batch_cap_message(brs_plan *p, const brs_sampler *s,
                                 const struct brs_split *split);
/* plan_describe.c: totals, peaks and the time bound of the filled slots
 * (lower_bound and weight_sum those of the step's samples); and the whole
 * description of slots filled elsewhere than by the planner. */
void brs_plan_summarise(brs_plan *p, brs_wide lower_bound, brs_wide weight_sum,
                        const struct brs_cost_model *model);
void brs_plan_describe(brs_plan *p, const brs_sampler *s, const struct brs_cost_model *model,
                       int packed);

/* sampler.c */
brs_status brs_config_check(const struct brs_sampler *sampler, const struct brs_message *message);
uint64_t brs_steps_in_epoch(const struct brs_sampler *sampler);

#endif
