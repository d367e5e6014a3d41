/* bin_packing.c - packed mode's cap is bin packing: the count of groups a
 * bound proves necessary, first-fit decreasing, and for small steps an
 * exact search for any packing and for the fewest groups that pack. LPT
 * (lpt.c) falls back on them where it misses a packing under the cap, and
 * the packed planner names the fewest groups when the cap cannot be met. */
#include "planner/bin_packing.h"
#include "util/wide.h"

#include <stdlib.h>

size_t brs_bin_packing_bound(const uint32_t *lengths, size_t n, uint64_t cap)
{
    brs_wide tokens = 0;
    size_t over_half = 0;
    for (size_t i = 0; i < n; i++) {
        tokens += lengths[i];
        if ((uint64_t)lengths[i] * 2 > cap) over_half++;
    }
    size_t by_tokens = (size_t)((tokens + cap - 1) / cap);
    return by_tokens > over_half ? by_tokens : over_half;
}

/* First-fit decreasing, the second try when LPT misses a packing under the
 * cap: each sample (longest first) to the lowest-numbered group with room,
 * found in O(log k) by a max tree of the room left. Groups left empty then
 * take a sample from a group holding several (room only grows there). */
struct room_tree {
    uint64_t *room; /* 2 * size nodes; leaves at size + g */
    size_t size;
};

static void room_set(struct room_tree *t, size_t g, uint64_t room)
{
    size_t i = t->size + g;
    t->room[i] = room;
    for (i /= 2; i >= 1; i /= 2)
        t->room[i] = t->room[2 * i] > t->room[2 * i + 1] ? t->room[2 * i] : t->room[2 * i + 1];
}

static size_t room_first_fit(const struct room_tree *t, uint64_t need)
{
    if (t->room[1] < need) return SIZE_MAX;
    size_t i = 1;
    while (i < t->size) i = t->room[2 * i] >= need ? 2 * i : 2 * i + 1;
    return i - t->size;
}

static void fill_empty_groups(uint32_t *group_of, size_t k, size_t *count)
{
    size_t donor = 0;
    for (size_t g = 0; g < k; g++) {
        if (count[g] > 0) continue;
        while (count[group_of[donor]] < 2) donor++; /* n >= k: a donor exists */
        count[group_of[donor]]--;
        group_of[donor] = (uint32_t)g;
        count[g] = 1;
    }
}

int brs_bin_packing_first_fit(uint32_t *group_of, const uint32_t *lengths, size_t n, size_t k,
                              uint64_t cap)
{
    struct room_tree t = {NULL, 1};
    while (t.size < k) t.size *= 2;
    t.room = calloc(2 * t.size, sizeof *t.room);
    size_t *count = calloc(k, sizeof *count);
    int packed = t.room && count;
    for (size_t g = 0; packed && g < k; g++) room_set(&t, g, cap);
    for (size_t i = 0; packed && i < n; i++) {
        size_t g = room_first_fit(&t, lengths[i]);
        if (g == SIZE_MAX) {
            packed = 0;
            break;
        }
        group_of[i] = (uint32_t)g;
        count[g]++;
        room_set(&t, g, t.room[t.size + g] - lengths[i]);
    }
    if (packed) fill_empty_groups(group_of, k, count);
    free(t.room);
    free(count);
    return packed;
}

/* When LPT misses a packing under the cap, a depth-first search over
 * placements (longest first; groups of equal tokens are interchangeable, so
 * only the first is tried) settles small steps exactly. */
enum { SEARCH_MAX_SAMPLES = 256, SEARCH_MAX_NODES = 200000 };

struct search {
    const uint32_t *lengths;
    size_t n, k, empty, nodes;
    uint64_t cap, *tokens;
    uint32_t *group_of;
};

/* 1: packed, 0: proven impossible, -1: gave up. */
static int search_from(struct search *s, size_t i)
{
    if (i == s->n) return 1;
    if (s->n - i < s->empty) return 0; /* every group needs a sample */
    if (++s->nodes > SEARCH_MAX_NODES) return -1;
    for (size_t g = 0; g < s->k; g++) {
        if (s->tokens[g] + s->lengths[i] > s->cap) continue;
        size_t twin = 0;
        while (twin < g && s->tokens[twin] != s->tokens[g]) twin++;
        if (twin < g) continue;
        s->empty -= s->tokens[g] == 0;
        s->tokens[g] += s->lengths[i];
        s->group_of[i] = (uint32_t)g;
        int found = search_from(s, i + 1);
        s->tokens[g] -= s->lengths[i];
        s->empty += s->tokens[g] == 0;
        if (found != 0) return found;
    }
    return 0;
}

int brs_bin_packing_search(uint32_t *group_of, const uint32_t *lengths, size_t n, size_t k,
                           uint64_t cap)
{
    if (n > SEARCH_MAX_SAMPLES) return -1;
    uint64_t *tokens = calloc(k, sizeof *tokens);
    if (!tokens) return -1;
    struct search s = {lengths, n, k, k, 0, cap, tokens, group_of};
    int found = search_from(&s, 0);
    free(tokens);
    return found;
}

size_t brs_bin_packing_fewest_groups(uint32_t *group_of, const uint32_t *lengths, size_t n,
                                     size_t k, uint64_t cap)
{
    for (size_t groups = k + 1; groups <= n; groups++) {
        int found = brs_bin_packing_search(group_of, lengths, n, groups, cap);
        if (found == 1) return groups;
        if (found < 0) return 0;
    }
    return n;
}
