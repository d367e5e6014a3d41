/* input.c - the files a command reads: lengths files and cost-model files.
 * libbrs reads both formats (brs_lengths_file_*, brs_cost_model_file_*,
 * docs/formats.md); this file opens and reads the files, hands their bytes
 * over and turns a refusal into the command's exit status. */
#include "cli.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Bad input exits 2; only memory is a failure of the environment (1). */
static int exit_status(brs_status status)
{
    return status == BRS_ERR_NO_MEMORY ? CLI_EXIT_FAILURE : CLI_EXIT_BAD_INPUT;
}

/* Lengths files: read in fixed chunks through the library's reader, so
 * that memory is bounded by the values and /dev/zero stops at once. */

enum { CHUNK_SIZE = 65536 };

const char *lengths_display_name(const char *path)
{
    return strcmp(path, "-") == 0 ? "standard input" : path;
}

/* Feed the whole stream; a read error (not the end of the file) is an error
 * too, so a truncated read never plans a part of the dataset. */
static lengths_status read_stream(FILE *stream, brs_lengths_file *file, const char *name,
                                  char *error, size_t error_size)
{
    static char chunk[CHUNK_SIZE];
    brs_status status = brs_lengths_file_begin(file, name);
    size_t got;
    do {
        got = fread(chunk, 1, sizeof chunk, stream);
        status = brs_lengths_file_feed(file, chunk, got);
    } while (got == sizeof chunk && status == BRS_OK);
    if (status == BRS_OK && ferror(stream)) {
        int cause = errno;
        char escaped[200];
        brs_text_escape(escaped, sizeof escaped, name, strlen(name));
        snprintf(error, error_size, "cannot read %s: %s", escaped, strerror(cause));
        return CLI_EXIT_BAD_INPUT;
    }
    status = brs_lengths_file_finish(file);
    if (status != BRS_OK) {
        snprintf(error, error_size, "%s", brs_lengths_file_last_error(file));
        return exit_status(status);
    }
    return 0;
}

static lengths_status read_path(const char *path, brs_lengths_file *file, char *error,
                                size_t error_size)
{
    const char *name = lengths_display_name(path);
    if (strcmp(path, "-") == 0) return read_stream(stdin, file, name, error, error_size);
    FILE *stream = fopen(path, "rb");
    if (stream == NULL) {
        int cause = errno;
        char escaped[200];
        brs_text_escape(escaped, sizeof escaped, name, strlen(name));
        snprintf(error, error_size, "cannot open lengths file '%s': %s", escaped, strerror(cause));
        return CLI_EXIT_BAD_INPUT;
    }
    lengths_status status = read_stream(stream, file, name, error, error_size);
    fclose(stream);
    return status;
}

/* The reader's arrays as a lengths value (it keeps owning them). */
static void take_arrays(lengths *out, brs_lengths_file *file)
{
    out->file = file;
    brs_lengths_file_lengths(&out->values, &out->count, file);
    brs_lengths_file_images(&out->patches, &out->offsets, file);
}

lengths_status lengths_read(const char *path, lengths *out, char *error, size_t error_size)
{
    *out = (lengths){NULL, NULL, 0, NULL, NULL};
    brs_lengths_file *file;
    if (brs_lengths_file_new(&file) != BRS_OK) {
        snprintf(error, error_size, "cannot read %s: out of memory", lengths_display_name(path));
        return CLI_EXIT_FAILURE;
    }
    lengths_status status = read_path(path, file, error, error_size);
    if (status == 0)
        take_arrays(out, file);
    else
        brs_lengths_file_free(file);
    return status;
}

lengths lengths_load(const char *path)
{
    char error[512];
    lengths data;
    lengths_status status = lengths_read(path, &data, error, sizeof error);
    if (status == CLI_EXIT_FAILURE) cli_failure("%s", error);
    if (status != 0) cli_bad_input("%s", error);
    return data;
}

void lengths_free(lengths *data)
{
    brs_lengths_file_free(data->file);
    *data = (lengths){NULL, NULL, 0, NULL, NULL};
}

/* Cost-model files: the settings the planner uses, and the seconds of one
 * cost unit (and of a new shape's first run) when it was calibrated. */

/* "--cost-model <name>: <what>" in error; returns the exit status. */
static int refuse(char *error, size_t error_size, int status, const char *name, const char *what,
                  const char *cause)
{
    snprintf(error, error_size, "--cost-model %s: %s: %s", name, what, cause);
    return status;
}

/* At most one byte more than the library takes, in a new buffer; NULL
 * with errno set. */
static char *slurp(FILE *stream, size_t *size)
{
    char *text = malloc(BRS_COST_MODEL_FILE_MAX_BYTES + 1);
    if (text == NULL) return NULL;
    *size = fread(text, 1, BRS_COST_MODEL_FILE_MAX_BYTES + 1, stream);
    if (ferror(stream)) {
        int cause = errno;
        free(text);
        errno = cause;
        return NULL;
    }
    return text;
}

