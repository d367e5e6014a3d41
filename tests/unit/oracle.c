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
    if (cap && (u128)bs * longest > cap) return INF;
    return bt_cost_padded(m, bs, longest);
}

/* Shared DP over contiguous splits: f[j][i] is the best value of splitting
 * desc[0..i) into j groups, where a split's value combines its groups' costs
 * by max (min-max) or by sum (min-total, groups above limit forbidden). */
static bool contiguous_dp_row(u128 *best, u128 *row, const uint32_t *desc, size_t b, size_t k,
                              const bt_cost_model *m, uint64_t cap, bool by_sum, u128 limit)
{
    if (k == 0 || b < k) return false;
    u128 *prev = malloc((b + 1) * sizeof *prev), *cur = malloc((b + 1) * sizeof *cur);
    for (size_t i = 0; i <= b; i++) prev[i] = i == 0 ? 0 : INF;
    for (size_t j = 1; j <= k; j++) {
        for (size_t i = 0; i <= b; i++) {
            cur[i] = INF;
            for (size_t p = j - 1; p + 1 <= i; p++) {
                u128 c = group_cost(desc, p, i, m, cap);
                if (prev[p] == INF || c == INF || c > limit) continue;
                u128 v = by_sum ? prev[p] + c : (prev[p] > c ? prev[p] : c);
                if (v < cur[i]) cur[i] = v;
            }
        }
        u128 *t = prev;
        prev = cur;
        cur = t;
    }
    *best = prev[b];
    if (row) /* every prefix desc[0..i) into k groups */
        memcpy(row, prev, (b + 1) * sizeof *row);
    bool ok = prev[b] != INF;
    free(prev);
    free(cur);
    return ok;
}

static bool contiguous_dp(u128 *best, const uint32_t *desc, size_t b, size_t k,
                          const bt_cost_model *m, uint64_t cap, bool by_sum, u128 limit)
{
    return contiguous_dp_row(best, NULL, desc, b, k, m, cap, by_sum, limit);
}

/* Layers are contiguous slices, each split at its own min-max into dp
 * groups within the budget; a layering's time is the sum of those. The
 * layer times come from one min-max DP per start (all its ends at once),
 * the layering from a DP over every cut. */
bool bt_oracle_best_layered(u128 *best, const uint32_t *desc, size_t b, size_t k, size_t dp,
                            const bt_cost_model *m, uint64_t budget)
{
    size_t ga = k / dp, w = b + 1;
    u128 *time = malloc(w * w * sizeof *time), *f = malloc((ga + 1) * w * sizeof *f), unused;
    for (size_t a = 0; a <= b; a++) {
        for (size_t i = 0; i <= b - a; i++) time[a * w + i] = INF;
        if (b - a >= dp)
            contiguous_dp_row(&unused, time + a * w, desc + a, b - a, dp, m, budget, false, INF);
    }
    for (size_t i = 0; i <= b; i++) f[i] = i == 0 ? 0 : INF;
    for (size_t j = 1; j <= ga; j++)
        for (size_t i = 0; i <= b; i++) {
            u128 *cur = &f[j * w + i];
            *cur = INF;
            for (size_t a = 0; a < i; a++) {
                u128 before = f[(j - 1) * w + a], t = time[a * w + (i - a)];
                if (before != INF && t != INF && before + t < *cur) *cur = before + t;
            }
        }
    *best = f[ga * w + b];
    free(time);
    free(f);
    return *best != INF;
}

bool bt_oracle_min_max(u128 *best, const uint32_t *desc, size_t b, size_t k, const bt_cost_model *m,
                       uint64_t cap)
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
        if (limit < m->intercept_micro + per_sample || (cap && longest > cap)) return UINT64_MAX;
        u128 bs = limit == INF ? (u128)b : (limit - m->intercept_micro) / per_sample;
        if (cap && bs > cap / longest) bs = cap / longest;
        if (bs > b - i) bs = b - i;
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
    if (!bs->cap) return true;
    if (bs->m->packed) return bs->sum[g] + l <= bs->cap;
    uint64_t longest = l > bs->longest[g] ? l : bs->longest[g];
    return (bs->count[g] + 1) * longest <= bs->cap;
}

