/* message.c - a handle's detail message written and read (util/message.h). */
#include "util/message.h"

#include <stdarg.h>
#include <stdio.h>

/* The message buffers live in the handles, so two threads working on two
 * handles never share state; the flag only orders two failing calls on one
 * handle. */
brs_status brs_fail(const struct brs_message *message, brs_status status, const char *format, ...)
{
    struct brs_message *m = (struct brs_message *)message;
    while (atomic_flag_test_and_set_explicit(&m->busy, memory_order_acquire)) {
    }
    va_list args;
    va_start(args, format);
    vsnprintf(m->text, sizeof m->text, format, args);
    va_end(args);
    atomic_flag_clear_explicit(&m->busy, memory_order_release);
    return status;
}

brs_status brs_fail_about(const struct brs_message *message, brs_status status, const char *subject,
                          const char *separator, const char *format, ...)
{
    char problem[384];
    va_list args;
    va_start(args, format);
    vsnprintf(problem, sizeof problem, format, args);
    va_end(args);
    return brs_fail(message, status, "%s%s%s", subject, separator, problem);
}

void brs_message_clear(struct brs_message *message)
{
    message->text[0] = '\0';
}

const char *brs_message_text(const struct brs_message *message)
{
    return message->text;
}
