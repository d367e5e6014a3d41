/*
 * plan_speed - how long libbrs takes to plan one optimizer step, over the public API only.
 *
 *   plan_speed --batch-size P --dp-size R --grad-accum G [--dist uniform|longtail|lognormal]
 *              [--steps S] [--reps N] [--seed X] [--packed] [--max-tokens T] [--dump FILE]
 *              [--check-epoch] [--sync micro_step|step]
 *
 * Builds a synthetic dataset of S * B samples (B = P * R * G), then times brs_plan_compute for
 * N calls over steps 0..S-1 of epoch 0 (random access, so every call does the whole work: draw,
 * sort, split, assign). Prints one JSON object: the configuration and the median / minimum time
 * per step and per sample. One untimed call first lets the plan's buffers grow to size.
 * --dump FILE also writes the lengths as raw native uint32, so the Python side of the benchmark
 * times the other samplers on exactly the same data. --check-epoch times
 * brs_sampler_check_epoch of epoch 0 instead (N calls, each a pass over all S steps; the
 * lengths are borrowed), and prints the least max_tokens it found.
 *
 * Lengths (seeded SplitMix64, so every run and machine sees the same data):
 *   uniform   integers uniform on [1, 4096]
 *   longtail  round(exp(6 + 1.5 z)) clamped to [1, 65536], z standard normal (a heavy tail:
 *             median ~400 tokens, a few samples of tens of thousands)
 *   lognormal round(exp(5 + z)) clamped to [16, 1024] (upstream transformers' benchmark
 *             distribution)
 *
 * Build: cc -O2 -I include bench/plan_speed.c -L<build>/libbrs -lbrs -Wl,-rpath,<build>/libbrs -lm
 */
#define _POSIX_C_SOURCE 199309L
#include <brs.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct config {
    int64_t batch_size, dp_size, grad_accum, max_tokens;
    int64_t steps, reps, packed, check_epoch;
    uint64_t seed;
    const char *dist;
    const char *dump;
    int64_t sync; /* BRS_OPT_SYNC, by its value name (brs_option_value_name) */
};

static uint64_t splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* A uniform double in (0, 1): 53 random bits, never exactly 0 (log() below needs that). */
static double unit_open(uint64_t *state)
{
    return ((double)(splitmix64(state) >> 11) + 0.5) / 9007199254740992.0;
}

/* round(exp(mu + sigma z)) clamped to [low, high], z standard normal (Box-Muller). */
static uint32_t lognormal_length(uint64_t *state, double mu, double sigma, double low, double high)
{
    const double two_pi = 6.283185307179586;
    double z = sqrt(-2.0 * log(unit_open(state))) * cos(two_pi * unit_open(state));
    double v = floor(exp(mu + sigma * z) + 0.5);
    return v < low ? (uint32_t)low : v > high ? (uint32_t)high : (uint32_t)v;
}

static int fill_lengths(uint32_t *lengths, size_t n, const char *dist, uint64_t seed)
{
    uint64_t state = seed;
    int uniform = strcmp(dist, "uniform") == 0, longtail = strcmp(dist, "longtail") == 0;
    if (!uniform && !longtail && strcmp(dist, "lognormal") != 0)
        return -1;
    for (size_t i = 0; i < n; i++)
        lengths[i] = uniform    ? (uint32_t)(splitmix64(&state) % 4096u) + 1u
                     : longtail ? lognormal_length(&state, 6.0, 1.5, 1.0, 65536.0)
                                : lognormal_length(&state, 5.0, 1.0, 16.0, 1024.0);
    return 0;
}

static int dump_lengths(const char *path, const uint32_t *lengths, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    size_t written = fwrite(lengths, sizeof *lengths, n, f);
    return (fclose(f) != 0 || written != n) ? -1 : 0;
}

