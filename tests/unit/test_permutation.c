/* test_permutation.c - the epoch permutation (libbrs/draw/prng.c), read through
 * the public API: with the random strategy, dp 1, grad_accum 1 and
 * batch_size = N, the one micro-batch of step 0 is the whole epoch order.
 * It must be a bijection of [0, N) for every N, differ between (seed,
 * epoch) pairs, and look like a uniform random permutation to cheap
 * statistics (inversions, displacement, ascents, adjacent correlation),
 * each compared with its exact mean and variance under a uniform one. */
#include "brs_test.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The epoch order of n samples for (seed, epoch); malloc'd, n entries. */
static uint64_t *epoch_order(size_t n, int64_t seed, uint64_t epoch)
{
    uint32_t *len = malloc(n * sizeof *len);
    for (size_t i = 0; i < n; i++) len[i] = 1;
    bt_config c = bt_config_default(len, n);
    c.batch_size = (int64_t)n;
    c.seed = seed;
    brs_sampler *s = NULL;
    brs_plan *p = NULL;
    CU_ASSERT_FATAL(bt_sampler_new(&s, &c) == BRS_OK);
    CU_ASSERT_FATAL(brs_sampler_set_int(s, BRS_OPT_STRATEGY, BRS_STRATEGY_RANDOM) == BRS_OK);
    CU_ASSERT_FATAL(brs_plan_new(&p) == BRS_OK);
    CU_ASSERT_FATAL(brs_plan_compute(p, s, epoch, 0) == BRS_OK);
    const uint64_t *mb;
    size_t count;
    CU_ASSERT_FATAL(brs_plan_micro_batch(&mb, &count, p, 0, 0) == BRS_OK && count == n);
    uint64_t *order = malloc(n * sizeof *order);
    memcpy(order, mb, n * sizeof *order);
    brs_plan_free(p);
    brs_sampler_free(s);
    free(len);
    return order;
}

/* The same epoch order read a step of `batch` samples at a time (the last
 * step shorter): each step draws its positions on its own, in blocks and
 * lanes that start wherever the step does. */
static uint64_t *epoch_order_by_steps(size_t n, int64_t seed, uint64_t epoch, int64_t batch)
{
    uint32_t *len = malloc(n * sizeof *len);
    for (size_t i = 0; i < n; i++) len[i] = 1;
    bt_config c = bt_config_default(len, n);
    c.batch_size = batch;
    c.seed = seed;
    c.drop_last = 0;
    brs_sampler *s = NULL;
    brs_plan *p = NULL;
    CU_ASSERT_FATAL(bt_sampler_new(&s, &c) == BRS_OK);
    CU_ASSERT_FATAL(brs_sampler_set_int(s, BRS_OPT_STRATEGY, BRS_STRATEGY_RANDOM) == BRS_OK);
    CU_ASSERT_FATAL(brs_plan_new(&p) == BRS_OK);
    uint64_t *order = malloc(n * sizeof *order), steps = 0;
    CU_ASSERT_FATAL(brs_sampler_steps_per_epoch(&steps, s) == BRS_OK);
    size_t filled = 0;
    for (uint64_t t = 0; t < steps; t++) {
        CU_ASSERT_FATAL(brs_plan_compute(p, s, epoch, t) == BRS_OK);
        const uint64_t *mb;
        size_t count;
        CU_ASSERT_FATAL(brs_plan_micro_batch(&mb, &count, p, 0, 0) == BRS_OK);
        CU_ASSERT_FATAL(filled + count <= n);
        memcpy(order + filled, mb, count * sizeof *order);
        filled += count;
    }
    CU_ASSERT_FATAL(filled == n);
    brs_plan_free(p);
    brs_sampler_free(s);
    free(len);
    return order;
}

static bool is_bijection(const uint64_t *order, size_t n)
{
    unsigned char *seen = calloc(n, 1);
    bool ok = true;
    for (size_t i = 0; i < n && ok; i++) {
        ok = order[i] < n && !seen[order[i]];
        if (ok) seen[order[i]] = 1;
    }
    free(seen);
    return ok;
}

/* Domain sizes around the powers of two (the bijection works on the next
 * power of two and walks back into [0, n)). */
static size_t sizes_near_powers(size_t *out)
{
    size_t count = 0;
    for (size_t n = 1; n <= 40; n++) out[count++] = n;
    for (unsigned k = 6; k <= 16; k++) {
        size_t p = (size_t)1 << k;
        out[count++] = p - 1;
        out[count++] = p;
        out[count++] = p + 1;
    }
    out[count++] = 1000;
    out[count++] = 10007;
    out[count++] = 100000;
    return count;
}

