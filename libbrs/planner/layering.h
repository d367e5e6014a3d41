/* planner/layering.h - the sorted step cut into layers, one per micro-step, each split into
 * dp_size groups at its own min-max (layering.c): what the layered candidates share, and the
 * split of one layer, the whole answer of a step of one micro-step. Internal, not installed. */
#ifndef BRS_PLANNER_LAYERING_H
#define BRS_PLANNER_LAYERING_H

#include "brs.h"
#include "planner/cost_model.h"
#include "planner/search.h"
#include "util/wide.h"

#include <stddef.h>
#include <stdint.h>

/* A layer that cannot hold its groups (too few samples, or the cap). */
#define BRS_LAYERING_NO_TIME (~(brs_wide)0)

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

/* The layering's buffers and weight sums; cut[count] is n. */
brs_status brs_layering_open(struct brs_layering *l, const uint32_t *lengths,
                             struct brs_probe_cache cache, size_t n, size_t dp_size,
                             size_t grad_accum, const struct brs_cost_model *model);
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

#endif
