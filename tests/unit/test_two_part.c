/* test_two_part.c - steps whose samples carry images (encoder loads): every
 * micro-batch's cost is its text cost plus its images' encoder cost and
 * both caps hold; small steps are optimal against an exhaustive oracle
 * (every assignment of samples to micro-batches, every deal to slots); the
 * certified bound never exceeds the optimum; larger steps never do worse
 * than the text planner's split priced with images; steps without images
 * plan exactly as without loads; the loads are validated and fingerprinted. */
#include "brs_test.h"

#include <stdlib.h>
#include <string.h>

/* One dataset with images: per sample its image patch counts (CSR). */
typedef struct {
    uint32_t lengths[64];
    uint32_t patches[256];
    uint64_t offsets[65];
    size_t n;
} dataset;

typedef struct {
    size_t dp, ga;
    int64_t sync, packed;
    uint64_t max_tokens, max_encoder;
    uint64_t alpha_micro, intercept_micro, enc_weight_micro, enc_alpha_micro, enc_intercept_micro;
} setup;

static void random_dataset(dataset *d, bt_rng *r, size_t n, int with_images)
{
    d->n = n;
    d->offsets[0] = 0;
    for (size_t i = 0; i < n; i++) {
        d->lengths[i] = (uint32_t)(1 + bt_rng_below(r, 40));
        size_t images = with_images ? (size_t)bt_rng_below(r, 4) : 0;
        for (size_t j = 0; j < images; j++)
            d->patches[d->offsets[i] + j] = (uint32_t)(1 + bt_rng_below(r, 60));
        d->offsets[i + 1] = d->offsets[i] + images;
    }
}

static brs_sampler *sampler_of(const dataset *d, const setup *u, int loads)
{
    brs_sampler *s = NULL;
    size_t k = u->dp * u->ga;
    if (brs_sampler_new(&s) != BRS_OK) return NULL;
    int ok =
        brs_sampler_set_lengths(s, d->lengths, d->n, BRS_LENGTHS_COPY) == BRS_OK &&
        brs_sampler_set_int(s, BRS_OPT_DP_SIZE, (int64_t)u->dp) == BRS_OK &&
        brs_sampler_set_int(s, BRS_OPT_GRAD_ACCUM, (int64_t)u->ga) == BRS_OK &&
        brs_sampler_set_int(s, BRS_OPT_BATCH_SIZE, (int64_t)(d->n / k)) == BRS_OK &&
        brs_sampler_set_int(s, BRS_OPT_SHUFFLE, 0) == BRS_OK &&
        brs_sampler_set_int(s, BRS_OPT_SYNC, u->sync) == BRS_OK &&
        brs_sampler_set_int(s, BRS_OPT_PACKED, u->packed) == BRS_OK &&
        brs_sampler_set_int(s, BRS_OPT_MAX_TOKENS, (int64_t)u->max_tokens) == BRS_OK &&
        brs_sampler_set_int(s, BRS_OPT_MAX_ENCODER_TOKENS, (int64_t)u->max_encoder) == BRS_OK &&
        brs_sampler_set_double(s, BRS_OPT_ALPHA, u->alpha_micro / 1e6) == BRS_OK &&
        brs_sampler_set_double(s, BRS_OPT_INTERCEPT, u->intercept_micro / 1e6) == BRS_OK &&
        brs_sampler_set_double(s, BRS_OPT_ENCODER_WEIGHT, u->enc_weight_micro / 1e6) == BRS_OK &&
        brs_sampler_set_double(s, BRS_OPT_ENCODER_ALPHA, u->enc_alpha_micro / 1e6) == BRS_OK &&
        brs_sampler_set_double(s, BRS_OPT_ENCODER_INTERCEPT, u->enc_intercept_micro / 1e6) ==
            BRS_OK &&
        (!loads || brs_sampler_set_encoder_loads(s, d->patches, d->offsets, d->n) == BRS_OK);
    if (ok) return s;
    brs_sampler_free(s);
    return NULL;
}

/* ---- the oracle's own cost model ---------------------------------------- */

static u128 weight(const setup *u, uint64_t length)
{
    return (u128)length * 1000000u + (u128)u->alpha_micro * length * length;
}

static u128 encoder_cost(const setup *u, const dataset *d, size_t i)
{
    u128 cost = 0;
    for (uint64_t j = d->offsets[i]; j < d->offsets[i + 1]; j++) {
        uint64_t p = d->patches[j];
        cost += (u128)p * u->enc_weight_micro + (u128)u->enc_alpha_micro * p * p +
                u->enc_intercept_micro;
    }
    return cost;
}

