/*
 * cmd_plan.c - `brs plan`: every selected micro-batch as one JSON line,
 *   {"epoch":0,"step":0,"rank":0,"micro":0,"indices":[...],"padded_tokens":N,"cost":X}
 * in the order step, rank, micro-step; with images (the lengths file's
 * second column) each line also holds "encoder_tokens" and "images". With
 * context parallelism (--cp-size C > 1 or --max-tokens-per-rank) a line per
 * global rank (dp rank x C + cp index) and micro-step, with its group
 * ("cp_ranks": first rank and degree) and the token ranges it computes
 * ("token_ranges": [index, start, end] triples), "padded_tokens" its share.
 */
#include "commands.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "args.h"
#include "input.h"
#include "output.h"
#include "sampler.h"
#include "usage.h"

static void print_micro_batch(FILE *out, const brs_plan *plan, uint64_t epoch, uint64_t step,
                              int64_t rank, int64_t micro, int images)
{
    micro_batch mb = planning_micro_batch(plan, rank, micro);
    fprintf(out,
            "{\"epoch\":%" PRIu64 ",\"step\":%" PRIu64 ",\"rank\":%" PRId64 ",\"micro\":%" PRId64
            ",\"indices\":[",
            epoch, step, rank, micro);
    for (size_t i = 0; i < mb.count; i++) fprintf(out, i ? ",%" PRIu64 : "%" PRIu64, mb.indices[i]);
    fprintf(out, "],\"padded_tokens\":%" PRIu64 ",\"cost\":", mb.padded_tokens);
    json_print_double(out, mb.cost);
    if (images)
        fprintf(out, ",\"encoder_tokens\":%" PRIu64 ",\"images\":%" PRIu64, mb.encoder_tokens,
                mb.images);
    fputs("}\n", out);
}

static void cp_failure(const brs_plan *plan, uint64_t rank, int64_t micro)
{
    cli_failure("reading context-parallel micro-batch (global rank %" PRIu64 ", micro %" PRId64
                "): %s",
                rank, micro, brs_plan_last_error(plan));
}

/* One global rank's line of a context-parallel plan. */
static void print_cp_micro_batch(FILE *out, const brs_plan *plan, uint64_t epoch, uint64_t step,
                                 uint64_t rank, int64_t micro)
{
    const uint64_t *indices = NULL;
    size_t count = 0, ranges_count = 0;
    uint64_t first = 0, degree = 0, padded = 0, real = 0;
    double cost = 0;
    if (brs_plan_cp_micro_batch(&indices, &count, &first, &degree, plan, rank, (uint64_t)micro) !=
            BRS_OK ||
        brs_plan_cp_micro_batch_stats(&padded, &real, &cost, plan, rank, (uint64_t)micro) !=
            BRS_OK ||
        brs_plan_cp_token_ranges(NULL, &ranges_count, plan, rank, (uint64_t)micro, 0) != BRS_OK)
        cp_failure(plan, rank, micro);
    uint64_t *ranges = malloc((ranges_count ? ranges_count : 1) * 3 * sizeof *ranges);
    if (!ranges) cli_failure("out of memory for %zu token ranges", ranges_count);
    if (brs_plan_cp_token_ranges(ranges, &ranges_count, plan, rank, (uint64_t)micro,
                                 ranges_count) != BRS_OK)
        cp_failure(plan, rank, micro);
    fprintf(out,
            "{\"epoch\":%" PRIu64 ",\"step\":%" PRIu64 ",\"rank\":%" PRIu64 ",\"micro\":%" PRId64
            ",\"cp_ranks\":{\"first\":%" PRIu64 ",\"degree\":%" PRIu64 "},\"indices\":[",
            epoch, step, rank, micro, first, degree);
    for (size_t i = 0; i < count; i++) fprintf(out, i ? ",%" PRIu64 : "%" PRIu64, indices[i]);
    fputs("],\"token_ranges\":[", out);
    for (size_t i = 0; i < ranges_count; i++)
        fprintf(out, "%s[%" PRIu64 ",%" PRIu64 ",%" PRIu64 "]", i ? "," : "", ranges[3 * i],
                ranges[3 * i + 1], ranges[3 * i + 2]);
    fprintf(out, "],\"padded_tokens\":%" PRIu64 ",\"cost\":", padded);
    json_print_double(out, cost);
    fputs("}\n", out);
    free(ranges);
}

static void print_step(FILE *out, const brs_plan *plan, uint64_t epoch, uint64_t step,
                       const selection *chosen, int64_t grad_accum, int images)
{
    int64_t cp_size = 1;
    if (brs_plan_get_int(&cp_size, plan, BRS_PLAN_CP_SIZE) != BRS_OK)
        cli_failure("reading the plan's cp_size: %s", brs_plan_last_error(plan));
    if (cp_size > 1) { /* every global rank of the selected data-parallel ranks */
        for (int64_t rank = chosen->first_rank; rank < chosen->end_rank; rank++)
            for (int64_t cp = 0; cp < cp_size; cp++)
                for (int64_t micro = 0; micro < grad_accum; micro++)
                    print_cp_micro_batch(out, plan, epoch, step, (uint64_t)(rank * cp_size + cp),
                                         micro);
        return;
    }
    for (int64_t rank = chosen->first_rank; rank < chosen->end_rank; rank++)
        for (int64_t micro = 0; micro < grad_accum; micro++)
            print_micro_batch(out, plan, epoch, step, rank, micro, images);
}

int plan_command(int count, char **args)
{
    cli_config config = options_parse_command(count, args, OPTIONS_PLAN);
    if (config.help) {
        usage_plan(stdout);
        return CLI_EXIT_OK;
    }
    options_require_lengths(&config);
    cost_model_file_apply(&config);
    /* A step may fail only when it is planned (a cap packed mode cannot
     * keep): the output is held until every step is printed, so that an
     * error leaves it empty. */
    FILE *out = output_open_held(config.output_path);
    lengths data = lengths_load(config.lengths_path);
    brs_sampler *sampler = sampler_setup(&config, data.values, data.count);
    sampler_set_images(sampler, data.patches, data.offsets, data.count);
    int images = data.offsets != NULL && data.offsets[data.count] > 0;
    selection chosen = selection_make(&config, sampler, sampler_steps(sampler));
    int64_t grad_accum = sampler_get_int(sampler, BRS_OPT_GRAD_ACCUM);
    brs_plan *plan = planning_new();
    for (uint64_t step = chosen.first_step; step < chosen.end_step; step++) {
        planning_compute(plan, sampler, config.epoch, step);
        print_step(out, plan, config.epoch, step, &chosen, grad_accum, images);
    }
    output_commit(out, "the plan");

    brs_plan_free(plan);
    brs_sampler_free(sampler);
    lengths_free(&data);
    return CLI_EXIT_OK;
}