static void add(cli_config *config, brs_option key, const char *name, const char *key_name,
                int64_t int_value, double double_value)
{
    char source[160];
    /* A long name is cut: the source only labels the setting in messages. */
    if (snprintf(source, sizeof source, "--cost-model %s key \"%s\"", name, key_name) < 0)
        source[0] = '\0';
    option_setting *setting = cli_config_add(config, key, source);
    if (setting != NULL) { /* NULL: the command line set it, and wins */
        setting->int_value = int_value;
        setting->double_value = double_value;
    }
}

static int has(const brs_cost_model_file *file, const char *key)
{
    int32_t present = 0;
    brs_cost_model_file_has(&present, file, key);
    return present;
}

/* An optional number, 0 when absent or null (not calibrated, not measured). */
static double optional_double(const brs_cost_model_file *file, const char *key)
{
    double value = 0.0;
    if (has(file, key)) brs_cost_model_file_get_double(&value, file, key);
    return value;
}

/* The encoder's and the context-parallel keys, each optional (a file
 * calibrated without images or without a CP group has none: the library's
 * defaults stay). */
static void take_optional_settings(cli_config *config, const brs_cost_model_file *file,
                                   const char *name)
{
    static const struct {
        brs_option key;
        const char *name;
    } terms[] = {{BRS_OPT_ENCODER_WEIGHT, "encoder_weight"},
                 {BRS_OPT_ENCODER_ALPHA, "encoder_alpha"},
                 {BRS_OPT_ENCODER_INTERCEPT, "encoder_intercept"},
                 {BRS_OPT_CP_COMM_COST, "cp_comm_cost"},
                 {BRS_OPT_CP_LATENCY, "cp_latency"}};
    for (size_t i = 0; i < sizeof terms / sizeof terms[0]; i++)
        if (has(file, terms[i].name))
            add(config, terms[i].key, name, terms[i].name, 0, optional_double(file, terms[i].name));
    int64_t cap;
    if (has(file, "max_encoder_tokens") &&
        brs_cost_model_file_get_int(&cap, file, "max_encoder_tokens") == BRS_OK)
        add(config, BRS_OPT_MAX_ENCODER_TOKENS, name, "max_encoder_tokens", cap, 0.0);
}

/* The values of a file the library accepted. */
static void take_settings(cli_config *config, const brs_cost_model_file *file, const char *name)
{
    double alpha = 0.0, intercept = 0.0;
    brs_cost_model_file_get_double(&alpha, file, "alpha");
    brs_cost_model_file_get_double(&intercept, file, "intercept");
    add(config, BRS_OPT_ALPHA, name, "alpha", 0, alpha);
    add(config, BRS_OPT_INTERCEPT, name, "intercept", 0, intercept);
    int64_t max_tokens;
    if (has(file, "max_tokens") &&
        brs_cost_model_file_get_int(&max_tokens, file, "max_tokens") == BRS_OK)
        add(config, BRS_OPT_MAX_TOKENS, name, "max_tokens", max_tokens, 0.0);
    take_optional_settings(config, file, name);
    config->seconds_per_unit = optional_double(file, "seconds_per_unit");
    config->first_shape_seconds = optional_double(file, "first_shape_seconds");
}

/* The file's bytes through the library's reader, named `path`. */
static int read_bytes(cli_config *config, const char *text, size_t size, const char *path,
                      const char *name, char *error, size_t error_size)
{
    brs_cost_model_file *file;
    if (brs_cost_model_file_new(&file) != BRS_OK)
        return refuse(error, error_size, CLI_EXIT_FAILURE, name, "cannot read it", "out of memory");
    brs_status status = brs_cost_model_file_parse(file, text, size, path);
    if (status == BRS_OK)
        take_settings(config, file, name);
    else
        snprintf(error, error_size, "--cost-model %s", brs_cost_model_file_last_error(file));
    brs_cost_model_file_free(file);
    return status == BRS_OK ? 0 : exit_status(status);
}

int cost_model_file_read(cli_config *config, const char *path, char *error, size_t error_size)
{
    char name[200];
    brs_text_escape(name, sizeof name, path, strlen(path));
    FILE *stream = fopen(path, "rb");
    if (stream == NULL)
        return refuse(error, error_size, CLI_EXIT_BAD_INPUT, name, "cannot open it",
                      strerror(errno));
    size_t size;
    char *text = slurp(stream, &size);
    int cause = errno;
    fclose(stream);
    if (text == NULL)
        return refuse(error, error_size, CLI_EXIT_BAD_INPUT, name, "cannot read it",
                      strerror(cause));
    int status = read_bytes(config, text, size, path, name, error, error_size);
    free(text);
    return status;
}

void cost_model_file_apply(cli_config *config)
{
    if (config->cost_model_path == NULL) return;
    char error[512];
    int status = cost_model_file_read(config, config->cost_model_path, error, sizeof error);
    if (status == CLI_EXIT_FAILURE) cli_failure("%s", error);
    if (status != 0) cli_bad_input("%s", error);
}