static uint64_t patches_of(const dataset *d, size_t i)
{
    uint64_t sum = 0;
    for (uint64_t j = d->offsets[i]; j < d->offsets[i + 1]; j++) sum += d->patches[j];
    return sum;
}

/* The cost of the samples members[0..count) as one micro-batch, and
 * whether it keeps both caps. */
static bool group_cost(u128 *cost, const setup *u, const dataset *d, const size_t *members,
                       size_t count)
{
    uint64_t longest = 0, tokens = 0, patches = 0;
    u128 weights = 0, encoder = 0;
    for (size_t x = 0; x < count; x++) {
        size_t i = members[x];
        if (d->lengths[i] > longest) longest = d->lengths[i];
        tokens += d->lengths[i];
        weights += weight(u, d->lengths[i]);
        encoder += encoder_cost(u, d, i);
        patches += patches_of(d, i);
    }
    uint64_t held = u->packed ? tokens : count * longest;
    *cost = u->intercept_micro + (u->packed ? weights : count * weight(u, longest)) + encoder;
    return (!u->max_tokens || held <= u->max_tokens) &&
           (!u->max_encoder || patches <= u->max_encoder);
}

/* The synchronised step time of k costs dealt to slots (rank-major) by
 * `deal`: per micro-step the slowest rank, or the slowest rank's sum. */
static u128 deal_time(const setup *u, const u128 *costs, const size_t *deal)
{
    u128 slot[8], time = 0;
    for (size_t g = 0; g < u->dp * u->ga; g++) slot[deal[g]] = costs[g];
    if (u->sync == BRS_SYNC_MICRO_STEP) {
        for (size_t m = 0; m < u->ga; m++) {
            u128 slowest = 0;
            for (size_t r = 0; r < u->dp; r++)
                if (slot[r * u->ga + m] > slowest) slowest = slot[r * u->ga + m];
            time += slowest;
        }
        return time;
    }
    for (size_t r = 0; r < u->dp; r++) {
        u128 sum = 0;
        for (size_t m = 0; m < u->ga; m++) sum += slot[r * u->ga + m];
        if (sum > time) time = sum;
    }
    return time;
}

/* The least time of these costs over every deal (k! permutations). */
static u128 best_deal(const setup *u, const u128 *costs)
{
    size_t k = u->dp * u->ga, deal[8];
    for (size_t g = 0; g < k; g++) deal[g] = g;
    u128 best = deal_time(u, costs, deal);
    /* Heap's algorithm, iterative */
    size_t c[8] = {0};
    for (size_t i = 1; i < k;) {
        if (c[i] < i) {
            size_t j = i % 2 ? c[i] : 0, t = deal[j];
            deal[j] = deal[i];
            deal[i] = t;
            u128 time = deal_time(u, costs, deal);
            if (time < best) best = time;
            c[i]++;
            i = 1;
        } else {
            c[i++] = 0;
        }
    }
    return best;
}

/* The least step time over every assignment of the samples to k non-empty
 * micro-batches within the caps; false when none keeps them. */
static bool oracle(u128 *best, const setup *u, const dataset *d)
{
    size_t k = u->dp * u->ga, n = d->n, label[16] = {0};
    bool found = false;
    for (;;) {
        size_t members[8][16], count[8] = {0};
        for (size_t i = 0; i < n; i++) members[label[i]][count[label[i]]++] = i;
        u128 costs[8];
        bool ok = true;
        for (size_t g = 0; g < k && ok; g++)
            ok = count[g] > 0 && group_cost(&costs[g], u, d, members[g], count[g]);
        if (ok) {
            u128 time = best_deal(u, costs);
            if (!found || time < *best) *best = time;
            found = true;
        }
        size_t i = 0;
        while (i < n && ++label[i] == k) label[i++] = 0;
        if (i == n) return found;
    }
}

/* ---- checks of a computed plan ------------------------------------------- */

/* Every sample once, both caps, and each micro-batch's cost and encoder
 * figures those of its samples. Returns the plan's step time. */
