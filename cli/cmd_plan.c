/*
 * cmd_plan.c - `brs plan`: every selected micro-batch as one JSON line,
 *   {"epoch":0,"step":0,"rank":0,"micro":0,"indices":[...],"padded_tokens":N,"cost":X}
 * in the order step, rank, micro-step; with images (the lengths file's
 * second column) each line also holds "encoder_tokens" and "images".
 */
#include "commands.h"

#include <inttypes.h>
#include <stdio.h>

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

static void print_step(FILE *out, const brs_plan *plan, uint64_t epoch, uint64_t step,
                       const selection *chosen, int64_t grad_accum, int images)
{
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
