/* planner/candidates/candidate.h - a candidate split as a plug-in: what every builder reads,
 * where it writes, and the row each file of planner/candidates/ exports. The tables list the
 * rows in the order they are tried: padded.def (padded.c walks it) and packed.def (packed.c).
 * Internal, not installed. */
#ifndef BRS_PLANNER_CANDIDATES_CANDIDATE_H
#define BRS_PLANNER_CANDIDATES_CANDIDATE_H

#include "brs.h"
#include "planner/internal.h"
#include "util/wide.h"

#include <stddef.h>
#include <stdint.h>

/* What a builder reads: the step (its sizes, topology and sync model) and
 * what its mode's walk adds. */
struct brs_candidate_input {
    const struct brs_step *step;
    const uint32_t *lengths;            /* n, what the mode splits: the step's planned lengths
                                         * (padded) or its tokens (packed) */
    const struct brs_cost_model *model; /* the step's, its cap the memory budget */
    struct brs_probe_cache cache;       /* padded: the searches' cache of these lengths */
    brs_wide min_max;                   /* padded: T*, the exact min-max cost of k groups */
    brs_wide weight_sum;                /* padded: the samples' weights summed */
    brs_wide beat; /* a row that meets the polished plan: that plan's step time */
};

/* Where a builder writes its split: a padded one starts[0..k] and
 * costs[0..k-1] of contiguous groups, a packed one group_of[0..n-1]. */
struct brs_candidate_output {
    size_t *starts;
    uint32_t *group_of;
    brs_wide *costs;
};

/* Builds the split, or says why not: BRS_ERR_TOO_LARGE where the step is
 * beyond the row's work bound, another error where it has no split (the
 * walk decides what that means: planner.c, packed.c). */
typedef brs_status brs_candidate_builder(const struct brs_candidate_input *in,
                                         struct brs_candidate_output *out);
/* Whether the row can help this step at all. */
typedef int brs_candidate_predicate(const struct brs_candidate_input *in);

/* How the padded walk treats a row's split. */
enum {
    /* polished (polish.c) before it is compared: the heuristics end in
     * different local optima, and the best of them wins */
    BRS_CANDIDATE_POLISHED = 1,
    /* exact where it can be built (anything but BRS_ERR_TOO_LARGE): its
     * outcome is the plan, and the walk ends */
    BRS_CANDIDATE_SETTLES = 2,
    /* meets the plan after the polish of the winner, with `beat` its step
     * time; polished in turn when it wins */
    BRS_CANDIDATE_AFTER_POLISH = 4,
};

/* A row of a candidates' table. */
struct brs_candidate {
    const char *name;
    brs_candidate_predicate *applies; /* NULL: always */
    brs_candidate_builder *build;
    unsigned flags; /* BRS_CANDIDATE_* */
};

/* Every row, declared from the tables: file x of this folder exports
 * brs_x_candidate. */
#define BRS_CANDIDATE(file) extern const struct brs_candidate brs_##file##_candidate;
#include "planner/candidates/padded.def"
#include "planner/candidates/packed.def"
#undef BRS_CANDIDATE

#endif
