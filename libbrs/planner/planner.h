/* planner/planner.h - the planner's face: what api/ calls. The cost model,
 * the padding, a step to plan (struct brs_step) and the one entry that
 * plans it (brs_planner_plan), the shape vocabulary, the bounds of plans
 * made elsewhere, the least cap and the fixed-size strategies. What the
 * planner's own files share is planner/internal.h. Internal, not installed. */
#ifndef BRS_PLANNER_PLANNER_H
#define BRS_PLANNER_PLANNER_H

#include "brs.h"
#include "util/wide.h"

#include <stddef.h>
#include <stdint.h>

/* ---- The cost model: a micro-batch's cost in exact integers (micro cost units, util/wide.h),
 * inline for the hot paths. ---- */

/* The cost model shared by the planners: the text part, then the vision
 * encoder's (docs/algorithm.md, "Two parts"). */
struct brs_cost_model {
    uint64_t intercept;          /* micro units */
    uint64_t alpha;              /* micro units */
    uint64_t max_tokens;         /* 0: no cap */
    uint64_t encoder_weight;     /* micro units per patch */
    uint64_t encoder_alpha;      /* micro units */
    uint64_t encoder_intercept;  /* micro units, per image */
    uint64_t max_encoder_tokens; /* patches; 0: no cap */
};

/* A sample's images, as the encoder's cost needs them: the patches summed,
 * their squares summed (attention runs within each image) and the count.
 * Bounds: a sample's patches sum to less than 2^32 (BRS_MAX_SAMPLE_PATCHES),
 * so its squares sum below 2^64, its images number below 2^32, and its cost
 * stays below 2^95, as a text weight does (util/wide.h). */
struct brs_encoder_load {
    uint64_t patches, squares, images;
};

/* The encoder's cost of a sample's images: encoder_weight per patch (one
 * padded text token's cost by default), plus the attention and per-image
 * terms. */
static inline brs_wide brs_encoder_cost(const struct brs_cost_model *model,
                                        const struct brs_encoder_load *load)
{
    return (brs_wide)load->patches * model->encoder_weight +
           (brs_wide)model->encoder_alpha * load->squares +
           (brs_wide)model->encoder_intercept * load->images;
}
/* The padded cost model, inline: it is on the planner's hot paths. */
static inline brs_wide brs_sample_weight(const struct brs_cost_model *model, uint32_t length)
{
    return (brs_wide)length * BRS_COST_UNITS_PER_ONE + (brs_wide)model->alpha * length * length;
}

/* A padded micro-batch of `size` samples whose longest has `head` tokens. */
static inline brs_wide brs_group_cost(const struct brs_cost_model *model, uint32_t head,
                                      size_t size)
{
    return model->intercept + (brs_wide)size * brs_sample_weight(model, head);
}

/* A packed micro-batch (one row, no padding) whose samples' weights sum to
 * `weights`. */
static inline brs_wide brs_packed_cost(const struct brs_cost_model *model, brs_wide weights)
{
    return model->intercept + weights;
}

/* The least work of k micro-batches of samples whose weights sum to
 * `weights`: k intercepts plus every sample's own weight (each sample pays
 * at least that, padded or packed). */
static inline brs_wide brs_least_work(const struct brs_cost_model *model, size_t k,
                                      brs_wide weights)
{
    return (brs_wide)k * model->intercept + weights;
}

/* The average-group bound: no k groups of samples whose weights sum to
 * `weights` have their costliest below an intercept plus ceil(weights / k).
 * The bound of the padded search (search.c), the packed planner's
 * (objective.c) and a layer's estimate (layering.c). */
