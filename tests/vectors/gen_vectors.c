/*
 * gen_vectors - writes the golden vectors of tests/vectors (README.md there).
 *
 *     gen_vectors DATA_DIR OUT_DIR
 *
 * DATA_DIR holds the *.lengths files (the repository's data/), OUT_DIR
 * receives one <name>.json per vector of the balanced strategy,
 * OUT_DIR/strategies/<name>.json per vector of another BRS_OPT_STRATEGY and
 * OUT_DIR/shapes/<name>.json per vector with BRS_OPT_MAX_SHAPES set.
 * Only the public API of brs.h is used, so the files record what any
 * binding must reproduce.
 */
#include <brs.h>

#include <errno.h>
#include <sys/stat.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SAMPLES 300
#define MAX_PLANS 6
/* The most pairs a vector's shape vocabulary may hold. */
#define MAX_SHAPES 64
/* A step index meaning "the last step of the epoch". */
#define LAST_STEP UINT64_MAX

enum source_kind { FROM_FILE, SYNTHETIC, CONSTANT };

struct options {
    int64_t batch_size, grad_accum, dp_size, seed, shuffle, drop_last;
    double alpha, intercept;
    int64_t max_tokens, packed;
    int64_t strategy; /* BRS_STRATEGY_*: not balanced goes to strategies/ */
    /* Later options, written only when set, so that the vectors before
     * them keep their bytes: 0 leaves pad_to_multiple_of at its default. */
    int64_t pad_to_multiple_of;
    const uint32_t *buckets; /* length buckets, bucket_count of them */
    size_t bucket_count;
    /* The options of shapes/: BRS_SYNC_* (0, micro_step, is not written)
     * and max_shapes (0: unbounded; set, the vector goes to shapes/). */
    int64_t sync, max_shapes;
};

struct when {
    uint64_t epoch, step;
};

struct vector {
    const char *name;
    enum source_kind kind;
    const char *file;  /* FROM_FILE: the *.lengths file in DATA_DIR */
    size_t count;      /* number of samples */
    uint32_t value;    /* FROM_FILE: clip lengths to it (0: none); SYNTHETIC: seed;
                          CONSTANT: the length of every sample */
    struct options opt;
    struct when plans[MAX_PLANS];
    size_t num_plans;
};

static const uint32_t ladder[] = {64, 96, 128, 192, 256, 384, 512, 768, 1024, 1536, 2048};

