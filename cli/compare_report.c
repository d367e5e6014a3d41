/* compare_report.c - print a comparison as a table with a legend. */
#include "compare_report.h"

#include <inttypes.h>

#include "option_table.h"
#include "sampler_setup.h"

/* Costs are token-sized numbers: whole units read best, unless tiny. */
static void print_time(FILE *out, double time)
{
    if (time >= 1000.0)
        fprintf(out, "  %15.0f", time);
    else
        fprintf(out, "  %15.3g", time);
}

static void print_ratio(FILE *out, double value, double bound)
{
    if (bound > 0.0)
        fprintf(out, "  %7.2f", value / bound);
    else
        fprintf(out, "  %7s", "-");
}

static void print_row(FILE *out, const char *name, const epoch_stats *stats, double bound,
                      int capped)
{
    fprintf(out, "%-15s  %11" PRIu64 "  %11.1f%%", name, stats->peak_padded_tokens,
            100.0 * epoch_stats_padding_efficiency(stats));
    print_time(out, stats->micro_sync_time);
    print_ratio(out, stats->micro_sync_time, bound);
    print_time(out, stats->step_sync_time);
    print_ratio(out, stats->step_sync_time, bound);
    if (capped)
        fprintf(out, "  %8" PRIu64, stats->cap_violations);
    fputc('\n', out);
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
        fprintf(out, "cost of a micro-batch = %g + sum(L) + %g*sum(L^2) (packed: no padding)\n\n",
                intercept, alpha);
    else
        fprintf(out, "cost of a micro-batch = %g + bs*L + %g*bs*L^2 (bs samples padded to L "
                     "tokens)\n\n",
                intercept, alpha);
}

static void print_legend(FILE *out, const comparison *result, const compare_setting *setting)
{
    int64_t max_tokens = sampler_get_int(setting->sampler, BRS_OPT_MAX_TOKENS);
    fprintf(out, "\npeak tokens      largest padded micro-batch (bs*L): what activation memory "
                 "must hold\n"
                 "padding eff.     real tokens / padded tokens\n"
                 "micro-sync time  sum over micro-steps of the slowest rank (FSDP / ZeRO-3)\n"
                 "step-sync time   the slowest rank's sum over its micro-steps (DDP with "
                 "no_sync)\n"
                 "x bound          ratio to the proven lower bound, %.0f (a sum over steps; 1 "
                 "is perfect)\n",
            result->time_lower_bound);
    if (max_tokens > 0)
        fprintf(out, "over cap         micro-batches above %s %" PRId64 "\n",
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
    print_row(out, "random", &result->random, result->time_lower_bound, capped);
    print_row(out, "length-grouped", &result->grouped, result->time_lower_bound, capped);
    print_row(out, "brs", &result->brs, result->time_lower_bound, capped);
    print_legend(out, result, setting);
}
