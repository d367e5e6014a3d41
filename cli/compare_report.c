/* compare_report.c - print a comparison as a table with a legend. */
#include "compare_report.h"

#include <inttypes.h>

#include "compare_verdict.h"
#include "option_table.h"
#include "sampler_setup.h"
#include "text_wrap.h"

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

static void print_ratio(FILE *out, double value, double bound)
{
    if (bound > 0.0)
        fprintf(out, "  %7.2f", value / bound);
    else
        fprintf(out, "  %7s", "-");
}

static void print_row(FILE *out, const char *name, const epoch_stats *stats,
                      const comparison *result, const compare_setting *setting, int capped)
{
    double bound = result->time_lower_bound;
    fprintf(out, "%-15s  %11" PRIu64 "  %11.1f%%", name, stats->peak_padded_tokens,
            100.0 * epoch_stats_padding_efficiency(stats));
    print_time(out, setting, stats->micro_sync_time);
    print_ratio(out, stats->micro_sync_time, bound);
    print_time(out, setting, stats->step_sync_time);
    print_ratio(out, stats->step_sync_time, bound);
    if (capped)
        fprintf(out, "  %8" PRIu64 "%s", stats->cap_violations,
                stats->cap_violations > 0 ? "  exceeds the cap" : "");
    fputc('\n', out);
}

/* brs's row when it cannot keep --max-tokens: what would. */
static void print_infeasible_row(FILE *out, const comparison *result,
                                 const compare_setting *setting)
{
    const char *flag = option_table_flag(BRS_OPT_MAX_TOKENS);
    fprintf(out, "%-15s  infeasible: ", "brs");
    if (result->least_max_tokens > 0)
        fprintf(out, "needs %s >= %" PRIu64 " (every step of epoch %" PRIu64 ")\n", flag,
                result->least_max_tokens, setting->epoch);
    else
        fprintf(out, "step %" PRIu64 " cannot keep %s %" PRId64 "\n",
                result->brs_infeasible_step, flag,
                sampler_get_int(setting->sampler, BRS_OPT_MAX_TOKENS));
}

/* Which unit the times are in, and where seconds would come from. */
static void print_time_unit(FILE *out, const compare_setting *setting)
{
    char text[512];
    if (setting->seconds_per_unit > 0.0)
        snprintf(text, sizeof text, "times in seconds: cost x %g s, the seconds_per_unit of "
                 "--cost-model %s", setting->seconds_per_unit, setting->cost_model_path);
    else if (setting->cost_model_path != NULL)
        snprintf(text, sizeof text, "times in cost units: --cost-model %s has no "
                 "seconds_per_unit (only a calibrated model has one)", setting->cost_model_path);
    else
        snprintf(text, sizeof text, "times in cost units (seconds with a calibrated model: "
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
    fprintf(out, "%" PRId64 " samples per step = dp %" PRId64 " x grad-accum %" PRId64
                 " x batch %" PRId64 "\n",
            batch * grad_accum * dp_size, dp_size, grad_accum, batch);
    double alpha = sampler_get_double(s, BRS_OPT_ALPHA);
    double intercept = sampler_get_double(s, BRS_OPT_INTERCEPT);
    if (sampler_get_int(s, BRS_OPT_PACKED))
        fprintf(out, "cost of a micro-batch = %g + sum(L) + %g*sum(L^2) (packed: no padding)\n",
                intercept, alpha);
    else
        fprintf(out, "cost of a micro-batch = %g + bs*L + %g*bs*L^2 (bs samples padded to L "
                     "tokens)\n",
                intercept, alpha);
    print_time_unit(out, setting);
    fputc('\n', out);
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
    fprintf(out, "\npeak tokens      largest padded micro-batch (bs*L): what activation memory "
                 "must hold\n"
                 "padding eff.     real tokens / padded tokens\n"
                 "micro-sync time  sum over micro-steps of the slowest rank (FSDP / ZeRO-3)\n"
                 "step-sync time   the slowest rank's sum over its micro-steps (DDP with "
                 "no_sync)\n"
                 "x bound          ratio to the proven lower bound, %s (a sum over steps; 1 "
                 "is perfect)\n",
            bound);
    if (max_tokens > 0)
        fprintf(out, "over cap         micro-batches above %s %" PRId64 " (a row with any "
                     "exceeds the cap)\n",
                option_table_flag(BRS_OPT_MAX_TOKENS), max_tokens);
    fprintf(out, "length-grouped   megabatches of %" PRIu64 " samples, longest first (as "
                 "transformers'\n                 LengthGroupedSampler)\n",
            result->megabatch_size);
    uint64_t steps = result->brs.steps;
    if (steps > 0 && result->planned_samples > 0)
        fprintf(out, "brs planning     %.1f us per step, %.1f ns per sample (mean of %" PRIu64
                     " steps, monotonic clock)\n",
                1e6 * result->planning_seconds / (double)steps,
                1e9 * result->planning_seconds / (double)result->planned_samples, steps);
}

void compare_report_print(FILE *out, const comparison *result, const compare_setting *setting)
{
    int capped = sampler_get_int(setting->sampler, BRS_OPT_MAX_TOKENS) > 0;
    print_header(out, setting);
    fprintf(out, "%-15s  %11s  %12s  %15s  %7s  %15s  %7s%s\n", "strategy", "peak tokens",
            "padding eff.", "micro-sync time", "x bound", "step-sync time", "x bound",
            capped ? "  over cap" : "");
    print_row(out, "random", &result->random, result, setting, capped);
    print_row(out, "length-grouped", &result->grouped, result, setting, capped);
    if (result->brs_infeasible)
        print_infeasible_row(out, result, setting);
    else
        print_row(out, "brs", &result->brs, result, setting, capped);
    print_legend(out, result, setting);
    compare_verdict_print(out, result, setting);
}
