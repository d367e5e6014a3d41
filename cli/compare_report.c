/* compare_report.c - print a comparison as a table with a legend, then in
 * plain words with a pick. It only reads the comparison: compare.c ran it. */
#include "compare_report.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdarg.h>
#include <string.h>

#include "args.h"
#include "compare.h"
#include "output.h"
#include "sampler.h"

/* How the table and the verdict name `strategy`: balanced by the command's
 * name, "brs"; the others by the library's name written as their flag value
 * is ("length-grouped"). */
static void strategy_name(char *out, size_t size, int64_t strategy)
{
    const char *name;
    if (strategy == BRS_STRATEGY_BALANCED) {
        snprintf(out, size, "brs");
        return;
    }
    brs_status status = brs_option_value_name(&name, BRS_OPT_STRATEGY, strategy);
    if (status != BRS_OK) cli_library_error(status, "naming a strategy", "");
    snprintf(out, size, "%s", name);
    for (char *c = out; *c != '\0'; c++)
        if (*c == '_') *c = '-';
}

/* Real tokens / padded tokens (1 when nothing is padded). */
static double padding_efficiency(const epoch_stats *stats)
{
    return stats->padded_tokens ? (double)stats->real_tokens / (double)stats->padded_tokens : 1.0;
}

/* Times are summed costs, shown in seconds when the cost model knows how
 * long one unit takes. */
static double shown_time(const compare_setting *setting, double cost)
{
    return setting->seconds_per_unit > 0.0 ? cost * setting->seconds_per_unit : cost;
}

/* Costs are token-sized numbers: whole units read best, unless tiny;
 * seconds keep four digits. */
static void print_time(FILE *out, const compare_setting *setting, double cost)
{
    double time = shown_time(setting, cost);
    if (time >= 1000.0)
        fprintf(out, "  %15.0f", time);
    else
        fprintf(out, setting->seconds_per_unit > 0.0 ? "  %#15.4g" : "  %15.3g", time);
}

/* The lower bound is of the samples brs and random batches draw in each
 * step; length-grouped steps hold other samples, so no ratio is shown for
 * them rather than one that reads as below a proven bound. */
static int same_draws(int64_t strategy)
{
    return strategy != BRS_STRATEGY_LENGTH_GROUPED;
}

static void print_ratio(FILE *out, double value, double bound)
{
    if (bound > 0.0)
        fprintf(out, "  %7.2f", value / bound);
    else
        fprintf(out, "  %7s", "-");
}

/* Whether the samples carry images (a lengths file's second column): every
 * strategy plans the same samples, so random's peak tells. */
static int has_images(const comparison *result)
{
    return comparison_stats(result, BRS_STRATEGY_RANDOM)->peak_encoder_tokens > 0;
}

static void print_row(FILE *out, int64_t strategy, const comparison *result,
                      const compare_setting *setting, int capped)
{
    const epoch_stats *stats = comparison_stats(result, strategy);
    double bound = result->time_lower_bound;
    char name[32];
    strategy_name(name, sizeof name, strategy);
    fprintf(out, "%-15s  %11" PRIu64 "  %11.1f%%", name, stats->peak_padded_tokens,
            100.0 * padding_efficiency(stats));
    if (!same_draws(strategy)) bound = 0.0;
    print_time(out, setting, stats->micro_sync_time);
    print_ratio(out, stats->micro_sync_time, bound);
    print_time(out, setting, stats->step_sync_time);
    print_ratio(out, stats->step_sync_time, bound);
    fprintf(out, "  %11" PRIu64, stats->shapes_per_rank);
    if (has_images(result)) fprintf(out, "  %12" PRIu64, stats->peak_encoder_tokens);
    if (capped)
        fprintf(out, "  %8" PRIu64 "%s", stats->cap_violations,
                stats->cap_violations > 0 ? "  exceeds the cap" : "");
    fputc('\n', out);
}

