/* api/message.h - a handle's detail message (errors.c). Internal, not installed. */
#ifndef BRS_API_MESSAGE_H
#define BRS_API_MESSAGE_H

#include "brs.h"

#include <stdatomic.h>

#define BRS_MESSAGE_SIZE 512

/* A handle's detail message. Every failing call on a handle writes it, the
 * read-only ones included (libgit2's rule: no message outlives the next
 * failure), so two read-only calls failing at once on one handle both write:
 * `busy` serialises them. */
struct brs_message {
    atomic_flag busy;
    char text[BRS_MESSAGE_SIZE];
};

/* errors.c: brs_fail writes the message and returns `status`. The handles
 * are always heap objects the caller may not write, never const objects, so
 * a const handle's message may be written (the const of the API says the
 * call does not change what the handle describes). */
brs_status brs_fail(const struct brs_message *message, brs_status status, const char *format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
void brs_message_clear(struct brs_message *message);
const char *brs_message_text(const struct brs_message *message);

#endif