static void test_bijection_for_many_n(void)
{
    size_t sizes[128];
    size_t count = sizes_near_powers(sizes);
    const int64_t seeds[] = {0, 1, 42, 0x7FFFFFFFFFFFFFFF};
    for (size_t i = 0; i < count; i++) {
        for (size_t s = 0; s < sizeof seeds / sizeof seeds[0]; s++) {
            uint64_t *order = epoch_order(sizes[i], seeds[s], s * 3);
            bt_set_case("n %zu seed %lld epoch %zu", sizes[i], (long long)seeds[s], s * 3);
            BT_ASSERT(is_bijection(order, sizes[i]));
            free(order);
        }
    }
}

/* Steps of any size read the one epoch order: however a step's positions
 * fall into blocks and lanes (libbrs/draw/prng.c), each gets its own value. */
static void test_steps_read_one_order(void)
{
    const size_t sizes[] = {100, 1000, 10007, 65537};
    const int64_t batches[] = {1, 7, 8, 13, 256, 300, 4099};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        uint64_t *whole = epoch_order(sizes[i], 42, 3);
        for (size_t b = 0; b < sizeof batches / sizeof batches[0]; b++) {
            if ((size_t)batches[b] > sizes[i]) continue;
            uint64_t *stepped = epoch_order_by_steps(sizes[i], 42, 3, batches[b]);
            bt_set_case("n %zu, batch %lld", sizes[i], (long long)batches[b]);
            BT_ASSERT(memcmp(whole, stepped, sizes[i] * sizeof *whole) == 0);
            free(stepped);
        }
        free(whole);
    }
}

/* Both orders of two samples occur, and all six of three, over 200 seeds. */
static void test_small_n_reaches_every_order(void)
{
    unsigned two[2] = {0}, three[9] = {0};
    for (int64_t seed = 0; seed < 200; seed++) {
        uint64_t *o2 = epoch_order(2, seed, 0), *o3 = epoch_order(3, seed, 0);
        two[o2[0]]++;
        three[o3[0] * 3 + o3[1]]++;
        free(o2);
        free(o3);
    }
    BT_ASSERT(two[0] > 50 && two[1] > 50);
    for (unsigned a = 0; a < 3; a++)
        for (unsigned b = 0; b < 3; b++)
            if (a != b) {
                bt_set_case("order starting %u %u", a, b);
                BT_ASSERT(three[a * 3 + b] > 10);
            }
}

/* Every one of 16 seeds x 16 epochs gives its own order, and seed s with
 * epoch e differs from seed e with epoch s and from seed s + 1, epoch e - 1
 * (the key hashes them apart, never adds them). */
static void test_distinct_seed_epoch_distinct_orders(void)
{
    enum { N = 1000, SIDE = 16 };
    uint64_t *orders[SIDE * SIDE];
    for (int64_t s = 0; s < SIDE; s++)
        for (uint64_t e = 0; e < SIDE; e++) orders[s * SIDE + e] = epoch_order(N, s, e);
    for (size_t a = 0; a < SIDE * SIDE; a++)
        for (size_t b = a + 1; b < SIDE * SIDE; b++) {
            bt_set_case("seed %zu epoch %zu vs seed %zu epoch %zu", a / SIDE, a % SIDE, b / SIDE,
                        b % SIDE);
            BT_ASSERT(memcmp(orders[a], orders[b], N * sizeof(uint64_t)) != 0);
        }
    for (size_t i = 0; i < SIDE * SIDE; i++) free(orders[i]);
}

/* Inversions, counted with a Fenwick tree over the values seen so far. */
static double inversions(const uint64_t *order, size_t n)
{
    uint32_t *tree = calloc(n + 1, sizeof *tree);
    double count = 0;
    for (size_t i = 0; i < n; i++) {
        size_t below = 0; /* values < order[i] seen before */
        for (size_t j = order[i]; j > 0; j -= j & (~j + 1)) below += tree[j];
        count += (double)(i - below);
        for (size_t j = order[i] + 1; j <= n; j += j & (~j + 1)) tree[j]++;
    }
    free(tree);
    return count;
}

enum { STATISTICS = 4 };
static const char *statistic_name[STATISTICS] = {"inversions", "displacement", "ascents",
                                                 "adjacent correlation"};

/* z-scores of the four statistics of one order against a uniform random
 * permutation of n (exact means and variances: Kendall's inversions,
 * Spearman's footrule (Diaconis and Graham), Eulerian ascents, and the lag-1
 * product sum, asymptotically normal with variance ~ 1/n). */
