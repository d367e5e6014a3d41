/* args.c - the command line: the library's options as flags, the parser
 * that fills a cli_config, and strict decimal numbers. */
#include "args.h"

#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "output.h"

/* A table-driven parser: the command's own flags here, the
 * library's options from the option table above. */

typedef enum command_value {
    VALUE_PATH, /* const char * */
    VALUE_COUNT /* uint64_t, decimal */
} command_value;

typedef struct command_flag {
    const char *flag;
    const char *short_flag; /* or NULL */
    command_value kind;
    size_t field; /* offsetof the value in cli_config */
    size_t given; /* offsetof an int set to 1 when the flag appears, or 0 */
} command_flag;

#define FIELD(member) offsetof(cli_config, member)

static const command_flag command_flags[] = {
    {"--lengths", NULL, VALUE_PATH, FIELD(lengths_path), 0},
    {"--cost-model", NULL, VALUE_PATH, FIELD(cost_model_path), 0},
    {"--length-buckets", NULL, VALUE_PATH, FIELD(length_buckets), 0},
    {"--output", "-o", VALUE_PATH, FIELD(output_path), 0},
    {"--epoch", NULL, VALUE_COUNT, FIELD(epoch), 0},
    {"--step", NULL, VALUE_COUNT, FIELD(step), FIELD(has_step)},
};

enum { COMMAND_FLAG_COUNT = sizeof command_flags / sizeof command_flags[0] };

/* compare measures every strategy and every rank: a flag that picks one
 * would be ignored or contradicted, so it is refused, and help omits it. */
static const struct {
    options_set command;
    brs_option key;
    const char *why;
} not_taken[] = {
    {OPTIONS_COMPARE, BRS_OPT_STRATEGY, "compare runs every strategy side by side"},
    {OPTIONS_COMPARE, BRS_OPT_RANK, "compare measures every rank"},
};

const char *options_not_taken(options_set accepted, brs_option key)
{
    if (accepted == OPTIONS_HELP_ONLY) return "the demo takes no options";
    for (size_t i = 0; i < sizeof not_taken / sizeof not_taken[0]; i++)
        if (not_taken[i].command == accepted && not_taken[i].key == key) return not_taken[i].why;
    return NULL;
}

typedef struct parse_state {
    cli_config *config;
    int command_seen[COMMAND_FLAG_COUNT];
    char *error;
    size_t error_size;
} parse_state;

static int bad(parse_state *state, const char *format, ...) __attribute__((format(printf, 2, 3)));

static int bad(parse_state *state, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    vsnprintf(state->error, state->error_size, format, args);
    va_end(args);
    return CLI_EXIT_BAD_INPUT;
}

/* An argument as messages quote it: escaped and cut to a readable size. */
typedef struct quoted {
    char text[72];
} quoted;

static quoted quote(const char *text, size_t length)
{
    quoted q;
    brs_text_escape(q.text, sizeof q.text, text, length);
    return q;
}

static int store_command(parse_state *state, size_t index, const char *value)
{
    const command_flag *spec = &command_flags[index];
    char *base = (char *)state->config;
    if (state->command_seen[index])
        return bad(state, "%s is given twice: give it once", spec->flag);
    state->command_seen[index] = 1;
    if (spec->kind == VALUE_PATH) {
        if (value[0] == '\0') return bad(state, "%s needs a file name, got ''", spec->flag);
        *(const char **)(base + spec->field) = value;
    } else {
        uint64_t number;
        if (strict_uint64(value, &number) != STRICT_OK)
            return bad(state, "%s needs an integer from 0 to %" PRIu64 ", got '%s'", spec->flag,
                       UINT64_MAX, quote(value, strlen(value)).text);
        *(uint64_t *)(base + spec->field) = number;
    }
    if (spec->given != 0) *(int *)(base + spec->given) = 1;
    return 0;
}

static int parse_int_value(parse_state *state, const library_option *option, const char *value,
                           int64_t *out)
{
    strict_result result = strict_int64(value, out);
    if (result == STRICT_RANGE)
        return bad(state, "%s %s is out of range [%" PRId64 ", %" PRId64 "]", option->flag,
                   quote(value, strlen(value)).text, option->lower, option->upper);
    if (result != STRICT_OK)
        return bad(state, "%s needs an integer (decimal digits), got '%s'", option->flag,
                   quote(value, strlen(value)).text);
    return 0;
}

/* "random", "length_grouped" or "length-grouped" (flags use '-'), found by
 * the library (brs_option_value_find), or the value's number. */
