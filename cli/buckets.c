/* buckets.c - --length-buckets: the padded lengths a micro-batch may take,
 * given as the library's ladder, a list on the command line, or a file. */
#include "buckets.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "input.h"
#include "output.h"

static void set_buckets(brs_sampler *sampler, const uint32_t *buckets, size_t count)
{
    brs_status status = brs_sampler_set_length_buckets(sampler, buckets, count);
    if (status != BRS_OK)
        cli_library_error(status, "--length-buckets", brs_sampler_last_error(sampler));
}

static void apply_ladder(brs_sampler *sampler)
{
    size_t count = 0;
    brs_status status = brs_sampler_bucket_ladder(NULL, &count, sampler, 0, 0);
    uint32_t *ladder = status == BRS_OK ? malloc((count ? count : 1) * sizeof *ladder) : NULL;
    if (status == BRS_OK && ladder == NULL) cli_failure("out of memory for %zu buckets", count);
    if (status == BRS_OK) status = brs_sampler_bucket_ladder(ladder, &count, sampler, 0, count);
    if (status != BRS_OK)
        cli_library_error(status, "--length-buckets auto", brs_sampler_last_error(sampler));
    set_buckets(sampler, ladder, count);
    free(ladder);
}

/* Whether the value reads as a list: digits and commas only. A file whose
 * name is all digits is given as ./NAME. */
static int looks_like_list(const char *value)
{
    return value[strspn(value, "0123456789,")] == '\0';
}

static void apply_list(brs_sampler *sampler, const char *value)
{
    size_t count = 1;
    for (const char *c = value; *c; c++) count += *c == ',';
    uint32_t *buckets = malloc(count * sizeof *buckets);
    if (buckets == NULL) cli_failure("out of memory for %zu buckets", count);
    const char *item = value;
    for (size_t i = 0; i < count; i++) {
        size_t length = strcspn(item, ",");
        char text[32];
        uint64_t bucket = 0;
        if (length == 0 || length >= sizeof text)
            cli_bad_input("--length-buckets: item %zu of '%s' is not a length: give lengths "
                          ">= 1 separated by commas (64,128,256)",
                          i + 1, value);
        memcpy(text, item, length);
        text[length] = '\0';
        if (strict_uint64(text, &bucket) != STRICT_OK || bucket == 0 || bucket > UINT32_MAX)
            cli_bad_input("--length-buckets: '%s' is not a length from 1 to %" PRIu32, text,
                          UINT32_MAX);
        buckets[i] = (uint32_t)bucket;
        item += length + 1;
    }
    set_buckets(sampler, buckets, count);
    free(buckets);
}

void buckets_apply(brs_sampler *sampler, const char *value)
{
    if (strcmp(value, "auto") == 0) {
        apply_ladder(sampler);
    } else if (looks_like_list(value)) {
        apply_list(sampler, value);
    } else {
        lengths file = lengths_load(value);
        set_buckets(sampler, file.values, file.count);
        lengths_free(&file);
    }
}