static inline brs_wide brs_average_group_cost(const struct brs_cost_model *model, size_t k,
                                              brs_wide weights)
{
    return model->intercept + (weights + k - 1) / k;
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
static inline uint64_t brs_sample_weight_narrow(const struct brs_cost_model *model, uint32_t length)
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

/* ---- The padding (padding.c): the length a micro-batch is padded to, its longest sample rounded
 * up to pad_to_multiple_of, then to the smallest length bucket at least as long (docs/algorithm.md,
 * "Padding as the collator does it"). The rounding is a non-decreasing function of the length, so
 * the longest sample of a group, rounded, is the largest rounded length in it: padded mode plans
 * the step's rounded lengths exactly as it plans raw ones, and every cost, cap, peak and bound is
 * that of the tensor the collator builds. Packed mode rounds a micro-batch's total instead (one
 * packed row). ---- */

struct brs_padding {
    uint64_t multiple;       /* >= 1; 1 rounds nothing */
    const uint32_t *buckets; /* strictly increasing, or NULL */
    size_t bucket_count;     /* 0: no buckets */
};

/* Whether the padding leaves every length as it is. */
static inline int brs_padding_is_identity(const struct brs_padding *padding)
{
    return padding->multiple == 1 && padding->bucket_count == 0;
}

/* The padded length of `length` tokens; 0 when no bucket holds it. */
uint64_t brs_padding_apply(const struct brs_padding *padding, uint64_t length);

/* The largest length whose padded length is at most `cap` (0: no cap, then
 * only the last bucket and 32 bits bound it); 0 when none is. */
uint64_t brs_padding_limit(const struct brs_padding *padding, uint64_t cap);

/* The largest packed row total whose padded total is at most `cap` (0: no
 * cap, then only the last bucket bounds it): a row is a sum of lengths, not
 * bound to 32 bits. */
uint64_t brs_padding_row_limit(const struct brs_padding *padding, uint64_t cap);

/* out[i] = the padded length of lengths[i], for n lengths that the limit of
 * the padding (brs_padding_limit with no cap) admits. */
void brs_padding_apply_all(uint32_t *out, const uint32_t *lengths, size_t n,
                           const struct brs_padding *padding);

/* The default ladder of length buckets for lengths in [shortest, longest]:
 * `steps` evenly spaced lengths per doubling, from the power of two at or
 * below `shortest` to the first at or above `longest`, each rounded up to
 * `multiple`, without repeats. Writes at most `capacity` and returns how
 * many the whole ladder has. */
size_t brs_padding_ladder(uint32_t *out, size_t capacity, uint32_t shortest, uint32_t longest,
                          uint32_t steps, uint64_t multiple);

/* ---- A step split into k groups: what every planner fills. ---- */

/* n samples sorted by length descending split into k groups. A padded
 * split's group g is [starts[g], starts[g+1]) of the sorted order; a
 * packed one writes group ids into `group_of`. Both fill costs[g], the max
 * cost, the lower bound of the max cost and the certified lower bound on
 * the step time of the sync model. On BRS_ERR_CAP_INFEASIBLE *needed holds
 * the smallest group count that meets the cap (0 if unknown). The deal to
 * slots is brs_assign of the costs (the padded planner scores its
 * candidates with it). */
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

/* ---- The shape vocabulary (vocabulary.c). ---- */

/* The shapes, sorted by batch size, then length; the distinct sizes and
 * where each one's lengths start (size_first[j] .. size_first[j + 1]). */
struct brs_vocabulary {
    size_t count;
    uint32_t *sizes, *lengths;
    size_t size_count;
    uint32_t *size_values;
    size_t *size_first;
};

/* The most cells of a table the planner within a vocabulary fills: steps
 * whose k * n (or n times the vocabulary's sizes) pass it are refused with
 * BRS_ERR_TOO_LARGE. */
#define BRS_VOCABULARY_CELLS ((size_t)1 << 24)

/* Builds v from `count` pairs (size, length), in any order with repeats;
 * BRS_ERR_NO_MEMORY leaves v empty. brs_vocabulary_free releases it. */
brs_status brs_vocabulary_build(struct brs_vocabulary *v, const uint32_t *sizes,
                                const uint32_t *lengths, size_t count);
void brs_vocabulary_free(struct brs_vocabulary *v);

/* A micro-batch's shape, the one rule of brs_sampler_shapes (api/shapes.c),
 * brs_describe_shape (api/describe.c) and the vocabulary's choice
 * (vocabulary_choice.c): its samples and the padded length of its rows.
 * Padded mode pads every row to one length (padded tokens / samples);
 * packed mode's one row is the padded total. The vocabulary counts that row
 * as size 1 (brs_vocabulary_row_shape), where brs_sampler_shapes reports
 * its samples. A padded micro-batch of no sample: (0, 0). */
struct brs_shape {
    uint64_t size, length;
};
struct brs_shape brs_shape_of(uint64_t samples, uint64_t padded_tokens, int packed);
/* The shape a vocabulary holds for that micro-batch: a packed row as (1, its
 * padded total), a padded one as brs_shape_of's. */
struct brs_shape brs_vocabulary_row_shape(uint64_t samples, uint64_t padded_tokens, int packed);

/* The shortest vocabulary length of batch size `size` that holds `head`
 * tokens (already padded as the collator pads), or 0 when none does: a
 * non-decreasing function of head, so the contiguity theorem holds. */
uint32_t brs_vocabulary_length(const struct brs_vocabulary *v, size_t size, uint32_t head);

/* ---- Context parallelism (context_parallel.c): the world is dp_size blocks of `size` ranks; a
 * micro-batch of degree c (a power of two in `degrees`) runs on c consecutive ranks starting at a
 * multiple of c, each holding sum ceil(L / c) of its sequences' tokens, and costs each of them
 * intercept + ceil((sum w(L) + comm * (c - 1) * sum L) / c) + latency * (c - 1)
 * (docs/algorithm.md, "Context parallelism"). ---- */

struct brs_step;

struct brs_cp_layout {
    int active;          /* cp_size > 1 or max_tokens_per_rank set: brs_cp_plan plans the step */
    size_t size;         /* cp_size, a power of two */
    uint32_t degrees;    /* bit j: degree 2^j allowed, every one <= size */
    uint64_t max_tokens; /* tokens one rank may hold before the padding rounds them; 0: no cap */
    uint64_t comm;       /* micro units per token of the other ranks' keys and values */
    uint64_t latency;    /* micro units per rank a group adds */
};

/* A context-parallel plan: `count` micro-batches (placeholders are not
 * among them), each with its micro-step, first rank, degree, tokens per rank
 * and cost per rank; group_of[i] the micro-batch of sorted sample i. Buffers
 * of n entries each (a micro-batch holds at least one sample), the caller's.
 * The micro-batches are ordered by micro-step, then first rank. */
struct brs_cp_plan {
    size_t count;
    uint32_t *group_of, *micro, *first_rank, *degree;
    uint64_t *tokens;
    brs_wide *cost;
    brs_wide micro_sync, step_sync, time_lower_bound, lower_bound;
    int exact; /* the search proved the plan optimal */
};

/* Plans a step whose layout is active (packed): grad_accum micro-steps of
 * dp_size x cp_size ranks, the per-micro-step synchronised step time least,
 * then the peak tokens per rank, then the ranks' total cost. Exact where the
 * search ends within its budget (small steps), else the best of the greedy
 * candidates. BRS_ERR_SAMPLE_TOO_LONG for a sample no allowed degree holds
 * under the cap; BRS_ERR_CAP_INFEASIBLE when no plan was found;
 * BRS_ERR_NO_MEMORY. */
brs_status brs_cp_plan(struct brs_cp_plan *out, const struct brs_step *step);
/* The least allowed degree that holds a sequence of `length` tokens within
 * the layout's cap; 0 when none does. */
uint64_t brs_cp_least_degree(const struct brs_cp_layout *cp, uint64_t length);
/* The degree's share of a sequence: token range of chunk pair for rank
 * position `i` of a group of degree c over a sequence of `length` tokens:
 * writes up to two [start, end) pairs into ranges and returns how many
 * (empty ones left out, touching ones merged). */
size_t brs_cp_shard(uint64_t *ranges, uint64_t length, uint64_t degree, uint64_t i);
/* The cost on each rank of a micro-batch of degree c whose samples' weights
 * sum to `weights` and tokens to `tokens`. */
brs_wide brs_cp_cost(const struct brs_cost_model *model, const struct brs_cp_layout *cp,
                     brs_wide weights, uint64_t tokens, uint64_t degree);

/* ---- A step to plan, and the one entry that plans it (planner.c). ---- */

/* A step, resolved once from the sampler (api/step.c): its samples sorted
 * longest first, the topology, the sync model, the mode, the cost model
 * with its caps, the padding and the shape vocabulary. A new constraint is
 * a field here, not a new argument list. */
struct brs_step {
    const uint32_t *lengths;              /* n, sorted longest first */
    const uint32_t *planned;              /* n: the lengths padded as the collator pads them */
    const struct brs_encoder_load *loads; /* n, in the same order; NULL: no image in the step */
    size_t n, k, dp_size, grad_accum;     /* k = dp_size * grad_accum groups */
    int sync, packed;
    struct brs_cost_model model; /* its caps: max_tokens (a packed row's, padding included) and
                                  * max_encoder_tokens */
    struct brs_padding padding;
    const struct brs_vocabulary *vocabulary; /* NULL: any shape */
    struct brs_cp_layout cp;                 /* inactive: no context parallelism */
};

/* Which cap a step could not meet (brs_planned.failed). */
enum { BRS_FAILED_TEXT_CAP = 1, BRS_FAILED_ENCODER_CAP, BRS_FAILED_VOCABULARY };

/* What the planner makes of a step, in the caller's buffers: the groups
 * (contiguous starts, or group_of where by_group), their costs, each
 * group's padded length where the step was planned within a vocabulary,
 * the deal to rank-major slots and its two synchronised step times. */
struct brs_planned {
    struct brs_split split; /* starts k + 1, group_of n, costs k */
    uint32_t *group_length; /* k */
    uint32_t *slot_of;      /* k */
    brs_wide micro_sync, step_sync;
    int by_group;           /* the groups are split.group_of (packed, two parts) */
    int within_vocabulary;  /* group_length holds each group's padded length */
    int with_images;        /* the costs include the encoder's (two parts) */
    int failed;             /* BRS_FAILED_*, with BRS_ERR_CAP_INFEASIBLE */
    struct brs_cp_plan *cp; /* where step->cp.active: the context-parallel plan */
};

/* Plans the step: within its vocabulary where it has one, else the padded
 * or packed planner, then the two-part planner where its samples carry
 * images (started from the text plan), then the deal for the sync model
 * (docs/algorithm.md). scratch holds 2n words, pack_scratch 2k. */
brs_status brs_planner_plan(struct brs_planned *out, const struct brs_step *step, uint64_t *scratch,
                            uint32_t *pack_scratch);

/* ---- Choosing a run's shape vocabulary (vocabulary_choice.c). ---- */

/* What the choice is made for: a full step of the run without its lengths
 * (n = batch_size x k samples, k, dp_size, grad_accum, sync, packed, the
 * cost model with its cap, the padding), the dataset's size and longest
 * sample, and the options that shape the choice. */
struct brs_vocabulary_request {
    struct brs_step step;
    size_t max_shapes, batch_size, count;
    int drop_last;
    uint64_t steps; /* of an epoch */
    uint32_t longest;
    uint64_t search_moves, seed; /* max_shapes_search and the sampler's seed */
};

/* A choice in progress: opened, shown the sampled steps (drawn by the
 * caller, each planned here through brs_planner_plan), then chosen. */
struct brs_vocabulary_choice;

/* Opens a choice and adds its safety shapes; BRS_ERR_TOO_LARGE,
 * BRS_ERR_OUT_OF_RANGE and BRS_ERR_CAP_INFEASIBLE write why (a message of
 * BRS_MESSAGE_SIZE bytes); BRS_ERR_NO_MEMORY does not. *out is to be closed
 * whatever the status. */
brs_status brs_vocabulary_choice_open(struct brs_vocabulary_choice **out,
                                      const struct brs_vocabulary_request *request, char *why);
/* How many steps the choice samples, and which (epoch, step) the i-th is. */
size_t brs_vocabulary_choice_samples(const struct brs_vocabulary_choice *choice);
void brs_vocabulary_choice_sample(uint64_t *epoch, uint64_t *step,
                                  const struct brs_vocabulary_choice *choice, size_t i);
/* Plans the i-th sampled step, drawn without a vocabulary, and keeps the
 * shapes its plan uses (and its lengths, as a trial step). A failure is
 * the planner's: brs_vocabulary_choice_planned says why. */
brs_status brs_vocabulary_choice_observe(struct brs_vocabulary_choice *choice,
                                         const struct brs_step *step);
/* Chooses the vocabulary from the steps observed into v; BRS_ERR_NO_MEMORY. */
brs_status brs_vocabulary_choice_choose(struct brs_vocabulary *v,
                                        struct brs_vocabulary_choice *choice);
/* Whether every step plans within the chosen vocabulary by construction;
 * where not, each sampled step, drawn within it, is checked with
 * brs_vocabulary_choice_check (the planner's status). */
int brs_vocabulary_choice_guaranteed(const struct brs_vocabulary_choice *choice);
brs_status brs_vocabulary_choice_check(struct brs_vocabulary_choice *choice,
                                       const struct brs_step *step);
/* The plan of the last step observed or checked, with what failed. */
const struct brs_planned *brs_vocabulary_choice_planned(const struct brs_vocabulary_choice *choice);
void brs_vocabulary_choice_close(struct brs_vocabulary_choice *choice);

/* ---- Packed rows within a vocabulary (vocabulary.c). ---- */

/* The padded total of a packed row of `tokens` real tokens: rounded as the
 * collator pads, then, where the step has a vocabulary, to its shortest row
 * (batch size 1) that holds it. */
uint64_t brs_packed_row_length(const struct brs_step *step, uint64_t tokens);

/* What the tokens the vocabulary adds to such a row cost: each is priced as
 * a one-token sample, since varlen attention sees it as a sequence of its
 * own (brs/_pad_to_plan.py pads position_ids with 0); 0 without a
 * vocabulary, as the padding to pad_to_multiple_of costs nothing in packed
 * mode. */
brs_wide brs_packed_row_padding_cost(const struct brs_step *step, uint64_t tokens);

/* ---- Bounds and step times of plans made anywhere (objective.c, search.c). ---- */

/* Costs by rank-major slot (rank * grad_accum + micro): the two
 * synchronised step times (docs/design.md): per micro-step the sum of the
 * slowest rank at each micro-step, per step the slowest rank's sum (either
 * pointer may be NULL: not computed). */
void brs_objective_sync_times(brs_wide *micro_sync, brs_wide *step_sync, const brs_wide *by_slot,
                              size_t dp_size, size_t grad_accum);

/* max(largest, ceil(total / ranks)): no deal of groups whose largest cost
 * is `largest` and whose costs sum to `total` has a rank slower than that. */
brs_wide brs_objective_time_floor(brs_wide largest, brs_wide total, size_t ranks);

/* The lower bound LB on the max cost of k contiguous padded groups of
 * these lengths (sorted longest first); *weight_sum gets their weights
 * summed (search.c). */
brs_wide brs_search_lower_bound(const uint32_t *lengths, size_t n, size_t k,
                                const struct brs_cost_model *model, brs_wide *weight_sum);

/* The packed planner's bound on the max cost of k groups of these samples
 * (sorted longest first): the average load and the longest sample alone;
 * *weight_sum gets the samples' weights summed. */
brs_wide brs_objective_packed_bound(const uint32_t *lengths, size_t n, size_t k,
                                    const struct brs_cost_model *model, brs_wide *weight_sum);

/* What samples' images add to the bounds of their text (n samples, their
 * lengths as the planner prices them, their loads): every image's cost to
 * the least work (*weight_sum), and the costliest sample alone, text and
 * images, to `bound` on the largest cost, which it returns. A text bound
 * stays a bound: images only add. */
brs_wide brs_objective_image_bound(const uint32_t *lengths, const struct brs_encoder_load *loads,
                                   size_t n, const struct brs_cost_model *model, brs_wide bound,
                                   brs_wide *weight_sum);

/* A lower bound on the step time under either sync model of every padded
 * plan of the step's planned lengths within its model's cap, computed from
 * scratch: for plans made elsewhere. A cap the samples cannot meet in k
 * groups is ignored, so the bound holds for every plan. */
brs_wide brs_objective_step_time_bound(const struct brs_step *step);

/* ---- The least max_tokens with which a step plans into k micro-batches (least_cap.c). ---- */

/* The greedy count of groups of n samples sorted longest first under a
 * token cap alone (each as large as its head allows): by contiguity the
 * least any split needs. Some count above `limit` once it exceeds it. */
size_t brs_least_cap_groups(const uint32_t *sorted, size_t n, uint64_t cap, size_t limit);

/* Padded: the least cap above `known` (a cap some earlier step needed)
 * with which k groups hold these n >= k samples (sorted longest first, as
 * the padded planner splits them), or `known` if that already does. */
uint64_t brs_least_cap_padded(const uint32_t *sorted, size_t n, size_t k, uint64_t known);

/* Packed: the least cap with which the packed planner splits the step
 * into its k groups (its model's cap replaced) once each row is padded as
 * its padding says, found by bisection and verified by planning; 0 where
 * even the whole step in one row does not plan. `work` and scratch are the
 * packed planner's buffers (brs_planner_plan). */
uint64_t brs_least_cap_packed(struct brs_split *work, const struct brs_step *step,
                              uint32_t *scratch);

/* ---- The fixed-size strategies (baselines.c). ---- */

/* baselines.c: the fixed-size strategies. brs_baselines_slots deals the n
 * drawn dataset indices (read order) into K = dp_size * grad_accum chunks,
 * chunk c to slot (c % dp_size) * grad_accum + c / dp_size, writing
 * slot_start[0..K] and the indices slot by slot. */
void brs_baselines_slots(uint64_t *indices, size_t *slot_start, const uint64_t *drawn, size_t n,
                         size_t dp_size, size_t grad_accum);
/* Samples per megabatch of transformers' length grouping of a dataset of n
 * samples read in batches of `batch` (batch_size * grad_accum, the batch
 * the Trainer passes it); at most n. */
size_t brs_baselines_megabatch(size_t n, size_t batch);
/* The length-grouped epoch order (N dataset indices), cached in the plan
 * handle for one (sampler fingerprint, epoch); never global state. */
struct brs_grouped_order {
    int valid;
    uint64_t fingerprint, epoch;
    uint64_t *order;
    uint64_t *scratch;
};
/* What the order is built from: the dataset, the permutation's key, the
 * megabatch size and the fingerprint of all of them (the cache's key). */
struct brs_grouped_source {
    const uint32_t *lengths;
    size_t count;
    uint64_t seed;
    int shuffle;
    size_t megabatch;
    uint64_t fingerprint;
};
brs_status brs_grouped_order_get(const uint64_t **order, struct brs_grouped_order *cache,
                                 const struct brs_grouped_source *source, uint64_t epoch);
void brs_grouped_order_free(struct brs_grouped_order *cache);

#endif
