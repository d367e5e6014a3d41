/*
 * compare_report.h - compare_report.c: a comparison as `brs compare` and
 * `brs demo` print it: a table with its legend, then a paragraph in plain
 * words: what each strategy costs in peak memory (padded tokens of the
 * largest micro-batch) and step time (under the synchronisation the sampler
 * plans for, --sync), and which one to pick under the memory budget
 * (--max-tokens when given).
 */
#ifndef BRS_CLI_COMPARE_REPORT_H
#define BRS_CLI_COMPARE_REPORT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <brs.h>

#include "args.h"
#include "compare.h"
#include "sampler.h"

/* What the report says about the run besides the comparison. */
typedef struct compare_setting {
    const brs_sampler *sampler; /* the configuration, as the library resolved it */
    size_t samples;             /* N */
    uint64_t epoch;
    uint64_t steps_per_epoch;
    const selection *chosen;
    double seconds_per_unit;     /* > 0: times are shown in seconds (a calibrated model) */
    double first_shape_seconds;  /* > 0: the one-time price of a new shape, shown per rank */
    const char *cost_model_path; /* --cost-model FILE, or NULL */
    const char *cap_source;      /* where max_tokens came from ("--max-tokens", or the
                                  * --cost-model file's key); NULL without a cap */
    const char *report_command;  /* the python -m brs report command that adds transformers'
                                  * batch_rebalance to these numbers */
} compare_setting;

/* The compare_setting of a command's configuration. */
compare_setting compare_setting_make(const cli_config *config, const brs_sampler *sampler,
                                     size_t samples, uint64_t steps, const selection *chosen);

/* The table, its legend and the paragraph in plain words. */
void compare_report_print(FILE *out, const comparison *result, const compare_setting *setting);

#endif
