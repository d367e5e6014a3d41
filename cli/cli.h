/*
 * cli.h - the `brs` command's files and what each one offers the others,
 * one section per responsibility.
 */
#ifndef BRS_CLI_H
#define BRS_CLI_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <brs.h>

/*
 * output.c: how `brs` gives up.
 *
 * Every error is one line on standard error, prefixed with the command
 * ("brs plan: ..."), and nothing on standard output: the commands compute
 * everything that can fail before they print. Bad input exits with status
 * 2; a failure of the environment (memory, writing the output) with 1.
 */

#define CLI_EXIT_OK 0
#define CLI_EXIT_FAILURE 1
#define CLI_EXIT_BAD_INPUT 2

/* Name the running command in every later message ("plan", "compare"...). */
void cli_set_command(const char *name);

/* Bad input: print "brs <command>: <message>" and exit with status 2. */
_Noreturn void cli_bad_input(const char *format, ...)
    __attribute__((format(printf, 1, 2)));

/* The environment failed: print the message and exit with status 1. */
_Noreturn void cli_failure(const char *format, ...)
    __attribute__((format(printf, 1, 2)));

/* A library call failed with `status`; `context` says what was being done
 * (may be ""), `detail` is the handle's message. Errors caused by the
 * input exit 2, the others 1. */
_Noreturn void cli_library_error(brs_status status, const char *context, const char *detail);

/* output.c: quote untrusted bytes (a line of a file, an argument) in a
 * message: a terminal must never receive raw control or invisible bytes. */

/* Write text[0..length) into out (size >= 8) as printable ASCII: bytes
 * 0x20..0x7e stay, every other byte becomes \xNN; longer text is cut and
 * ends in "...". out is always NUL-terminated. */
void text_escape(char *out, size_t size, const char *text, size_t length);

/* output.c: print prose wrapped at a column, for notes, summaries and
 * the descriptions of --help. */

/* Print `text` with its spaces turned into line breaks where a line would
 * pass `width` columns (a longer word stays whole); ends with a newline. */
void text_wrap_print(FILE *out, const char *text, int width);

/* The same, for text that starts at column `column` of the current line;
 * continuation lines are indented by `indent` spaces. */
void text_wrap_print_indented(FILE *out, const char *text, int column, int indent, int width);

/* output.c: print a double as the shortest JSON number that reads back
 * to exactly the same value. */

/* `value` must be finite (costs always are). */
void json_print_double(FILE *out, double value);

/*
 * output.c: where a command writes: standard output, or --output FILE.
 *
 * A file is written to a temporary file next to it and renamed over FILE
 * only when everything is written, so FILE is either the complete output or
 * untouched; on any failure (also a later exit through cli_bad_input or cli_failure) the
 * temporary file is removed.
 */

/* Standard output for NULL or "-", else a new temporary file for `path`.
 * A path that cannot be written is bad input (exit 2) naming it. */
FILE *output_open(const char *path);

/* output_open for a command that finds errors while it writes: standard
 * output too gets the whole output or nothing, held in a temporary file. */
FILE *output_open_held(const char *path);

/* Flush and check every write, then move the file into place. A failed
 * write exits 1 ("could not write <what> to ..."). */
void output_commit(FILE *out, const char *what);

/*
 * args.c: decimal numbers as a person writes them, nothing else:
 * no leading or trailing blanks, no '+', no hexadecimal, no "nan"/"inf".
 * strtoll and strtod alone accept all of those (" 1", "0x10", "inf").
 */

typedef enum strict_result {
    STRICT_OK = 0,
    STRICT_SYNTAX = -1,  /* not a decimal number */
    STRICT_RANGE = -2    /* a decimal number the type cannot hold */
} strict_result;

/* -?[0-9]+ */
strict_result strict_int64(const char *text, int64_t *out);

/* [0-9]+ */
strict_result strict_uint64(const char *text, uint64_t *out);