/* The vectors: each one pins a behaviour of the planner (README.md). */
static const struct vector vectors[] = {
    {"gsm8k_padded", FROM_FILE, "gsm8k_train.lengths", 256, 0,
     {4, 2, 2, 7, 1, 1, 0.001, 0.0, 0, 0, BRS_STRATEGY_BALANCED, 0, NULL, 0, 0, 0},
     {{0, 0}, {0, 1}, {0, LAST_STEP}, {1, 0}, {3, 7}}, 5},
    {"fortunes_capped", FROM_FILE, "fortunes.lengths", 240, 0,
     {6, 1, 4, 11, 1, 1, 0.01, 0.0, 900, 0, BRS_STRATEGY_BALANCED, 0, NULL, 0, 0, 0},
     {{0, 0}, {0, 4}, {0, 5}, {0, 6}, {1, 5}, {2, 8}}, 6},
    {"jargon_packed", FROM_FILE, "jargon.lengths", 200, 0,
     {8, 2, 2, 5, 1, 1, 0.0005, 50.0, 0, 1, BRS_STRATEGY_BALANCED, 0, NULL, 0, 0, 0},
     {{0, 0}, {0, 3}, {1, LAST_STEP}}, 3},
    {"manpages_topup", FROM_FILE, "manpages.lengths", 130, 4096,
     {8, 2, 2, 1, 1, 0, 0.001, 0.0, 0, 0, BRS_STRATEGY_BALANCED, 0, NULL, 0, 0, 0},
     {{0, 0}, {0, LAST_STEP}, {1, LAST_STEP}}, 3},
    {"single_sample_k8", CONSTANT, NULL, 1, 123,
     {1, 4, 2, 0, 1, 0, 0.001, 0.0, 0, 0, BRS_STRATEGY_BALANCED, 0, NULL, 0, 0, 0},
     {{0, 0}, {1, 0}}, 2},
    {"no_shuffle", SYNTHETIC, NULL, 100, 3,
     {5, 2, 2, 3, 0, 1, 0.001, 0.0, 0, 0, BRS_STRATEGY_BALANCED, 0, NULL, 0, 0, 0},
     {{0, 0}, {0, LAST_STEP}, {1, 0}}, 3},
    {"dp4_ga2", SYNTHETIC, NULL, 300, 9,
     {4, 2, 4, 2024, 1, 1, 0.01, 100.0, 0, 0, BRS_STRATEGY_BALANCED, 0, NULL, 0, 0, 0},
     {{0, 0}, {0, LAST_STEP}, {5, 3}}, 3},
    {"equal_lengths_partial", CONSTANT, NULL, 70, 64,
     {4, 2, 2, 13, 1, 0, 0.001, 0.0, 0, 0, BRS_STRATEGY_BALANCED, 0, NULL, 0, 0, 0},
     {{0, 0}, {0, LAST_STEP}, {2, 1}}, 3},
    {"gsm8k_pad64_capped", FROM_FILE, "gsm8k_train.lengths", 256, 0,
     {4, 2, 2, 7, 1, 1, 0.001, 0.0, 1536, 0, BRS_STRATEGY_BALANCED, 64, NULL, 0, 0, 0},
     {{0, 0}, {0, 1}, {0, LAST_STEP}, {2, 3}}, 4},
    {"manpages_buckets", FROM_FILE, "manpages.lengths", 200, 2048,
     {4, 2, 2, 3, 1, 1, 0.001, 20.0, 0, 0, BRS_STRATEGY_BALANCED, 8, ladder, 11, 0, 0},
     {{0, 0}, {0, LAST_STEP}, {1, 2}}, 3},
    {"jargon_packed_pad128", FROM_FILE, "jargon.lengths", 200, 0,
     {8, 2, 2, 5, 1, 1, 0.0005, 50.0, 6144, 1, BRS_STRATEGY_BALANCED, 128, NULL, 0, 0, 0},
     {{0, 0}, {1, LAST_STEP}}, 2},
    /* The fixed-size strategies (tests/vectors/strategies). */
    {"gsm8k_random", FROM_FILE, "gsm8k_train.lengths", 256, 0,
     {4, 2, 2, 7, 1, 1, 0.001, 0.0, 0, 0, BRS_STRATEGY_RANDOM, 0, NULL, 0, 0, 0},
     {{0, 0}, {0, LAST_STEP}, {1, 0}}, 3},
    {"gsm8k_length_grouped", FROM_FILE, "gsm8k_train.lengths", 256, 0,
     {4, 2, 2, 7, 1, 1, 0.001, 0.0, 0, 0, BRS_STRATEGY_LENGTH_GROUPED, 0, NULL, 0, 0, 0},
     {{0, 0}, {0, 1}, {0, LAST_STEP}, {1, 0}}, 4},
    {"manpages_topup_random", FROM_FILE, "manpages.lengths", 130, 4096,
     {8, 2, 2, 1, 1, 0, 0.001, 0.0, 0, 0, BRS_STRATEGY_RANDOM, 0, NULL, 0, 0, 0},
     {{0, 0}, {0, LAST_STEP}}, 2},
    {"jargon_packed_length_grouped", FROM_FILE, "jargon.lengths", 200, 0,
     {8, 2, 2, 5, 1, 1, 0.0005, 50.0, 0, 1, BRS_STRATEGY_LENGTH_GROUPED, 0, NULL, 0, 0, 0},
     {{0, 0}, {1, LAST_STEP}}, 2},
    /* A shape vocabulary of max_shapes (tests/vectors/shapes). */
    {"gsm8k_pad64_shapes6", FROM_FILE, "gsm8k_train.lengths", 256, 0,
     {4, 2, 2, 7, 1, 1, 0.001, 0.0, 0, 0, BRS_STRATEGY_BALANCED, 64, NULL, 0, 0, 6},
     {{0, 0}, {0, 1}, {0, LAST_STEP}, {1, 0}, {3, 7}}, 5},
    {"synthetic_shapes4_partial", SYNTHETIC, NULL, 150, 21,
     {4, 2, 2, 17, 1, 0, 0.001, 0.0, 0, 0, BRS_STRATEGY_BALANCED, 0, NULL, 0, 0, 4},
     {{0, 0}, {0, LAST_STEP}, {1, LAST_STEP}}, 3},
    {"gsm8k_capped_shapes8", FROM_FILE, "gsm8k_train.lengths", 256, 0,
     {4, 2, 2, 7, 1, 1, 0.001, 0.0, 1536, 0, BRS_STRATEGY_BALANCED, 64, NULL, 0, 0, 8},
     {{0, 0}, {0, 1}, {0, LAST_STEP}, {2, 3}}, 4},
    {"dp4_ga2_sync_step_shapes6", SYNTHETIC, NULL, 300, 9,
     {4, 2, 4, 2024, 1, 1, 0.01, 100.0, 0, 0, BRS_STRATEGY_BALANCED, 0, NULL, 0,
      BRS_SYNC_STEP, 6},
     {{0, 0}, {0, LAST_STEP}, {5, 3}}, 3},
};

