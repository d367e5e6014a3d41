/* usage.c - help texts; the library's options, their help and defaults are
 * read from its option table, so nothing here restates them. */
#include "usage.h"

#include <inttypes.h>
#include <stdio.h>

#include <brs.h>

#include "args.h"
#include "demo_dataset.h"
#include "output.h"

enum { HELP_COLUMN = 24, HELP_WIDTH = 80 };

static const char exit_status[] =
    "\nExit status: 0 on success; 2 on bad input (one line on standard error that\n"
    "says what to change, nothing on standard output); 1 if the system failed.\n";

/* "  --flag VALUE    description", wrapped under the description column. */
static void print_entry(FILE *out, const char *left, const char *text)
{
    int column = fprintf(out, "  %s", left);
    if (column + 2 > HELP_COLUMN) {
        fprintf(out, "\n%*s", HELP_COLUMN, "");
    } else {
        fprintf(out, "%*s", HELP_COLUMN - column, "");
    }
    text_wrap_print_indented(out, text, HELP_COLUMN, HELP_COLUMN, HELP_WIDTH);
}

static void describe_default(char *text, size_t size, const library_option *option)
{
    int64_t value = 0;
    double value_double = 0.0;
    if (option->form == OPTION_FORM_DOUBLE) {
        brs_option_default_double(&value_double, option->key);
        snprintf(text, size, "(default %g)", value_double);
        return;
    }
    brs_option_default_int(&value, option->key);
    const char *name = option_table_value_name(option, value);
    if (option->key == BRS_OPT_RANK)
        snprintf(text, size, "; brs prints only that rank's micro-batches (default: every rank)");
    else if (option->form == OPTION_FORM_SWITCH)
        snprintf(text, size, "(default: %s, i.e. %" PRId64 ")", value ? "on" : "off", value);
    else if (name != NULL)
        snprintf(text, size, "(default %s)", name);
    else
        snprintf(text, size, "(default %" PRId64 ")", value);
}

/* ", one of: balanced, random, length_grouped" for a named option. */
static void describe_names(char *text, size_t size, const library_option *option)
{
    text[0] = '\0';
    if (option->form != OPTION_FORM_NAMED) return;
    size_t used = (size_t)snprintf(text, size, "; one of");
    for (int64_t v = option->lower; v <= option->upper && v - option->lower < 64; v++) {
        const char *name = option_table_value_name(option, v);
        if (name != NULL && used < size)
            used += (size_t)snprintf(text + used, size - used, "%s %s",
                                     v > option->lower ? "," : "", name);
    }
}

static void print_library_option(FILE *out, const library_option *option)
{
    static const char *const placeholders[] = {"N", "X", "NAME", ""};
    char left[2 * OPTION_FLAG_MAX + 8], text[1024], names[256], fallback[128];
    const char *help = "";
    brs_option_help(&help, option->key);
    if (option->form == OPTION_FORM_SWITCH)
        snprintf(left, sizeof left, "%s, %s", option->flag, option->negated);
    else
        snprintf(left, sizeof left, "%s %s", option->flag, placeholders[option->form]);
    describe_names(names, sizeof names, option);
    describe_default(fallback, sizeof fallback, option);
    snprintf(text, sizeof text, "%s%s%s%s", help, names, fallback[0] == ';' ? "" : " ", fallback);
    print_entry(out, left, text);
}

/* The options `accepted` takes, and only those. */
static void print_options(FILE *out, options_set accepted)
{
    fputs("Options:\n", out);
    print_entry(out, "--lengths FILE",
                "one token count >= 1 per line (line i is sample i-1); "
                "'-' reads standard input (required)");
    print_entry(out, "--cost-model FILE",
                accepted == OPTIONS_COMPARE
                    ? "take alpha, intercept and max_tokens from a cost-model JSON file (as "
                      "python -m brs calibrate writes it), and its seconds_per_unit: times are "
                      "then shown in seconds; a flag given here wins over the file"
                    : "take alpha, intercept and max_tokens from a cost-model JSON file (as "
                      "python -m brs calibrate writes it); a flag given here wins over the file");
    print_entry(out, "--length-buckets B",
                "the padded lengths a micro-batch may take: a comma-separated list "
                "(64,128,256), a FILE of one length per line, or 'auto' for the library's "
                "ladder of the lengths (four steps per doubling, rounded to "
                "--pad-to-multiple-of); a micro-batch pads to the smallest bucket that holds "
                "its longest sample (default: none, any length)");
    print_entry(out, "-o, --output FILE",
                "write to FILE instead of standard output (FILE is replaced only when "
                "everything is written)");
    print_entry(out, "--epoch E", "the epoch to plan (default 0)");
    print_entry(out, "--step T", "only step T of the epoch (default: every step)");
    const library_option *options;
    size_t count;
    char error[128];
    if (option_table_get(&options, &count, error, sizeof error) == 0)
        for (size_t i = 0; i < count; i++)
            if (options_not_taken(accepted, options[i].key) == NULL)
                print_library_option(out, &options[i]);
    print_entry(out, "-h, --help", "show this help");
    fputs("\nNumbers are decimal (8, 0.001, 1e-3); each flag is given at most once.\n", out);
}

