/* util/text.h - untrusted bytes quoted in a message (text.c). Internal, not installed. */
#ifndef BRS_UTIL_TEXT_H
#define BRS_UTIL_TEXT_H

#include <stddef.h>

/* Write text[0..length) into out (size >= 8) as printable ASCII: bytes
 * 0x20..0x7e stay, every other byte becomes \xNN; longer text is cut and
 * ends in "...". out is always NUL-terminated. A message quotes a file's
 * bytes or name this way, so that a terminal never receives raw control
 * or invisible bytes. */
void brs_text_escape(char *out, size_t size, const char *text, size_t length);

#endif
