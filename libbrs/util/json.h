/*
 * util/json.h - a strict JSON (RFC 8259) reader (json.c) for small files
 * whose top level is an object, such as the cost-model file. Internal, not
 * installed.
 *
 * It checks the whole text and hands out the top-level members; nested
 * values are checked and skipped. Strings are handed out raw (between the
 * quotes, escapes kept). Beyond RFC 8259 it refuses what docs/formats.md
 * rules out: a member name twice in one object (names compared after
 * decoding escapes), an object of more than 1024 members, strings that are
 * not UTF-8, and nesting deeper than 64; a UTF-8 byte-order mark before the
 * object is skipped.
 */
#ifndef BRS_UTIL_JSON_H
#define BRS_UTIL_JSON_H

#include <stddef.h>

typedef enum brs_json_kind {
    BRS_JSON_NULL,
    BRS_JSON_TRUE,
    BRS_JSON_FALSE,
    BRS_JSON_NUMBER,
    BRS_JSON_STRING,
    BRS_JSON_ARRAY,
    BRS_JSON_OBJECT
} brs_json_kind;

typedef struct brs_json_member {
    const char *key; /* raw, key_length bytes */
    size_t key_length;
    brs_json_kind kind;
    const char *value; /* its text: a number's digits, a string's inside, a whole array */
    size_t value_length;
} brs_json_member;

/* Called for each top-level member in order; a nonzero return stops the
 * reading and is returned by brs_json_object_each. */
typedef int (*brs_json_visit)(const brs_json_member *member, void *context);

/* Whether two raw strings (as handed out, so already checked) decode to the
 * same text: "a\\u0062" equals "ab". A plain C string with no backslash
 * is its own raw form. */
int brs_json_string_equal(const char *a, size_t a_length, const char *b, size_t b_length);

/* Returns 0, the visitor's nonzero value, or -1 with "byte N: ..." in error
 * when text[0..size) is not one JSON object. */
int brs_json_object_each(const char *text, size_t size, brs_json_visit visit, void *context,
                         char *error, size_t error_size);

#endif
