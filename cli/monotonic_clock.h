/* monotonic_clock.h - seconds on a clock that never jumps, for timing planning. */
#ifndef BRS_CLI_MONOTONIC_CLOCK_H
#define BRS_CLI_MONOTONIC_CLOCK_H

double monotonic_seconds(void);

#endif
