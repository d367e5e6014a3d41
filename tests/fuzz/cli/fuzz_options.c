/*
 * fuzz_options.c - libFuzzer harness of the CLI's option parser
 * (cli/args.c over the library's option table) on argument vectors made
 * from the input: the bytes split at NUL into at most 64 arguments; the
 * first byte's low bit picks the command's flag set (plan or demo).
 *
 * Checked on every input:
 * - success: at most one setting per key, every key in the library's table,
 *   every value within the int64/double range the form allows (switches 0
 *   or 1, named values among the option's bounds when given by name);
 *   --step only with has_step; help stops the parse;
 * - failure: status 2 (bad input) and one line of printable ASCII;
 * - a second parse of the same vector gives the same result.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

#define CHECK(condition) \
    do { \
        if (!(condition)) \
            abort(); \
    } while (0)

enum { MAX_ARGS = 64 };

static void check_message(const char *error)
{
    CHECK(error[0] != '\0');
    for (const char *c = error; *c != '\0'; c++)
        CHECK(*c >= 0x20 && *c <= 0x7e);
}

static void check_setting(const option_setting *setting)
{
    const library_option *option = option_table_find(setting->key);
    CHECK(option != NULL);
    CHECK(setting->source[0] == '-');
    if (option->form == OPTION_FORM_SWITCH)
        CHECK(setting->int_value == 0 || setting->int_value == 1);
    if (option->form == OPTION_FORM_DOUBLE)
        CHECK(isfinite(setting->double_value));
}

static void check_config(const cli_config *config)
{
    CHECK(config->setting_count <= OPTION_TABLE_MAX);
    for (size_t i = 0; i < config->setting_count; i++) {
        check_setting(&config->settings[i]);
        for (size_t j = 0; j < i; j++)
            CHECK(config->settings[i].key != config->settings[j].key);
    }
    CHECK(config->has_step || config->step == 0);
}

static int split(char *text, size_t size, char **args)
{
    int count = 0;
    size_t start = 0;
    for (size_t i = 0; i <= size && count < MAX_ARGS; i++)
        if (i == size || text[i] == '\0') {
            text[i] = '\0';
            args[count++] = text + start;
            start = i + 1;
        }
    return count;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    options_set accepted = data[0] & 1 ? OPTIONS_HELP_ONLY : OPTIONS_PLAN;
    char *text = malloc(size); /* data[1..size) plus a terminator */
    CHECK(text != NULL);
    memcpy(text, data + 1, size - 1);
    char *args[MAX_ARGS];
    int count = size > 1 ? split(text, size - 1, args) : 0;

    static cli_config config, again; /* large: not on the stack */
    char error[512], error_again[512];
    int status = options_parse(&config, count, args, accepted, error, sizeof error);
    if (status == 0) {
        CHECK(error[0] == '\0');
        check_config(&config);
        if (accepted == OPTIONS_HELP_ONLY)
            CHECK(config.help || config.setting_count == 0);
    } else {
        CHECK(status == CLI_EXIT_BAD_INPUT);
        check_message(error);
    }
    int status_again = options_parse(&again, count, args, accepted, error_again,
                                     sizeof error_again);
    CHECK(status_again == status && strcmp(error, error_again) == 0);
    CHECK(again.setting_count == config.setting_count && again.help == config.help);
    free(text);
    return 0;
}
