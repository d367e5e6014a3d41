/*
 * cli_config.h - the settings of one `brs` invocation, as parsed from argv.
 *
 * The values are kept exactly as the user typed them (after number parsing);
 * range checks are left to the library, whose bounds and messages are the
 * contract, so the command line and every binding reject the same inputs.
 */
#ifndef BRS_CLI_CONFIG_H
#define BRS_CLI_CONFIG_H

#include <stdint.h>

typedef struct cli_config {
    const char *lengths_path; /* FILE, "-" for standard input, NULL if absent */
    int64_t batch_size;       /* P, the average micro-batch size */
    int64_t grad_accum;       /* G */
    int64_t dp_size;          /* R */
    int64_t seed;
    int64_t epoch;
    int shuffle;              /* 1 unless --no-shuffle */
    int drop_last;            /* 1 unless --no-drop-last */
    int packed;               /* 1 with --packed */
    double alpha;
    double intercept;
    int64_t max_tokens;       /* 0: no cap */
    int has_step;             /* --step given */
    int64_t step;
    int has_rank;             /* --rank given */
    int64_t rank;
    int help;                 /* --help given: print usage, ignore the rest */
} cli_config;

/* The defaults of issue 2: batch 8, grad-accum 1, dp 1, seed 0, epoch 0,
 * shuffle and drop-last on, alpha 0.001, intercept 0, no cap. */
cli_config cli_config_defaults(void);

#endif