/* Where the ranks' time goes: each strategy's shares of it, useful work,
 * padding and waiting at the synchronisation (the library's split,
 * include/brs.h BRS_PLAN_STEP_TIME), under the sampler's sync model. */
static void print_time_row(FILE *out, int64_t strategy, const comparison *result)
{
    const epoch_stats *stats = comparison_stats(result, strategy);
    double whole = stats->useful_time + stats->padding_time + stats->waiting_time;
    char name[32];
    strategy_name(name, sizeof name, strategy);
    if (whole <= 0.0) whole = 1.0;
    fprintf(out, "%-15s  %7.1f%%  %7.1f%%  %7.1f%%\n", name, 100.0 * stats->useful_time / whole,
            100.0 * stats->padding_time / whole, 100.0 * stats->waiting_time / whole);
}

static void print_time_split(FILE *out, const comparison *result, const compare_setting *setting)
{
    int sync_step = sampler_get_int(setting->sampler, BRS_OPT_SYNC) == BRS_SYNC_STEP;
    fprintf(out, "\nwhere the time goes: shares of the ranks' time (dp x step time, %s sync)\n",
            sync_step ? "step" : "micro-step");
    fprintf(out, "%-15s  %8s  %8s  %8s\n", "strategy", "useful", "padding", "waiting");
    for (int64_t strategy = result->lowest_strategy; strategy <= result->highest_strategy;
         strategy++)
        if (strategy != BRS_STRATEGY_BALANCED) print_time_row(out, strategy, result);
    if (!result->brs_infeasible) print_time_row(out, BRS_STRATEGY_BALANCED, result);
    if (setting->report_command != NULL) {
        char text[1024];
        snprintf(text, sizeof text, "transformers' batch_rebalance on the same samples: %s",
                 setting->report_command);
        text_wrap_print(out, text, 80);
    }
}

/* brs's row when it cannot keep --max-tokens: what would. */
static void print_infeasible_row(FILE *out, const comparison *result,
                                 const compare_setting *setting)
{
    const char *flag = option_table_flag(BRS_OPT_MAX_TOKENS);
    char name[32];
    strategy_name(name, sizeof name, BRS_STRATEGY_BALANCED);
    fprintf(out, "%-15s  infeasible: ", name);
    if (result->encoder_cap_failed)
        fprintf(out, "step %" PRIu64 " cannot keep %s %" PRId64 "\n", result->brs_infeasible_step,
                option_table_flag(BRS_OPT_MAX_ENCODER_TOKENS),
                sampler_get_int(setting->sampler, BRS_OPT_MAX_ENCODER_TOKENS));
    else if (result->least_max_tokens > 0)
        fprintf(out, "needs %s >= %" PRIu64 " (every step of epoch %" PRIu64 ")\n", flag,
                result->least_max_tokens, setting->epoch);
    else
        fprintf(out, "step %" PRIu64 " cannot keep %s %" PRId64 "\n", result->brs_infeasible_step,
                flag, sampler_get_int(setting->sampler, BRS_OPT_MAX_TOKENS));
}

/* Which unit the times are in, and where seconds would come from. */
static void print_time_unit(FILE *out, const compare_setting *setting)
{
    char text[512];
    if (setting->seconds_per_unit > 0.0)
        snprintf(text, sizeof text,
                 "times in seconds: cost x %g s, the seconds_per_unit of "
                 "--cost-model %s",
                 setting->seconds_per_unit, setting->cost_model_path);
    else if (setting->cost_model_path != NULL)
        snprintf(text, sizeof text,
                 "times in cost units: --cost-model %s has no "
                 "seconds_per_unit (only a calibrated model has one)",
                 setting->cost_model_path);
    else
        snprintf(text, sizeof text,
                 "times in cost units (seconds with a calibrated model: "
                 "brs compare --cost-model FILE, from python -m brs calibrate)");
    text_wrap_print(out, text, 80);
}

