/* memory.h - allocation that either succeeds or ends the command (exit 1). */
#ifndef BRS_CLI_MEMORY_H
#define BRS_CLI_MEMORY_H

#include <stddef.h>

/* An array of `count` zeroed elements of `size` bytes (count may be 0). */
void *cli_calloc(size_t count, size_t size);

/* Resize `array` to `count` elements of `size` bytes, checking the product. */
void *cli_realloc_array(void *array, size_t count, size_t size);

#endif
