/*
 * brs_test.h - shared helpers of the libbrs CUnit programs.
 *
 *   brs_test.c   configuration -> sampler factory, plan walking, RNG, runner
 *   oracle.c     exact references: DP over contiguous splits, greedy probe,
 *                brute force for packed mode
 *   invariants.c what every computed step must satisfy, recomputed from the
 *                lengths in exact integers
 *
 * Costs are compared in exact integers, in units of 1e-6 ("micro"), because
 * the library resolves alpha and intercept to multiples of 1e-6.
 */
#ifndef BRS_TEST_H
#define BRS_TEST_H

#include <brs.h>
#include <CUnit/CUnit.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Exact costs in micro-units: intercept + bs*L*1e6 + alpha_micro*bs*L^2 with
 * intercept <= 1e18, bs <= 2^24, L < 2^32, alpha_micro <= 1e9 stays below
 * 1e18 + 2^24*2^32*1e6 + 1e9*2^24*2^64 < 3.1e35, and a sum of up to 1000 such
 * costs below 2^128 (3.4e38). */
__extension__ typedef unsigned __int128 u128;

/* ---- configuration and sampler factory --------------------------------- */

typedef struct {
    const uint32_t *lengths;
    size_t n;
    int64_t batch_size, grad_accum, dp_size, rank, seed, shuffle, drop_last;
    int64_t max_tokens, packed;
    double alpha, intercept;
    int64_t sync; /* BRS_OPT_SYNC; 0 (the default) is not set */
} bt_config;

/* The library's documented defaults, with the given lengths. */
bt_config bt_config_default(const uint32_t *lengths, size_t n);

/* Creates a sampler from c; returns the first failing status (and frees the
 * half-built sampler), *out = NULL then. */
brs_status bt_sampler_new(brs_sampler **out, const bt_config *c);

/* ---- cost model ---------------------------------------------------------- */

typedef struct {
    uint64_t alpha_micro, intercept_micro;
    bool packed;
} bt_cost_model;

bt_cost_model bt_cost_model_of(const bt_config *c);
u128 bt_cost_padded(const bt_cost_model *m, uint64_t bs, uint64_t longest);
u128 bt_cost_packed(const bt_cost_model *m, uint64_t sum, u128 sum_sq);
double bt_to_cost(u128 micro);
/* got == want up to floating conversion error (relative 1e-12). */
bool bt_close(double got, double want);
/* a <= b up to the same tolerance. */
bool bt_le(double a, double b);

/* ---- one computed step, read through the public API --------------------- */

typedef struct {
    const uint64_t *indices;
    size_t count;
    uint64_t padded, real;
    double cost;
} bt_micro;

typedef struct {
    int64_t dp, ga, k;
    size_t num_samples;
    bt_micro *mb; /* k entries, mb[rank * ga + micro] */
} bt_step;

/* Reads every micro-batch of a computed plan; false after CUnit failures. */
bool bt_step_load(bt_step *s, const brs_plan *p);
void bt_step_free(bt_step *s);
/* The lengths of the step's samples, longest first (malloc'd, num_samples). */
uint32_t *bt_step_lengths_desc(const bt_step *s, const uint32_t *lengths);
/* The step's indices, ascending (malloc'd, num_samples). */
uint64_t *bt_step_indices_sorted(const bt_step *s);

/* ---- a whole epoch, for contract tests ----------------------------------- */

typedef struct {
    uint64_t steps;
    size_t *enc_len, *num;
    uint64_t **enc;    /* per step: for each (rank, micro): count, indices... */
    uint64_t **sorted; /* per step: its indices, ascending */
} bt_epoch;

/* Plans every step of the epoch (in order, or in a scrambled order when
 * scrambled is true, with a single reused plan); returns the first failing
 * status. */
brs_status bt_epoch_load(bt_epoch *e, const brs_sampler *s, uint64_t epoch, bool scrambled);
void bt_epoch_free(bt_epoch *e);
bool bt_epoch_equal(const bt_epoch *a, const bt_epoch *b);
/* True when at least one step's sample set differs. */
bool bt_epoch_sets_differ(const bt_epoch *a, const bt_epoch *b);

/* ---- exact references (oracle.c) ----------------------------------------- */

/* Minimum over splits of desc[0..b) (longest first) into k non-empty
 * contiguous groups of the largest group cost, every group within
 * cap (bs * L <= cap; 0 = no cap). False if no split meets the cap. */
