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
 * option of `config`. Bad values exit 2 with the library's reason, named
 * after the flag that carried them. Free with brs_sampler_free. */
brs_sampler *sampler_setup(const cli_config *config, const uint32_t *lengths, size_t count);

/* The number of steps per epoch of a validated sampler. */
uint64_t sampler_steps(brs_sampler *sampler);

#endif
