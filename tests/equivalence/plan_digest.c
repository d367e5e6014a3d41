/*
 * plan_digest - one digest line per random configuration of the planner, so
 * that two builds of libbrs.so.1 can be shown to plan alike
 * (scripts/check-plans-unchanged compares the lines of two libraries).
 *
 *     plan_digest LIBRARY DATA_DIR [--configs N] [--seed S] [--dump I]
 *
 * LIBRARY is a libbrs.so.1, opened with dlopen and called through the public
 * API of include/brs.h only, so any build of this ABI can be digested (the
 * one of an older commit included). DATA_DIR holds the *.lengths files of
 * the repository's data/. Configuration i is drawn from (S, i) alone, so the
 * first N lines do not depend on N. Each line reads
 *
 *     <i> <what was set> plans=<hash> messages=<hash>
 *
 * where plans hashes every status and number the library returned for the
 * configuration (validation, fingerprints, every rank's micro-batch indices,
 * padded and real tokens, costs, encoder loads, the context-parallel groups
 * and token ranges, the shape vocabulary) and messages the text of every
 * error message. --dump I prints configuration I's text in full instead.
 */
#include <brs.h>

#include <dlfcn.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------ */
/* The library, reached through dlsym.                                      */
/* ------------------------------------------------------------------------ */

/* X(return type, name without brs_, parameter list) of every call used. */
#define BRS_CALLS(X)                                                                               \
    X(brs_status, sampler_new, (brs_sampler **))                                                   \
    X(void, sampler_free, (brs_sampler *))                                                         \
    X(brs_status, sampler_set_lengths, (brs_sampler *, const uint32_t *, size_t, int32_t))         \
    X(brs_status, sampler_set_int, (brs_sampler *, brs_option, int64_t))                           \
    X(brs_status, sampler_set_double, (brs_sampler *, brs_option, double))                         \
    X(brs_status, sampler_validate, (brs_sampler *))                                               \
    X(brs_status, sampler_steps_per_epoch, (uint64_t *, brs_sampler *))                            \
    X(brs_status, sampler_fingerprint, (uint64_t *, const brs_sampler *))                          \
    X(brs_status, sampler_stream_fingerprint, (uint64_t *, const brs_sampler *))                   \
    X(brs_status, sampler_check_epoch, (uint64_t *, uint64_t *, const brs_sampler *, uint64_t))    \
    X(brs_status, sampler_set_length_buckets, (brs_sampler *, const uint32_t *, size_t))           \
    X(brs_status, sampler_set_encoder_loads,                                                       \
      (brs_sampler *, const uint32_t *, const uint64_t *, size_t))                                 \
    X(brs_status, sampler_bucket_ladder,                                                           \
      (uint32_t *, size_t *, const brs_sampler *, uint32_t, size_t))                               \
    X(brs_status, sampler_shapes, (uint64_t *, size_t *, const brs_sampler *, uint64_t, size_t))   \
    X(brs_status, sampler_shape_vocabulary, (uint64_t *, size_t *, const brs_sampler *, size_t))   \
    X(const char *, sampler_last_error, (const brs_sampler *))                                     \
    X(brs_status, plan_new, (brs_plan **))                                                         \
    X(void, plan_free, (brs_plan *))                                                               \
    X(brs_status, plan_compute, (brs_plan *, const brs_sampler *, uint64_t, uint64_t))             \
    X(brs_status, plan_compute_batch, (brs_plan *, const brs_sampler *, const uint32_t *, size_t)) \
    X(brs_status, plan_compute_batch_images,                                                       \
      (brs_plan *, const brs_sampler *, const uint32_t *, const uint32_t *, const uint64_t *,      \
       size_t))                                                                                    \
    X(brs_status, plan_get_int, (int64_t *, const brs_plan *, brs_plan_key))                       \
    X(brs_status, plan_get_double, (double *, const brs_plan *, brs_plan_key))                     \
    X(brs_status, plan_micro_batch,                                                                \
      (const uint64_t **, size_t *, const brs_plan *, int64_t, int64_t))                           \
    X(brs_status, plan_micro_batch_stats,                                                          \
      (uint64_t *, uint64_t *, double *, const brs_plan *, int64_t, int64_t))                      \
    X(brs_status, plan_micro_batch_encoder,                                                        \
      (uint64_t *, uint64_t *, double *, const brs_plan *, int64_t, int64_t))                      \
    X(brs_status, plan_cp_micro_steps, (uint64_t *, const brs_plan *))                             \
    X(brs_status, plan_cp_micro_batch,                                                             \
      (const uint64_t **, size_t *, uint64_t *, uint64_t *, const brs_plan *, uint64_t, uint64_t)) \
    X(brs_status, plan_cp_micro_batch_stats,                                                       \
      (uint64_t *, uint64_t *, double *, const brs_plan *, uint64_t, uint64_t))                    \
    X(brs_status, plan_cp_token_ranges,                                                            \
      (uint64_t *, size_t *, const brs_plan *, uint64_t, uint64_t, size_t))                        \
    X(const char *, plan_last_error, (const brs_plan *))