bool bt_oracle_min_max(u128 *best, const uint32_t *desc, size_t b, size_t k, const bt_cost_model *m,
                       uint64_t cap);
/* Minimum total cost over the same splits whose groups all cost <= limit. */
bool bt_oracle_min_total(u128 *best, const uint32_t *desc, size_t b, size_t k,
                         const bt_cost_model *m, uint64_t cap, u128 limit);
/* On tiny steps (b <= BT_SYNC_MAX_SAMPLES): the largest per-micro-step sync
 * time (groups dealt by cost, dp per micro-step) over the splits of total
 * least_total with every group <= limit. False if none or b too large. */
#define BT_SYNC_MAX_SAMPLES 16
bool bt_oracle_worst_sync_of_least_total(u128 *worst, const uint32_t *desc, size_t b, size_t k,
                                         size_t dp, const bt_cost_model *m, uint64_t cap,
                                         u128 limit, u128 least_total);
/* Fewest contiguous groups (greedy from the longest sample) with every
 * group cost <= limit and bs * L <= cap; UINT64_MAX when one sample alone
 * breaks limit or cap. Greedy is optimal: feasibility is inherited by
 * sub-segments. */
uint64_t bt_greedy_groups(const uint32_t *desc, size_t b, const bt_cost_model *m, u128 limit,
                          uint64_t cap);
#define BT_NO_LIMIT (~(u128)0)
/* max is the optimum for k groups iff the greedy probe fits k groups at max
 * and needs more than k at max - 1 micro-unit, which is the same as at the
 * largest achievable cost strictly below max (feasibility only changes at
 * achievable costs). CUnit failures if not. */
bool bt_threshold_optimal(const uint32_t *desc, size_t b, size_t k, const bt_cost_model *m,
                          uint64_t cap, u128 max);
/* Exact optimum by enumerating every partition (contiguous or not) of
 * len[0..b) into k non-empty groups (b <= 10), padded or packed as m says,
 * each group within cap (padded tokens or token sum). False if none fits. */
bool bt_brute_min_max(u128 *best, const uint32_t *len, size_t b, size_t k, const bt_cost_model *m,
                      uint64_t cap);

/* The objective of a plan, lexicographic: step time under the sync model,
 * peak padded tokens of a micro-batch, total cost. */
typedef struct {
    u128 time, peak, total;
} bt_score;
#define BT_PLAN_MAX_GROUPS 8
#define BT_PLAN_MAX_SAMPLES 16
/* The memory budget of a default plan: cap when set, else the peak of the
 * least-total split among min-max ones (leftmost ties). */
bool bt_oracle_budget(uint64_t *budget, const uint32_t *desc, size_t b, size_t k,
                      const bt_cost_model *m, uint64_t cap);
/* The best score over every contiguous split with peak <= budget and every
 * deal of its groups to (rank, micro-step); sync 0 per micro-step, 1 per
 * step. k <= BT_PLAN_MAX_GROUPS, b <= BT_PLAN_MAX_SAMPLES. */
bool bt_oracle_best_plan(bt_score *best, const uint32_t *desc, size_t b, size_t k, size_t dp,
                         int sync, const bt_cost_model *m, uint64_t budget);
/* The same over every contiguous split whose groups each run at a shape of
 * the vocabulary (pairs (size, length): a group runs at the shortest length
 * of its size that holds its head, within cap), with no budget. */
bool bt_oracle_best_vocabulary_plan(bt_score *best, const uint32_t *desc, size_t b, size_t k,
                                    size_t dp, int sync, const bt_cost_model *m, uint64_t cap,
                                    const uint64_t *vocabulary, size_t vocabulary_count);
/* The fastest layered plan under per-micro-step sync: desc[0..b) cut into
 * k / dp contiguous layers, one per micro-step, each split into dp groups
 * at its own min-max with every group within budget (bs * L <= budget);
 * its time is the sum of the layers' min-max. False if none fits. */
bool bt_oracle_best_layered(u128 *best, const uint32_t *desc, size_t b, size_t k, size_t dp,
                            const bt_cost_model *m, uint64_t budget);
/* The least peak padded tokens over contiguous splits into k groups of cost
 * <= limit within cap. */
bool bt_oracle_min_peak(uint64_t *peak, const uint32_t *desc, size_t b, size_t k,
                        const bt_cost_model *m, uint64_t cap, u128 limit);

