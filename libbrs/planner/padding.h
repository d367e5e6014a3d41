/* planner/padding.h - the length a micro-batch is padded to: its longest
 * sample rounded up to pad_to_multiple_of, then to the smallest length
 * bucket at least as long (docs/algorithm.md, "Padding as the collator
 * does it"). Internal, not installed.
 *
 * The rounding is a non-decreasing function of the length, so the longest
 * sample of a group, rounded, is the largest rounded length in it: padded
 * mode plans the step's rounded lengths exactly as it plans raw ones, and
 * every cost, cap, peak and bound is that of the tensor the collator builds.
 * Packed mode rounds a micro-batch's total instead (one packed row). */
#ifndef BRS_PLANNER_PADDING_H
#define BRS_PLANNER_PADDING_H

#include <stddef.h>
#include <stdint.h>

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

#endif
