/* planner/search.h - the exact min-max and least-peak searches over sorted lengths (search.c).
 * Internal, not installed. */
#ifndef BRS_PLANNER_SEARCH_H
#define BRS_PLANNER_SEARCH_H

#include "planner/cost_model.h"
#include "util/wide.h"

#include <stddef.h>
#include <stdint.h>

/* search.c, on n samples sorted longest first */
brs_wide brs_search_lower_bound(const uint32_t *lengths, size_t n, size_t k,
                                const struct brs_cost_model *model, brs_wide *weight_sum);
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

#endif
