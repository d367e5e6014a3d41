/* planner/internal.h - what the planner's files share beyond its face (planner.h): the score of a
 * split, the searches over sorted lengths, the deal, the least-total searches, the layerings, the
 * polish and the planners that brs_planner_plan chooses from. Internal, not installed. */
#ifndef BRS_PLANNER_INTERNAL_H
#define BRS_PLANNER_INTERNAL_H

#include "brs.h"
#include "planner/planner.h"
#include "util/wide.h"

#include <stddef.h>
#include <stdint.h>

/* ---- The objective: every score and bound, once (objective.c). ---- */

/* A split's score, lexicographic (docs/algorithm.md): the step time of the
 * sync model (the deal of brs_assign), the peak tokens of a group, the total
 * cost. assign.c computes it (the deal and its score are one unit),
 * objective.c compares. */
struct brs_score {
    brs_wide time, peak, total;
};
int brs_objective_better(const struct brs_score *a, const struct brs_score *b);
/* The largest of k costs (0 when k is 0): a split's max cost. */
brs_wide brs_objective_largest(const brs_wide *costs, size_t k);

/* Costs by rank-major slot (rank * grad_accum + micro): the sum of one
 * rank's micro-steps and the slowest rank (the first of equal sums); the
 * synchronised step times are planner.h's. */
brs_wide brs_objective_rank_time(const brs_wide *by_slot, size_t rank, size_t grad_accum);
size_t brs_objective_slowest_rank(const brs_wide *by_slot, size_t dp_size, size_t grad_accum);

/* Padded tokens of a contiguous split of lengths sorted longest first: a
 * group holds its size times its head's length. The group at the peak
 * (the first of equal ones) and the peak. */
size_t brs_objective_peak_group(const size_t *starts, const uint32_t *lengths, size_t k);
uint64_t brs_objective_padded_peak(const size_t *starts, const uint32_t *lengths, size_t k);

/* A lower bound on the step time under either sync model of every padded
 * plan of the step's planned lengths within its model's cap: the min-max
 * `min_max` of its k groups and the least total cost over dp_size
 * (weight_sum: the samples' weights summed). */
brs_wide brs_objective_time_bound(const struct brs_step *step, brs_wide min_max,
                                  brs_wide weight_sum);

/* ---- The score of a split: the deal it gets, then its peak and total (assign.c). ---- */

/* The score of the step's k groups of these costs whose largest holds
 * `peak` tokens, dealt as the step's topology and sync model say.
 * cost_order: the groups in cost order, or NULL (brs_assign). slot_scratch
 * holds k. */
brs_status brs_assign_score_groups(struct brs_score *score, const brs_wide *costs,
                                   const uint32_t *cost_order, uint64_t peak,
                                   const struct brs_step *step, uint32_t *slot_scratch);
/* The same of a contiguous split of lengths sorted longest first (padded:
 * a group holds its size times its head's length). */
brs_status brs_assign_score_split(struct brs_score *score, const size_t *starts,
                                  const brs_wide *costs, const uint32_t *lengths,
                                  const struct brs_step *step, uint32_t *slot_scratch);

/* ---- The exact min-max and least-peak searches over sorted lengths (search.c). ---- */

/* search.c, on n samples sorted longest first (brs_search_lower_bound is
 * planner.h's) */
size_t brs_search_groups_for_cap(const uint32_t *lengths, size_t n,
                                 const struct brs_cost_model *model);
/* The same count, or some count above `limit` once it exceeds it. Every
 * length must be within the cap (else a group could take no sample). */
size_t brs_search_groups_for_cap_upto(const uint32_t *lengths, size_t n,
                                      const struct brs_cost_model *model, size_t limit);
/* The greedy group at `threshold` from `pos` (cost and cap), leaving a
 * sample for each of `groups_after` later groups: its size. */
size_t brs_search_greedy_group(const uint32_t *lengths, size_t n, size_t pos, size_t groups_after,
                               const struct brs_cost_model *model, brs_wide threshold);
/* What the searches keep of a step's sorted lengths. Where lengths repeat
 * (at most n / BRS_RUNS_SHARE distinct): each sample's rank among the
 * step's distinct lengths (longest first), and by rank where its run of
 * samples ends and 1 / w(L). Elsewhere no runs (rank NULL) and 1 / w(L) by
 * sample, which saves building the ranks and a load per read. 1 / w(L) is
 * computed where first read (0 until then). Built once a step, in 2n
 * words; a search on samples [a, a + n) takes brs_probe_cache_at(c, a). */