static u128 check_plan(const brs_plan *p, const setup *u, const dataset *d)
{
    bool seen[64] = {false};
    u128 costs[8];
    size_t deal[8];
    uint64_t max_patches = 0;
    for (size_t r = 0; r < u->dp; r++)
        for (size_t m = 0; m < u->ga; m++) {
            const uint64_t *idx;
            size_t count, members[64];
            BT_ASSERT(brs_plan_micro_batch(&idx, &count, p, (int64_t)r, (int64_t)m) == BRS_OK);
            uint64_t patches = 0, images = 0, want_patches = 0, want_images = 0, padded, real;
            double enc_cost, cost;
            u128 enc = 0;
            for (size_t x = 0; x < count; x++) {
                BT_ASSERT(idx[x] < d->n && !seen[idx[x]]);
                seen[idx[x]] = true;
                members[x] = (size_t)idx[x];
                want_patches += patches_of(d, idx[x]);
                want_images += d->offsets[idx[x] + 1] - d->offsets[idx[x]];
                enc += encoder_cost(u, d, idx[x]);
            }
            size_t g = r * u->ga + m;
            BT_ASSERT(group_cost(&costs[g], u, d, members, count));
            deal[g] = g;
            BT_ASSERT(brs_plan_micro_batch_encoder(&patches, &images, &enc_cost, p, (int64_t)r,
                                                   (int64_t)m) == BRS_OK);
            BT_ASSERT(patches == want_patches && images == want_images);
            BT_ASSERT(bt_close(enc_cost, bt_to_cost(enc)));
            BT_ASSERT(brs_plan_micro_batch_stats(&padded, &real, &cost, p, (int64_t)r,
                                                 (int64_t)m) == BRS_OK);
            BT_ASSERT(bt_close(cost, bt_to_cost(costs[g])));
            if (patches > max_patches) max_patches = patches;
        }
    for (size_t i = 0; i < d->n; i++) BT_ASSERT(seen[i]);
    BT_ASSERT((uint64_t)bt_plan_int(p, BRS_PLAN_MAX_ENCODER_TOKENS) == max_patches);
    u128 time = deal_time(u, costs, deal);
    brs_plan_key key =
        u->sync == BRS_SYNC_MICRO_STEP ? BRS_PLAN_MICRO_SYNC_TIME : BRS_PLAN_STEP_SYNC_TIME;
    BT_ASSERT(bt_close(bt_plan_double(p, key), bt_to_cost(time)));
    BT_ASSERT(bt_le(bt_plan_double(p, BRS_PLAN_TIME_LOWER_BOUND), bt_to_cost(time)));
    return time;
}

static setup random_setup(bt_rng *r, size_t k_choice)
{
    static const size_t shapes[][2] = {{1, 2}, {2, 1}, {1, 3}, {3, 1}, {2, 2}, {4, 1}, {1, 4}};
    setup u = {.dp = shapes[k_choice][0], .ga = shapes[k_choice][1]};
    u.sync = (int64_t)bt_rng_below(r, 2);
    u.packed = (int64_t)bt_rng_below(r, 2);
    u.alpha_micro = bt_rng_below(r, 3) * 10000;
    u.intercept_micro = bt_rng_below(r, 2) * 5000000;
    static const uint64_t weights[] = {1000000, 250000, 3000000};
    u.enc_weight_micro = weights[bt_rng_below(r, 3)];
    u.enc_alpha_micro = bt_rng_below(r, 3) * 10000;
    u.enc_intercept_micro = bt_rng_below(r, 2) * 20000000;
    u.max_tokens = bt_rng_below(r, 3) == 0 ? 60 + bt_rng_below(r, 60) : 0;
    u.max_encoder = bt_rng_below(r, 3) == 0 ? 60 + bt_rng_below(r, 100) : 0;
    return u;
}

/* Small steps (n <= 8, k <= 4): the plan's step time is the oracle's where
 * the deal is forced or optimal (micro-step sync, one rank, one micro-step),
 * never below it, and the bound never above it; an infeasible step is
 * BRS_ERR_CAP_INFEASIBLE exactly when the oracle finds no split. */
