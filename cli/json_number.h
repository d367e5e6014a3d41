/* json_number.h - print a double as the shortest JSON number that reads back
 * to exactly the same value. */
#ifndef BRS_CLI_JSON_NUMBER_H
#define BRS_CLI_JSON_NUMBER_H

#include <stdio.h>

/* `value` must be finite (costs always are). */
void json_print_double(FILE *out, double value);

#endif
