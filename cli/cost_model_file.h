/*
 * cost_model_file.h - `--cost-model FILE`: the cost-model JSON that Python's
 * brs.calibrate / CostModel.save writes:
 *   {"format": "brs-cost-model", "version": 1, "alpha": A, "intercept": C,
 *    "max_tokens": T or null, ...}
 * format and version are checked; alpha, intercept and max_tokens are used
 * (max_tokens null or absent: no setting), and so is seconds_per_unit (null
 * or absent in a model that was not calibrated), which `brs compare` turns
 * its times into seconds with; the keys of the calibration's record (r2,
 * source, timings, ...) are only type-checked, and unknown keys ignored.
 * A flag given on the command line wins over the file, so a calibrated model
 * can be tried with one value changed. docs/formats.md is the format's
 * specification (Python's CostModel.load follows the same rules).
 */
#ifndef BRS_CLI_COST_MODEL_FILE_H
#define BRS_CLI_COST_MODEL_FILE_H

#include <stddef.h>

#include "cli_config.h"

/* Read `path` and add its settings to *config, except those the command
 * line gave. Returns 0, or the exit status with one line in error naming
 * the file and the key. Never exits. */
int cost_model_file_read(cli_config *config, const char *path, char *error, size_t error_size);

/* The same for the file's bytes text[0..size), named `name` in messages
 * (the fuzz harness's entry: no file, no size limit). */
int cost_model_text_read(cli_config *config, const char *text, size_t size, const char *name,
                         char *error, size_t error_size);

/* cost_model_file_read of config->cost_model_path (nothing if NULL), or
 * end the command with its message. */
void cost_model_file_apply(cli_config *config);

#endif
