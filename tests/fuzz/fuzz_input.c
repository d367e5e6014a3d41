/* fuzz_input.c - the byte stream of tests/fuzz/fuzz_input.h. */
#include "fuzz_input.h"

#include <math.h>
#include <string.h>

uint8_t fz_u8(fz_input *in)
{
    return in->pos < in->size ? in->data[in->pos++] : 0;
}

uint32_t fz_u32(fz_input *in)
{
    uint32_t v = 0;
    for (int i = 0; i < 4; i++)
        v = v << 8 | fz_u8(in);
    return v;
}

uint64_t fz_u64(fz_input *in)
{
    return (uint64_t)fz_u32(in) << 32 | fz_u32(in);
}

/* One byte for ranges of up to 256 values keeps inputs short and lets the
 * fuzzer flip one choice with one byte. */
uint64_t fz_below(fz_input *in, uint64_t n)
{
    if (n == 0)
        return 0;
    uint64_t raw = n <= 256 ? fz_u8(in) : n <= 65536 ? (uint64_t)fz_u8(in) << 8 | fz_u8(in)
                                                    : fz_u64(in);
    return raw % n;
}

int fz_done(const fz_input *in)
{
    return in->pos >= in->size;
}

int64_t fz_int_around(fz_input *in, int64_t lower, int64_t upper)
{
    uint64_t span = (uint64_t)upper - (uint64_t)lower;
    switch (fz_u8(in) % 10) {
    case 0: case 1: case 2: case 3:
        return lower + (int64_t)fz_below(in, span < 8 ? span + 1 : 8);
    case 4:
        return lower + (int64_t)fz_below(in, span < 65535 ? span + 1 : 65536);
    case 5: return lower;
    case 6: return upper;
    case 7: return lower == INT64_MIN ? lower : lower - 1;
    case 8: return upper == INT64_MAX ? upper : upper + 1;
    default: return (int64_t)fz_u64(in);
    }
}

double fz_double_around(fz_input *in, double lower, double upper)
{
    static const double usual[] = {0.0, 1e-6, 0.001, 0.25, 1.0, 3.5, 1e-7, 4e-7, 6e-7, -0.0};
    switch (fz_u8(in) % 8) {
    case 0: case 1: case 2:
        return usual[fz_below(in, sizeof usual / sizeof usual[0])];
    case 3: return lower;
    case 4: return upper;
    case 5: return fz_u8(in) & 1 ? nextafter(lower, -INFINITY) : nextafter(upper, INFINITY);
    case 6: {
        static const double odd[] = {NAN, INFINITY, -INFINITY, -1.0, 1e300, 5e-324};
        return odd[fz_below(in, sizeof odd / sizeof odd[0])];
    }
    default: {
        uint64_t bits = fz_u64(in);
        double d;
        memcpy(&d, &bits, sizeof d);
        return d;
    }
    }
}

uint64_t fz_index(fz_input *in, uint64_t typical)
{
    switch (fz_u8(in) % 8) {
    case 0: return UINT64_MAX - fz_below(in, 4);
    case 1: return (uint64_t)INT64_MAX + fz_below(in, 3) - 1;
    case 2: return fz_u64(in);
    default: return fz_below(in, typical + 3);
    }
}