static void test_small_steps_against_oracle(void)
{
    bt_rng r = {20261205};
    brs_plan *p = NULL;
    CU_ASSERT_FATAL(brs_plan_new(&p) == BRS_OK);
    size_t exact = 0, infeasible = 0;
    for (int round = 0; round < 600; round++) {
        setup u = random_setup(&r, (size_t)bt_rng_below(&r, 7));
        size_t k = u.dp * u.ga, per = 1 + (size_t)bt_rng_below(&r, 8 / k);
        dataset d;
        random_dataset(&d, &r, k * per, 1);
        bt_set_case("round %d: dp %zu ga %zu n %zu sync %lld packed %lld", round, u.dp, u.ga, d.n,
                    (long long)u.sync, (long long)u.packed);
        brs_sampler *s = sampler_of(&d, &u, 1);
        if (!s) {
            /* a sample alone breaks a cap: the oracle finds nothing either */
            u128 t;
            BT_ASSERT(!oracle(&t, &u, &d));
            continue;
        }
        u128 best = 0;
        bool feasible = oracle(&best, &u, &d);
        brs_status status = brs_plan_compute(p, s, 0, 0);
        if (!feasible) {
            BT_ASSERT(status == BRS_ERR_CAP_INFEASIBLE || status == BRS_ERR_SAMPLE_TOO_LONG);
            infeasible++;
        } else if (status != BRS_OK) {
            BT_ASSERT(status == BRS_OK);
        } else {
            u128 time = check_plan(p, &u, &d);
            BT_ASSERT(time >= best);
            BT_ASSERT(bt_le(bt_plan_double(p, BRS_PLAN_TIME_LOWER_BOUND), bt_to_cost(best)));
            if (u.sync == BRS_SYNC_MICRO_STEP || u.dp == 1 || u.ga == 1) {
                BT_ASSERT(time == best);
                exact++;
            }
        }
        brs_sampler_free(s);
    }
    CU_ASSERT(exact > 300);
    CU_ASSERT(infeasible > 10);
    brs_plan_free(p);
}

/* Larger steps (beyond the exact search): both caps, the figures, and no
 * worse a step time than the text planner's split priced with the images
 * (loaded into the sampler with loads: the same cost model). */
static void test_large_steps_beat_text_split(void)
{
    bt_rng r = {77};
    brs_plan *p = NULL, *text = NULL;
    CU_ASSERT_FATAL(brs_plan_new(&p) == BRS_OK && brs_plan_new(&text) == BRS_OK);
    size_t planned = 0;
    for (int round = 0; round < 80; round++) {
        setup u = random_setup(&r, 4 + (size_t)bt_rng_below(&r, 3));
        u.sync = BRS_SYNC_MICRO_STEP;
        u.max_tokens = 0;
        dataset d;
        random_dataset(&d, &r, 64, 1);
        bt_set_case("round %d: dp %zu ga %zu packed %lld", round, u.dp, u.ga, (long long)u.packed);
        brs_sampler *with = sampler_of(&d, &u, 1), *without = sampler_of(&d, &u, 0);
        if (!with || !without || brs_sampler_validate(with) != BRS_OK) {
            brs_sampler_free(with);
            brs_sampler_free(without);
            continue;
        }
        brs_status status = brs_plan_compute(p, with, 0, 0);
        if (status == BRS_OK) {
            planned++;
            u128 time = check_plan(p, &u, &d);
            BT_ASSERT(brs_plan_compute(text, without, 0, 0) == BRS_OK);
            uint64_t indices[64], counts[8];
            size_t at = 0, k = u.dp * u.ga;
            for (size_t g = 0; g < k; g++) {
                const uint64_t *idx;
                size_t count;
                BT_ASSERT(brs_plan_micro_batch(&idx, &count, text, (int64_t)(g / u.ga),
                                               (int64_t)(g % u.ga)) == BRS_OK);
                memcpy(indices + at, idx, count * sizeof *idx);
                counts[g] = count;
                at += count;
            }
            BT_ASSERT(brs_plan_load(text, with, indices, counts, k, 0, 0) == BRS_OK);
            bool text_fits =
                u.max_encoder == 0 ||
                (uint64_t)bt_plan_int(text, BRS_PLAN_MAX_ENCODER_TOKENS) <= u.max_encoder;
            if (text_fits)
                BT_ASSERT(bt_le(bt_to_cost(time), bt_plan_double(text, BRS_PLAN_MICRO_SYNC_TIME)));
        } else {
            BT_ASSERT(status == BRS_ERR_CAP_INFEASIBLE);
            BT_ASSERT(strstr(brs_plan_last_error(p), "max_encoder_tokens") != NULL);
        }
        brs_sampler_free(with);
        brs_sampler_free(without);
    }
    CU_ASSERT(planned > 30);
    brs_plan_free(p);
    brs_plan_free(text);
}