static double clock_ns(clockid_t clock)
{
    struct timespec ts;
    clock_gettime(clock, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static double now_ns(void)
{
    return clock_ns(CLOCK_MONOTONIC);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void usage(void)
{
    fprintf(stderr, "usage: plan_speed --batch-size P --dp-size R --grad-accum G "
                    "[--dist uniform|longtail|lognormal] [--steps S] [--reps N] [--seed X] [--packed] "
                    "[--max-tokens T] [--dump FILE] [--check-epoch] [--sync micro_step|step]\n");
    exit(2);
}

static int64_t parse_count(const char *text, const char *flag)
{
    char *end;
    long long v = strtoll(text, &end, 10);
    if (*text == '\0' || *end != '\0' || v < 0) {
        fprintf(stderr, "plan_speed: %s needs a non-negative integer, got '%s'\n", flag, text);
        exit(2);
    }
    return (int64_t)v;
}

/* The sync model by the library's own value names. */
static int64_t parse_sync(const char *text)
{
    const char *name;
    for (int64_t v = 0; brs_option_value_name(&name, BRS_OPT_SYNC, v) == BRS_OK; v++)
        if (strcmp(name, text) == 0) return v;
    fprintf(stderr, "plan_speed: unknown --sync '%s' (micro_step or step)\n", text);
    exit(2);
}

static struct config parse_args(int argc, char **argv)
{
    struct config c = {8, 1, 1, 0, 3, 20, 0, 0, 1, "uniform", NULL, BRS_SYNC_MICRO_STEP};
    for (int i = 1; i < argc; i++) {
        const char *flag = argv[i];
        if (strcmp(flag, "--packed") == 0 || strcmp(flag, "--check-epoch") == 0) {
            *(flag[2] == 'p' ? &c.packed : &c.check_epoch) = 1;
            continue;
        }
        if (i + 1 >= argc)
            usage();
        const char *value = argv[++i];
        if (strcmp(flag, "--batch-size") == 0) c.batch_size = parse_count(value, flag);
        else if (strcmp(flag, "--dp-size") == 0) c.dp_size = parse_count(value, flag);
        else if (strcmp(flag, "--grad-accum") == 0) c.grad_accum = parse_count(value, flag);
        else if (strcmp(flag, "--max-tokens") == 0) c.max_tokens = parse_count(value, flag);
        else if (strcmp(flag, "--steps") == 0) c.steps = parse_count(value, flag);
        else if (strcmp(flag, "--reps") == 0) c.reps = parse_count(value, flag);
        else if (strcmp(flag, "--seed") == 0) c.seed = (uint64_t)parse_count(value, flag);
        else if (strcmp(flag, "--dist") == 0) c.dist = value;
        else if (strcmp(flag, "--dump") == 0) c.dump = value;
        else if (strcmp(flag, "--sync") == 0) c.sync = parse_sync(value);
        else usage();
    }
    if (c.batch_size < 1 || c.dp_size < 1 || c.grad_accum < 1 || c.steps < 1 || c.reps < 1)
        usage();
    return c;
}

/* Report a failed call with the handle's own message and stop: a benchmark has no recovery. */
static void check(brs_status status, const char *what, const char *detail)
{
    if (status != BRS_OK) {
        fprintf(stderr, "plan_speed: %s: %s (%s)\n", what, brs_strerror(status), detail);
        exit(1);
    }
}

static brs_sampler *make_sampler(const struct config *c, const uint32_t *lengths, size_t n)
{
    brs_sampler *s;
    check(brs_sampler_new(&s), "brs_sampler_new", "");
    check(brs_sampler_set_lengths(s, lengths, n, BRS_LENGTHS_BORROW), "set_lengths",
          brs_sampler_last_error(s));
    const struct { brs_option key; int64_t value; } opts[] = {
        {BRS_OPT_BATCH_SIZE, c->batch_size}, {BRS_OPT_DP_SIZE, c->dp_size},
        {BRS_OPT_GRAD_ACCUM, c->grad_accum}, {BRS_OPT_MAX_TOKENS, c->max_tokens},
        {BRS_OPT_PACKED, c->packed},         {BRS_OPT_SEED, (int64_t)c->seed},
        {BRS_OPT_SYNC, c->sync},
    };
    for (size_t i = 0; i < sizeof opts / sizeof opts[0]; i++)
        check(brs_sampler_set_int(s, opts[i].key, opts[i].value), "set_int",
              brs_sampler_last_error(s));
    check(brs_sampler_validate(s), "validate", brs_sampler_last_error(s));
    return s;
}

/* brs_sampler_check_epoch of epoch 0, N times: a cap it refuses is a result, not a failure.
 * The process CPU time is reported too: on a shared machine it depends less on the load. */
static int time_check_epoch(const struct config *c, const brs_sampler *s, size_t n, double *times)
{
    uint64_t least = 0, needed = 0;
    brs_status st = BRS_OK;
    double *cpu = malloc((size_t)c->reps * sizeof *cpu);
    if (!cpu) return -1;
    for (int64_t i = 0; i < c->reps; i++) {
        double t0 = now_ns(), c0 = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
        st = brs_sampler_check_epoch(&least, &needed, s, 0);
        times[i] = now_ns() - t0;
        cpu[i] = clock_ns(CLOCK_PROCESS_CPUTIME_ID) - c0;
        if (st != BRS_OK && st != BRS_ERR_CAP_INFEASIBLE && st != BRS_ERR_SAMPLE_TOO_LONG)
            check(st, "brs_sampler_check_epoch", brs_sampler_last_error(s));
    }
    qsort(times, (size_t)c->reps, sizeof *times, cmp_double);
    qsort(cpu, (size_t)c->reps, sizeof *cpu, cmp_double);
    printf("{\"check_epoch\":true,\"n\":%zu,\"B\":%lld,\"K\":%lld,\"dist\":\"%s\","
           "\"max_tokens\":%lld,\"status\":%d,\"min_max_tokens\":%llu,\"micro_batches\":%llu,"
           "\"reps\":%lld,\"median_s\":%.4f,\"min_s\":%.4f,\"ns_per_sample\":%.2f,"
           "\"cpu_median_s\":%.4f,\"library\":\"%s\"}\n",
           n, (long long)(c->batch_size * c->dp_size * c->grad_accum),
           (long long)(c->dp_size * c->grad_accum), c->dist, (long long)c->max_tokens, (int)st,
           (unsigned long long)least, (unsigned long long)needed, (long long)c->reps,
           times[c->reps / 2] / 1e9, times[0] / 1e9, times[c->reps / 2] / (double)n,
           cpu[c->reps / 2] / 1e9, brs_version_string());
    free(cpu);
    return 0;
}

int main(int argc, char **argv)
{
    struct config c = parse_args(argc, argv);
    int64_t k = c.dp_size * c.grad_accum, b = c.batch_size * k;
    size_t n = (size_t)(b * c.steps);
    uint32_t *lengths = malloc(n * sizeof *lengths);
    double *times = malloc((size_t)c.reps * sizeof *times);
    if (!lengths || !times) {
        fprintf(stderr, "plan_speed: out of memory for %zu lengths\n", n);
        return 1;
    }
    if (fill_lengths(lengths, n, c.dist, c.seed) != 0) {
        fprintf(stderr, "plan_speed: unknown --dist '%s' (uniform, longtail or lognormal)\n", c.dist);
        return 2;
    }
    if (c.dump && dump_lengths(c.dump, lengths, n) != 0) {
        fprintf(stderr, "plan_speed: cannot write %s\n", c.dump);
        return 1;
    }
    brs_sampler *s = make_sampler(&c, lengths, n);
    if (c.check_epoch) {
        if (time_check_epoch(&c, s, n, times) != 0) {
            fprintf(stderr, "plan_speed: out of memory\n");
            return 1;
        }
        brs_sampler_free(s);
        free(times);
        free(lengths);
        return 0;
    }
    brs_plan *p;
    check(brs_plan_new(&p), "brs_plan_new", "");
    check(brs_plan_compute(p, s, 0, 0), "warm-up plan", brs_plan_last_error(p));
    for (int64_t i = 0; i < c.reps; i++) {
        double t0 = now_ns();
        brs_status st = brs_plan_compute(p, s, 0, (uint64_t)(i % c.steps));
        times[i] = now_ns() - t0;
        check(st, "brs_plan_compute", brs_plan_last_error(p));
    }
    double max_cost = 0, lower_bound = 0;
    brs_plan_get_double(&max_cost, p, BRS_PLAN_MAX_COST);
    brs_plan_get_double(&lower_bound, p, BRS_PLAN_LOWER_BOUND);
    qsort(times, (size_t)c.reps, sizeof *times, cmp_double);
    double median = times[c.reps / 2];
    printf("{\"B\":%lld,\"K\":%lld,\"P\":%lld,\"dp\":%lld,\"ga\":%lld,\"dist\":\"%s\","
           "\"packed\":%lld,\"sync\":%lld,\"n\":%zu,\"reps\":%lld,\"median_ns_per_step\":%.0f,"
           "\"min_ns_per_step\":%.0f,\"ns_per_sample\":%.3f,\"last_max_cost\":%.6f,"
           "\"last_lower_bound\":%.6f,\"library\":\"%s\"}\n",
           (long long)b, (long long)k, (long long)c.batch_size, (long long)c.dp_size,
           (long long)c.grad_accum, c.dist, (long long)c.packed, (long long)c.sync, n,
           (long long)c.reps, median, times[0], median / (double)b, max_cost, lower_bound, brs_version_string());
    brs_plan_free(p);
    brs_sampler_free(s);
    free(times);
    free(lengths);
    return 0;
}
