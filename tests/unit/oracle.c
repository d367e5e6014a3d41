/* oracle.c - exact references the planner is checked against. */
#include "brs_test.h"

#include <stdlib.h>
#include <string.h>

#define INF BT_NO_LIMIT

/* Cost of the group desc[from..to), or INF when it breaks the cap. */
static u128 group_cost(const uint32_t *desc, size_t from, size_t to, const bt_cost_model *m,
                       uint64_t cap)
{
    uint64_t bs = to - from, longest = desc[from];
    if (cap && (u128)bs * longest > cap)
        return INF;
    return bt_cost_padded(m, bs, longest);
}

/* Shared DP over contiguous splits: f[j][i] is the best value of splitting
 * desc[0..i) into j groups, where a split's value combines its groups' costs
 * by max (min-max) or by sum (min-total, groups above limit forbidden). */
static bool contiguous_dp(u128 *best, const uint32_t *desc, size_t b, size_t k,
                          const bt_cost_model *m, uint64_t cap, bool by_sum, u128 limit)
{
    if (k == 0 || b < k)
        return false;
    u128 *prev = malloc((b + 1) * sizeof *prev), *cur = malloc((b + 1) * sizeof *cur);
    for (size_t i = 0; i <= b; i++)
        prev[i] = i == 0 ? 0 : INF;
    for (size_t j = 1; j <= k; j++) {
        for (size_t i = 0; i <= b; i++) {
            cur[i] = INF;
            for (size_t p = j - 1; p + 1 <= i; p++) {
                u128 c = group_cost(desc, p, i, m, cap);
                if (prev[p] == INF || c == INF || c > limit)
                    continue;
                u128 v = by_sum ? prev[p] + c : (prev[p] > c ? prev[p] : c);
                if (v < cur[i])
                    cur[i] = v;
            }
        }
        u128 *t = prev;
        prev = cur;
        cur = t;
    }
    *best = prev[b];
    bool ok = prev[b] != INF;
    free(prev);
    free(cur);
    return ok;
}

bool bt_oracle_min_max(u128 *best, const uint32_t *desc, size_t b, size_t k,
                       const bt_cost_model *m, uint64_t cap)
{
    return contiguous_dp(best, desc, b, k, m, cap, false, INF);
}

bool bt_oracle_min_total(u128 *best, const uint32_t *desc, size_t b, size_t k,
                         const bt_cost_model *m, uint64_t cap, u128 limit)
{
    return contiguous_dp(best, desc, b, k, m, cap, true, limit);
}

uint64_t bt_greedy_groups(const uint32_t *desc, size_t b, const bt_cost_model *m, u128 limit,
                          uint64_t cap)
{
    uint64_t groups = 0;
    for (size_t i = 0; i < b; groups++) {
        uint64_t longest = desc[i];
        /* cost(bs, L) = intercept + bs * per_sample: the largest bs within
         * limit is a division, so the walk is O(groups). */
        u128 per_sample = bt_cost_padded(m, 1, longest) - m->intercept_micro;
        if (limit < m->intercept_micro + per_sample || (cap && longest > cap))
            return UINT64_MAX;
        u128 bs = limit == INF ? (u128)b : (limit - m->intercept_micro) / per_sample;
        if (cap && bs > cap / longest)
            bs = cap / longest;
        if (bs > b - i)
            bs = b - i;
        i += (size_t)bs;
    }
    return groups;
}

bool bt_threshold_optimal(const uint32_t *desc, size_t b, size_t k, const bt_cost_model *m,
                          uint64_t cap, u128 max)
{
    BT_REQUIRE(bt_greedy_groups(desc, b, m, max, cap) <= k);
    BT_REQUIRE(max == 0 || bt_greedy_groups(desc, b, m, max - 1, cap) > k);
    return true;
}

typedef struct {
    const uint32_t *len;
    size_t b, k;
    const bt_cost_model *m;
    uint64_t cap;
    uint64_t sum[16], count[16], longest[16];
    u128 sq[16];
    u128 best;
    bool found;
} brute_search;

static u128 brute_group_cost(const brute_search *bs, size_t g)
{
    return bs->m->packed ? bt_cost_packed(bs->m, bs->sum[g], bs->sq[g])
                         : bt_cost_padded(bs->m, bs->count[g], bs->longest[g]);
}