static void print_header(FILE *out, const compare_setting *setting)
{
    const brs_sampler *s = setting->sampler;
    const selection *chosen = setting->chosen;
    int64_t batch = sampler_get_int(s, BRS_OPT_BATCH_SIZE);
    int64_t grad_accum = sampler_get_int(s, BRS_OPT_GRAD_ACCUM);
    int64_t dp_size = sampler_get_int(s, BRS_OPT_DP_SIZE);
    fprintf(out, "%zu samples, epoch %" PRIu64 ", seed %" PRId64 "%s%s: ", setting->samples,
            setting->epoch, sampler_get_int(s, BRS_OPT_SEED),
            sampler_get_int(s, BRS_OPT_SHUFFLE) ? "" : ", no shuffle",
            sampler_get_int(s, BRS_OPT_DROP_LAST) ? ", drop-last" : ", last step kept");
    if (chosen->end_step - chosen->first_step == setting->steps_per_epoch)
        fprintf(out, "all %" PRIu64 " steps\n", setting->steps_per_epoch);
    else
        fprintf(out, "step %" PRIu64 " of %" PRIu64 " steps\n", chosen->first_step,
                setting->steps_per_epoch);
    fprintf(out,
            "%" PRId64 " samples per step = dp %" PRId64 " x grad-accum %" PRId64
            " x batch %" PRId64 "\n",
            batch * grad_accum * dp_size, dp_size, grad_accum, batch);
    double alpha = sampler_get_double(s, BRS_OPT_ALPHA);
    double intercept = sampler_get_double(s, BRS_OPT_INTERCEPT);
    if (sampler_get_int(s, BRS_OPT_PACKED))
        fprintf(out, "cost of a micro-batch = %g + sum(L) + %g*sum(L^2) (packed: no padding)\n",
                intercept, alpha);
    else
        fprintf(out,
                "cost of a micro-batch = %g + bs*L + %g*bs*L^2 (bs samples padded to L "
                "tokens)\n",
                intercept, alpha);
    print_time_unit(out, setting);
    fputc('\n', out);
}

/* "name             text", the text wrapped under its column. */
static void legend_entry(FILE *out, const char *name, const char *text)
{
    fprintf(out, "%-16s ", name);
    text_wrap_print_indented(out, text, 17, 17, 80);
}

/* "--max-tokens 4096", or "max_tokens 4096 (from --cost-model m.json key
 * \"max_tokens\")": the cap in force and where it came from. */
static void cap_in_words(char *out, size_t size, const compare_setting *setting)
{
    int64_t max_tokens = sampler_get_int(setting->sampler, BRS_OPT_MAX_TOKENS);
    const char *flag = option_table_flag(BRS_OPT_MAX_TOKENS);
    if (setting->cap_source == NULL || strcmp(setting->cap_source, flag) == 0)
        snprintf(out, size, "%s %" PRId64, flag, max_tokens);
    else
        snprintf(out, size, "max_tokens %" PRId64 " (from %s)", max_tokens, setting->cap_source);
}

/* What the first run of each new shape adds once, per strategy, from the
 * cost model's first_shape_seconds. */
static void print_first_runs(FILE *out, const comparison *result, const compare_setting *setting)
{
    char line[512];
    int used = snprintf(line, sizeof line,
                        "first runs of a shape cost %.3g s more "
                        "(--cost-model first_shape_seconds); once per rank and epoch:",
                        setting->first_shape_seconds);
    for (int64_t strategy = result->lowest_strategy; strategy <= result->highest_strategy;
         strategy++) {
        char name[32];
        strategy_name(name, sizeof name, strategy);
        const epoch_stats *stats = comparison_stats(result, strategy);
        if (used > 0 && (size_t)used < sizeof line)
            used += snprintf(line + used, sizeof line - (size_t)used, " %s %.3g s%s", name,
                             setting->first_shape_seconds * (double)stats->shapes_per_rank,
                             strategy < result->highest_strategy ? "," : "");
    }
    legend_entry(out, "new shapes", line);
}

