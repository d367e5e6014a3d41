/* option_table.c - build the flag table from the library's option queries. */
#include "option_table.h"

#include <stdio.h>
#include <string.h>

#include "fail.h"

static library_option table[OPTION_TABLE_MAX];
static size_t table_count;
static int table_ready;

/* "batch_size" -> "--batch-size" (prefix "--" or "--no-"). */
static int make_flag(char *flag, const char *prefix, const char *name)
{
    int written = snprintf(flag, OPTION_FLAG_MAX, "%s%s", prefix, name);
    if (written < 0 || written >= OPTION_FLAG_MAX)
        return -1;
    for (char *c = flag; *c != '\0'; c++)
        if (*c == '_')
            *c = '-';
    return 0;
}

/* Named values come first: an enum-like option with bounds [0, 1] (two
 * names) must still take names, not become a switch. */
static option_form form_of(library_option *option, int32_t type)
{
    if (type == BRS_OPTION_DOUBLE)
        return OPTION_FORM_DOUBLE;
    const char *name;
    if (brs_option_value_name(&name, option->key, option->lower) == BRS_OK)
        return OPTION_FORM_NAMED;
    if (option->lower == 0 && option->upper == 1)
        return OPTION_FORM_SWITCH;
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
        if (brs_option_bounds_double(&option->lower_double, &option->upper_double,
                                     option->key) != BRS_OK)
            return -1;
    } else if (brs_option_bounds_int(&option->lower, &option->upper, option->key) != BRS_OK) {
        return -1;
    }
    option->form = form_of(option, type);
    option->negated[0] = '\0';
    if (make_flag(option->flag, "--", option->name) != 0)
        return -1;
    if (option->form == OPTION_FORM_SWITCH && make_flag(option->negated, "--no-", option->name))
        return -1;
    return 0;
}

static int build(char *error, size_t error_size)
{
    size_t count = 0;
    if (brs_option_count(&count) != BRS_OK || count > OPTION_TABLE_MAX) {
        snprintf(error, error_size, "the library's option table cannot be read (%zu options; "
                 "brs holds at most %d)", count, OPTION_TABLE_MAX);
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
        if (status != 0)
            return status;
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
    if (option_table_get(&options, &count, error, sizeof error) != 0)
        return NULL;
    for (size_t i = 0; i < count; i++)
        if (options[i].key == key)
            return &options[i];
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
