/* buckets.h - buckets.c: --length-buckets, the padded lengths a
 * micro-batch may take. */
#ifndef BRS_CLI_BUCKETS_H
#define BRS_CLI_BUCKETS_H

#include <brs.h>

/* "auto" (the library's ladder for the lengths), a comma-separated list
 * ("64,128,256"), or a FILE in the lengths format; set on the sampler, or
 * the command ends with the reason. */
void buckets_apply(brs_sampler *sampler, const char *value);

#endif