static void z_scores(double *z, const uint64_t *order, size_t n)
{
    double dn = (double)n;
    double inv_mean = dn * (dn - 1) / 4, inv_var = dn * (dn - 1) * (2 * dn + 5) / 72;
    z[0] = (inversions(order, n) - inv_mean) / sqrt(inv_var);
    double displacement = 0, ascents = 0, lag = 0, mid = (dn - 1) / 2;
    for (size_t i = 0; i < n; i++) {
        displacement += fabs((double)order[i] - (double)i);
        if (i + 1 < n) {
            ascents += order[i + 1] > order[i];
            lag += ((double)order[i] - mid) * ((double)order[i + 1] - mid);
        }
    }
    z[1] = (displacement - (dn * dn - 1) / 3) / sqrt((dn + 1) * (2 * dn * dn + 7) / 45);
    z[2] = (ascents - (dn - 1) / 2) / sqrt((dn + 1) / 12);
    double value_var = (dn * dn - 1) / 12;
    z[3] = lag / value_var / sqrt(dn - 1);
}

/* Over 8 seeds on each of ~40 sizes from 100 to 10^5 (powers of two and
 * their neighbours among them), each statistic's z-scores must have a mean
 * near 0 and a mean square near 1, and none may be extreme: a biased or
 * structured order (identity, reversal, an xor with a constant, a step of
 * a lattice) fails by orders of magnitude. */
static void test_statistics_of_a_uniform_permutation(void)
{
    size_t sizes[128], all = sizes_near_powers(sizes), count = 0;
    for (size_t i = 0; i < all; i++)
        if (sizes[i] >= 100) sizes[count++] = sizes[i];
    double sum[STATISTICS] = {0}, squares[STATISTICS] = {0}, worst[STATISTICS] = {0};
    size_t cases = 0;
    for (size_t i = 0; i < count; i++) {
        for (int64_t seed = 0; seed < 8; seed++) {
            uint64_t *order = epoch_order(sizes[i], seed * 7919, (uint64_t)seed);
            double z[STATISTICS];
            z_scores(z, order, sizes[i]);
            for (int k = 0; k < STATISTICS; k++) {
                sum[k] += z[k];
                squares[k] += z[k] * z[k];
                if (fabs(z[k]) > worst[k]) worst[k] = fabs(z[k]);
            }
            cases++;
            free(order);
        }
    }
    for (int k = 0; k < STATISTICS; k++) {
        double mean = sum[k] / (double)cases, mean_square = squares[k] / (double)cases;
        bt_set_case("%s over %zu orders: mean z %.3f, mean z^2 %.3f, worst |z| %.2f",
                    statistic_name[k], cases, mean, mean_square, worst[k]);
        /* the mean of 300+ independent z is within 0.3 of 0 (> 5 sigma) */
        BT_ASSERT(fabs(mean) < 0.3);
        BT_ASSERT(mean_square > 0.6 && mean_square < 1.6);
        BT_ASSERT(worst[k] < 5.5);
    }
}

/* The first position of the epoch is uniform over [0, n) across seeds
 * (n = 10, 2000 seeds, chi-square with 9 degrees of freedom below 35,
 * p < 1e-4): a keyed bijection can be a bijection and still favour some
 * starting samples. */
static void test_first_position_uniform_over_seeds(void)
{
    enum { N = 10, SEEDS = 2000 };
    unsigned hits[N] = {0};
    for (int64_t seed = 0; seed < SEEDS; seed++) {
        uint64_t *order = epoch_order(N, seed, 1);
        hits[order[0]]++;
        free(order);
    }
    double expected = (double)SEEDS / N, chi = 0;
    for (size_t v = 0; v < N; v++) chi += (hits[v] - expected) * (hits[v] - expected) / expected;
    bt_set_case("chi-square %.2f", chi);
    BT_ASSERT(chi < 35.0);
}

int main(int argc, char **argv)
{
    static const bt_test tests[] = {
        {"bijection for many n", test_bijection_for_many_n},
        {"steps of any size read one order", test_steps_read_one_order},
        {"small n reaches every order", test_small_n_reaches_every_order},
        {"distinct seed and epoch, distinct orders", test_distinct_seed_epoch_distinct_orders},
        {"statistics of a uniform permutation", test_statistics_of_a_uniform_permutation},
        {"first position uniform over seeds", test_first_position_uniform_over_seeds},
        {NULL, NULL},
    };
    return bt_run("permutation", tests, argc - 1, argv + 1);
}
