/* compare_report.h - the readable table of `brs compare` and `brs demo`. */
#ifndef BRS_CLI_COMPARE_REPORT_H
#define BRS_CLI_COMPARE_REPORT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <brs.h>

#include "comparison.h"
#include "selection.h"

typedef struct compare_setting {
    const brs_sampler *sampler; /* the configuration, as the library resolved it */
    size_t samples;             /* N */
    uint64_t epoch;
    uint64_t steps_per_epoch;
    const selection *chosen;
    double seconds_per_unit;     /* > 0: times are shown in seconds (a calibrated model) */
    const char *cost_model_path; /* --cost-model FILE, or NULL */
} compare_setting;

/* The table, its legend and the verdict in plain words (compare_verdict.h). */
void compare_report_print(FILE *out, const comparison *result, const compare_setting *setting);

#endif