enum { BRS_RUNS_SHARE = 4 };
struct brs_probe_cache {
    const uint32_t *rank;    /* by sample, from `first` on; NULL: no runs */
    const uint32_t *run_end; /* by rank: one past the run's last sample */
    double *inverse_weight;  /* by rank, or without runs by sample from `first` on */
    size_t first;            /* the step position of the first sample */
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
brs_wide brs_search_min_max(const uint32_t *lengths, struct brs_probe_cache cache, size_t n,
                            size_t k, const struct brs_cost_model *model, brs_wide lower_bound);
/* The exact least peak of padded tokens among splits into k contiguous
 * non-empty groups of cost <= time under the model's cap (time feasible). */
uint64_t brs_search_least_peak(const uint32_t *lengths, struct brs_probe_cache cache, size_t n,
                               size_t k, const struct brs_cost_model *model, brs_wide time);

/* ---- The deal of k groups to (rank, micro-step) slots (assign.c). ---- */

/* slot_of[g] gets the rank-major slot (rank * grad_accum + micro) of group
 * g for the sync model, and the two synchronised step times of that deal
 * (either pointer may be NULL: not computed); a function of the costs
 * alone. cost_order: the groups in the order of brs_cost_sort_ids
 * (util/cost_sort.h) for these costs, or NULL to sort them here. */
brs_status brs_assign(uint32_t *slot_of, brs_wide *micro_sync, brs_wide *step_sync,
                      const brs_wide *costs, const uint32_t *cost_order,
                      const struct brs_step *step);

/* ---- The least total cost under a max cost (least_total.c). ---- */

/* The search's budget where its split is a step on the way (a few cells per
 * sample), and a threshold that limits nothing. */
enum { BRS_LEAST_TOTAL_CELLS_PER_SAMPLE = 4, BRS_LEAST_TOTAL_CELLS_BASE = 4096 };
#define BRS_LEAST_TOTAL_NO_LIMIT BRS_WIDE_MAX

/* The split of least total cost among those with max cost <= threshold (at
 * least the optimum), if its search needs at most `budget` cells.
 * Otherwise BRS_ERR_TOO_LARGE, with split->starts[0..groups] the greedy
 * split from the short end at threshold (the fallback's start) and groups
 * <= k in *greedy_groups unless that is NULL. */
brs_status brs_least_total_search(struct brs_split *split, const uint32_t *lengths, size_t n,
                                  size_t k, const struct brs_cost_model *model, brs_wide threshold,
                                  size_t budget, size_t *greedy_groups);

/* The least total cost among splits of max cost <= limit (least_total.c, within
 * a budget of BRS_LEAST_TOTAL_CELLS_PER_SAMPLE * n + BRS_LEAST_TOTAL_CELLS_BASE
 * cells), else the greedy from the right split to k. */
brs_status brs_least_total_split(struct brs_split *split, const uint32_t *lengths, size_t n,
                                 size_t k, const struct brs_cost_model *model, brs_wide limit);
/* The `groups` greedy groups in split->starts split to k: the costliest
 * halved until there are k. */
brs_status brs_least_total_to_k(struct brs_split *split, const uint32_t *lengths, size_t n,
                                size_t groups, size_t k, const struct brs_cost_model *model);

/* ---- Layers of groups, one per micro-step (layering.c). ---- */

/* A layer that cannot hold its groups (too few samples, or the cap). */
#define BRS_LAYERING_NO_TIME BRS_WIDE_MAX

/* n samples in `count` layers of `ranks` groups: layer m is [cut[m],
 * cut[m + 1]) and takes time[m], the exact min-max of its groups. */
struct brs_layering {
    const uint32_t *lengths;
    struct brs_probe_cache cache;
    size_t n, ranks, count; /* count: the number of layers */
    const struct brs_cost_model *model;
    size_t *cut;      /* count + 1: layer m is [cut[m], cut[m + 1]) */
    brs_wide *time;   /* count: exact min-max of each layer */
    brs_wide *before; /* the weight before each run (by rank from the first
                       * sample's), or without runs before each sample */
};

/* The layering of the step's n samples (these lengths and their cache) into
 * grad_accum layers of dp_size groups under `model`: its buffers and weight
 * sums; cut[count] is n. */
brs_status brs_layering_open(struct brs_layering *l, const uint32_t *lengths,
                             struct brs_probe_cache cache, const struct brs_step *step,
                             const struct brs_cost_model *model);
void brs_layering_close(struct brs_layering *l);
/* A layer [a, b)'s time estimated from below (its average group and its
 * longest sample alone), and exactly (its min-max under the cap);
 * BRS_LAYERING_NO_TIME when the layer cannot hold its groups. */
brs_wide brs_layering_estimate(const struct brs_layering *l, size_t a, size_t b);
brs_wide brs_layering_time(const struct brs_layering *l, size_t a, size_t b);
/* Every layer's groups into starts/costs, at the layer times found. */
brs_status brs_layering_build(const struct brs_layering *l, size_t *starts, brs_wide *costs);

/* n samples into `ranks` contiguous groups of cost <= time (the exact
 * min-max, or any feasible time): the least peak, then the least total
 * cost at that peak where its search is small enough. This is the exact
 * lexicographic optimum of a step of one micro-step. */
brs_status brs_layering_one(size_t *starts, brs_wide *costs, const uint32_t *lengths,
                            struct brs_probe_cache cache, size_t n, size_t ranks,
                            const struct brs_cost_model *model, brs_wide time);

/* ---- Boundary moves while the score improves (polish.c). ---- */

/* Boundary moves on a contiguous split (starts/costs, changed in place)
 * while its score improves within the model's cap. */
brs_status brs_polish(size_t *starts, brs_wide *costs, const uint32_t *lengths,
                      const struct brs_step *step, const struct brs_cost_model *model);

/* ---- The planners the entry chooses from (planner.c), each on a step (planner.h). ---- */

/* padded.c: the step's planned lengths into k contiguous groups
 * (split->starts and costs): the step time of the sync model, then the
 * peak, then the total (docs/algorithm.md). scratch holds 2n words. */
brs_status brs_padded_split(struct brs_split *split, const struct brs_step *step,
                            uint64_t *scratch);

/* packed.c: the step's samples into k groups (split->group_of and costs)
 * without padding: a group costs brs_packed_cost and holds sum L tokens.
 * scratch holds 2k. */
brs_status brs_packed_split(struct brs_split *split, const struct brs_step *step,
                            uint32_t *scratch);

/* two_part.c: a step whose samples carry images into k non-empty groups
 * within both caps (max_tokens, max_encoder_tokens) at the least score
 * found: every split where the step is small (exact), else the better of
 * greedy starts and `text_split` (the text planner's group_of, or NULL),
 * each improved by moves and swaps off the costliest group. Groups price
 * the step's planned lengths (padded) or its tokens (packed), plus their
 * images. Writes group_of[n] and costs[k]. BRS_ERR_CAP_INFEASIBLE when no
 * split found meets the caps. */
brs_status brs_two_part_split(uint32_t *group_of, brs_wide *costs, const struct brs_step *step,
                              const uint32_t *text_split);

/* The most splits of a step the two-part exact search scores. */
enum { BRS_TWO_PART_EXACT_SPLITS = 50000 };

/* vocabulary.c: the step's planned lengths into k contiguous groups whose
 * shapes are in its vocabulary: the step time of the sync model, then the peak
 * padded tokens, then the total cost, within the model's cap. Exact where
 * the compositions of n into k vocabulary sizes are few (every one is
 * scored); elsewhere the best of least-total splits under thresholds from
 * the exact min-max cost, polished, with a certified time_lower_bound.
 * Fills split->starts, costs, max_cost and time_lower_bound, and
 * group_length[g], the padded length of group g. BRS_ERR_CAP_INFEASIBLE
 * when no split fits the vocabulary; BRS_ERR_TOO_LARGE past the planner's
 * table size (k * n or n times the vocabulary's sizes above 2^24). */
brs_status brs_vocabulary_split(struct brs_split *split, uint32_t *group_length,
                                const struct brs_step *step);

/* A quick estimate of the time of the step within its vocabulary (its
 * planned lengths): the least-total split at the exact min-max cost, dealt
 * for the sync model; BRS_WIDE_MAX (util/wide.h) when no split fits. What
 * choosing a vocabulary compares candidates by (vocabulary_choice.c). */
brs_wide brs_vocabulary_quick_time(const struct brs_step *step);

/* A packed split planned within a vocabulary: each group's cost gains what
 * padding its row to the vocabulary costs (brs_packed_row_padding_cost), so
 * that the deal balances what the kernels run. tokens: k words of scratch. */
void brs_vocabulary_pad_rows(struct brs_split *split, const struct brs_step *step,
                             uint64_t *tokens);

#endif
