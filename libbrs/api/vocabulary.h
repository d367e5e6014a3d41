/* api/vocabulary.h - the sampler's shape vocabulary, chosen once and kept (vocabulary.c).
 * Internal, not installed. */
#ifndef BRS_API_VOCABULARY_H
#define BRS_API_VOCABULARY_H

#include "brs.h"
#include "api/handles.h"
#include "api/message.h"
#include "planner/vocabulary.h"

/* The vocabulary every plan of a checked sampler with max_shapes > 0 keeps
 * to, chosen on first use and kept while the fingerprint stays; failures
 * are written into `message`. */
brs_status brs_vocabulary_of(const struct brs_vocabulary **out, const brs_sampler *s,
                             const struct brs_message *message);
/* Releases what the sampler keeps (brs_sampler_free). */
void brs_vocabulary_forget(brs_sampler *s);

#endif
