/*
 * json.c - a strict JSON reader: recursive descent with a depth limit.
 *
 * Hand-written rather than a library such as jansson or cJSON: libbrs
 * depends on nothing but libc, and every binding reads the cost-model file
 * through it, so the rules of docs/formats.md live here once; the reader is
 * small and fuzzed (tests/fuzz/fuzz_cost_model.c).
 */
#include "formats/internal.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* MAX_MEMBERS bounds the pairwise duplicate check: a name is compared with
 * every earlier one of its object, so a huge object would be quadratic. */
enum { MAX_DEPTH = 64, MAX_MEMBERS = 1024 };

typedef struct name {
    const char *text;
    size_t length;
} name;

typedef struct cursor {
    const char *start, *at, *end;
    int depth;
    name *names; /* the member names of the objects being read, innermost last */
    size_t name_count, name_capacity;
    char *error;
    size_t error_size;
} cursor;

static int fail(cursor *c, const char *what)
{
    snprintf(c->error, c->error_size, "byte %zu: %s", (size_t)(c->at - c->start) + 1, what);
    return -1;
}

static void skip_space(cursor *c)
{
    while (c->at < c->end && (*c->at == ' ' || *c->at == '\t' || *c->at == '\n' || *c->at == '\r'))
        c->at++;
}

static int next_is(cursor *c, char byte)
{
    return c->at < c->end && *c->at == byte;
}

static int is_digit(cursor *c)
{
    return c->at < c->end && *c->at >= '0' && *c->at <= '9';
}

static int is_hex(char byte)
{
    return (byte >= '0' && byte <= '9') || (byte >= 'a' && byte <= 'f') ||
           (byte >= 'A' && byte <= 'F');
}

static int read_escape(cursor *c)
{
    c->at++; /* the backslash */
    if (c->at == c->end) return fail(c, "the text ends inside a string");
    if (*c->at == 'u') {
        for (int i = 1; i <= 4; i++)
            if (c->at + i >= c->end || !is_hex(c->at[i]))
                return fail(c, "\\u needs four hexadecimal digits");
        c->at += 5;
        return 0;
    }
    if (strchr("\"\\/bfnrt", *c->at) == NULL || *c->at == '\0')
        return fail(c, "an unknown escape in a string");
    c->at++;
    return 0;
}

/* The length of the UTF-8 sequence at text[0..available), or 0 when it is
 * not well formed (overlong, a surrogate, above U+10FFFF, cut short). */
static size_t utf8_length(const unsigned char *text, size_t available)
{
    unsigned char lead = text[0];
    size_t length = lead < 0x80   ? 1
                    : lead < 0xC2 ? 0
                    : lead < 0xE0 ? 2
                    : lead < 0xF0 ? 3
                    : lead < 0xF5 ? 4
                                  : 0;
    if (length == 0 || length > available) return 0;
    for (size_t i = 1; i < length; i++)
        if ((text[i] & 0xC0) != 0x80) return 0;
    /* The second byte's range rules out overlong forms and surrogates. */
    if ((lead == 0xE0 && text[1] < 0xA0) || (lead == 0xED && text[1] > 0x9F) ||
        (lead == 0xF0 && text[1] < 0x90) || (lead == 0xF4 && text[1] > 0x8F))
        return 0;
    return length;
}

/* A string; *inside and *length give the text between the quotes. */
static int read_string(cursor *c, const char **inside, size_t *length)
{
    c->at++; /* the opening quote */
    *inside = c->at;
    while (c->at < c->end && *c->at != '"') {
        if ((unsigned char)*c->at < 0x20) return fail(c, "a control character inside a string");
        if (*c->at == '\\') {
            if (read_escape(c) != 0) return -1;
        } else {
            size_t length = utf8_length((const unsigned char *)c->at, (size_t)(c->end - c->at));
            if (length == 0) return fail(c, "a byte that is not UTF-8 inside a string");
            c->at += length;
        }
    }
    if (c->at == c->end) return fail(c, "the text ends inside a string");
    *length = (size_t)(c->at - *inside);
    c->at++;
    return 0;
}