/* -?([0-9]+(.[0-9]*)?|.[0-9]+)([eE][-+]?[0-9]+)?, finite; a value that
 * would round to infinity, or to zero or a subnormal from a nonzero text,
 * is STRICT_RANGE. */
strict_result strict_double(const char *text, double *out);

/*
 * args.c: the library's options as command-line flags.
 *
 * Everything here is read from the library at run time (brs_option_*):
 * names, types, bounds, named values, defaults and help. The flag of option
 * "batch_size" is "--batch-size". How a value is written follows from the
 * option itself: a double option takes a decimal number, an option with
 * named values takes a name ("--strategy random") or its number, an integer
 * option with bounds [0, 1] and no names is a switch pair ("--packed",
 * "--no-packed"), and any other integer option takes a decimal integer.
 */

#define OPTION_TABLE_MAX 64
#define OPTION_FLAG_MAX 48

typedef enum option_form {
    OPTION_FORM_INT,    /* --name N */
    OPTION_FORM_DOUBLE, /* --name X */
    OPTION_FORM_NAMED,  /* --name VALUE_NAME or --name N */
    OPTION_FORM_SWITCH  /* --name (1) and --no-name (0) */
} option_form;

typedef struct library_option {
    brs_option key;
    const char *name;              /* the library's, e.g. "batch_size" */
    char flag[OPTION_FLAG_MAX];    /* "--batch-size" */
    char negated[OPTION_FLAG_MAX]; /* "--no-shuffle" for a switch, else "" */
    option_form form;
    int64_t lower, upper;          /* integer forms */
    double lower_double, upper_double;
} library_option;

/* The library's options in its order, read on the first call. Returns 0 and
 * sets *table and *count, or a status with a message in error. */
int option_table_get(const library_option **table, size_t *count, char *error, size_t error_size);

/* The entry of `key`, or NULL (also when the table cannot be read). */
const library_option *option_table_find(brs_option key);

/* The flag that sets `key` ("--max-tokens"), or "" if the library has none. */
const char *option_table_flag(brs_option key);

/* Value `value` of a named option by the library's name ("random"), or
 * NULL when it has no name. */
const char *option_table_value_name(const library_option *option, int64_t value);

/*
 * args.c: the settings of one `brs` invocation, as parsed from argv.
 *
 * Only what the user gave is kept: an option that is not set keeps the
 * library's default, so no default is restated here. Range checks are left
 * to the library, whose bounds and messages are the contract, so the command
 * line and every binding reject the same inputs.
 */

/* One library option and where its value came from, for messages:
 * "--alpha" or "\"alpha\" in model.json". */
typedef struct option_setting {
    brs_option key;
    int64_t int_value;
    double double_value;
    char source[160];
} option_setting;

typedef struct cli_config {
    const char *lengths_path;    /* --lengths FILE, "-" for standard input, NULL if absent */
    const char *cost_model_path; /* --cost-model FILE, NULL if absent */
    const char *length_buckets;  /* --length-buckets LIST|FILE|auto, NULL if absent */
    const char *output_path;     /* -o/--output FILE, NULL: standard output */
    uint64_t epoch;              /* --epoch, 0 if absent */
    int has_step;                /* --step given */
    uint64_t step;
    double seconds_per_unit;     /* seconds of one cost unit, from --cost-model; 0: unknown */
    double first_shape_seconds;  /* the first run of a new shape, from --cost-model; 0: unknown */
    int cap_marks_rows;          /* compare: a --max-tokens brs cannot keep marks its row
                                  * instead of ending the command */
    option_setting settings[OPTION_TABLE_MAX]; /* at most one per key */
    size_t setting_count;
    int help;                    /* --help given: print usage, ignore the rest */
} cli_config;

/* The setting of `key`, or NULL if it was not given. */
const option_setting *cli_config_find(const cli_config *config, brs_option key);

/* Add a setting; returns it, or NULL if `key` is already set or the table
 * is full. */
option_setting *cli_config_add(cli_config *config, brs_option key, const char *source);

