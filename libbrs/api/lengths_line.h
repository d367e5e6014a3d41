/* api/lengths_line.h - one line of a lengths file: its length and its
 * images' encoder loads (lengths_line.c). Internal, not installed. */
#ifndef BRS_API_LENGTHS_LINE_H
#define BRS_API_LENGTHS_LINE_H

#include <stddef.h>
#include <stdint.h>

/* The longest line, its end excluded (docs/formats.md); such a line holds
 * fewer than 64 image loads ("1 1,1,...,1"). */
#define BRS_LENGTHS_LINE_MAX 128
#define BRS_LENGTHS_LINE_MAX_IMAGES (BRS_LENGTHS_LINE_MAX / 2)

typedef struct brs_lengths_line {
    uint32_t length;
    uint32_t loads[BRS_LENGTHS_LINE_MAX_IMAGES];
    size_t image_count; /* 0: no images (no second field, or a lone 0) */
} brs_lengths_line;

/* Read line `number` (1-based), text[0..size): the line without its end and
 * without a byte-order mark, at most BRS_LENGTHS_LINE_MAX bytes. Returns 0,
 * or -1 with what is wrong in problem ("line 3: '1.5' is not a positive
 * integer: ...", to follow the file's name). */
int brs_lengths_line_read(brs_lengths_line *out, size_t number, const char *text, size_t size,
                          char *problem, size_t problem_size);

#endif
