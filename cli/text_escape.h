/* text_escape.h - quote untrusted bytes (a line of a file, an argument) in a
 * message: a terminal must never receive raw control or invisible bytes. */
#ifndef BRS_CLI_TEXT_ESCAPE_H
#define BRS_CLI_TEXT_ESCAPE_H

#include <stddef.h>

/* Write text[0..length) into out (size >= 8) as printable ASCII: bytes
 * 0x20..0x7e stay, every other byte becomes \xNN; longer text is cut and
 * ends in "...". out is always NUL-terminated. */
void text_escape(char *out, size_t size, const char *text, size_t length);

#endif
