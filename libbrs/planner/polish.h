/* planner/polish.h - the last pass of the padded planner (polish.c). Internal, not installed. */
#ifndef BRS_PLANNER_POLISH_H
#define BRS_PLANNER_POLISH_H

#include "brs.h"
#include "planner/cost_model.h"
#include "util/wide.h"

#include <stddef.h>
#include <stdint.h>

/* Boundary moves on a contiguous split (starts/costs, changed in place)
 * while its score improves within the model's cap. */
brs_status brs_polish(size_t *starts, brs_wide *costs, const uint32_t *lengths, size_t n, size_t k,
                      size_t dp_size, int sync, const struct brs_cost_model *model);

#endif