/* A step none of whose samples has an image plans as without loads:
 * images only in the second half of an unshuffled dataset. */
static void test_steps_without_images_unchanged(void)
{
    uint32_t *lengths = bt_lognormal_lengths(4096, 5);
    uint32_t patches[2048];
    uint64_t offsets[4097];
    offsets[0] = 0;
    for (size_t i = 0; i < 4096; i++) {
        size_t images = i >= 2048 ? 1 : 0;
        if (images) patches[offsets[i]] = (uint32_t)(100 + i % 900);
        offsets[i + 1] = offsets[i] + images;
    }
    for (int packed = 0; packed <= 1; packed++) {
        brs_sampler *a = NULL, *b = NULL;
        brs_plan *pa = NULL, *pb = NULL;
        CU_ASSERT_FATAL(brs_sampler_new(&a) == BRS_OK && brs_sampler_new(&b) == BRS_OK);
        CU_ASSERT_FATAL(brs_plan_new(&pa) == BRS_OK && brs_plan_new(&pb) == BRS_OK);
        brs_sampler *both[2] = {a, b};
        for (int x = 0; x < 2; x++) {
            CU_ASSERT(brs_sampler_set_lengths(both[x], lengths, 4096, BRS_LENGTHS_COPY) == BRS_OK);
            CU_ASSERT(brs_sampler_set_int(both[x], BRS_OPT_SHUFFLE, 0) == BRS_OK);
            CU_ASSERT(brs_sampler_set_int(both[x], BRS_OPT_DP_SIZE, 4) == BRS_OK);
            CU_ASSERT(brs_sampler_set_int(both[x], BRS_OPT_GRAD_ACCUM, 2) == BRS_OK);
            CU_ASSERT(brs_sampler_set_int(both[x], BRS_OPT_PACKED, packed) == BRS_OK);
        }
        CU_ASSERT(brs_sampler_set_encoder_loads(b, patches, offsets, 4096) == BRS_OK);
        uint64_t steps = 0;
        CU_ASSERT(brs_sampler_steps_per_epoch(&steps, a) == BRS_OK);
        size_t same = 0, differ = 0;
        for (uint64_t step = 0; step < steps; step++) {
            bt_set_case("packed %d step %llu", packed, (unsigned long long)step);
            BT_ASSERT(brs_plan_compute(pa, a, 0, step) == BRS_OK);
            BT_ASSERT(brs_plan_compute(pb, b, 0, step) == BRS_OK);
            bool equal = true;
            for (int64_t slot = 0; slot < 8; slot++) {
                const uint64_t *ia, *ib;
                size_t ca, cb;
                brs_plan_micro_batch(&ia, &ca, pa, slot / 2, slot % 2);
                brs_plan_micro_batch(&ib, &cb, pb, slot / 2, slot % 2);
                equal &= ca == cb && memcmp(ia, ib, ca * sizeof *ia) == 0;
            }
            if ((step + 1) * 64 <= 2048) {
                BT_ASSERT(equal);
                BT_ASSERT(bt_plan_double(pa, BRS_PLAN_TIME_LOWER_BOUND) ==
                          bt_plan_double(pb, BRS_PLAN_TIME_LOWER_BOUND));
                BT_ASSERT(bt_plan_int(pb, BRS_PLAN_TOTAL_ENCODER_TOKENS) == 0);
                same++;
            } else if (step * 64 >= 2048) {
                BT_ASSERT(bt_plan_int(pb, BRS_PLAN_TOTAL_ENCODER_TOKENS) > 0);
                BT_ASSERT(bt_plan_double(pb, BRS_PLAN_ENCODER_COST) > 0);
                differ += !equal;
            }
        }
        CU_ASSERT(same == 32);
        CU_ASSERT(differ > 0);
        brs_plan_free(pa);
        brs_plan_free(pb);
        brs_sampler_free(a);
        brs_sampler_free(b);
    }
    free(lengths);
}