static void die(const char *what, const char *detail)
{
    fprintf(stderr, "gen_vectors: %s: %s\n", what, detail);
    exit(1);
}

static void check(brs_status status, const char *what, const char *message)
{
    if (status != BRS_OK) {
        fprintf(stderr, "gen_vectors: %s: %s (%s)\n", what, brs_strerror(status), message);
        exit(1);
    }
}

/* The first `count` lengths of DATA_DIR/file, clipped to `clip` when it is
 * not 0 (as a training pipeline truncates to the model's context). */
static void read_excerpt(uint32_t *out, const char *dir, const struct vector *v)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, v->file);
    FILE *f = fopen(path, "r");
    if (!f)
        die(path, strerror(errno));
    for (size_t i = 0; i < v->count; i++) {
        unsigned long value;
        if (fscanf(f, "%lu", &value) != 1 || value == 0 || value > UINT32_MAX)
            die(path, "expected one positive 32-bit integer per line");
        out[i] = (uint32_t)value;
        if (v->value != 0 && out[i] > v->value)
            out[i] = v->value;
    }
    fclose(f);
}

static uint64_t splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

/* Long-tailed integer lengths in [16, 1024], integers only so that every
 * machine draws the same: a uniform base scaled by a power of two. */
static void synthesize(uint32_t *out, const struct vector *v)
{
    uint64_t state = v->value;
    for (size_t i = 0; i < v->count; i++) {
        uint64_t r = splitmix64(&state);
        uint32_t length = (uint32_t)(16 + r % 64) << ((r >> 32) % 5);
        out[i] = length > 1024 ? 1024 : length;
    }
}

static size_t load_lengths(uint32_t *out, const char *data_dir, const struct vector *v)
{
    if (v->count > MAX_SAMPLES)
        die(v->name, "too many samples for a golden vector");
    switch (v->kind) {
    case FROM_FILE:
        read_excerpt(out, data_dir, v);
        break;
    case SYNTHETIC:
        synthesize(out, v);
        break;
    case CONSTANT:
        for (size_t i = 0; i < v->count; i++)
            out[i] = v->value;
        break;
    }
    return v->count;
}

static brs_sampler *make_sampler(const uint32_t *lengths, size_t n, const struct options *o)
{
    brs_sampler *s;
    check(brs_sampler_new(&s), "brs_sampler_new", "");
    check(brs_sampler_set_lengths(s, lengths, n, BRS_LENGTHS_COPY), "set_lengths",
          brs_sampler_last_error(s));
    const struct {
        brs_option key;
        int64_t value;
    } ints[] = {
        {BRS_OPT_BATCH_SIZE, o->batch_size}, {BRS_OPT_GRAD_ACCUM, o->grad_accum},
        {BRS_OPT_DP_SIZE, o->dp_size},       {BRS_OPT_SEED, o->seed},
        {BRS_OPT_SHUFFLE, o->shuffle},       {BRS_OPT_DROP_LAST, o->drop_last},
        {BRS_OPT_MAX_TOKENS, o->max_tokens}, {BRS_OPT_PACKED, o->packed},
        {BRS_OPT_STRATEGY, o->strategy},
    };
    for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++)
        check(brs_sampler_set_int(s, ints[i].key, ints[i].value), "set_int",
              brs_sampler_last_error(s));
    check(brs_sampler_set_double(s, BRS_OPT_ALPHA, o->alpha), "set_double",
          brs_sampler_last_error(s));
    check(brs_sampler_set_double(s, BRS_OPT_INTERCEPT, o->intercept), "set_double",
          brs_sampler_last_error(s));
    if (o->pad_to_multiple_of != 0)
        check(brs_sampler_set_int(s, BRS_OPT_PAD_TO_MULTIPLE_OF, o->pad_to_multiple_of),
              "set_int", brs_sampler_last_error(s));
    check(brs_sampler_set_length_buckets(s, o->buckets, o->bucket_count), "set_length_buckets",
          brs_sampler_last_error(s));
    if (o->sync != BRS_SYNC_MICRO_STEP)
        check(brs_sampler_set_int(s, BRS_OPT_SYNC, o->sync), "set_int", brs_sampler_last_error(s));
    if (o->max_shapes != 0)
        check(brs_sampler_set_int(s, BRS_OPT_MAX_SHAPES, o->max_shapes), "set_int",
              brs_sampler_last_error(s));
    return s;
}