static int parse_named_value(parse_state *state, const library_option *option, const char *value,
                             int64_t *out)
{
    char wanted[64];
    snprintf(wanted, sizeof wanted, "%s", value);
    for (char *c = wanted; *c != '\0'; c++) *c = *c == '-' ? '_' : *c;
    if (strlen(value) < sizeof wanted && brs_option_value_find(out, option->key, wanted) == BRS_OK)
        return 0;
    if (strict_int64(value, out) == STRICT_OK) return 0;
    char names[256] = "";
    for (int64_t v = option->lower; v <= option->upper && v - option->lower < 64; v++) {
        const char *name = option_table_value_name(option, v);
        if (name == NULL) continue;
        size_t used = strlen(names);
        snprintf(names + used, sizeof names - used, "%s%s", used ? ", " : "", name);
    }
    return bad(state, "%s needs one of %s (or its number), got '%s'", option->flag, names,
               quote(value, strlen(value)).text);
}

static int parse_double_value(parse_state *state, const library_option *option, const char *value,
                              double *out)
{
    strict_result result = strict_double(value, out);
    if (result == STRICT_RANGE)
        return bad(state, "%s %s cannot be represented; the range is [%g, %g]", option->flag,
                   quote(value, strlen(value)).text, option->lower_double, option->upper_double);
    if (result != STRICT_OK)
        return bad(state, "%s needs a decimal number (e.g. 0.5), got '%s'", option->flag,
                   quote(value, strlen(value)).text);
    return 0;
}

static int store_option(parse_state *state, const library_option *option, const char *flag,
                        const char *value)
{
    const option_setting *earlier = cli_config_find(state->config, option->key);
    if (earlier != NULL && strcmp(earlier->source, flag) == 0)
        return bad(state, "%s is given twice: give it once", flag);
    if (earlier != NULL)
        return bad(state, "%s: %s is already set by %s; give one of them", flag, option->name,
                   earlier->source);
    option_setting setting = {option->key, 0, 0.0, ""};
    int status = 0;
    switch (option->form) {
    case OPTION_FORM_SWITCH: setting.int_value = strcmp(flag, option->flag) == 0; break;
    case OPTION_FORM_INT: status = parse_int_value(state, option, value, &setting.int_value); break;
    case OPTION_FORM_NAMED:
        status = parse_named_value(state, option, value, &setting.int_value);
        break;
    case OPTION_FORM_DOUBLE:
        status = parse_double_value(state, option, value, &setting.double_value);
        break;
    }
    if (status != 0) return status;
    option_setting *added = cli_config_add(state->config, option->key, flag);
    if (added == NULL) return bad(state, "%s: too many options", flag);
    added->int_value = setting.int_value;
    added->double_value = setting.double_value;
    return 0;
}

static int find_command_flag(const char *name, size_t length)
{
    for (size_t i = 0; i < COMMAND_FLAG_COUNT; i++) {
        const char *flag = command_flags[i].flag, *alias = command_flags[i].short_flag;
        if ((strlen(flag) == length && strncmp(flag, name, length) == 0) ||
            (alias != NULL && strlen(alias) == length && strncmp(alias, name, length) == 0))
            return (int)i;
    }
    return -1;
}

/* The library option whose flag (or negated flag) is name[0..length);
 * *flag is set to that spelling. */
static const library_option *find_option(const char *name, size_t length, const char **flag)
{
    const library_option *options;
    size_t count;
    char error[128];
    if (option_table_get(&options, &count, error, sizeof error) != 0) return NULL;
    for (size_t i = 0; i < count; i++) {
        const library_option *option = &options[i];
        if (strlen(option->flag) == length && strncmp(option->flag, name, length) == 0) {
            *flag = option->flag;
            return option;
        }
        if (option->negated[0] != '\0' && strlen(option->negated) == length &&
            strncmp(option->negated, name, length) == 0) {
            *flag = option->negated;
            return option;
        }
    }
    return NULL;
}

