/*
 * fuzz_input.h - reads a fuzzer's input bytes as a stream of choices.
 *
 * Past the end every read returns 0, so any input, even an empty one, is a
 * complete program: libFuzzer's mutations then shift choices instead of
 * making inputs invalid.
 */
#ifndef BRS_FUZZ_INPUT_H
#define BRS_FUZZ_INPUT_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    const uint8_t *data;
    size_t size, pos;
} fz_input;

uint8_t fz_u8(fz_input *in);
uint32_t fz_u32(fz_input *in);
uint64_t fz_u64(fz_input *in);
/* A value in [0, n) (0 when n is 0). */
uint64_t fz_below(fz_input *in, uint64_t n);
int fz_done(const fz_input *in);

/* An int64 near what matters for a value in [lower, upper]: small values
 * from the bottom of the range, both bounds, one past each, or raw bits. */
int64_t fz_int_around(fz_input *in, int64_t lower, int64_t upper);
/* The same for a double option: usual values, bounds, just outside them,
 * values below the 1e-6 resolution, NaN, infinities and raw bits. */
double fz_double_around(fz_input *in, double lower, double upper);
/* A uint64 epoch or step: mostly small, sometimes at the top of the range. */
uint64_t fz_index(fz_input *in, uint64_t typical);

#endif
