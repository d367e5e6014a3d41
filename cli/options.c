/* options.c - a small table-driven parser for the flags of issue 2. */
#include "options.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "fail.h"

cli_config cli_config_defaults(void)
{
    cli_config config = {
        .lengths_path = NULL,
        .batch_size = 8,
        .grad_accum = 1,
        .dp_size = 1,
        .seed = 0,
        .epoch = 0,
        .shuffle = 1,
        .drop_last = 1,
        .packed = 0,
        .alpha = 0.001,
        .intercept = 0.0,
        .max_tokens = 0,
        .has_step = 0,
        .step = 0,
        .has_rank = 0,
        .rank = 0,
        .help = 0,
    };
    return config;
}

typedef enum flag_kind {
    FLAG_PATH,   /* const char * */
    FLAG_INT,    /* int64_t */
    FLAG_DOUBLE, /* double */
    FLAG_CLEAR,  /* a switch that sets an int field to 0 */
    FLAG_SET     /* a switch that sets an int field to 1 */
} flag_kind;

typedef struct flag {
    const char *name;
    flag_kind kind;
    size_t field;    /* offsetof the value in cli_config */
    size_t given;    /* offsetof an int set to 1 when the flag appears, or 0 */
} flag;

#define FIELD(member) offsetof(cli_config, member)

static const flag plan_flags[] = {
    {"--lengths", FLAG_PATH, FIELD(lengths_path), 0},
    {"--batch-size", FLAG_INT, FIELD(batch_size), 0},
    {"--grad-accum", FLAG_INT, FIELD(grad_accum), 0},
    {"--dp-size", FLAG_INT, FIELD(dp_size), 0},
    {"--seed", FLAG_INT, FIELD(seed), 0},
    {"--epoch", FLAG_INT, FIELD(epoch), 0},
    {"--no-shuffle", FLAG_CLEAR, FIELD(shuffle), 0},
    {"--no-drop-last", FLAG_CLEAR, FIELD(drop_last), 0},
    {"--alpha", FLAG_DOUBLE, FIELD(alpha), 0},
    {"--intercept", FLAG_DOUBLE, FIELD(intercept), 0},
    {"--max-tokens", FLAG_INT, FIELD(max_tokens), 0},
    {"--packed", FLAG_SET, FIELD(packed), 0},
    {"--step", FLAG_INT, FIELD(step), FIELD(has_step)},
    {"--rank", FLAG_INT, FIELD(rank), FIELD(has_rank)},
};

static const flag *find_flag(const char *name, size_t name_length, options_set accepted)
{
    if (accepted != OPTIONS_PLAN)
        return NULL;
    for (size_t i = 0; i < sizeof plan_flags / sizeof plan_flags[0]; i++) {
        const char *candidate = plan_flags[i].name;
        if (strlen(candidate) == name_length && strncmp(candidate, name, name_length) == 0)
            return &plan_flags[i];
    }
    return NULL;
}

static int64_t parse_int(const char *name, const char *text)
{
    const char *digits = text[0] == '-' ? text + 1 : text;
    if (digits[0] < '0' || digits[0] > '9')
        cli_bad_input("%s needs an integer, got '%s'", name, text);
    errno = 0;
    char *end;
    long long value = strtoll(text, &end, 10);
    if (*end != '\0')
        cli_bad_input("%s needs an integer, got '%s'", name, text);
    if (errno == ERANGE)
        cli_bad_input("%s %s does not fit in 64 bits", name, text);
    return (int64_t)value;
}

static double parse_double(const char *name, const char *text)
{
    errno = 0;
    char *end;
    double value = strtod(text, &end);
    if (text[0] == '\0' || *end != '\0')
        cli_bad_input("%s needs a number, got '%s'", name, text);
    if (errno == ERANGE)
        cli_bad_input("%s %s is out of the range of a double", name, text);
    return value;
}

static void store(cli_config *config, const flag *spec, const char *value)
{
    char *base = (char *)config;
    switch (spec->kind) {
    case FLAG_PATH:
        *(const char **)(base + spec->field) = value;
        break;
    case FLAG_INT:
        *(int64_t *)(base + spec->field) = parse_int(spec->name, value);
        break;
    case FLAG_DOUBLE:
        *(double *)(base + spec->field) = parse_double(spec->name, value);
        break;
    case FLAG_CLEAR:
        *(int *)(base + spec->field) = 0;
        break;
    case FLAG_SET:
        *(int *)(base + spec->field) = 1;
        break;
    }
    if (spec->given != 0)
        *(int *)(base + spec->given) = 1;
}

static int is_switch(const flag *spec) { return spec->kind == FLAG_CLEAR || spec->kind == FLAG_SET; }

cli_config options_parse(int count, char **args, options_set accepted)
{
    cli_config config = cli_config_defaults();
    for (int i = 0; i < count; i++) {
        const char *arg = args[i];
        if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
            config.help = 1;
            return config;
        }
        if (strncmp(arg, "--", 2) != 0)
            cli_bad_input("unexpected argument '%s' (options start with --; see --help)", arg);
        const char *equals = strchr(arg, '=');
        size_t name_length = equals ? (size_t)(equals - arg) : strlen(arg);
        const flag *spec = find_flag(arg, name_length, accepted);
        if (spec == NULL)
            cli_bad_input("unknown option '%.*s' (see --help)", (int)name_length, arg);
        const char *value = equals ? equals + 1 : NULL;
        if (is_switch(spec) && value != NULL)
            cli_bad_input("%s takes no value", spec->name);
        if (!is_switch(spec) && value == NULL) {
            if (i + 1 == count)
                cli_bad_input("%s needs a value (see --help)", spec->name);
            value = args[++i];
        }
        store(&config, spec, value);
    }
    return config;
}

void options_require_lengths(const cli_config *config)
{
    if (config->lengths_path == NULL)
        cli_bad_input("--lengths FILE is required (one token count per line, '-' for standard "
                      "input)");
}
