/*
 * compare_verdict.h - the paragraph in plain words under the table of
 * `brs compare` and `brs demo`: what each strategy costs in peak memory
 * (padded tokens of the largest micro-batch) and step time (under the
 * synchronisation the sampler plans for, --sync), and which one to pick
 * under the memory budget (--max-tokens when given).
 */
#ifndef BRS_CLI_COMPARE_VERDICT_H
#define BRS_CLI_COMPARE_VERDICT_H

#include <stdio.h>

#include "compare_report.h"
#include "comparison.h"

void compare_verdict_print(FILE *out, const comparison *result, const compare_setting *setting);

#endif
