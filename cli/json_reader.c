/* json_reader.c - recursive descent with a depth limit. */
#include "json_reader.h"

#include <stdio.h>
#include <string.h>

enum { MAX_DEPTH = 64 };

typedef struct cursor {
    const char *start, *at, *end;
    int depth;
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

static int next_is(cursor *c, char byte) { return c->at < c->end && *c->at == byte; }

static int is_digit(cursor *c) { return c->at < c->end && *c->at >= '0' && *c->at <= '9'; }

static int is_hex(char byte)
{
    return (byte >= '0' && byte <= '9') || (byte >= 'a' && byte <= 'f') ||
           (byte >= 'A' && byte <= 'F');
}

static int read_escape(cursor *c)
{
    c->at++; /* the backslash */
    if (c->at == c->end)
        return fail(c, "the text ends inside a string");
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

/* A string; *inside and *length give the text between the quotes. */
static int read_string(cursor *c, const char **inside, size_t *length)
{
    c->at++; /* the opening quote */
    *inside = c->at;
    while (c->at < c->end && *c->at != '"') {
        if ((unsigned char)*c->at < 0x20)
            return fail(c, "a control character inside a string");
        if (*c->at == '\\') {
            if (read_escape(c) != 0)
                return -1;
        } else {
            c->at++;
        }
    }
    if (c->at == c->end)
        return fail(c, "the text ends inside a string");
    *length = (size_t)(c->at - *inside);
    c->at++;
    return 0;
}

static int read_digits(cursor *c)
{
    if (!is_digit(c))
        return fail(c, "a digit is missing in a number");
    while (is_digit(c))
        c->at++;
    return 0;
}

static int read_number(cursor *c)
{
    if (next_is(c, '-'))
        c->at++;
    if (next_is(c, '0'))
        c->at++; /* no leading zeros: "01" stops after the 0 and fails later */
    else if (read_digits(c) != 0)
        return -1;
    if (next_is(c, '.')) {
        c->at++;
        if (read_digits(c) != 0)
            return -1;
    }
    if (next_is(c, 'e') || next_is(c, 'E')) {
        c->at++;
        if (next_is(c, '+') || next_is(c, '-'))
            c->at++;
        if (read_digits(c) != 0)
            return -1;
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

static int read_value(cursor *c, json_member *out);

/* The members of an object or the items of an array, up to `close`; each
 * member goes to visit when it is not NULL (the top level). */
static int read_items(cursor *c, char close, int keyed, json_visit visit, void *context)
{
    if (++c->depth > MAX_DEPTH)
        return fail(c, "nested too deeply");
    c->at++; /* the opening bracket */
    skip_space(c);
    if (next_is(c, close)) {
        c->at++;
        c->depth--;
        return 0;
    }
    for (;;) {
        json_member item;
        skip_space(c);
        if (keyed) {
            if (!next_is(c, '"'))
                return fail(c, "a member name (a string) is expected");
            if (read_string(c, &item.key, &item.key_length) != 0)
                return -1;
            skip_space(c);
            if (!next_is(c, ':'))
                return fail(c, "':' is expected after a member name");
            c->at++;
        }
        if (read_value(c, &item) != 0)
            return -1;
        int stop = visit != NULL ? visit(&item, context) : 0;
        if (stop != 0)
            return stop;
        skip_space(c);
        if (next_is(c, close)) {
            c->at++;
            c->depth--;
            return 0;
        }
        if (!next_is(c, ','))
            return fail(c, keyed ? "',' or '}' is expected" : "',' or ']' is expected");
        c->at++;
    }
}

static int read_value(cursor *c, json_member *out)
{
    skip_space(c);
    if (c->at == c->end)
        return fail(c, "a value is missing");
    const char *begin = c->at;
    int status;
    switch (*c->at) {
    case '{': out->kind = JSON_OBJECT; status = read_items(c, '}', 1, NULL, NULL); break;
    case '[': out->kind = JSON_ARRAY; status = read_items(c, ']', 0, NULL, NULL); break;
    case '"':
        out->kind = JSON_STRING;
        return read_string(c, &out->value, &out->value_length);
    case 't': out->kind = JSON_TRUE; status = read_literal(c, "true"); break;
    case 'f': out->kind = JSON_FALSE; status = read_literal(c, "false"); break;
    case 'n': out->kind = JSON_NULL; status = read_literal(c, "null"); break;
    default:
        if (*c->at != '-' && !(*c->at >= '0' && *c->at <= '9'))
            return fail(c, "not a JSON value");
        out->kind = JSON_NUMBER;
        status = read_number(c);
        break;
    }
    out->value = begin;
    out->value_length = (size_t)(c->at - begin);
    return status;
}

int json_object_each(const char *text, size_t size, json_visit visit, void *context, char *error,
                     size_t error_size)
{
    cursor c = {text, text, text + size, 0, error, error_size};
    skip_space(&c);
    if (!next_is(&c, '{'))
        return fail(&c, "the file must hold one JSON object ({...})");
    int status = read_items(&c, '}', 1, visit, context);
    if (status != 0)
        return status;
    skip_space(&c);
    if (c.at != c.end)
        return fail(&c, "text after the JSON object");
    return 0;
}