void usage_main(FILE *out)
{
    fprintf(out,
            "brs %s - balanced micro-batches for distributed training (libbrs)\n"
            "\n"
            "Usage:\n"
            "  brs plan --lengths FILE [options]     the plan, one JSON line per micro-batch\n"
            "  brs compare --lengths FILE [options]  brs against random and length-grouped\n"
            "                                        batches over one epoch\n"
            "  brs demo                              the comparison on an embedded real dataset\n"
            "  brs <command> --help                  the options of a command\n"
            "  brs --version                         the version of libbrs in use\n"
            "\n"
            "The Python package brs (pip install brs) adds three commands of its own:\n"
            "  python -m brs report ...              brs compare's table and a figure\n"
            "  python -m brs calibrate ...           time a torch model and write the cost\n"
            "                                        model (a --cost-model FILE)\n"
            "  python -m brs trial ...               will brs pay on my setup? an A/B on\n"
            "                                        the user's own model and lengths\n",
            brs_version_string());
    fputs(exit_status, out);
}

void usage_plan(FILE *out)
{
    fputs("Usage: brs plan --lengths FILE [options]\n", out);
    fputs("Plan one epoch: every step is a seeded random draw of B = P*G*R samples,\n"
          "split into G*R micro-batches of balanced cost (exact min-max) and dealt to\n"
          "(rank, micro-step). Prints one JSON object per micro-batch, in the order\n"
          "step, rank, micro-step:\n"
          "  {\"epoch\":0,\"step\":0,\"rank\":0,\"micro\":0,\"indices\":[...],"
          "\"padded_tokens\":N,\"cost\":X}\n"
          "indices are 0-based line numbers of FILE, longest sample first. With\n"
          "--strategy, the micro-batches of that strategy instead. With context\n"
          "parallelism (--cp-size C > 1, --packed) one object per global rank\n"
          "(dp rank x C + cp index) and micro-step, with its group and the token\n"
          "ranges it computes:\n"
          "  {...,\"cp_ranks\":{\"first\":0,\"degree\":2},\"indices\":[...],"
          "\"token_ranges\":[[index,start,end],...],...}\n\n",
          out);
    print_options(out, OPTIONS_PLAN);
    fputs(exit_status, out);
}

void usage_compare(FILE *out)
{
    fputs("Usage: brs compare --lengths FILE [options]\n", out);
    fputs("Compare, over one epoch and every rank, the library's three strategies:\n"
          "fixed-size random micro-batches, length-grouped ones (megabatches sorted\n"
          "longest first, as transformers' LengthGroupedSampler) and brs: peak padded\n"
          "tokens per micro-batch, padding efficiency, total step time when ranks sync\n"
          "every micro-step and when they sync once per step (each also against the\n"
          "proven lower bound), micro-batches over --max-tokens, and the time brs takes\n"
          "to plan a step. Times are in cost units, or in seconds with a calibrated\n"
          "--cost-model. A verdict in plain words follows: what each strategy costs and\n"
          "which to pick under --max-tokens. A strategy that cannot keep --max-tokens\n"
          "is marked in its row; the others are still compared. --step compares one\n"
          "step only.\n\n",
          out);
    print_options(out, OPTIONS_COMPARE);
    fputs(exit_status, out);
}

void usage_demo(FILE *out)
{
    fprintf(out,
            "Usage: brs demo\n"
            "Run `brs compare` on a real dataset embedded in brs, at dp 8 x grad-accum 2 x\n"
            "batch 8 with the default cost model, and say in plain words what brs saved.\n"
            "\n"
            "Dataset: %s (%zu samples).\n",
            demo_dataset_name, demo_dataset_count);
    text_wrap_print(out, demo_dataset_note, 80);
    fputs(exit_status, out);
}
