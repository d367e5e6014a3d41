/* json_number.c - round-trip formatting of doubles. */
#include "json_number.h"

#include <stdlib.h>

void json_print_double(FILE *out, double value)
{
    /* 17 significant digits always round-trip an IEEE double; fewer often
     * do, and "47415.216" reads better than "47415.216000000003". */
    char text[32];
    for (int digits = 1; digits <= 17; digits++) {
        snprintf(text, sizeof text, "%.*g", digits, value);
        if (strtod(text, NULL) == value)
            break;
    }
    fputs(text, out);
}