/* Item i goes to an open group or opens the next one (restricted growth
 * strings: every set partition exactly once). */
static void brute_visit(brute_search *bs, size_t i, size_t used)
{
    if (bs->b - i < bs->k - used) return; /* too few items left to fill the remaining groups */
    if (i == bs->b) {
        u128 worst = 0;
        for (size_t g = 0; g < used; g++) {
            u128 c = brute_group_cost(bs, g);
            worst = c > worst ? c : worst;
        }
        if (!bs->found || worst < bs->best) bs->best = worst;
        bs->found = true;
        return;
    }
    uint64_t l = bs->len[i];
    size_t open = used < bs->k ? used + 1 : used;
    for (size_t g = 0; g < open; g++) {
        if (!brute_fits(bs, g, l)) continue;
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

bool bt_brute_min_max(u128 *best, const uint32_t *len, size_t b, size_t k, const bt_cost_model *m,
                      uint64_t cap)
{
    BT_REQUIRE(b <= 10); /* the enumeration is exponential in b */
    if (k == 0 || k > 16 || b < k) return false;
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
    for (size_t m = 0; m < k / dp; m++) sum += costs[m * dp];
    return sum;
}

static void sync_visit(sync_search *ss, size_t from, size_t groups, u128 total)
{
    if (groups == ss->k) {
        if (from != ss->b || total != ss->total) return;
        u128 copy[BT_SYNC_MAX_SAMPLES];
        memcpy(copy, ss->costs, ss->k * sizeof *copy);
        u128 micro = micro_sync_of(copy, ss->k, ss->dp);
        if (!ss->found || micro > ss->worst) ss->worst = micro;
        ss->found = true;
        return;
    }
    size_t groups_after = ss->k - groups - 1;
    for (size_t to = from + 1; to + groups_after <= ss->b; to++) {
        u128 c = group_cost(ss->desc, from, to, ss->m, ss->cap);
        if (c == INF || c > ss->limit || total + c > ss->total) continue;
        ss->costs[groups] = c;
        sync_visit(ss, to, groups + 1, total + c);
    }
}

bool bt_oracle_worst_sync_of_least_total(u128 *worst, const uint32_t *desc, size_t b, size_t k,
                                         size_t dp, const bt_cost_model *m, uint64_t cap,
                                         u128 limit, u128 least_total)
{
    if (b > BT_SYNC_MAX_SAMPLES) return false;
    sync_search ss = {desc, b, k, dp, m, cap, limit, least_total, 0, {0}, false};
    sync_visit(&ss, 0, 0, 0);
    *worst = ss.worst;
    return ss.found;
}

/* ---- the objective: step time, then peak, then total (tiny steps) -------- */

/* The peak padded tokens of the least-total split among those of max cost
 * <= limit, ties to the leftmost best start of each group (the planner's
 * least-total search takes the same one). */
static bool least_total_peak(uint64_t *peak, const uint32_t *desc, size_t b, size_t k,
                             const bt_cost_model *m, uint64_t cap, u128 limit)
{
    u128 *f = malloc((k + 1) * (b + 1) * sizeof *f);
    size_t *from = malloc((k + 1) * (b + 1) * sizeof *from);
    for (size_t i = 0; i <= b; i++) f[i] = i == 0 ? 0 : INF;
    for (size_t j = 1; j <= k; j++)
        for (size_t i = 0; i <= b; i++) {
            u128 best = INF;
            size_t arg = 0;
            for (size_t p = j - 1; p < i; p++) {
                u128 c = group_cost(desc, p, i, m, cap);
                u128 before = f[(j - 1) * (b + 1) + p];
                if (before == INF || c == INF || c > limit || before + c >= best) continue;
                best = before + c;
                arg = p;
            }
            f[j * (b + 1) + i] = best;
            from[j * (b + 1) + i] = arg;
        }
    bool ok = f[k * (b + 1) + b] != INF;
    *peak = 0;
    for (size_t j = k, i = b; ok && j > 0; j--) {
        size_t p = from[j * (b + 1) + i];
        uint64_t tokens = (uint64_t)(i - p) * desc[p];
        *peak = tokens > *peak ? tokens : *peak;
        i = p;
    }
    free(f);
    free(from);
    return ok;
}

bool bt_oracle_budget(uint64_t *budget, const uint32_t *desc, size_t b, size_t k,
                      const bt_cost_model *m, uint64_t cap)
{
    u128 best = 0;
    if (!bt_oracle_min_max(&best, desc, b, k, m, cap)) return false;
    if (cap) {
        *budget = cap;
        return true;
    }
    return least_total_peak(budget, desc, b, k, m, cap, best);
}

typedef struct {
    size_t k, dp, ga;
    int sync;
    u128 costs[BT_PLAN_MAX_GROUPS];
    u128 box_load[BT_PLAN_MAX_GROUPS], box_max[BT_PLAN_MAX_GROUPS];
    size_t box_count[BT_PLAN_MAX_GROUPS];
    u128 best;
} deal_search;

/* Every deal up to symmetry: per-micro-step sync, boxes are micro-steps of
 * dp groups (time: sum of box maxima); per-step sync, boxes are ranks of ga
 * groups (time: the largest box sum). Neither time depends on the order
 * inside a box or of the boxes. */
static void deal_visit(deal_search *d, size_t g)
{
    size_t boxes = d->sync ? d->dp : d->ga, room = d->sync ? d->ga : d->dp;
    if (g == d->k) {
        u128 t = 0;
        for (size_t x = 0; x < boxes; x++) {
            u128 v = d->sync ? d->box_load[x] : d->box_max[x];
            t = d->sync ? (v > t ? v : t) : t + v;
        }
        d->best = t < d->best ? t : d->best;
        return;
    }
    for (size_t x = 0; x < boxes; x++) {
        if (d->box_count[x] == room) continue;
        u128 load = d->box_load[x], max = d->box_max[x];
        d->box_load[x] += d->costs[g];
        d->box_max[x] = d->costs[g] > max ? d->costs[g] : max;
        d->box_count[x]++;
        deal_visit(d, g + 1);
        d->box_count[x]--;
        d->box_load[x] = load;
        d->box_max[x] = max;
        if (d->box_count[x] == 0) break; /* empty boxes are interchangeable */
    }
}

typedef struct {
    const uint32_t *desc;
    size_t b, k, dp;
    int sync;
    const bt_cost_model *m;
    uint64_t budget;
    const uint64_t *vocabulary; /* pairs (size, length), or NULL: every group its head's */
    size_t vocabulary_count;
    uint64_t cap;
    size_t starts[BT_PLAN_MAX_GROUPS + 1];
    bt_score best;
    bool found;
} plan_search;

/* The length group [from, to) runs at: its head's, or the shortest
 * vocabulary length of its size that holds the head (0: none, or above the
 * cap). */
static uint64_t run_length(const plan_search *ps, size_t from, size_t to)
{
    uint64_t head = ps->desc[from], size = to - from, best = 0;
    if (!ps->vocabulary) return head;
    for (size_t i = 0; i < ps->vocabulary_count; i++) {
        uint64_t s = ps->vocabulary[2 * i], l = ps->vocabulary[2 * i + 1];
        if (s == size && l >= head && (best == 0 || l < best)) best = l;
    }
    if (ps->cap && best * size > ps->cap) return 0;
    return best;
}

static void split_done(plan_search *ps)
{
    deal_search d = {.k = ps->k, .dp = ps->dp, .ga = ps->k / ps->dp, .sync = ps->sync, .best = INF};
    bt_score s = {0, 0, 0};
    for (size_t g = 0; g < ps->k; g++) {
        size_t from = ps->starts[g], to = ps->starts[g + 1];
        uint64_t length = run_length(ps, from, to);
        if (length == 0) return; /* no shape holds this group */
        d.costs[g] = bt_cost_padded(ps->m, to - from, length);
        uint64_t tokens = (uint64_t)(to - from) * length;
        s.peak = tokens > s.peak ? tokens : s.peak;
        s.total += d.costs[g];
    }
    deal_visit(&d, 0);
    s.time = d.best;
    bool better =
        !ps->found || s.time < ps->best.time ||
        (s.time == ps->best.time &&
         (s.peak < ps->best.peak || (s.peak == ps->best.peak && s.total < ps->best.total)));
    if (better) ps->best = s;
    ps->found = true;
}

static void split_visit(plan_search *ps, size_t g)
{
    size_t from = ps->starts[g], after = ps->k - g - 1;
    for (size_t to = from + 1; to + after <= ps->b; to++) {
        if (after == 0 && to != ps->b) continue;
        if ((uint64_t)(to - from) * ps->desc[from] > ps->budget) break;
        ps->starts[g + 1] = to;
        if (after == 0)
            split_done(ps);
        else
            split_visit(ps, g + 1);
    }
}

bool bt_oracle_best_plan(bt_score *best, const uint32_t *desc, size_t b, size_t k, size_t dp,
                         int sync, const bt_cost_model *m, uint64_t budget)
{
    BT_REQUIRE(k <= BT_PLAN_MAX_GROUPS && b <= BT_PLAN_MAX_SAMPLES);
    plan_search ps = {
        .desc = desc, .b = b, .k = k, .dp = dp, .sync = sync, .m = m, .budget = budget};
    ps.starts[0] = 0;
    if (b >= k && k > 0) split_visit(&ps, 0);
    *best = ps.best;
    return ps.found;
}

bool bt_oracle_best_vocabulary_plan(bt_score *best, const uint32_t *desc, size_t b, size_t k,
                                    size_t dp, int sync, const bt_cost_model *m, uint64_t cap,
                                    const uint64_t *vocabulary, size_t vocabulary_count)
{
    BT_REQUIRE(k <= BT_PLAN_MAX_GROUPS && b <= BT_PLAN_MAX_SAMPLES);
    plan_search ps = {.desc = desc,
                      .b = b,
                      .k = k,
                      .dp = dp,
                      .sync = sync,
                      .m = m,
                      .budget = UINT64_MAX,
                      .vocabulary = vocabulary,
                      .vocabulary_count = vocabulary_count,
                      .cap = cap};
    ps.starts[0] = 0;
    if (b >= k && k > 0) split_visit(&ps, 0);
    *best = ps.best;
    return ps.found;
}

bool bt_oracle_min_peak(uint64_t *peak, const uint32_t *desc, size_t b, size_t k,
                        const bt_cost_model *m, uint64_t cap, u128 limit)
{
    /* f[j][i]: the least peak of j groups over desc[0..i), each costing
     * <= limit within cap */
    uint64_t none = UINT64_MAX;
    uint64_t *f = malloc((k + 1) * (b + 1) * sizeof *f);
    for (size_t i = 0; i <= b; i++) f[i] = i == 0 ? 0 : none;
    for (size_t j = 1; j <= k; j++)
        for (size_t i = 0; i <= b; i++) {
            uint64_t best = none;
            for (size_t p = j - 1; p < i; p++) {
                u128 c = group_cost(desc, p, i, m, cap);
                uint64_t before = f[(j - 1) * (b + 1) + p];
                if (before == none || c == INF || c > limit) continue;
                uint64_t tokens = (uint64_t)(i - p) * desc[p];
                uint64_t v = tokens > before ? tokens : before;
                best = v < best ? v : best;
            }
            f[j * (b + 1) + i] = best;
        }
    *peak = f[k * (b + 1) + b];
    free(f);
    return *peak != none;
}

/* ---- packed: the multiway Karmarkar-Karp heuristic, plainly -------------- */

/* Every tuple holds all k subsets (empty ones as sum 0, owner BT_KK_NONE),
 * members as a bit set; the library's version is written independently. */
#define BT_KK_NONE SIZE_MAX
typedef struct {
    u128 sum;
    uint64_t members, tokens;
    size_t low; /* smallest sample index, BT_KK_NONE when empty */
} kk_subset;

typedef struct {
    kk_subset s[BT_KK_MAX_GROUPS];
    bool alive;
} kk_tuple;

static bool kk_subset_before(const kk_subset *a, const kk_subset *b)
{
    if (a->sum != b->sum) return a->sum > b->sum;
    return a->low < b->low;
}

static void kk_sort(kk_subset *s, size_t k)
{
    for (size_t i = 1; i < k; i++)
        for (size_t j = i; j > 0 && kk_subset_before(&s[j], &s[j - 1]); j--) {
            kk_subset t = s[j];
            s[j] = s[j - 1];
            s[j - 1] = t;
        }
}

static size_t kk_name(const kk_tuple *t, size_t k)
{
    size_t low = BT_KK_NONE;
    for (size_t g = 0; g < k; g++) low = t->s[g].low < low ? t->s[g].low : low;
    return low;
}

/* The live tuple of largest spread, ties by the smallest sample it holds. */
static size_t kk_pick(const kk_tuple *t, size_t count, size_t k, size_t skip)
{
    size_t best = BT_KK_NONE;
    for (size_t i = 0; i < count; i++) {
        if (!t[i].alive || i == skip) continue;
        if (best == BT_KK_NONE) {
            best = i;
            continue;
        }
        u128 a = t[i].s[0].sum - t[i].s[k - 1].sum, b = t[best].s[0].sum - t[best].s[k - 1].sum;
        if (a > b || (a == b && kk_name(&t[i], k) < kk_name(&t[best], k))) best = i;
    }
    return best;
}

bool bt_oracle_karmarkar_karp(u128 *costs, uint64_t *tokens, const uint32_t *desc, size_t b,
                              size_t k, const bt_cost_model *m)
{
    if (k == 0 || k > BT_KK_MAX_GROUPS || b > BT_KK_MAX_SAMPLES || b < k) return false;
    kk_tuple *t = calloc(b, sizeof *t);
    if (!t) return false;
    for (size_t i = 0; i < b; i++) {
        t[i].alive = true;
        for (size_t g = 0; g < k; g++) t[i].s[g].low = BT_KK_NONE;
        t[i].s[0] =
            (kk_subset){bt_cost_packed(m, desc[i], (u128)desc[i] * desc[i]) - m->intercept_micro,
                        (uint64_t)1 << i, desc[i], i};
    }
    for (size_t left = b; left > 1; left--) {
        size_t x = kk_pick(t, b, k, BT_KK_NONE), y = kk_pick(t, b, k, x);
        for (size_t g = 0; g < k; g++) {
            kk_subset *into = &t[x].s[g];
            const kk_subset *from = &t[y].s[k - 1 - g];
            into->sum += from->sum;
            into->members |= from->members;
            into->tokens += from->tokens;
            into->low = from->low < into->low ? from->low : into->low;
        }
        kk_sort(t[x].s, k);
        t[y].alive = false;
    }
    size_t last = kk_pick(t, b, k, BT_KK_NONE);
    for (size_t g = 0; g < k; g++) {
        costs[g] = m->intercept_micro + t[last].s[g].sum;
        tokens[g] = t[last].s[g].tokens;
    }
    free(t);
    return true;
}