static void print_legend(FILE *out, const comparison *result, const compare_setting *setting)
{
    int64_t max_tokens = sampler_get_int(setting->sampler, BRS_OPT_MAX_TOKENS);
    char bound[64];
    double shown = shown_time(setting, result->time_lower_bound);
    if (setting->seconds_per_unit > 0.0)
        snprintf(bound, sizeof bound, "%.4g s", shown);
    else
        snprintf(bound, sizeof bound, "%.0f", shown);
    fprintf(out,
            "\nuseful           what the samples cost unpadded; padding: the rest of the "
            "work;\n"
            "waiting          each rank idle until the slowest one syncs (docs/algorithm.md)\n");
    fprintf(out, "peak tokens      largest padded micro-batch (bs*L): what activation memory "
                 "must hold\n"
                 "padding eff.     real tokens / padded tokens\n"
                 "micro-sync time  sum over micro-steps of the slowest rank (FSDP / ZeRO-3)\n"
                 "step-sync time   the slowest rank's sum over its micro-steps (DDP with "
                 "no_sync)\n");
    char text[256];
    snprintf(text, sizeof text,
             "ratio to the proven lower bound of these steps' samples, %s "
             "(a sum over steps; 1 is perfect); '-' for length-grouped, whose steps hold other "
             "samples",
             bound);
    legend_entry(out, "x bound", text);
    legend_entry(out, "shapes/rank",
                 "distinct (batch size, padded length) pairs of the rank "
                 "with most: each new one may cost a compilation, a cuDNN plan or a CUDA graph "
                 "capture");
    if (has_images(result))
        legend_entry(out, "peak patches",
                     "largest image-patch count of a micro-batch (the "
                     "vision encoder's tokens, capped by --max-encoder-tokens); times include "
                     "the images' encoder cost");
    if (max_tokens > 0) {
        char cap[256];
        cap_in_words(cap, sizeof cap, setting);
        fprintf(out,
                "over cap         micro-batches above %s (a row with any exceeds the "
                "cap)\n",
                cap);
    }
    if (setting->first_shape_seconds > 0.0) print_first_runs(out, result, setting);
    char grouped[32];
    strategy_name(grouped, sizeof grouped, BRS_STRATEGY_LENGTH_GROUPED);
    fprintf(out,
            "%-16s megabatches of %" PRIu64 " samples, longest first (as "
            "transformers'\n                 LengthGroupedSampler)\n",
            grouped, result->megabatch_size);
    uint64_t steps = comparison_stats(result, BRS_STRATEGY_BALANCED)->steps;
    if (steps > 0 && result->planned_samples > 0)
        fprintf(out,
                "brs planning     %.1f us per step, %.1f ns per sample (mean of %" PRIu64
                " steps, monotonic clock)\n",
                1e6 * result->planning_seconds / (double)steps,
                1e9 * result->planning_seconds / (double)result->planned_samples, steps);
}

/* The comparison said in words, and a pick. */

/* One strategy as the verdict speaks of it. random and brs draw each step
 * at random from the dataset; length-grouped does not (its steps hold
 * samples of similar length), so it is never the pick on time alone. */
typedef struct strategy {
    char label[32]; /* the table's: "random" */
    char name[48];  /* the verdict's: "random batches" */
    const epoch_stats *stats;
    int random_draw;
    int fits; /* keeps --max-tokens (always, without one) */
} strategy;

enum { RANDOM, GROUPED, BRS, STRATEGY_COUNT };

/* The library's strategy that each role of the verdict is. */
static const int64_t library_strategy[STRATEGY_COUNT] = {
    [RANDOM] = BRS_STRATEGY_RANDOM,
    [GROUPED] = BRS_STRATEGY_LENGTH_GROUPED,
    [BRS] = BRS_STRATEGY_BALANCED,
};

