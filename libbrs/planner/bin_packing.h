/* planner/bin_packing.h - packings of n samples (sorted longest first) into k groups under a
 * token cap (bin_packing.c). Internal, not installed. */
#ifndef BRS_PLANNER_BIN_PACKING_H
#define BRS_PLANNER_BIN_PACKING_H

#include <stddef.h>
#include <stdint.h>

/* The groups a bound proves the cap needs: total tokens over the cap, and
 * samples above half the cap each needing a group of their own. */
size_t brs_bin_packing_bound(const uint32_t *lengths, size_t n, uint64_t cap);
/* First-fit decreasing into group_of, every group non-empty; 0 where it
 * finds no packing. */
int brs_bin_packing_first_fit(uint32_t *group_of, const uint32_t *lengths, size_t n, size_t k,
                              uint64_t cap);
/* Any packing under the cap into group_of, by search (small steps): 1
 * packed, 0 proven impossible, -1 gave up. */
int brs_bin_packing_search(uint32_t *group_of, const uint32_t *lengths, size_t n, size_t k,
                           uint64_t cap);
/* The fewest groups that pack, searched from k + 1 up; 0 where the search
 * gives up. group_of is overwritten. */
size_t brs_bin_packing_fewest_groups(uint32_t *group_of, const uint32_t *lengths, size_t n,
                                     size_t k, uint64_t cap);

#endif