/*
 * args.c: turn a command's arguments into a cli_config.
 *
 * Flags are "--name VALUE" or "--name=VALUE" ("-o FILE" for --output);
 * switches take no value. The library's options come from its table (see the
 * option table above); the command's own flags are --lengths, --cost-model,
 * --length-buckets, --output, --epoch and --step. Every number is strict decimal (see the
 * strict numbers above). A flag given twice, or a switch with its opposite, is an
 * error, not "the last one wins". --help (or -h) stops parsing and sets
 * config.help. Anything else unknown is bad input.
 */

/* Which flags a command accepts. */
typedef enum options_set {
    OPTIONS_PLAN,     /* every dataset, configuration and narrowing flag */
    OPTIONS_COMPARE,  /* those of plan, less the library options it measures every value of */
    OPTIONS_HELP_ONLY /* only --help (the demo) */
} options_set;

/* Why a command does not take library option `key` (its message when the
 * flag is given, e.g. "compare measures every rank"), or NULL if it takes
 * it. --help lists only the options a command takes. */
const char *options_not_taken(options_set accepted, brs_option key);

/* Parse args[0..count) (the arguments after the command name) into *config.
 * Returns 0, or the exit status of the problem with one line in error.
 * Never exits; config holds pointers into args. */
int options_parse(cli_config *config, int count, char *const *args, options_set accepted,
                  char *error, size_t error_size);

/* options_parse, or end the command with its message. */
cli_config options_parse_command(int count, char **args, options_set accepted);

/* plan and compare need --lengths: exit 2 saying so if it is missing. */
void options_require_lengths(const cli_config *config);

/* usage.c: the --help texts of `brs` and its commands. */

void usage_main(FILE *out);
void usage_plan(FILE *out);
void usage_compare(FILE *out);
void usage_demo(FILE *out);

/*
 * json.c: a strict JSON (RFC 8259) reader for small files whose top
 * level is an object, such as the cost-model file: it checks the whole text
 * and hands out the top-level members; nested values are checked and
 * skipped. Strings are handed out raw (between the quotes, escapes kept).
 * Beyond RFC 8259 it refuses what docs/formats.md rules out: a member name
 * twice in one object (names compared after decoding escapes), an object
 * of more than 1024 members, strings that are not UTF-8, and nesting
 * deeper than 64; a UTF-8 byte-order mark before the object is skipped.
 */

typedef enum json_kind {
    JSON_NULL,
    JSON_TRUE,
    JSON_FALSE,
    JSON_NUMBER,
    JSON_STRING,
    JSON_ARRAY,
    JSON_OBJECT
} json_kind;

typedef struct json_member {
    const char *key; /* raw, key_length bytes */
    size_t key_length;
    json_kind kind;
    const char *value; /* its text: a number's digits, a string's inside */
    size_t value_length;
} json_member;

/* Called for each top-level member in order; a nonzero return stops the
 * reading and is returned by json_object_each. */
typedef int (*json_visit)(const json_member *member, void *context);

/* Whether two raw strings (as handed out, so already checked) decode to the
 * same text: "a\\u0062" equals "ab". A plain C string with no backslash
 * is its own raw form. */
int json_string_equal(const char *a, size_t a_length, const char *b, size_t b_length);

/* Returns 0, the visitor's nonzero value, or -1 with "byte N: ..." in error
 * when text[0..size) is not one JSON object. */
int json_object_each(const char *text, size_t size, json_visit visit, void *context, char *error,
                     size_t error_size);

/*
 * input.c: read a dataset's sample lengths: one integer >= 1 per
 * line, the format of the files data/NAME.lengths. Line i (1-based) is
 * dataset index i-1, so a blank line is an error, never skipped.
 *
 * Lines end in LF, CRLF or a lone CR; blanks (space, tab) around the number
 * are allowed; a UTF-8 byte-order mark before the first line is skipped. A
 * line is at most LENGTHS_MAX_LINE bytes and a file at most
 * LENGTHS_MAX_SAMPLES lines, so that a wrong file (/dev/zero, a binary)
 * stops early with a message instead of filling the memory. docs/formats.md
 * is the format's specification (Python's brs._lengths.read_file follows
 * it too; tests/vectors/formats has a file per rule).
 */

