/* text_wrap.c - greedy word wrapping. */
#include "text_wrap.h"

#include <string.h>

void text_wrap_print(FILE *out, const char *text, int width)
{
    int column = 0;
    const char *word = text;
    while (*word != '\0') {
        while (*word == ' ')
            word++;
        int length = (int)strcspn(word, " ");
        if (length == 0)
            break;
        if (column > 0 && column + 1 + length > width) {
            fputc('\n', out);
            column = 0;
        } else if (column > 0) {
            fputc(' ', out);
            column++;
        }
        fprintf(out, "%.*s", length, word);
        column += length;
        word += length;
    }
    fputc('\n', out);
}
