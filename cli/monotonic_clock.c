/* monotonic_clock.c - CLOCK_MONOTONIC (POSIX): C11's timespec_get only has
 * TIME_UTC, which moves when the wall clock is set. */
#define _POSIX_C_SOURCE 200809L

#include "monotonic_clock.h"

#include <time.h>

double monotonic_seconds(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)now.tv_sec + 1e-9 * (double)now.tv_nsec;
}