#define LENGTHS_MAX_LINE 128
#define LENGTHS_MAX_SAMPLES ((size_t)1 << 28)

typedef struct lengths {
    uint32_t *values; /* owned; free with lengths_free */
    size_t count;
} lengths;

/* What the readers return: 0 on success, else the exit status the problem
 * deserves (CLI_EXIT_BAD_INPUT for the input, CLI_EXIT_FAILURE for memory). */
typedef int lengths_status;

/* Parse data[0..size). On success *out owns the values; on failure *out is
 * empty and error holds one line ("line 3: 'abc' is not ..."), meant to
 * follow the name of the file. Never exits. */
lengths_status lengths_parse(const char *data, size_t size, lengths *out, char *error,
                             size_t error_size);

/* Read `path` ("-" for standard input) in bounded chunks; messages name the
 * file. Never exits. */
lengths_status lengths_read(const char *path, lengths *out, char *error, size_t error_size);

/* lengths_read, or end the command with its message (exit 2 or 1). */
lengths lengths_load(const char *path);

void lengths_free(lengths *data);

/* How messages name `path`: the path itself, or "standard input" for "-". */
const char *lengths_display_name(const char *path);

/*
 * input.c: the lengths format as a byte-at-a-time state machine,
 * so that a file is read in fixed chunks (memory bounded by the values, not
 * by a line) and an in-memory buffer goes through exactly the same rules.
 * The format itself is described above, with lengths_parse.
 */

typedef struct lengths_parser {
    lengths data;
    size_t capacity;
    char line[LENGTHS_MAX_LINE]; /* the line being read, without its end */
    size_t line_length;
    size_t line_number;          /* 1-based */
    int after_cr;                /* the last byte ended a line with CR */
    lengths_status status;       /* 0 until something is wrong */
    char *error;
    size_t error_size;
} lengths_parser;

/* Start an empty parse; messages go to error[0..error_size). */
void lengths_parser_start(lengths_parser *parser, char *error, size_t error_size);

/* Take the next bytes. Returns the status so far (0: keep feeding). */
lengths_status lengths_parser_feed(lengths_parser *parser, const char *bytes, size_t size);

/* End of input: the last line needs no line end; an input without lines is
 * an error. On success *out takes the values, on failure they are freed and
 * *out is empty. */
lengths_status lengths_parser_finish(lengths_parser *parser, lengths *out);

/*
 * input.c: `--cost-model FILE`: the cost-model JSON that Python's
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

/*
 * sampler.c: configure a library sampler from the command line.
 */

/* A validated sampler over `lengths` (borrowed: keep them alive) with every
 * option of `config`; the others keep the library's defaults. Bad values
 * exit 2 with the library's reason, named after the flag (or cost-model
 * key) that carried them. Free with brs_sampler_free. */
brs_sampler *sampler_setup(const cli_config *config, const uint32_t *lengths, size_t count);

/* buckets.c: --length-buckets: "auto" (the library's ladder for the lengths),
 * a comma-separated list ("64,128,256"), or a FILE in the lengths format;
 * set on the sampler, or the command ends with the reason. */
void buckets_apply(brs_sampler *sampler, const char *value);

/* Set one option on a sampler already set up, and validate it again. */
void sampler_set_int(brs_sampler *sampler, brs_option key, int64_t value);

/* An option as the sampler resolved it. */
int64_t sampler_get_int(const brs_sampler *sampler, brs_option key);
double sampler_get_double(const brs_sampler *sampler, brs_option key);

/* The number of steps per epoch of a validated sampler. */
uint64_t sampler_steps(brs_sampler *sampler);

/* sampler.c: compute one step's plan, or end the command with the reason. */

/* A new, empty plan (exit 1 if it cannot be made). */
brs_plan *planning_new(void);

/* Plan `step` of `epoch`; a failure (e.g. an unsatisfiable --max-tokens)
 * exits with the library's message and the step's number. */