typedef struct verdict {
    strategy all[STRATEGY_COUNT];
    const comparison *result;
    int64_t max_tokens;  /* 0: no cap */
    int sync_step;       /* --sync step: ranks sync once per step */
    char cap_words[256]; /* the cap and where it came from */
    char text[2048];
} verdict;

static void append(verdict *v, const char *format, ...) __attribute__((format(printf, 2, 3)));

static void append(verdict *v, const char *format, ...)
{
    size_t used = strlen(v->text);
    va_list args;
    va_start(args, format);
    vsnprintf(v->text + used, sizeof v->text - used, format, args);
    va_end(args);
}

static double step_time(const verdict *v, int which)
{
    const epoch_stats *stats = v->all[which].stats;
    return v->sync_step ? stats->step_sync_time : stats->micro_sync_time;
}

/* Whether a is shorter than b by more than the table's rounding. */
static int faster(const verdict *v, int a, int b)
{
    return step_time(v, a) * 1.005 < step_time(v, b);
}

/* "58% fewer than random batches' (3384)": brs's peak against another's;
 * whose names the other ("random batches'"), each says it stands for two. */
static void append_peak(verdict *v, int other, const char *whose, int each)
{
    double brs = (double)v->all[BRS].stats->peak_padded_tokens;
    uint64_t peak = v->all[other].stats->peak_padded_tokens;
    double change = peak > 0 ? 100.0 * (1.0 - brs / (double)peak) : 0.0;
    if (change > -0.5 && change < 0.5)
        append(v, "as many as ");
    else
        append(v, "%.0f%% %s than ", change > 0 ? change : -change, change > 0 ? "fewer" : "more");
    append(v, "%s (%" PRIu64 "%s)", whose, peak, each ? " each" : "");
}

/* "2.00x shorter than random batches'" of brs's step time against another's. */
static void append_time(verdict *v, int other)
{
    double brs = step_time(v, BRS), time = step_time(v, other);
    if (!faster(v, BRS, other) && !faster(v, other, BRS))
        append(v, "the same as %s'", v->all[other].name);
    else if (brs < time)
        append(v, "%.2fx shorter than %s'", time / brs, v->all[other].name);
    else
        append(v, "%.2fx longer than %s'", brs / time, v->all[other].name);
}

static void append_costs(verdict *v)
{
    append(v, "In plain words: brs's largest micro-batch holds %" PRIu64 " padded tokens, ",
           v->all[BRS].stats->peak_padded_tokens);
    uint64_t random_peak = v->all[RANDOM].stats->peak_padded_tokens;
    char whose[128];
    if (random_peak == v->all[GROUPED].stats->peak_padded_tokens) {
        snprintf(whose, sizeof whose, "%s and %s'", v->all[RANDOM].label, v->all[GROUPED].name);
        append_peak(v, RANDOM, whose, 1);
    } else {
        snprintf(whose, sizeof whose, "%s'", v->all[RANDOM].name);
        append_peak(v, RANDOM, whose, 0);
        append(v, " and ");
        snprintf(whose, sizeof whose, "%s'", v->all[GROUPED].name);
        append_peak(v, GROUPED, whose, 0);
    }
    append(v, ". With the ranks syncing %s, its step time is ",
           v->sync_step ? "once per step" : "at every micro-step");
    append_time(v, RANDOM);
    append(v, " and ");
    append_time(v, GROUPED);
    append(v, ", whose steps are not random draws of the dataset: each holds samples of "
              "similar length.");
}

/* The fastest strategy that keeps the cap and draws its steps at random,
 * brs on a tie; -1 if none does. */
static int pick(const verdict *v)
{
    int best = -1;
    for (int which = BRS; which >= 0; which--)
        if (v->all[which].fits && v->all[which].random_draw && (best < 0 || faster(v, which, best)))
            best = which;
    return best;
}

/* " The cap is exceeded by random batches in 84 micro-batches and by
 * length-grouped batches in 12." */