/* Parse args[*i] (and its value, which may be args[*i + 1]). */
static int parse_one(parse_state *state, int count, char *const *args, int *i, options_set accepted)
{
    const char *arg = args[*i];
    int is_short = strcmp(arg, "-o") == 0;
    if (strncmp(arg, "--", 2) != 0 && !is_short)
        return bad(state, "unexpected argument '%s' (options start with --; see --help)",
                   quote(arg, strlen(arg)).text);
    const char *equals = is_short ? NULL : strchr(arg, '=');
    size_t length = equals ? (size_t)(equals - arg) : strlen(arg);
    int takes_flags = accepted != OPTIONS_HELP_ONLY;
    int command = takes_flags ? find_command_flag(arg, length) : -1;
    const char *flag = NULL;
    const library_option *option =
        command < 0 && takes_flags ? find_option(arg, length, &flag) : NULL;
    if (command < 0 && option == NULL)
        return bad(state, "unknown option '%s' (see --help)", quote(arg, length).text);
    const char *why = option != NULL ? options_not_taken(accepted, option->key) : NULL;
    if (why != NULL) return bad(state, "%s: %s; leave it out (brs plan takes it)", flag, why);
    if (command >= 0) flag = command_flags[command].flag;
    const char *value = equals ? equals + 1 : NULL;
    int is_switch = option != NULL && option->form == OPTION_FORM_SWITCH;
    if (is_switch && value != NULL) return bad(state, "%s takes no value", flag);
    if (!is_switch && value == NULL) {
        if (*i + 1 == count) return bad(state, "%s needs a value (see --help)", flag);
        value = args[++*i];
    }
    return command >= 0 ? store_command(state, (size_t)command, value)
                        : store_option(state, option, flag, value);
}

int options_parse(cli_config *config, int count, char *const *args, options_set accepted,
                  char *error, size_t error_size)
{
    memset(config, 0, sizeof *config);
    parse_state state = {config, {0}, error, error_size};
    if (error_size > 0) error[0] = '\0';
    const library_option *options;
    size_t option_count;
    int status = option_table_get(&options, &option_count, error, error_size);
    for (int i = 0; status == 0 && i < count; i++) {
        if (strcmp(args[i], "--help") == 0 || strcmp(args[i], "-h") == 0) {
            config->help = 1;
            return 0;
        }
        status = parse_one(&state, count, args, &i, accepted);
    }
    return status;
}

cli_config options_parse_command(int count, char **args, options_set accepted)
{
    cli_config config;
    char error[512];
    int status = options_parse(&config, count, args, accepted, error, sizeof error);
    if (status == CLI_EXIT_FAILURE) cli_failure("%s", error);
    if (status != 0) cli_bad_input("%s", error);
    return config;
}

void options_require_lengths(const cli_config *config)
{
    if (config->lengths_path == NULL)
        cli_bad_input("--lengths FILE is required (one token count per line, '-' for standard "
                      "input)");
}

/* Build the flag table from the library's option queries. */

static library_option table[OPTION_TABLE_MAX];
static size_t table_count;
static int table_ready;

/* "batch_size" -> "--batch-size" (prefix "--" or "--no-"). */
static int make_flag(char *flag, const char *prefix, const char *name)
{
    int written = snprintf(flag, OPTION_FLAG_MAX, "%s%s", prefix, name);
    if (written < 0 || written >= OPTION_FLAG_MAX) return -1;
    for (char *c = flag; *c != '\0'; c++)
        if (*c == '_') *c = '-';
    return 0;
}

/* Named values come first: an enum-like option with bounds [0, 1] (two
 * names) must still take names, not become a switch. */
static option_form form_of(library_option *option, int32_t type)
{
    if (type == BRS_OPTION_DOUBLE) return OPTION_FORM_DOUBLE;
    const char *name;
    if (brs_option_value_name(&name, option->key, option->lower) == BRS_OK)
        return OPTION_FORM_NAMED;
    if (option->lower == 0 && option->upper == 1) return OPTION_FORM_SWITCH;
    return OPTION_FORM_INT;
}

static int describe(library_option *option, size_t index)
{
    int32_t type;
    if (brs_option_key(&option->key, index) != BRS_OK ||
        brs_option_name(&option->name, option->key) != BRS_OK ||
        brs_option_type(&type, option->key) != BRS_OK)
        return -1;
    if (type == BRS_OPTION_DOUBLE) {
        if (brs_option_bounds_double(&option->lower_double, &option->upper_double, option->key) !=
            BRS_OK)
            return -1;
    } else if (brs_option_bounds_int(&option->lower, &option->upper, option->key) != BRS_OK) {
        return -1;
    }
    option->form = form_of(option, type);
    option->negated[0] = '\0';
    if (make_flag(option->flag, "--", option->name) != 0) return -1;
    if (option->form == OPTION_FORM_SWITCH && make_flag(option->negated, "--no-", option->name))
        return -1;
    return 0;
}