void planning_compute(brs_plan *plan, const brs_sampler *sampler, uint64_t epoch, uint64_t step);

/* An integer or double property of the computed plan (BRS_PLAN_*). */
int64_t planning_get_int(const brs_plan *plan, brs_plan_key key);
double planning_get_double(const brs_plan *plan, brs_plan_key key);

/* One micro-batch of the computed plan: its indices and what it weighs. */
typedef struct micro_batch {
    const uint64_t *indices; /* the plan's; valid until it is computed again */
    size_t count;
    uint64_t padded_tokens, real_tokens;
    double cost;
} micro_batch;

/* The micro-batch of (rank, micro); reading a computed plan cannot fail
 * but through the system, so a failure exits 1. */
micro_batch planning_micro_batch(const brs_plan *plan, int64_t rank, int64_t micro);

/*
 * sampler.c: which steps and ranks a command covers (--step, --rank).
 */

typedef struct selection {
    uint64_t first_step, end_step; /* steps [first_step, end_step) */
    int64_t first_rank, end_rank;  /* ranks [first_rank, end_rank) */
} selection;

/* Every step of the epoch and every rank, or the one --step / --rank
 * names. A --step beyond the epoch is bad input (exit 2); --rank was
 * checked against --dp-size by the library already. */
selection selection_make(const cli_config *config, const brs_sampler *sampler,
                         uint64_t steps_per_epoch);

/*
 * cmd_compare.c: what a strategy's plans add up to over the steps compared.
 *
 * Every number is the library's (brs_plan_* queries of each step's plan):
 * tokens, and the step time under both synchronisation models, so the CLI
 * only sums them (the models are described in docs/design.md).
 */

typedef struct epoch_stats {
    uint64_t steps;
    uint64_t peak_padded_tokens; /* the memory peak: the largest micro-batch's padded tokens */
    uint64_t padded_tokens;
    uint64_t real_tokens;
    uint64_t cap_violations;     /* micro-batches above max_tokens (0 without a cap) */
    double micro_sync_time;      /* BRS_PLAN_MICRO_SYNC_TIME, summed */
    double step_sync_time;       /* BRS_PLAN_STEP_SYNC_TIME, summed */
    uint64_t shapes_per_rank;    /* distinct (batch size, padded length) of the rank with most */
} epoch_stats;

/* Add the computed plan of one step; max_tokens 0 means no cap. */
void epoch_stats_add_plan(epoch_stats *stats, const brs_plan *plan, uint64_t max_tokens);

/*
 * shape_tally.c: how many distinct tensor shapes each rank runs (each new
 * one can cost a compilation, a cuDNN plan or a CUDA graph capture). A
 * micro-batch's shape is its (batch size, padded tokens): padded tokens are
 * batch size x padded length (the one packed row's padded total when
 * packed), so these pairs are the library's shapes (brs_sampler_shapes).
 */

typedef struct shape_tally {
    uint64_t *entries; /* (rank, size, padded) triples */
    size_t count, capacity;
} shape_tally;

/* Add every micro-batch of a computed plan. */
void shape_tally_add_plan(shape_tally *tally, const brs_plan *plan);

/* The largest number of distinct shapes of one rank; frees the entries. */
uint64_t shape_tally_finish(shape_tally *tally);

/* Real tokens / padded tokens (1 when nothing is padded). */
double epoch_stats_padding_efficiency(const epoch_stats *stats);

/*
 * cmd_compare.c: every strategy of the library (BRS_OPT_STRATEGY's values)
 * over the same steps: balanced is brs's own, the others (random and
 * length-grouped today) are the peer baselines.
 */

#define COMPARISON_MAX_STRATEGIES 8