static void test_loads_validated_and_fingerprinted(void)
{
    uint32_t lengths[8] = {5, 6, 7, 8, 9, 10, 11, 12}, patches[4] = {10, 20, 0, 40};
    uint64_t offsets[9] = {0, 1, 2, 2, 2, 2, 2, 2, 2}, bad_offsets[9] = {0, 2, 1, 2, 2, 2, 2, 2, 2};
    brs_sampler *s = NULL;
    CU_ASSERT_FATAL(brs_sampler_new(&s) == BRS_OK);
    CU_ASSERT(brs_sampler_set_lengths(s, lengths, 8, BRS_LENGTHS_COPY) == BRS_OK);
    uint64_t plain = 0, loaded = 0, other = 0, images = 9, sum = 9;
    CU_ASSERT(brs_sampler_fingerprint(&plain, s) == BRS_OK);
    CU_ASSERT(brs_sampler_encoder_load(&images, &sum, s, 3) == BRS_OK && images == 0 && sum == 0);
    CU_ASSERT(brs_sampler_set_encoder_loads(NULL, patches, offsets, 8) == BRS_ERR_NULL_POINTER);
    CU_ASSERT(brs_sampler_set_encoder_loads(s, NULL, offsets, 8) == BRS_ERR_NULL_POINTER);
    CU_ASSERT(brs_sampler_set_encoder_loads(s, patches, bad_offsets, 8) ==
              BRS_ERR_INVALID_ARGUMENT);
    CU_ASSERT(strstr(brs_sampler_last_error(s), "image_offsets[2]") != NULL);
    uint64_t zero_image[9] = {0, 1, 2, 3, 3, 3, 3, 3, 3};
    CU_ASSERT(brs_sampler_set_encoder_loads(s, patches, zero_image, 8) == BRS_ERR_INVALID_ARGUMENT);
    CU_ASSERT(strstr(brs_sampler_last_error(s), "image_patches[2]") != NULL);
    CU_ASSERT(brs_sampler_set_encoder_loads(s, patches, offsets, 8) == BRS_OK);
    CU_ASSERT(brs_sampler_encoder_load(&images, &sum, s, 1) == BRS_OK && images == 1 && sum == 20);
    CU_ASSERT(brs_sampler_encoder_load(&images, &sum, s, 8) == BRS_ERR_OUT_OF_RANGE);
    CU_ASSERT(brs_sampler_fingerprint(&loaded, s) == BRS_OK && loaded != plain);
    patches[1] = 21;
    CU_ASSERT(brs_sampler_set_encoder_loads(s, patches, offsets, 8) == BRS_OK);
    CU_ASSERT(brs_sampler_fingerprint(&other, s) == BRS_OK && other != loaded);
    /* the options that price images enter the fingerprint when changed */
    CU_ASSERT(brs_sampler_set_double(s, BRS_OPT_ENCODER_ALPHA, 0.5) == BRS_OK);
    CU_ASSERT(brs_sampler_fingerprint(&loaded, s) == BRS_OK && loaded != other);
    /* a sample above the encoder cap names itself and the least cap */
    CU_ASSERT(brs_sampler_set_int(s, BRS_OPT_MAX_ENCODER_TOKENS, 15) == BRS_OK);
    CU_ASSERT(brs_sampler_validate(s) == BRS_ERR_SAMPLE_TOO_LONG);
    CU_ASSERT(strstr(brs_sampler_last_error(s), "sample 1 has 21 image patches") != NULL);
    /* loads for another sample count */
    CU_ASSERT(brs_sampler_set_int(s, BRS_OPT_MAX_ENCODER_TOKENS, 0) == BRS_OK);
    CU_ASSERT(brs_sampler_set_encoder_loads(s, patches, offsets, 7) == BRS_OK);
    CU_ASSERT(brs_sampler_validate(s) == BRS_ERR_INVALID_ARGUMENT);
    CU_ASSERT(strstr(brs_sampler_last_error(s), "7 samples but the lengths 8") != NULL);
    /* n = 0 clears: the plain fingerprint is back */
    CU_ASSERT(brs_sampler_set_double(s, BRS_OPT_ENCODER_ALPHA, 0.001) == BRS_OK);
    CU_ASSERT(brs_sampler_set_encoder_loads(s, NULL, NULL, 0) == BRS_OK);
    CU_ASSERT(brs_sampler_fingerprint(&other, s) == BRS_OK && other == plain);
    brs_sampler_free(s);
}

int main(int argc, char **argv)
{
    static const bt_test tests[] = {
        {"small steps against the oracle", test_small_steps_against_oracle},
        {"large steps beat the text split", test_large_steps_beat_text_split},
        {"steps without images unchanged", test_steps_without_images_unchanged},
        {"loads validated and fingerprinted", test_loads_validated_and_fingerprinted},
        {NULL, NULL},
    };
    return bt_run("two-part", tests, argc - 1, argv + 1);
}