/* The strategy appears by name, and only when it is not balanced, and
 * the later options only when set: the vectors before them keep the format
 * every binding reads. */
static void write_options(FILE *f, const struct options *o)
{
    const char *strategy = "";
    char named[1024] = "";
    size_t used = 0;
    if (o->strategy != BRS_STRATEGY_BALANCED) {
        check(brs_option_value_name(&strategy, BRS_OPT_STRATEGY, o->strategy), "value_name", "");
        used += (size_t)snprintf(named, sizeof named, ", \"strategy\": \"%s\"", strategy);
    }
    if (o->pad_to_multiple_of != 0)
        used += (size_t)snprintf(named + used, sizeof named - used,
                                 ", \"pad_to_multiple_of\": %" PRId64, o->pad_to_multiple_of);
    if (o->bucket_count > 0) {
        used += (size_t)snprintf(named + used, sizeof named - used, ", \"length_buckets\": [");
        for (size_t i = 0; i < o->bucket_count; i++)
            used += (size_t)snprintf(named + used, sizeof named - used, "%s%" PRIu32,
                                     i ? ", " : "", o->buckets[i]);
        used += (size_t)snprintf(named + used, sizeof named - used, "]");
    }
    if (o->sync != BRS_SYNC_MICRO_STEP) {
        const char *sync = "";
        check(brs_option_value_name(&sync, BRS_OPT_SYNC, o->sync), "value_name", "");
        used += (size_t)snprintf(named + used, sizeof named - used, ", \"sync\": \"%s\"", sync);
    }
    if (o->max_shapes != 0)
        used += (size_t)snprintf(named + used, sizeof named - used,
                                 ", \"max_shapes\": %" PRId64, o->max_shapes);
    fprintf(f,
            "  \"options\": {\"batch_size\": %" PRId64 ", \"grad_accum\": %" PRId64
            ", \"dp_size\": %" PRId64 ", \"seed\": %" PRId64 ", \"shuffle\": %" PRId64
            ", \"drop_last\": %" PRId64 ", \"alpha\": %.17g, \"intercept\": %.17g"
            ", \"max_tokens\": %" PRId64 ", \"packed\": %" PRId64 "%s},\n",
            o->batch_size, o->grad_accum, o->dp_size, o->seed, o->shuffle, o->drop_last,
            o->alpha, o->intercept, o->max_tokens, o->packed, named);
}

static void write_micro_batch(FILE *f, const brs_plan *p, int64_t rank, int64_t micro)
{
    const uint64_t *indices;
    size_t count;
    uint64_t padded, real;
    double cost;
    check(brs_plan_micro_batch(&indices, &count, p, rank, micro), "micro_batch",
          brs_plan_last_error(p));
    check(brs_plan_micro_batch_stats(&padded, &real, &cost, p, rank, micro),
          "micro_batch_stats", brs_plan_last_error(p));
    fputs("{\"indices\": [", f);
    for (size_t i = 0; i < count; i++)
        fprintf(f, "%s%" PRIu64, i ? ", " : "", indices[i]);
    fprintf(f, "], \"padded_tokens\": %" PRIu64 ", \"real_tokens\": %" PRIu64
               ", \"cost\": %.17g}",
            padded, real, cost);
}

