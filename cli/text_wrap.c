/* text_wrap.c - greedy word wrapping. */
#include "text_wrap.h"

#include <string.h>

void text_wrap_print_indented(FILE *out, const char *text, int column, int indent, int width)
{
    int start = column; /* where words begin on this line */
    const char *word = text;
    while (*word != '\0') {
        while (*word == ' ')
            word++;
        int length = (int)strcspn(word, " ");
        if (length == 0)
            break;
        if (column > start && column + 1 + length > width) {
            fprintf(out, "\n%*s", indent, "");
            column = start = indent;
        } else if (column > start) {
            fputc(' ', out);
            column++;
        }
        fprintf(out, "%.*s", length, word);
        column += length;
        word += length;
    }
    fputc('\n', out);
}

void text_wrap_print(FILE *out, const char *text, int width)
{
    text_wrap_print_indented(out, text, 0, 0, width);
}