static uint32_t hex4(const char *text)
{
    uint32_t value = 0;
    for (int i = 0; i < 4; i++) {
        char h = text[i];
        value = value * 16 + (uint32_t)(h <= '9' ? h - '0' : (h | 0x20) - 'a' + 10);
    }
    return value;
}

/* The next code point of a checked string at *at, which moves past it. A
 * \uD8xx\uDCxx pair is one code point and a lone surrogate is itself, as
 * Python's json decodes them, so both readers see the same names. */
static uint32_t next_code_point(const char **at)
{
    const unsigned char *p = (const unsigned char *)*at;
    if (p[0] != '\\') {
        size_t length = p[0] < 0x80 ? 1 : p[0] < 0xE0 ? 2 : p[0] < 0xF0 ? 3 : 4;
        uint32_t value = length == 1 ? p[0] : p[0] & (0x7F >> length);
        for (size_t i = 1; i < length; i++) value = value << 6 | (p[i] & 0x3F);
        *at += length;
        return value;
    }
    *at += 2;
    switch (p[1]) {
    case 'b': return '\b';
    case 'f': return '\f';
    case 'n': return '\n';
    case 'r': return '\r';
    case 't': return '\t';
    case 'u': break;
    default: return p[1];
    }
    uint32_t high = hex4(*at);
    *at += 4;
    if (high >= 0xD800 && high <= 0xDBFF && (*at)[0] == '\\' && (*at)[1] == 'u') {
        uint32_t low = hex4(*at + 2);
        if (low >= 0xDC00 && low <= 0xDFFF) {
            *at += 6;
            return 0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00);
        }
    }
    return high;
}

int brs_json_string_equal(const char *a, size_t a_length, const char *b, size_t b_length)
{
    const char *a_end = a + a_length, *b_end = b + b_length;
    while (a < a_end && b < b_end)
        if (next_code_point(&a) != next_code_point(&b)) return 0;
    return a == a_end && b == b_end;
}

/* Record the name of a member of the object whose names start at base;
 * refuse one it already has. */
static int add_name(cursor *c, size_t base, const char *text, size_t length)
{
    for (size_t i = base; i < c->name_count; i++)
        if (brs_json_string_equal(c->names[i].text, c->names[i].length, text, length)) {
            char quoted[64], what[128];
            brs_text_escape(quoted, sizeof quoted, text, length);
            snprintf(what, sizeof what, "the member name \"%s\" appears twice in one object",
                     quoted);
            return fail(c, what);
        }
    if (c->name_count - base == MAX_MEMBERS) return fail(c, "an object has more than 1024 members");
    if (c->name_count == c->name_capacity) {
        size_t capacity = c->name_capacity ? 2 * c->name_capacity : 64;
        name *names = realloc(c->names, capacity * sizeof *names);
        if (names == NULL) return fail(c, "out of memory");
        c->names = names;
        c->name_capacity = capacity;
    }
    c->names[c->name_count++] = (name){text, length};
    return 0;
}

static int read_digits(cursor *c)
{
    if (!is_digit(c)) return fail(c, "a digit is missing in a number");
    while (is_digit(c)) c->at++;
    return 0;
}

static int read_number(cursor *c)
{
    if (next_is(c, '-')) c->at++;
    if (next_is(c, '0'))
        c->at++; /* no leading zeros: "01" stops after the 0 and fails later */
    else if (read_digits(c) != 0)
        return -1;
    if (next_is(c, '.')) {
        c->at++;
        if (read_digits(c) != 0) return -1;
    }
    if (next_is(c, 'e') || next_is(c, 'E')) {
        c->at++;
        if (next_is(c, '+') || next_is(c, '-')) c->at++;
        if (read_digits(c) != 0) return -1;
    }
    return 0;
}

