/* formats/internal.h - what the readers of docs/formats.md share: one line of a lengths file
 * (lengths_line.c), a strict JSON reader (json.c), JSON numbers read exactly (decimal.c) and
 * untrusted bytes quoted in a message (text.c). Internal, not installed.
 *
 * The JSON reader checks the whole text and hands out the top-level members;
 * nested values are checked and skipped. Strings are handed out raw (between
 * the quotes, escapes kept). Beyond RFC 8259 it refuses what docs/formats.md
 * rules out: a member name twice in one object (names compared after
 * decoding escapes), an object of more than 1024 members, strings that are
 * not UTF-8, and nesting deeper than 64; a UTF-8 byte-order mark before the
 * object is skipped. */
#ifndef BRS_FORMATS_INTERNAL_H
#define BRS_FORMATS_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

/* ---- one line of a lengths file (lengths_line.c) ---- */

/* The longest line, its end excluded (docs/formats.md); such a line holds
 * fewer than 64 image loads ("1 1,1,...,1"). */
#define BRS_LENGTHS_LINE_MAX 128
#define BRS_LENGTHS_LINE_MAX_IMAGES (BRS_LENGTHS_LINE_MAX / 2)

typedef struct brs_lengths_line {
    uint32_t length;
    uint32_t loads[BRS_LENGTHS_LINE_MAX_IMAGES];
    size_t image_count; /* 0: no images (no second field, or a lone 0) */
} brs_lengths_line;

/* Read line `number` (1-based), text[0..size): the line without its end and
 * without a byte-order mark, at most BRS_LENGTHS_LINE_MAX bytes. Returns 0,
 * or -1 with what is wrong in problem ("line 3: '1.5' is not a positive
 * integer: ...", to follow the file's name). */
int brs_lengths_line_read(brs_lengths_line *out, size_t number, const char *text, size_t size,
                          char *problem, size_t problem_size);

/* ---- a strict JSON reader (json.c) ---- */

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

/* ---- a JSON number's value (decimal.c) ---- */

typedef enum brs_decimal_result {
    BRS_DECIMAL_OK = 0,
    BRS_DECIMAL_SYNTAX = -1, /* not an integer (a fraction or an exponent) */
    BRS_DECIMAL_RANGE = -2   /* a number the type cannot hold */
} brs_decimal_result;

/* text[0..length) is a number of JSON's grammar (brs_json_object_each has
 * checked it). As an int64: -?[0-9]+ only, so "1.0" and "1e3" are
 * BRS_DECIMAL_SYNTAX. */
brs_decimal_result brs_decimal_int64(const char *text, size_t length, int64_t *out);

/* As a finite double, read the same in every locale; a value that rounds to
 * infinity, or to zero or a subnormal from nonzero digits, is
 * BRS_DECIMAL_RANGE (so is a copy that cannot be allocated). */
brs_decimal_result brs_decimal_double(const char *text, size_t length, double *out);

/* ---- untrusted bytes quoted in a message (text.c) ---- */

/* Write text[0..length) into out (size >= 8) as printable ASCII: bytes
 * 0x20..0x7e stay, every other byte becomes \xNN; longer text is cut and
 * ends in "...". out is always NUL-terminated. A message quotes a file's
 * bytes or name this way, so that a terminal never receives raw control
 * or invisible bytes. */
void brs_text_escape(char *out, size_t size, const char *text, size_t length);

#endif