static void append_breakers(verdict *v)
{
    int listed = 0;
    for (int which = RANDOM; which < BRS; which++)
        if (!v->all[which].fits) {
            uint64_t over = v->all[which].stats->cap_violations;
            append(v, "%s %s in %" PRIu64 "%s", listed ? " and by" : " The cap is exceeded by",
                   v->all[which].name, over,
                   listed      ? ""
                   : over == 1 ? " micro-batch"
                               : " micro-batches");
            listed = 1;
        }
    if (listed) append(v, ".");
}

static void append_no_fit(verdict *v)
{
    const comparison *r = v->result;
    const char *cap = option_table_flag(BRS_OPT_MAX_TOKENS);
    int opens = v->text[strlen(v->text) - 1] == ':'; /* the paragraph's first sentence */
    append(v, " %s strategy keeps %s %" PRId64 ":", opens ? "no" : "No", cap, v->max_tokens);
    if (r->brs_infeasible && r->least_max_tokens > 0)
        append(v, " brs needs at least %" PRIu64 ".", r->least_max_tokens);
    else if (r->brs_infeasible)
        append(v, " brs cannot plan step %" PRIu64 " within it.", r->brs_infeasible_step);
    append_breakers(v);
    if (r->least_max_tokens > 0)
        append(v, " Raise %s to %" PRIu64 " and pick brs,", cap, r->least_max_tokens);
    else
        append(v, " Raise %s and pick brs,", cap);
    append(v, " or raise %s so that each step has more, smaller micro-batches.",
           option_table_flag(BRS_OPT_GRAD_ACCUM));
}

/* Length-grouped batches may be faster than the pick: say at what price. */
static void append_grouped(verdict *v, int best)
{
    const strategy *grouped = &v->all[GROUPED];
    if (!grouped->fits || !faster(v, GROUPED, best)) return;
    double gain = 100.0 * (1.0 - step_time(v, GROUPED) / step_time(v, best));
    append(v, " %c%s%s are %.0f%% faster", toupper((unsigned char)grouped->name[0]),
           grouped->name + 1, v->max_tokens > 0 ? " keep it too and" : "", gain);
    if (v->max_tokens == 0 &&
        grouped->stats->peak_padded_tokens > v->all[best].stats->peak_padded_tokens)
        append(v, " where %" PRIu64 " padded tokens per micro-batch fit in memory",
               grouped->stats->peak_padded_tokens);
    append(v, ", at the price of steps of similar lengths.");
}

static void append_pick(verdict *v)
{
    int best = pick(v);
    if (best < 0) {
        append_no_fit(v);
        return;
    }
    const char *cap = option_table_flag(BRS_OPT_MAX_TOKENS);
    /* the strategies besides the pick that keep the cap and draw at random */
    int rivals = v->all[RANDOM].fits + v->all[BRS].fits - 1;
    if (v->max_tokens > 0 && rivals == 0)
        append(v,
               " Under %s, pick %s: the only strategy that keeps it and draws its steps at "
               "random.",
               v->cap_words, v->all[best].name);
    else if (v->max_tokens > 0)
        append(v,
               " Under %s, pick %s, the fastest of the strategies that keep it and draw "
               "their steps at random.",
               v->cap_words, v->all[best].name);
    else
        append(v, " Pick %s, the fastest of the strategies that draw their steps at random.",
               v->all[best].name);
    append_breakers(v);
    append_grouped(v, best);
    if (v->max_tokens == 0)
        append(v, " To check a memory budget, give it as %s%s.", cap,
               best == BRS ? ": brs keeps every micro-batch within it" : "");
}

static int fits(const epoch_stats *stats, int64_t max_tokens)
{
    return max_tokens == 0 || stats->cap_violations == 0;
}

/* A strategy as the table names it, and its batches as the verdict does
 * ("brs" alone: the command's own). */