static int read_literal(cursor *c, const char *word)
{
    size_t length = strlen(word);
    if ((size_t)(c->end - c->at) < length || memcmp(c->at, word, length) != 0)
        return fail(c, "not a JSON value");
    c->at += length;
    return 0;
}

static int read_value(cursor *c, brs_json_member *out);

/* The members of an object or the items of an array, up to `close`; each
 * member goes to visit when it is not NULL (the top level). */
static int read_items(cursor *c, char close, int keyed, brs_json_visit visit, void *context)
{
    if (++c->depth > MAX_DEPTH) return fail(c, "nested deeper than 64 levels");
    c->at++; /* the opening bracket */
    size_t base = c->name_count;
    skip_space(c);
    if (next_is(c, close)) {
        c->at++;
        c->depth--;
        return 0;
    }
    for (;;) {
        brs_json_member item;
        skip_space(c);
        if (keyed) {
            if (!next_is(c, '"')) return fail(c, "a member name (a string) is expected");
            const char *name_at = c->at;
            if (read_string(c, &item.key, &item.key_length) != 0) return -1;
            const char *after = c->at;
            c->at = name_at; /* a duplicate is reported at its name */
            if (add_name(c, base, item.key, item.key_length) != 0) return -1;
            c->at = after;
            skip_space(c);
            if (!next_is(c, ':')) return fail(c, "':' is expected after a member name");
            c->at++;
        }
        if (read_value(c, &item) != 0) return -1;
        int stop = visit != NULL ? visit(&item, context) : 0;
        if (stop != 0) return stop;
        skip_space(c);
        if (next_is(c, close)) {
            c->at++;
            c->depth--;
            c->name_count = base;
            return 0;
        }
        if (!next_is(c, ','))
            return fail(c, keyed ? "',' or '}' is expected" : "',' or ']' is expected");
        c->at++;
    }
}

static int read_value(cursor *c, brs_json_member *out)
{
    skip_space(c);
    if (c->at == c->end) return fail(c, "a value is missing");
    const char *begin = c->at;
    int status;
    switch (*c->at) {
    case '{':
        out->kind = BRS_JSON_OBJECT;
        status = read_items(c, '}', 1, NULL, NULL);
        break;
    case '[':
        out->kind = BRS_JSON_ARRAY;
        status = read_items(c, ']', 0, NULL, NULL);
        break;
    case '"': out->kind = BRS_JSON_STRING; return read_string(c, &out->value, &out->value_length);
    case 't':
        out->kind = BRS_JSON_TRUE;
        status = read_literal(c, "true");
        break;
    case 'f':
        out->kind = BRS_JSON_FALSE;
        status = read_literal(c, "false");
        break;
    case 'n':
        out->kind = BRS_JSON_NULL;
        status = read_literal(c, "null");
        break;
    default:
        if (*c->at != '-' && !(*c->at >= '0' && *c->at <= '9')) return fail(c, "not a JSON value");
        out->kind = BRS_JSON_NUMBER;
        status = read_number(c);
        break;
    }
    out->value = begin;
    out->value_length = (size_t)(c->at - begin);
    return status;
}

int brs_json_object_each(const char *text, size_t size, brs_json_visit visit, void *context,
                         char *error, size_t error_size)
{
    cursor c = {text, text, text + size, 0, NULL, 0, 0, error, error_size};
    if (size >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0)
        c.at += 3; /* a byte-order mark, as some Windows editors write */
    skip_space(&c);
    int status;
    if (!next_is(&c, '{'))
        status = fail(&c, "the file must hold one JSON object ({...})");
    else
        status = read_items(&c, '}', 1, visit, context);
    skip_space(&c);
    if (status == 0 && c.at != c.end) status = fail(&c, "text after the JSON object");
    free(c.names);
    return status;
}