typedef struct comparison {
    int64_t lowest_strategy;  /* brs_option_bounds_int(BRS_OPT_STRATEGY) */
    int64_t highest_strategy;
    epoch_stats stats[COMPARISON_MAX_STRATEGIES]; /* by strategy - lowest_strategy; that of
                                                   * BRS_STRATEGY_BALANCED is empty when
                                                   * brs_infeasible */
    double time_lower_bound;  /* sum over steps of brs's BRS_PLAN_TIME_LOWER_BOUND (of
                               * random's plans when brs_infeasible) */
    double planning_seconds;  /* time brs_plan_compute took for brs (monotonic clock) */
    uint64_t planned_samples; /* samples in the planned steps */
    uint64_t megabatch_size;  /* length_grouped's, BRS_PLAN_MEGABATCH_SIZE */
    int brs_infeasible;       /* brs cannot keep max_tokens in step brs_infeasible_step */
    uint64_t brs_infeasible_step;
    uint64_t least_max_tokens; /* when brs_infeasible: the least max_tokens with which brs
                                * plans every step of the epoch; 0 where the library cannot
                                * tell before planning (packed mode) */
} comparison;

/* Measure the selected steps of `epoch` for every strategy (every rank);
 * the sampler's strategy is changed on the way. A max_tokens that
 * brs cannot keep does not end the command: brs_infeasible says so, and the
 * fixed-size baselines, which do not bend to the cap, are still measured.
 * Any other step brs cannot plan ends the command with the library's
 * message before a baseline runs. */
comparison comparison_run(brs_sampler *sampler, uint64_t epoch, const selection *chosen);

/* What `strategy` (a BRS_OPT_STRATEGY value) added up to. */
const epoch_stats *comparison_stats(const comparison *result, int64_t strategy);

/* How the table and the verdict name `strategy`: balanced by the command's
 * name, "brs"; the others by the library's name written as their flag value
 * is ("length-grouped"). */
void comparison_strategy_name(char *out, size_t size, int64_t strategy);

/* compare_report.c: the readable table of `brs compare` and `brs demo`. */

typedef struct compare_setting {
    const brs_sampler *sampler; /* the configuration, as the library resolved it */
    size_t samples;             /* N */
    uint64_t epoch;
    uint64_t steps_per_epoch;
    const selection *chosen;
    double seconds_per_unit;     /* > 0: times are shown in seconds (a calibrated model) */
    double first_shape_seconds;  /* > 0: the one-time price of a new shape, shown per rank */
    const char *cost_model_path; /* --cost-model FILE, or NULL */
    const char *cap_source;      /* where max_tokens came from ("--max-tokens", or the
                                  * --cost-model file's key); NULL without a cap */
} compare_setting;

/* compare_setting of a command's configuration (cmd_compare.c). */
compare_setting compare_setting_make(const cli_config *config, const brs_sampler *sampler,
                                     size_t samples, uint64_t steps, const selection *chosen);

/* The table, its legend and the verdict in plain words (compare_verdict_print). */
void compare_report_print(FILE *out, const comparison *result, const compare_setting *setting);

/*
 * compare_report.c: the paragraph in plain words under the table of
 * `brs compare` and `brs demo`: what each strategy costs in peak memory
 * (padded tokens of the largest micro-batch) and step time (under the
 * synchronisation the sampler plans for, --sync), and which one to pick
 * under the memory budget (--max-tokens when given).
 */

void compare_verdict_print(FILE *out, const comparison *result, const compare_setting *setting);

/* "--max-tokens 4096", or "max_tokens 4096 (from --cost-model m.json key
 * \"max_tokens\")": the cap in force and where it came from. */
void compare_cap_words(char *out, size_t size, const compare_setting *setting);

/* cmd_plan.c: `brs plan`: the plan as JSON lines, one per micro-batch. */

/* args: the arguments after "plan". Returns the exit status. */
int plan_command(int count, char **args);

/* cmd_compare.c: `brs compare`: brs against random and length-grouped
 * batches over one epoch, as a table. */

/* args: the arguments after "compare". Returns the exit status. */
int compare_command(int count, char **args);

/* cmd_demo.c: `brs demo`: compare on an embedded real dataset and say
 * in plain words what brs saved. */

/* args: the arguments after "demo" (only --help). Returns the exit status. */
int demo_command(int count, char **args);

#endif
