/* usage.h - usage.c: the --help texts of `brs` and its commands. */
#ifndef BRS_CLI_USAGE_H
#define BRS_CLI_USAGE_H

#include <stdio.h>

void usage_main(FILE *out);
void usage_plan(FILE *out);
void usage_compare(FILE *out);
void usage_demo(FILE *out);

#endif
