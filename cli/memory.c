/* memory.c - checked allocation for the command-line tool. */
#include "memory.h"

#include <stdint.h>
#include <stdlib.h>

#include "fail.h"

void *cli_calloc(size_t count, size_t size)
{
    /* calloc(0, ...) may return NULL legitimately: ask for one element. */
    void *memory = calloc(count > 0 ? count : 1, size > 0 ? size : 1);
    if (memory == NULL)
        cli_failure("out of memory (%zu x %zu bytes)", count, size);
    return memory;
}

void *cli_realloc_array(void *array, size_t count, size_t size)
{
    if (size != 0 && count > SIZE_MAX / size)
        cli_failure("out of memory (%zu x %zu bytes overflows)", count, size);
    void *memory = realloc(array, count * size > 0 ? count * size : 1);
    if (memory == NULL)
        cli_failure("out of memory (%zu x %zu bytes)", count, size);
    return memory;
}
