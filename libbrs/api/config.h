/* api/config.h - the resolved configuration of a sampler (options.c, options.def). Internal, not
 * installed. */
#ifndef BRS_API_CONFIG_H
#define BRS_API_CONFIG_H

#include "brs.h"

#include <stdint.h>

/* The resolved configuration, one field per line of options.def: an INT
 * option is an int64_t of its name, a DOUBLE one a uint64_t name_micro in
 * units of 1e-6 (exact, identical cost arithmetic on every machine). Every
 * field is validated on set. */
#define BRS_CONFIG_FIELD_INT(name) int64_t name;
#define BRS_CONFIG_FIELD_DOUBLE(name) uint64_t name##_micro;
struct brs_config {
#define BRS_OPTION(key, name, type, lower, upper, fallback, scope, keyword, help, values) \
    BRS_CONFIG_FIELD_##type(name)
#include "api/options.def"
#undef BRS_OPTION
};

/* The last option key of libbrs 1.0: options after it enter the fingerprint
 * only when set to a value other than their default, so that every plan 1.0
 * could make keeps its fingerprint (tests/vectors). */
#define BRS_OPT_LAST_OF_1_0 BRS_OPT_INTERCEPT

/* options.c */
void brs_config_defaults(struct brs_config *config);
double brs_micro_to_double(uint64_t micro);
/* The fingerprint's share of the configuration: every fingerprinted option
 * of options.def mixed into h in table order. */
uint64_t brs_config_mix(uint64_t h, const struct brs_config *config);
/* brs_config_mix without the options that only split a step among ranks and
 * micro-steps (dp_size, batch_size, grad_accum, sync): the stream's share. */
uint64_t brs_config_mix_stream(uint64_t h, const struct brs_config *config);

#endif
