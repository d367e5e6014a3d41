/* consumer.c - a program built like a user's, against an installed libbrs
 * found through pkg-config. It prints what install_test.py checks:
 *
 *   version <brs_version_string()> <brs_version_number()>
 *   header <BRS_VERSION_NUMBER of the installed brs.h>
 *   lengths <l0> <l1> ...
 *   steps <n>
 *   mb <step> <rank> <micro> <padded_tokens> <index>...
 *   zero-length <status> <brs_strerror(status)>
 */
#include <brs.h>

#include <inttypes.h>
#include <stdio.h>

#define N 48

static int fail(const char *what, brs_status status)
{
    fprintf(stderr, "consumer: %s: %s\n", what, brs_strerror(status));
    return 1;
}

static void print_step(const brs_plan *plan, uint64_t step, int64_t dp, int64_t ga)
{
    for (int64_t r = 0; r < dp; r++) {
        for (int64_t m = 0; m < ga; m++) {
            const uint64_t *idx;
            size_t count;
            uint64_t padded, real;
            double cost;
            if (brs_plan_micro_batch(&idx, &count, plan, r, m) != BRS_OK ||
                brs_plan_micro_batch_stats(&padded, &real, &cost, plan, r, m) != BRS_OK)
                continue; /* the missing line makes the check fail */
            printf("mb %" PRIu64 " %" PRId64 " %" PRId64 " %" PRIu64, step, r, m, padded);
            for (size_t i = 0; i < count; i++)
                printf(" %" PRIu64, idx[i]);
            printf("\n");
        }
    }
}

int main(void)
{
    uint32_t lengths[N];
    printf("version %s %" PRIu32 "\nheader %d\nlengths", brs_version_string(),
           brs_version_number(), BRS_VERSION_NUMBER);
    for (int i = 0; i < N; i++) {
        lengths[i] = (uint32_t)(i * 37 % 101 + 1);
        printf(" %" PRIu32, lengths[i]);
    }
    printf("\n");

    brs_sampler *sampler;
    brs_plan *plan;
    brs_status st = brs_sampler_new(&sampler);
    if (st != BRS_OK)
        return fail("brs_sampler_new", st);
    if ((st = brs_sampler_set_lengths(sampler, lengths, N, BRS_LENGTHS_COPY)) != BRS_OK ||
        (st = brs_sampler_set_int(sampler, BRS_OPT_BATCH_SIZE, 4)) != BRS_OK ||
        (st = brs_sampler_set_int(sampler, BRS_OPT_DP_SIZE, 2)) != BRS_OK ||
        (st = brs_sampler_set_int(sampler, BRS_OPT_GRAD_ACCUM, 3)) != BRS_OK)
        return fail(brs_sampler_last_error(sampler), st);
    uint64_t steps = 0;
    if ((st = brs_sampler_steps_per_epoch(&steps, sampler)) != BRS_OK)
        return fail(brs_sampler_last_error(sampler), st);
    printf("steps %" PRIu64 "\n", steps);
    if ((st = brs_plan_new(&plan)) != BRS_OK)
        return fail("brs_plan_new", st);
    for (uint64_t t = 0; t < steps; t++) {
        if ((st = brs_plan_compute(plan, sampler, 0, t)) != BRS_OK)
            return fail(brs_plan_last_error(plan), st);
        print_step(plan, t, 2, 3);
    }
    lengths[5] = 0;
    st = brs_sampler_set_lengths(sampler, lengths, N, BRS_LENGTHS_COPY);
    printf("zero-length %d %s\n", (int)st, brs_strerror(st));
    brs_plan_free(plan);
    brs_sampler_free(sampler);
    return 0;
}
