/* text.c - untrusted bytes as printable ASCII, for messages. */
#include "formats/internal.h"

#include <stdio.h>

void brs_text_escape(char *out, size_t size, const char *text, size_t length)
{
    static const char ellipsis[] = "...";
    size_t used = 0;
    for (size_t i = 0; i < length; i++) {
        unsigned char byte = (unsigned char)text[i];
        int plain = byte >= 0x20 && byte <= 0x7e;
        size_t need = plain ? 1 : 4;
        /* Keep room for the ellipsis and the terminator. */
        if (used + need + sizeof ellipsis > size) {
            snprintf(out + used, size - used, "%s", ellipsis);
            return;
        }
        if (plain)
            out[used++] = (char)byte;
        else
            used += (size_t)snprintf(out + used, size - used, "\\x%02x", byte);
    }
    out[used] = '\0';
}
