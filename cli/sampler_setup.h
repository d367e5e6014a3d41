/*
 * sampler_setup.h - configure a library sampler from the command line.
 */
#ifndef BRS_CLI_SAMPLER_SETUP_H
#define BRS_CLI_SAMPLER_SETUP_H

#include <stddef.h>
#include <stdint.h>

#include <brs.h>

#include "cli_config.h"

/* A validated sampler over `lengths` (borrowed: keep them alive) with every
 * option of `config`; the others keep the library's defaults. Bad values
 * exit 2 with the library's reason, named after the flag (or cost-model
 * key) that carried them. Free with brs_sampler_free. */
brs_sampler *sampler_setup(const cli_config *config, const uint32_t *lengths, size_t count);

/* Set one option on a sampler already set up, and validate it again. */
void sampler_set_int(brs_sampler *sampler, brs_option key, int64_t value);

/* An option as the sampler resolved it. */
int64_t sampler_get_int(const brs_sampler *sampler, brs_option key);
double sampler_get_double(const brs_sampler *sampler, brs_option key);

/* The number of steps per epoch of a validated sampler. */
uint64_t sampler_steps(brs_sampler *sampler);

#endif
