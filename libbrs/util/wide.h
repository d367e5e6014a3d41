/* util/wide.h - exact cost arithmetic: 128-bit integers of micro cost units. Internal, not
 * installed. */
#ifndef BRS_UTIL_WIDE_H
#define BRS_UTIL_WIDE_H

#include <stdint.h>

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
/* A cost in cost units, as the API's doubles report it. */
static inline double brs_wide_to_cost(brs_wide cost)
{
    return (double)cost / (double)BRS_COST_UNITS_PER_ONE;
}
/* The all-ones value, above every cost (which stays below 2^121): where a
 * cost or time is none (no split fits, a search not yet done) or a bound
 * limits nothing. The one name of it. */
#define BRS_WIDE_MAX (~(brs_wide)0)

/* For the hot loops written once for two widths: inlined, so that the
 * width flag is a constant in each copy. */
#define BRS_ALWAYS_INLINE inline __attribute__((always_inline))

/* a < b; as 64 bits where `narrow` says both fit (one compare instead of two). */
static BRS_ALWAYS_INLINE int brs_wide_below(brs_wide a, brs_wide b, int narrow)
{
    return narrow ? (uint64_t)a < (uint64_t)b : a < b;
}

#endif