static void write_plan(FILE *f, brs_plan *p, const brs_sampler *s, struct when w,
                       const struct options *o)
{
    double max_cost, lower_bound;
    check(brs_plan_compute(p, s, w.epoch, w.step), "plan_compute", brs_plan_last_error(p));
    check(brs_plan_get_double(&max_cost, p, BRS_PLAN_MAX_COST), "get_double",
          brs_plan_last_error(p));
    check(brs_plan_get_double(&lower_bound, p, BRS_PLAN_LOWER_BOUND), "get_double",
          brs_plan_last_error(p));
    fprintf(f,
            "    {\"epoch\": %" PRIu64 ", \"step\": %" PRIu64
            ", \"max_cost\": %.17g, \"lower_bound\": %.17g, \"micro_batches\": [\n",
            w.epoch, w.step, max_cost, lower_bound);
    for (int64_t rank = 0; rank < o->dp_size; rank++) {
        fputs("      [", f);
        for (int64_t micro = 0; micro < o->grad_accum; micro++) {
            fputs(micro ? ",\n       " : "", f);
            write_micro_batch(f, p, rank, micro);
        }
        fputs(rank + 1 < o->dp_size ? "],\n" : "]\n", f);
    }
    fputs("    ]}", f);
}

/* The sampler's shape vocabulary (vectors of shapes/ only), as
 * brs_sampler_shape_vocabulary returns it: [[batch size, padded length], ...]. */
static void write_vocabulary(FILE *f, const brs_sampler *s)
{
    uint64_t pairs[2 * MAX_SHAPES];
    size_t count;
    check(brs_sampler_shape_vocabulary(pairs, &count, s, MAX_SHAPES), "shape_vocabulary",
          brs_sampler_last_error(s));
    fputs("  \"vocabulary\": [", f);
    for (size_t i = 0; i < count; i++)
        fprintf(f, "%s[%" PRIu64 ", %" PRIu64 "]", i ? ", " : "", pairs[2 * i], pairs[2 * i + 1]);
    fputs("],\n", f);
}

static void write_vector(FILE *f, const struct vector *v, const uint32_t *lengths, size_t n)
{
    brs_sampler *s = make_sampler(lengths, n, &v->opt);
    uint64_t fingerprint, steps;
    check(brs_sampler_fingerprint(&fingerprint, s), "fingerprint", brs_sampler_last_error(s));
    check(brs_sampler_steps_per_epoch(&steps, s), "steps_per_epoch", brs_sampler_last_error(s));

    fprintf(f, "{\n  \"name\": \"%s\",\n  \"lengths\": [", v->name);
    for (size_t i = 0; i < n; i++)
        fprintf(f, "%s%" PRIu32, i ? ", " : "", lengths[i]);
    fputs("],\n", f);
    write_options(f, &v->opt);
    fprintf(f, "  \"fingerprint\": \"%016" PRIx64 "\",\n", fingerprint);
    fprintf(f, "  \"steps_per_epoch\": %" PRIu64 ",\n", steps);
    if (v->opt.max_shapes != 0)
        write_vocabulary(f, s);
    fputs("  \"plans\": [\n", f);

    brs_plan *p;
    check(brs_plan_new(&p), "brs_plan_new", "");
    for (size_t i = 0; i < v->num_plans; i++) {
        struct when w = v->plans[i];
        if (w.step == LAST_STEP)
            w.step = steps - 1;
        write_plan(f, p, s, w, &v->opt);
        fputs(i + 1 < v->num_plans ? ",\n" : "\n", f);
    }
    fputs("  ]\n}\n", f);
    brs_plan_free(p);
    brs_sampler_free(s);
}

/* Where a vector goes below OUT_DIR: "" (the balanced vectors every reader
 * reads), "strategies" for another strategy, "shapes" with max_shapes set. */
static const char *subdirectory(const struct options *o)
{
    if (o->strategy != BRS_STRATEGY_BALANCED)
        return "strategies";
    return o->max_shapes != 0 ? "shapes" : "";
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: %s DATA_DIR OUT_DIR\n", argv[0]);
        return 2;
    }
    for (size_t i = 0; i < sizeof vectors / sizeof vectors[0]; i++) {
        uint32_t lengths[MAX_SAMPLES];
        size_t n = load_lengths(lengths, argv[1], &vectors[i]);
        char path[4096];
        const char *sub = subdirectory(&vectors[i].opt);
        if (*sub) {
            snprintf(path, sizeof path, "%s/%s", argv[2], sub);
            if (mkdir(path, 0777) != 0 && errno != EEXIST)
                die(path, strerror(errno));
        }
        snprintf(path, sizeof path, "%s/%s%s%s.json", argv[2], sub, *sub ? "/" : "",
                 vectors[i].name);
        FILE *f = fopen(path, "w");
        if (!f)
            die(path, strerror(errno));
        write_vector(f, &vectors[i], lengths, n);
        if (fclose(f) != 0)
            die(path, strerror(errno));
    }
    return 0;
}