static void describe(strategy *out, const comparison *result, int64_t library, int64_t max_tokens)
{
    strategy_name(out->label, sizeof out->label, library);
    snprintf(out->name, sizeof out->name, "%s%s", out->label,
             library == BRS_STRATEGY_BALANCED ? "" : " batches");
    out->stats = comparison_stats(result, library);
    out->random_draw = library != BRS_STRATEGY_LENGTH_GROUPED;
    out->fits = fits(out->stats, max_tokens);
}

/* The paragraph under the table: what brs saves, and which strategy to pick. */
static void print_verdict(FILE *out, const comparison *result, const compare_setting *setting)
{
    verdict v = {.result = result};
    v.max_tokens = sampler_get_int(setting->sampler, BRS_OPT_MAX_TOKENS);
    v.sync_step = sampler_get_int(setting->sampler, BRS_OPT_SYNC) == BRS_SYNC_STEP;
    for (int which = 0; which < STRATEGY_COUNT; which++)
        describe(&v.all[which], result, library_strategy[which], v.max_tokens);
    v.all[BRS].fits = !result->brs_infeasible && v.all[BRS].fits;
    cap_in_words(v.cap_words, sizeof v.cap_words, setting);
    int64_t micro_batches = sampler_get_int(setting->sampler, BRS_OPT_DP_SIZE) *
                            sampler_get_int(setting->sampler, BRS_OPT_GRAD_ACCUM);
    if (micro_batches == 1 && !result->brs_infeasible) {
        /* one micro-batch per step: every strategy runs the same step */
        append(&v,
               "In plain words: with dp_size x grad_accum = 1 every step is one "
               "micro-batch, so there is nothing to balance: brs plans what random batches "
               "do. Give the job's layout, %s and %s, to see what brs changes.",
               option_table_flag(BRS_OPT_DP_SIZE), option_table_flag(BRS_OPT_GRAD_ACCUM));
        fputc('\n', out);
        text_wrap_print(out, v.text, 80);
        return;
    }
    if (result->brs_infeasible)
        append(&v, "In plain words:");
    else
        append_costs(&v);
    append_pick(&v);
    fputc('\n', out);
    text_wrap_print(out, v.text, 80);
}

/* The entries: a command's setting, and the whole report. */

compare_setting compare_setting_make(const cli_config *config, const brs_sampler *sampler,
                                     size_t samples, uint64_t steps, const selection *chosen)
{
    const option_setting *cap = cli_config_find(config, BRS_OPT_MAX_TOKENS);
    return (compare_setting){.sampler = sampler,
                             .samples = samples,
                             .epoch = config->epoch,
                             .steps_per_epoch = steps,
                             .chosen = chosen,
                             .seconds_per_unit = config->seconds_per_unit,
                             .first_shape_seconds = config->first_shape_seconds,
                             .cost_model_path = config->cost_model_path,
                             .cap_source = cap != NULL ? cap->source : NULL};
}

void compare_report_print(FILE *out, const comparison *result, const compare_setting *setting)
{
    int capped = sampler_get_int(setting->sampler, BRS_OPT_MAX_TOKENS) > 0;
    print_header(out, setting);
    fprintf(out, "%-15s  %11s  %12s  %15s  %7s  %15s  %7s  %11s%s%s\n", "strategy", "peak tokens",
            "padding eff.", "micro-sync time", "x bound", "step-sync time", "x bound",
            "shapes/rank", has_images(result) ? "  peak patches" : "", capped ? "  over cap" : "");
    /* The library's order, except that brs (balanced, the library's first)
     * comes last, under the baselines it is measured against. */
    for (int64_t strategy = result->lowest_strategy; strategy <= result->highest_strategy;
         strategy++)
        if (strategy != BRS_STRATEGY_BALANCED) print_row(out, strategy, result, setting, capped);
    if (result->brs_infeasible)
        print_infeasible_row(out, result, setting);
    else
        print_row(out, BRS_STRATEGY_BALANCED, result, setting, capped);
    print_time_split(out, result, setting);
    print_legend(out, result, setting);
    print_verdict(out, result, setting);
}