#define AS_FIELD(ret, name, params) ret(*name) params;
static struct {
    BRS_CALLS(AS_FIELD)
} brs;

static void open_library(const char *path)
{
    void *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        fprintf(stderr, "plan_digest: cannot open %s: %s\n", path, dlerror());
        exit(2);
    }
#define RESOLVE(ret, name, params)                                           \
    {                                                                        \
        void *symbol = dlsym(handle, "brs_" #name);                          \
        if (!symbol) {                                                       \
            fprintf(stderr, "plan_digest: %s has no brs_" #name "\n", path); \
            exit(2);                                                         \
        }                                                                    \
        /* POSIX allows a data pointer to hold a function's address. */      \
        memcpy(&brs.name, &symbol, sizeof symbol);                           \
    }
    BRS_CALLS(RESOLVE)
#undef RESOLVE
}

/* ------------------------------------------------------------------------ */
/* The digests: every number into one hash, every message into another.     */
/* ------------------------------------------------------------------------ */

struct digest {
    uint64_t plans, messages;
    FILE *dump; /* NULL, or where --dump writes the text being hashed */
};

static uint64_t fnv1a(uint64_t hash, const char *text)
{
    for (; *text; text++) hash = (hash ^ (unsigned char)*text) * 1099511628211u;
    return hash;
}

/* One record of the numbers: printf's format, hashed as text; doubles are
 * written with %a so that every bit counts. */
static void put(struct digest *d, const char *format, ...)
{
    char text[512];
    va_list args;
    va_start(args, format);
    vsnprintf(text, sizeof text, format, args);
    va_end(args);
    d->plans = fnv1a(d->plans, text);
    d->plans = fnv1a(d->plans, "\n");
    if (d->dump) fprintf(d->dump, "%s\n", text);
}

/* A status, and when it is an error the handle's message. */
static brs_status status(struct digest *d, const char *what, brs_status s, const char *message)
{
    put(d, "%s status %d", what, (int)s);
    if (s != BRS_OK && message) {
        d->messages = fnv1a(d->messages, message);
        d->messages = fnv1a(d->messages, "\n");
        if (d->dump) fprintf(d->dump, "  message: %s\n", message);
    }
    return s;
}

/* ------------------------------------------------------------------------ */
/* The random draws: splitmix64 from (seed, configuration index).           */
/* ------------------------------------------------------------------------ */

static uint64_t next(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

/* Uniform in [lo, hi]. */
static int64_t draw(uint64_t *state, int64_t lo, int64_t hi)
{
    return lo + (int64_t)(next(state) % (uint64_t)(hi - lo + 1));
}

/* True with probability percent / 100. */
static int chance(uint64_t *state, int percent)
{
    return draw(state, 0, 99) < percent;
}

static int64_t pick(uint64_t *state, const int64_t *values, size_t count)
{
    return values[next(state) % count];
}

#define PICK(state, ...)                        \
    pick(state, (const int64_t[]){__VA_ARGS__}, \
         sizeof((const int64_t[]){__VA_ARGS__}) / sizeof(int64_t))

/* ------------------------------------------------------------------------ */
/* The lengths: the files of data/, read once, or synthetic ones.           */
/* ------------------------------------------------------------------------ */

static const char *const files[] = {"gsm8k_train.lengths", "fortunes.lengths", "jargon.lengths",
                                    "manpages.lengths"};
#define NUM_FILES (sizeof files / sizeof files[0])

struct lengths {
    uint32_t *values;
    size_t count;
};

static struct lengths dataset[NUM_FILES];

/* The first number of each line (a lengths file may carry image loads after it). */
static struct lengths read_lengths(const char *dir, const char *name)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *file = fopen(path, "r");
    if (!file) {
        fprintf(stderr, "plan_digest: cannot read %s\n", path);
        exit(2);
    }
    struct lengths out = {NULL, 0};
    size_t capacity = 0;
    char line[4096];
    while (fgets(line, sizeof line, file)) {
        unsigned long value = strtoul(line, NULL, 10);
        if (value == 0) continue; /* comments and blank lines */
        if (out.count == capacity) {
            capacity = capacity ? 2 * capacity : 1024;
            out.values = realloc(out.values, capacity * sizeof *out.values);
            if (!out.values) exit(3);
        }
        out.values[out.count++] = (uint32_t)value;
    }
    fclose(file);
    return out;
}

/* ------------------------------------------------------------------------ */
/* One configuration.                                                       */
/* ------------------------------------------------------------------------ */

enum { MAX_SAMPLES = 1200 };

struct config {
    uint32_t lengths[MAX_SAMPLES];
    size_t n;
    uint32_t longest;
    int64_t batch_size, grad_accum, dp_size, cp_size;
    int images; /* encoder loads set */
    uint32_t patches[4 * MAX_SAMPLES];
    uint64_t offsets[MAX_SAMPLES + 1];
    char what[512]; /* the line's description of what was set */
};

static void describe(struct config *c, const char *format, ...)
{
    size_t used = strlen(c->what);
    va_list args;
    va_start(args, format);
    vsnprintf(c->what + used, sizeof c->what - used, format, args);
    va_end(args);
}

static void set_int(struct config *c, brs_sampler *s, struct digest *d, const char *name,
                    brs_option key, int64_t value)
{
    describe(c, " %s=%" PRId64, name, value);
    status(d, name, brs.sampler_set_int(s, key, value), brs.sampler_last_error(s));
}

static void set_double(struct config *c, brs_sampler *s, struct digest *d, const char *name,
                       brs_option key, double value)
{
    describe(c, " %s=%g", name, value);
    status(d, name, brs.sampler_set_double(s, key, value), brs.sampler_last_error(s));
}

/* A slice of one of data/'s files (clipped at times), or lognormal-like
 * synthetic lengths. */
static void draw_lengths(struct config *c, uint64_t *rng, size_t least)
{
    c->n = (size_t)draw(rng, (int64_t)least, chance(rng, 70) ? 400 : MAX_SAMPLES);
    int file = (int)draw(rng, 0, NUM_FILES);
    uint32_t clip = chance(rng, 30) ? (uint32_t)PICK(rng, 512, 1024, 2048, 4096) : 0;
    if (file < (int)NUM_FILES) {
        const struct lengths *from = &dataset[file];
        size_t start = (size_t)draw(rng, 0, (int64_t)(from->count - c->n));
        for (size_t i = 0; i < c->n; i++) c->lengths[i] = from->values[start + i];
        describe(c, "%s[%zu:+%zu]", files[file], start, c->n);
    } else {
        int64_t spread = draw(rng, 1, 6);
        for (size_t i = 0; i < c->n; i++) {
            uint32_t value = (uint32_t)draw(rng, 1, 64);
            for (int64_t k = 0; k < spread && chance(rng, 50); k++) value *= 2;
            c->lengths[i] = value;
        }
        describe(c, "synthetic(spread=%" PRId64 ")[%zu]", spread, c->n);
    }
    if (clip) describe(c, " clip=%" PRIu32, clip);
    c->longest = 0;
    for (size_t i = 0; i < c->n; i++) {
        if (clip && c->lengths[i] > clip) c->lengths[i] = clip;
        if (c->lengths[i] > c->longest) c->longest = c->lengths[i];
    }
}

/* 0 to 3 images a sample, 1 to 1024 patches each. */
static void draw_images(struct config *c, uint64_t *rng)
{
    size_t at = 0;
    c->offsets[0] = 0;
    for (size_t i = 0; i < c->n; i++) {
        int64_t count = chance(rng, 40) ? draw(rng, 1, 3) : 0;
        for (int64_t k = 0; k < count; k++) c->patches[at++] = (uint32_t)draw(rng, 1, 1024);
        c->offsets[i + 1] = at;
    }
}

/* Sets the options of configuration `index` on s, drawn from rng. */
static void configure(struct config *c, brs_sampler *s, struct digest *d, uint64_t *rng)
{
    int64_t kind = draw(rng, 0, 9); /* 0-3 padded, 4-6 packed, 7-9 context parallel */
    int cp = kind >= 7, packed = kind >= 4;
    c->cp_size = cp ? PICK(rng, 2, 4, 8) : 1;
    c->batch_size = draw(rng, 1, 12);
    c->grad_accum = draw(rng, 1, 4);
    c->dp_size = cp ? draw(rng, 1, 4) : draw(rng, 1, 8);
    size_t k = (size_t)(c->dp_size * c->grad_accum);
    draw_lengths(c, rng, k);
    describe(c, " %s", cp ? "cp" : packed ? "packed" : "padded");
    status(d, "lengths", brs.sampler_set_lengths(s, c->lengths, c->n, BRS_LENGTHS_COPY),
           brs.sampler_last_error(s));

    int64_t strategy = cp || chance(rng, 80)
                           ? BRS_STRATEGY_BALANCED
                           : PICK(rng, BRS_STRATEGY_RANDOM, BRS_STRATEGY_LENGTH_GROUPED);
    if (strategy != BRS_STRATEGY_BALANCED) set_int(c, s, d, "strategy", BRS_OPT_STRATEGY, strategy);
    set_int(c, s, d, "batch_size", BRS_OPT_BATCH_SIZE, c->batch_size);
    set_int(c, s, d, "grad_accum", BRS_OPT_GRAD_ACCUM, c->grad_accum);
    set_int(c, s, d, "dp_size", BRS_OPT_DP_SIZE, c->dp_size);
    set_int(c, s, d, "seed", BRS_OPT_SEED, draw(rng, 0, 1000000));
    if (chance(rng, 10)) set_int(c, s, d, "shuffle", BRS_OPT_SHUFFLE, 0);
    set_int(c, s, d, "drop_last", BRS_OPT_DROP_LAST, draw(rng, 0, 1));
    set_int(c, s, d, "sync", BRS_OPT_SYNC, PICK(rng, BRS_SYNC_MICRO_STEP, BRS_SYNC_STEP));
    if (packed) set_int(c, s, d, "packed", BRS_OPT_PACKED, 1);
    set_double(c, s, d, "alpha", BRS_OPT_ALPHA, (double)PICK(rng, 0, 5, 10, 100) / 10000.0);
    if (chance(rng, 30))
        set_double(c, s, d, "intercept", BRS_OPT_INTERCEPT, (double)PICK(rng, 10, 500, 20000));

    int64_t multiple = chance(rng, 30) ? PICK(rng, 8, 16, 64, 128) : 1;
    if (multiple > 1) set_int(c, s, d, "pad_to_multiple_of", BRS_OPT_PAD_TO_MULTIPLE_OF, multiple);
    int buckets = chance(rng, 20);
    if (buckets) {
        uint32_t ladder[256];
        size_t count = 0;
        uint32_t steps = (uint32_t)PICK(rng, 0, 1, 2, 4);
        describe(c, " buckets=ladder(%" PRIu32 ")", steps);
        if (status(d, "ladder", brs.sampler_bucket_ladder(ladder, &count, s, steps, 256),
                   brs.sampler_last_error(s)) == BRS_OK) {
            for (size_t i = 0; i < count; i++) put(d, "bucket %" PRIu32, ladder[i]);
            status(d, "buckets", brs.sampler_set_length_buckets(s, ladder, count),
                   brs.sampler_last_error(s));
        }
    }

    /* Caps near what the lengths need, so that most plan and some do not. */
    if (!cp && chance(rng, 40)) {
        uint64_t row =
            ((c->longest + (uint64_t)multiple - 1) / (uint64_t)multiple) * (uint64_t)multiple;
        uint64_t cap = packed ? row * (uint64_t)draw(rng, 1, 6)
                              : row * (uint64_t)draw(rng, 1, (c->batch_size + 1) / 2 + 1);
        if (chance(rng, 10)) cap = row - 1; /* a sample too long */
        set_int(c, s, d, "max_tokens", BRS_OPT_MAX_TOKENS, (int64_t)cap);
    }
    if (cp) {
        set_int(c, s, d, "cp_size", BRS_OPT_CP_SIZE, c->cp_size);
        if (chance(rng, 40)) {
            uint64_t share = (c->longest + (uint64_t)c->cp_size - 1) / (uint64_t)c->cp_size;
            set_int(c, s, d, "max_tokens_per_rank", BRS_OPT_MAX_TOKENS_PER_RANK,
                    (int64_t)(share * (uint64_t)draw(rng, 1, 8)));
        }
        if (chance(rng, 50))
            set_double(c, s, d, "cp_comm_cost", BRS_OPT_CP_COMM_COST,
                       (double)PICK(rng, 0, 1, 10) / 10.0);
        if (chance(rng, 30)) {
            int64_t bits = c->cp_size == 2 ? 2 : c->cp_size == 4 ? 3 : 4;
            set_int(c, s, d, "cp_degrees", BRS_OPT_CP_DEGREES, draw(rng, 1, (1 << bits) - 1));
        }
    } else if (chance(rng, 20)) {
        set_int(c, s, d, "max_shapes", BRS_OPT_MAX_SHAPES, draw(rng, 1, 12));
        if (chance(rng, 25))
            set_int(c, s, d, "max_shapes_search", BRS_OPT_MAX_SHAPES_SEARCH, draw(rng, 1, 12));
    } else if (chance(rng, 20)) {
        c->images = 1;
        draw_images(c, rng);
        describe(c, " images");
        status(d, "encoder_loads", brs.sampler_set_encoder_loads(s, c->patches, c->offsets, c->n),
               brs.sampler_last_error(s));
        set_double(c, s, d, "encoder_alpha", BRS_OPT_ENCODER_ALPHA,
                   (double)PICK(rng, 0, 10, 100) / 10000.0);
        if (chance(rng, 30))
            set_double(c, s, d, "encoder_weight", BRS_OPT_ENCODER_WEIGHT,
                       (double)PICK(rng, 1, 5, 20) / 10.0);
        if (chance(rng, 30))
            set_double(c, s, d, "encoder_intercept", BRS_OPT_ENCODER_INTERCEPT, 100.0);
        if (chance(rng, 30))
            set_int(c, s, d, "max_encoder_tokens", BRS_OPT_MAX_ENCODER_TOKENS,
                    draw(rng, 1024, 8192));
    }
}

/* ------------------------------------------------------------------------ */
/* What a plan says.                                                        */
/* ------------------------------------------------------------------------ */

static void put_indices(struct digest *d, const uint64_t *indices, size_t count)
{
    char text[400];
    size_t used = 0;
    put(d, "  count %zu", count);
    for (size_t i = 0; i < count; i++) {
        used += (size_t)snprintf(text + used, sizeof text - used, " %" PRIu64, indices[i]);
        if (used > sizeof text - 32 || i + 1 == count) {
            put(d, "  indices%s", text);
            used = 0;
        }
    }
}

static void put_queries(struct digest *d, const brs_plan *p)
{
    for (brs_plan_key key = BRS_PLAN_EPOCH; key <= BRS_PLAN_MAX_RANK_TOKENS; key++) {
        int64_t value = 0;
        if (status(d, "get_int", brs.plan_get_int(&value, p, key), brs.plan_last_error(p)) ==
            BRS_OK)
            put(d, "int %d = %" PRId64, (int)key, value);
    }
    for (brs_plan_key key = BRS_PLAN_MAX_COST; key <= BRS_PLAN_ENCODER_COST; key++) {
        double value = 0;
        if (status(d, "get_double", brs.plan_get_double(&value, p, key), brs.plan_last_error(p)) ==
            BRS_OK)
            put(d, "double %d = %a", (int)key, value);
    }
}

/* Every (rank, micro-step) of the data-parallel view. */
static void put_micro_batches(struct digest *d, const brs_plan *p, const struct config *c)
{
    for (int64_t rank = 0; rank < c->dp_size; rank++) {
        for (int64_t micro = 0; micro < c->grad_accum; micro++) {
            const uint64_t *indices = NULL;
            size_t count = 0;
            uint64_t padded = 0, real = 0, patches = 0, images = 0;
            double cost = 0, encoder_cost = 0;
            put(d, " rank %" PRId64 " micro %" PRId64, rank, micro);
            if (status(d, "micro_batch", brs.plan_micro_batch(&indices, &count, p, rank, micro),
                       brs.plan_last_error(p)) == BRS_OK)
                put_indices(d, indices, count);
            if (status(d, "stats",
                       brs.plan_micro_batch_stats(&padded, &real, &cost, p, rank, micro),
                       brs.plan_last_error(p)) == BRS_OK)
                put(d, "  padded %" PRIu64 " real %" PRIu64 " cost %a", padded, real, cost);
            if (status(
                    d, "encoder",
                    brs.plan_micro_batch_encoder(&patches, &images, &encoder_cost, p, rank, micro),
                    brs.plan_last_error(p)) == BRS_OK)
                put(d, "  patches %" PRIu64 " images %" PRIu64 " cost %a", patches, images,
                    encoder_cost);
        }
    }
}

/* Every (global rank, micro-step) of the context-parallel view. */
static void put_cp(struct digest *d, const brs_plan *p, const struct config *c)
{
    uint64_t steps = 0;
    if (status(d, "cp_micro_steps", brs.plan_cp_micro_steps(&steps, p), brs.plan_last_error(p)) !=
        BRS_OK)
        return;
    put(d, "cp micro steps %" PRIu64, steps);
    uint64_t world = (uint64_t)(c->dp_size * c->cp_size);
    static uint64_t ranges[3 * 2 * MAX_SAMPLES];
    for (uint64_t rank = 0; rank < world; rank++) {
        for (uint64_t micro = 0; micro < steps; micro++) {
            const uint64_t *indices = NULL;
            size_t count = 0, triples = 0;
            uint64_t first = 0, degree = 0, padded = 0, real = 0;
            double cost = 0;
            put(d, " global rank %" PRIu64 " micro %" PRIu64, rank, micro);
            if (status(d, "cp_micro_batch",
                       brs.plan_cp_micro_batch(&indices, &count, &first, &degree, p, rank, micro),
                       brs.plan_last_error(p)) == BRS_OK) {
                put(d, "  group %" PRIu64 " degree %" PRIu64, first, degree);
                put_indices(d, indices, count);
            }
            if (status(d, "cp_stats",
                       brs.plan_cp_micro_batch_stats(&padded, &real, &cost, p, rank, micro),
                       brs.plan_last_error(p)) == BRS_OK)
                put(d, "  padded %" PRIu64 " real %" PRIu64 " cost %a", padded, real, cost);
            if (status(d, "cp_ranges",
                       brs.plan_cp_token_ranges(ranges, &triples, p, rank, micro,
                                                sizeof ranges / sizeof ranges[0] / 3),
                       brs.plan_last_error(p)) == BRS_OK)
                for (size_t i = 0; i < triples; i++)
                    put(d, "  range %" PRIu64 " [%" PRIu64 ", %" PRIu64 ")", ranges[3 * i],
                        ranges[3 * i + 1], ranges[3 * i + 2]);
        }
    }
}

static void put_plan(struct digest *d, brs_plan *p, const struct config *c)
{
    put_queries(d, p);
    put_micro_batches(d, p, c);
    put_cp(d, p, c);
}

/* ------------------------------------------------------------------------ */
/* A configuration's digest.                                                */
/* ------------------------------------------------------------------------ */

static void put_shapes(struct digest *d, const char *what, brs_status s, const uint64_t *shapes,
                       size_t count, const char *message)
{
    if (status(d, what, s, message) != BRS_OK) return;
    for (size_t i = 0; i < count; i++)
        put(d, "%s (%" PRIu64 ", %" PRIu64 ")", what, shapes[2 * i], shapes[2 * i + 1]);
}

/* The sampler's own answers: validation, fingerprints, the epoch check,
 * the shapes. */
static uint64_t put_sampler(struct digest *d, brs_sampler *s, const struct config *c)
{
    uint64_t steps = 0, value = 0, least = 0;
    status(d, "validate", brs.sampler_validate(s), brs.sampler_last_error(s));
    if (status(d, "steps_per_epoch", brs.sampler_steps_per_epoch(&steps, s),
               brs.sampler_last_error(s)) != BRS_OK)
        return 0;
    put(d, "steps %" PRIu64, steps);
    if (status(d, "fingerprint", brs.sampler_fingerprint(&value, s), brs.sampler_last_error(s)) ==
        BRS_OK)
        put(d, "fingerprint %016" PRIx64, value);
    if (status(d, "stream_fingerprint", brs.sampler_stream_fingerprint(&value, s),
               brs.sampler_last_error(s)) == BRS_OK)
        put(d, "stream fingerprint %016" PRIx64, value);
    brs_status checked = brs.sampler_check_epoch(&least, &value, s, 1);
    status(d, "check_epoch", checked, brs.sampler_last_error(s));
    if (checked == BRS_OK || checked == BRS_ERR_CAP_INFEASIBLE ||
        checked == BRS_ERR_SAMPLE_TOO_LONG)
        put(d, "check_epoch %" PRIu64 " %" PRIu64, least, value);

    static uint64_t shapes[2 * 4096];
    size_t count = 0;
    brs_status found = brs.sampler_shape_vocabulary(shapes, &count, s, 4096);
    put_shapes(d, "vocabulary", found, shapes, count, brs.sampler_last_error(s));
    if (steps * (uint64_t)c->grad_accum <= 400) {
        found = brs.sampler_shapes(shapes, &count, s, 0, 4096);
        put_shapes(d, "shapes", found, shapes, count, brs.sampler_last_error(s));
    }
    return steps;
}

/* One step of samples given now (brs_plan_compute_batch), from the
 * configuration's first lengths. */
static void put_batch(struct digest *d, brs_plan *p, const brs_sampler *s, const struct config *c,
                      uint64_t *rng)
{
    size_t n = (size_t)draw(rng, 1, (int64_t)c->n);
    brs_status planned =
        c->images ? brs.plan_compute_batch_images(p, s, c->lengths, c->patches, c->offsets, n)
                  : brs.plan_compute_batch(p, s, c->lengths, n);
    put(d, "batch of %zu", n);
    if (status(d, "compute_batch", planned, brs.plan_last_error(p)) == BRS_OK) put_plan(d, p, c);
}

static void digest_config(struct digest *d, struct config *c, uint64_t seed, uint64_t index)
{
    uint64_t rng = seed ^ (index * 0xd1b54a32d192ed03u);
    next(&rng);
    brs_sampler *s = NULL;
    brs_plan *p = NULL;
    if (brs.sampler_new(&s) != BRS_OK || brs.plan_new(&p) != BRS_OK) exit(3);
    memset(c->what, 0, sizeof c->what);
    c->images = 0;
    configure(c, s, d, &rng);
    uint64_t steps = put_sampler(d, s, c);
    if (steps > 0) {
        uint64_t when[4][2] = {
            {0, 0},
            {0, steps - 1},
            {1, (uint64_t)draw(&rng, 0, (int64_t)steps - 1)},
            {(uint64_t)draw(&rng, 2, 9), (uint64_t)draw(&rng, 0, (int64_t)steps)}};
        for (size_t i = 0; i < 4; i++) {
            put(d, "plan epoch %" PRIu64 " step %" PRIu64, when[i][0], when[i][1]);
            if (status(d, "compute", brs.plan_compute(p, s, when[i][0], when[i][1]),
                       brs.plan_last_error(p)) == BRS_OK)
                put_plan(d, p, c);
        }
    }
    if (chance(&rng, 25)) put_batch(d, p, s, c, &rng);
    brs.plan_free(p);
    brs.sampler_free(s);
}

static void usage(void)
{
    fprintf(stderr, "usage: plan_digest LIBRARY DATA_DIR [--configs N] [--seed S] [--dump I]\n"
                    "  prints one digest line per random configuration planned by LIBRARY\n");
    exit(2);
}

int main(int argc, char **argv)
{
    if (argc < 3) usage();
    uint64_t configs = 300, seed = 20240611, dump = UINT64_MAX;
    for (int i = 3; i < argc; i++) {
        if (i + 1 >= argc) usage();
        uint64_t value = strtoull(argv[i + 1], NULL, 10);
        if (!strcmp(argv[i], "--configs"))
            configs = value;
        else if (!strcmp(argv[i], "--seed"))
            seed = value;
        else if (!strcmp(argv[i], "--dump"))
            dump = value;
        else
            usage();
        i++;
    }
    open_library(argv[1]);
    for (size_t f = 0; f < NUM_FILES; f++) dataset[f] = read_lengths(argv[2], files[f]);

    static struct config c;
    if (dump != UINT64_MAX) {
        struct digest d = {14695981039346656037u, 14695981039346656037u, stdout};
        digest_config(&d, &c, seed, dump);
        printf("# %" PRIu64 " %s\n", dump, c.what);
        return 0;
    }
    for (uint64_t i = 0; i < configs; i++) {
        struct digest d = {14695981039346656037u, 14695981039346656037u, NULL};
        digest_config(&d, &c, seed, i);
        printf("%04" PRIu64 " %s plans=%016" PRIx64 " messages=%016" PRIx64 "\n", i, c.what,
               d.plans, d.messages);
        fflush(stdout);
    }
    return 0;
}
