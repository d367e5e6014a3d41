/* too_long.c - the sentence of a sample too long for a limit (util/too_long.h): written once, so
 * the sampler, a batch, the epoch check, context parallelism and the brs command say it alike. */
#include "util/too_long.h"

#include <stdio.h>

void brs_too_long_text(char *out, size_t size, const struct brs_too_long *what)
{
    snprintf(out, size, "%s has %llu tokens%s, more than %s: %s or truncate the sample",
             what->sample, (unsigned long long)what->tokens, what->shown, what->limit, what->fix);
}
