/* input.h - input.c: the lengths file and the cost-model file, read by libbrs. */
#ifndef BRS_CLI_INPUT_H
#define BRS_CLI_INPUT_H

#include <stddef.h>
#include <stdint.h>

#include <brs.h>

#include "args.h"

/*
 * A dataset's sample lengths, and the encoder loads of its images, from a
 * lengths file: one sample per line, its token count, then optionally its
 * images' patch counts ("512 256,256"). libbrs reads the format
 * (brs_lengths_file_*; docs/formats.md is its specification and
 * tests/vectors/formats has a file per rule); input.c reads the bytes.
 */

typedef struct lengths {
    brs_lengths_file *file; /* owns every array below; free with lengths_free */
    const uint32_t *values; /* count lengths */
    size_t count;
    const uint32_t *patches; /* sample i's images: patches[offsets[i] .. offsets[i + 1]) */
    const uint64_t *offsets; /* count + 1 entries, all 0 when no sample has an image */
} lengths;

/* What the readers return: 0 on success, else the exit status the problem
 * deserves (CLI_EXIT_BAD_INPUT for the input, CLI_EXIT_FAILURE for memory). */
typedef int lengths_status;

/* Read `path` ("-" for standard input) in bounded chunks; messages name the
 * file and the line. On failure *out is empty. Never exits. */
lengths_status lengths_read(const char *path, lengths *out, char *error, size_t error_size);

/* lengths_read, or end the command with its message (exit 2 or 1). */
lengths lengths_load(const char *path);

void lengths_free(lengths *data);

/* How messages name `path`: the path itself, or "standard input" for "-". */
const char *lengths_display_name(const char *path);

/*
 * `--cost-model FILE`: the cost-model JSON that Python's brs.calibrate /
 * CostModel.save writes:
 *   {"format": "brs-cost-model", "version": 1, "alpha": A, "intercept": C,
 *    "max_tokens": T or null, ...}
 * libbrs checks it (brs_cost_model_file_*; docs/formats.md). alpha,
 * intercept and max_tokens are used (max_tokens null or absent: no
 * setting), and so are seconds_per_unit (null or absent in a model that was
 * not calibrated), which `brs compare` turns its times into seconds with,
 * and first_shape_seconds. A flag given on the command line wins over the
 * file, so a calibrated model can be tried with one value changed.
 */

/* Read `path` and add its settings to *config, except those the command
 * line gave. Returns 0, or the exit status with one line in error naming
 * the file and the key. Never exits. */
int cost_model_file_read(cli_config *config, const char *path, char *error, size_t error_size);

/* cost_model_file_read of config->cost_model_path (nothing if NULL), or
 * end the command with its message. */
void cost_model_file_apply(cli_config *config);

#endif
