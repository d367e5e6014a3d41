/* util/too_long.h - the one sentence every message about a sample too long
 * for a limit says (too_long.c), whoever names the sample: the sampler
 * ("sample 12"), a batch ("lengths[12]"), the brs command ("FILE line 13",
 * which compiles too_long.c in as it does formats/text.c). Internal, not
 * installed. */
#ifndef BRS_UTIL_TOO_LONG_H
#define BRS_UTIL_TOO_LONG_H

#include "brs.h"
#include "util/message.h"

#include <stddef.h>
#include <stdint.h>

/* A sample too long, in the caller's words: "{sample} has {tokens}
 * tokens{shown}, more than {limit}: {fix} or truncate the sample". */
struct brs_too_long {
    const char *sample; /* "sample 12", "lengths[12]", "data.lengths line 13" */
    uint64_t tokens;
    const char *shown; /* what stands against the limit, after the tokens: "" or ", padded to 128
                        * (pad_to_multiple_of 64)" */
    const char *limit; /* "max_tokens 100", "the last length bucket 512" */
    const char *fix;   /* "raise max_tokens to at least 128", "add a bucket of at least 1024" */
};

/* The sentence into out[0..size), always NUL-terminated. */
void brs_too_long_text(char *out, size_t size, const struct brs_too_long *what);

/* BRS_ERR_SAMPLE_TOO_LONG with the sentence as the handle's message. */
static inline brs_status brs_too_long_fail(const struct brs_message *message,
                                           const struct brs_too_long *what)
{
    char text[BRS_MESSAGE_SIZE];
    brs_too_long_text(text, sizeof text, what);
    return brs_fail(message, BRS_ERR_SAMPLE_TOO_LONG, "%s", text);
}

#endif
