/* text_wrap.h - print prose wrapped at a column, for notes, summaries and
 * the descriptions of --help. */
#ifndef BRS_CLI_TEXT_WRAP_H
#define BRS_CLI_TEXT_WRAP_H

#include <stdio.h>

/* Print `text` with its spaces turned into line breaks where a line would
 * pass `width` columns (a longer word stays whole); ends with a newline. */
void text_wrap_print(FILE *out, const char *text, int width);

/* The same, for text that starts at column `column` of the current line;
 * continuation lines are indented by `indent` spaces. */
void text_wrap_print_indented(FILE *out, const char *text, int column, int indent, int width);

#endif