/* Whether group g stays within the cap with one more sample of length l. */
static bool brute_fits(const brute_search *bs, size_t g, uint64_t l)
{
    if (!bs->cap)
        return true;
    if (bs->m->packed)
        return bs->sum[g] + l <= bs->cap;
    uint64_t longest = l > bs->longest[g] ? l : bs->longest[g];
    return (bs->count[g] + 1) * longest <= bs->cap;
}

/* Item i goes to an open group or opens the next one (restricted growth
 * strings: every set partition exactly once). */
static void brute_visit(brute_search *bs, size_t i, size_t used)
{
    if (bs->b - i < bs->k - used)
        return; /* too few items left to fill the remaining groups */
    if (i == bs->b) {
        u128 worst = 0;
        for (size_t g = 0; g < used; g++) {
            u128 c = brute_group_cost(bs, g);
            worst = c > worst ? c : worst;
        }
        if (!bs->found || worst < bs->best)
            bs->best = worst;
        bs->found = true;
        return;
    }
    uint64_t l = bs->len[i];
    size_t open = used < bs->k ? used + 1 : used;
    for (size_t g = 0; g < open; g++) {
        if (!brute_fits(bs, g, l))
            continue;
        uint64_t longest = bs->longest[g];
        bs->sum[g] += l;
        bs->sq[g] += (u128)l * l;
        bs->count[g]++;
        bs->longest[g] = l > longest ? l : longest;
        brute_visit(bs, i + 1, g == used ? used + 1 : used);
        bs->sum[g] -= l;
        bs->sq[g] -= (u128)l * l;
        bs->count[g]--;
        bs->longest[g] = longest;
    }
}

bool bt_brute_min_max(u128 *best, const uint32_t *len, size_t b, size_t k,
                      const bt_cost_model *m, uint64_t cap)
{
    BT_REQUIRE(b <= 10); /* the enumeration is exponential in b */
    if (k == 0 || k > 16 || b < k)
        return false;
    brute_search bs = {.len = len, .b = b, .k = k, .m = m, .cap = cap};
    brute_visit(&bs, 0, 0);
    *best = bs.best;
    return bs.found;
}

/* ---- the synchronised step of least-total splits (tiny steps) ------------ */

typedef struct {
    const uint32_t *desc;
    size_t b, k, dp;
    const bt_cost_model *m;
    uint64_t cap;
    u128 limit, total, worst;
    u128 costs[BT_SYNC_MAX_SAMPLES];
    bool found;
} sync_search;

/* Sum over micro-steps of the slowest rank, groups dealt by cost (snake). */
static u128 micro_sync_of(u128 *costs, size_t k, size_t dp)
{
    for (size_t i = 1; i < k; i++)
        for (size_t j = i; j > 0 && costs[j - 1] < costs[j]; j--) {
            u128 t = costs[j];
            costs[j] = costs[j - 1];
            costs[j - 1] = t;
        }
    u128 sum = 0;
    for (size_t m = 0; m < k / dp; m++)
        sum += costs[m * dp];
    return sum;
}

static void sync_visit(sync_search *ss, size_t from, size_t groups, u128 total)
{
    if (groups == ss->k) {
        if (from != ss->b || total != ss->total)
            return;
        u128 copy[BT_SYNC_MAX_SAMPLES];
        memcpy(copy, ss->costs, ss->k * sizeof *copy);
        u128 micro = micro_sync_of(copy, ss->k, ss->dp);
        if (!ss->found || micro > ss->worst)
            ss->worst = micro;
        ss->found = true;
        return;
    }
    size_t groups_after = ss->k - groups - 1;
    for (size_t to = from + 1; to + groups_after <= ss->b; to++) {
        u128 c = group_cost(ss->desc, from, to, ss->m, ss->cap);
        if (c == INF || c > ss->limit || total + c > ss->total)
            continue;
        ss->costs[groups] = c;
        sync_visit(ss, to, groups + 1, total + c);
    }
}

bool bt_oracle_worst_sync_of_least_total(u128 *worst, const uint32_t *desc, size_t b, size_t k,
                                         size_t dp, const bt_cost_model *m, uint64_t cap,
                                         u128 limit, u128 least_total)
{
    if (b > BT_SYNC_MAX_SAMPLES)
        return false;
    sync_search ss = {desc, b, k, dp, m, cap, limit, least_total, 0, {0}, false};
    sync_visit(&ss, 0, 0, 0);
    *worst = ss.worst;
    return ss.found;
}
