/* util/message.h - a handle's detail message and brs_fail, which writes it (message.c): the
 * ground every folder that reports an error stands on, api/ and formats/ alike. Internal, not
 * installed. */
#ifndef BRS_UTIL_MESSAGE_H
#define BRS_UTIL_MESSAGE_H

#include "brs.h"

#include <stdatomic.h>

#define BRS_MESSAGE_SIZE 512

/* What a handle's last_error returns for a NULL handle (after the call's
 * name where the handle's type does not say it). */
#define BRS_MESSAGE_NULL_HANDLE "the handle is NULL"

/* A handle's detail message. Every failing call on a handle writes it, the
 * read-only ones included (libgit2's rule: no message outlives the next
 * failure), so two read-only calls failing at once on one handle both write:
 * `busy` serialises them. */
struct brs_message {
    atomic_flag busy;
    char text[BRS_MESSAGE_SIZE];
};

/* brs_fail writes the message and returns `status`. The handles are always
 * heap objects the caller may not write, never const objects, so a const
 * handle's message may be written (the const of the API says the call does
 * not change what the handle describes). */
brs_status brs_fail(const struct brs_message *message, brs_status status, const char *format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
/* brs_fail with "<subject><separator><problem>" as the message, the problem
 * formatted from `format` (cut at 383 bytes): how a reader of a named file
 * words every refusal, its file's name first. */
brs_status brs_fail_about(const struct brs_message *message, brs_status status, const char *subject,
                          const char *separator, const char *format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;
void brs_message_clear(struct brs_message *message);
const char *brs_message_text(const struct brs_message *message);

#endif