static int build(char *error, size_t error_size)
{
    size_t count = 0;
    if (brs_option_count(&count) != BRS_OK || count > OPTION_TABLE_MAX) {
        snprintf(error, error_size,
                 "the library's option table cannot be read (%zu options; "
                 "brs holds at most %d)",
                 count, OPTION_TABLE_MAX);
        return CLI_EXIT_FAILURE;
    }
    for (size_t i = 0; i < count; i++)
        if (describe(&table[i], i) != 0) {
            snprintf(error, error_size, "the library's option %zu cannot be described", i);
            return CLI_EXIT_FAILURE;
        }
    table_count = count;
    table_ready = 1;
    return 0;
}

int option_table_get(const library_option **out, size_t *count, char *error, size_t error_size)
{
    if (!table_ready) {
        int status = build(error, error_size);
        if (status != 0) return status;
    }
    *out = table;
    *count = table_count;
    return 0;
}

const library_option *option_table_find(brs_option key)
{
    const library_option *options;
    size_t count;
    char error[128];
    if (option_table_get(&options, &count, error, sizeof error) != 0) return NULL;
    for (size_t i = 0; i < count; i++)
        if (options[i].key == key) return &options[i];
    return NULL;
}

const char *option_table_flag(brs_option key)
{
    const library_option *option = option_table_find(key);
    return option != NULL ? option->flag : "";
}

const char *option_table_value_name(const library_option *option, int64_t value)
{
    const char *name;
    if (option->form != OPTION_FORM_NAMED ||
        brs_option_value_name(&name, option->key, value) != BRS_OK)
        return NULL;
    return name;
}

/* The list of options given, at most one per key. */

const option_setting *cli_config_find(const cli_config *config, brs_option key)
{
    for (size_t i = 0; i < config->setting_count; i++)
        if (config->settings[i].key == key) return &config->settings[i];
    return NULL;
}

option_setting *cli_config_add(cli_config *config, brs_option key, const char *source)
{
    if (cli_config_find(config, key) != NULL || config->setting_count == OPTION_TABLE_MAX)
        return NULL;
    option_setting *setting = &config->settings[config->setting_count++];
    *setting = (option_setting){key, 0, 0.0, ""};
    snprintf(setting->source, sizeof setting->source, "%s", source);
    return setting;
}

/* Check the grammar first, then convert. */

static int is_digit(char c)
{
    return c >= '0' && c <= '9';
}

static const char *skip_digits(const char *c)
{
    while (is_digit(*c)) c++;
    return c;
}

strict_result strict_uint64(const char *text, uint64_t *out)
{
    if (!is_digit(text[0])) return STRICT_SYNTAX;
    uint64_t value = 0;
    const char *c = text;
    for (; is_digit(*c); c++) {
        uint64_t digit = (uint64_t)(*c - '0');
        if (value > (UINT64_MAX - digit) / 10)
            return *skip_digits(c) == '\0' ? STRICT_RANGE : STRICT_SYNTAX;
        value = value * 10 + digit;
    }
    if (*c != '\0') return STRICT_SYNTAX;
    *out = value;
    return STRICT_OK;
}

strict_result strict_int64(const char *text, int64_t *out)
{
    int negative = text[0] == '-';
    uint64_t magnitude;
    strict_result result = strict_uint64(text + negative, &magnitude);
    if (result != STRICT_OK) return result;
    uint64_t limit = negative ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
    if (magnitude > limit) return STRICT_RANGE;
    /* Negate in unsigned arithmetic: -INT64_MIN overflows int64_t. */
    *out = negative ? (int64_t)(0 - magnitude) : (int64_t)magnitude;
    return STRICT_OK;
}

/* Whether text is a decimal number, and whether any digit is nonzero. */
static int decimal_grammar(const char *text, int *nonzero)
{
    const char *c = text + (text[0] == '-');
    const char *start = c;
    *nonzero = 0;
    for (; is_digit(*c) || *c == '.'; c++) {
        if (*c == '.' && (c != skip_digits(start))) return 0; /* a second point */
        *nonzero |= *c >= '1' && *c <= '9';
    }
    if (c == start || (c - start == 1 && *start == '.')) return 0; /* no digit in the mantissa */
    if (*c == 'e' || *c == 'E') {
        c++;
        c += *c == '-' || *c == '+';
        if (!is_digit(*c)) return 0;
        c = skip_digits(c);
    }
    return *c == '\0';
}

strict_result strict_double(const char *text, double *out)
{
    int nonzero;
    if (!decimal_grammar(text, &nonzero)) return STRICT_SYNTAX;
    double value = strtod(text, NULL);
    if (!isfinite(value) || (nonzero && fabs(value) < DBL_MIN)) return STRICT_RANGE;
    *out = value;
    return STRICT_OK;
}