/* The k-way Karmarkar-Karp (largest differencing) partition of the packed
 * weights of desc[0..b) (longest first): the two tuples of largest spread
 * combine, largest subset with smallest; ties go to the tuple, and within a
 * tuple to the subset, holding the smallest sample index. Writes each
 * group's cost and tokens (k entries, costliest first). A heuristic, not an
 * optimum: packed mode must do at least as well. */
#define BT_KK_MAX_GROUPS 16
#define BT_KK_MAX_SAMPLES 64
bool bt_oracle_karmarkar_karp(u128 *costs, uint64_t *tokens, const uint32_t *desc, size_t b,
                              size_t k, const bt_cost_model *m);

/* ---- invariants (invariants.c) ------------------------------------------- */

/* Checks what every computed step must satisfy: non-empty micro-batches,
 * longest sample first, per-micro-batch stats and plan totals recomputed from
 * the lengths, sync times, LOWER_BOUND <= MAX_COST, TIME_LOWER_BOUND <= both
 * sync times, the cap. *max_cost gets the exact largest cost. */
bool bt_check_step(u128 *max_cost, const bt_step *s, const brs_plan *p, const uint32_t *lengths,
                   size_t n, const bt_cost_model *m, uint64_t cap);

/* One step planned under a configuration, with what the checks need. */
typedef struct {
    brs_status status;
    char message[512]; /* brs_plan_last_error after the compute */
    bt_step step;
    uint32_t *desc;    /* the step's lengths, longest first */
    uint64_t *sorted;  /* the step's indices, ascending */
    u128 max_cost;     /* exact, recomputed from the lengths */
    double total_cost; /* BRS_PLAN_TOTAL_COST */
} bt_planned;

/* Plans step `step` of epoch 0 under c into p; when that succeeds, loads the
 * step and checks it with bt_check_step. False after CUnit failures. */
bool bt_plan_step(bt_planned *out, const bt_config *c, uint64_t step, brs_plan *p);
void bt_planned_free(bt_planned *pl);

/* ---- small utilities ------------------------------------------------------ */

typedef struct {
    uint64_t state;
} bt_rng;

uint64_t bt_rng_next(bt_rng *r);
uint64_t bt_rng_below(bt_rng *r, uint64_t n); /* uniform in [0, n) */
double bt_rng_normal(bt_rng *r);

/* lognormal(mu, sigma) rounded and clamped to [lo, hi]. */
uint32_t bt_lognormal(bt_rng *r, double mu, double sigma, uint32_t lo, uint32_t hi);
/* n lengths drawn lognormal(5, 1) in [16, 1024], upstream's benchmark
 * distribution, seeded (malloc'd). */
uint32_t *bt_lognormal_lengths(size_t n, uint64_t seed);

/* True when msg contains value as a whole decimal number. */
bool bt_has_number(const char *msg, uint64_t value);

double bt_plan_double(const brs_plan *p, brs_plan_key key);
int64_t bt_plan_int(const brs_plan *p, brs_plan_key key);

/* The description printed once with the first failure of a case. */
void bt_set_case(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void bt_print_case(void);

/* CU_ASSERT that prints the current case with its first failure. */
#define BT_CHECK_(ok, text)                                                              \
    do {                                                                                 \
        if (!(ok)) bt_print_case();                                                      \
        CU_assertImplementation((ok) ? CU_TRUE : CU_FALSE, __LINE__, text, __FILE__, "", \
                                CU_FALSE);                                               \
    } while (0)
#define BT_ASSERT(cond)           \
    do {                          \
        int bt_ok_ = !!(cond);    \
        BT_CHECK_(bt_ok_, #cond); \
    } while (0)
/* The same, returning false from the enclosing bool function on failure. */
#define BT_REQUIRE(cond)           \
    do {                           \
        int bt_ok_ = !!(cond);     \
        BT_CHECK_(bt_ok_, #cond);  \
        if (!bt_ok_) return false; \
    } while (0)

typedef struct {
    const char *name;
    void (*fn)(void);
} bt_test;

/* Runs a NULL-terminated list of tests as one CUnit suite; the exit status.
 * Arguments: "-t TEXT" runs only the tests whose name contains TEXT,
 * "-x TEXT" leaves them out (so meson can report some tests separately). */
int bt_run(const char *suite, const bt_test *tests, int argc, char **argv);

#endif /* BRS_TEST_H */
