/* lengths_line.c - the grammar of one line of a lengths file
 * (docs/formats.md): blanks, a length, and optionally blanks and the
 * comma-separated encoder loads of the sample's images, then blanks.
 *
 * When a line breaks two rules, the first problem met reading its bytes in
 * order is reported, except that a zero (a length or an image load) is only
 * reported once the whole line reads: "0 x" is text, not a zero length. */
#include "formats/internal.h"

#include <stdio.h>

typedef enum verdict {
    FINE,
    NOT_A_LENGTH,
    LENGTH_TOO_LARGE,
    LENGTH_ZERO,
    NOT_A_LIST,
    LOAD_TOO_LARGE,
    LOAD_ZERO,
    THIRD_FIELD
} verdict;

/* What follows the quote in each message. The problems of the image list
 * quote the list, the others the whole line. */
static const struct {
    int quotes_list;
    const char *text;
} explanations[] = {
    [NOT_A_LENGTH] = {0, "is not a positive integer: write one token count >= 1 per line"},
    [LENGTH_TOO_LARGE] = {0, "is larger than 4294967295, the largest length"},
    [LENGTH_ZERO] = {0, "is a length of 0: every sample needs at least one token"},
    [NOT_A_LIST] = {1, "is not a list of image loads: write the length, then optionally each "
                       "image's patch count, comma-separated"},
    [LOAD_TOO_LARGE] = {1, "holds an image load larger than 4294967295, the largest"},
    [LOAD_ZERO] = {1, "holds an image load of 0: every image has at least one patch (a lone 0 "
                      "says the sample has no images)"},
    [THIRD_FIELD] = {0, "has a third field: write the length, then optionally each image's "
                        "patch count, comma-separated"},
};

typedef struct cursor {
    const char *text;
    size_t at, end;
} cursor;

static int is_blank(char c)
{
    return c == ' ' || c == '\t';
}

static int is_digit(char c)
{
    return c >= '0' && c <= '9';
}

static void skip_blanks(cursor *c)
{
    while (c->at < c->end && is_blank(c->text[c->at])) c->at++;
}

/* The digits at the cursor as *value. Returns the number of digits read, or
 * -1 as soon as the value passes 2^32-1 (reported before what follows). */
static int read_number(cursor *c, uint32_t *value)
{
    uint64_t sum = 0;
    int digits = 0;
    for (; c->at < c->end && is_digit(c->text[c->at]); c->at++, digits++) {
        sum = sum * 10 + (uint64_t)(c->text[c->at] - '0');
        if (sum > UINT32_MAX) return -1;
    }
    *value = (uint32_t)sum;
    return digits;
}

static verdict read_length(cursor *c, uint32_t *length)
{
    skip_blanks(c);
    int digits = read_number(c, length);
    if (digits < 0) return LENGTH_TOO_LARGE;
    if (digits == 0 || (c->at < c->end && !is_blank(c->text[c->at]))) return NOT_A_LENGTH;
    return FINE;
}

/* The list [c->at, c->end): loads separated by single commas, none empty. */
static verdict read_loads(cursor *c, brs_lengths_line *out)
{
    for (;;) {
        uint32_t load;
        int digits = read_number(c, &load);
        if (digits < 0) return LOAD_TOO_LARGE;
        if (digits == 0 || out->image_count == BRS_LENGTHS_LINE_MAX_IMAGES) return NOT_A_LIST;
        out->loads[out->image_count++] = load;
        if (c->at == c->end) return FINE;
        if (c->text[c->at] != ',' || ++c->at == c->end) return NOT_A_LIST;
    }
}

/* A lone 0 says "no images"; any other 0 is an image without patches. */
static verdict check_loads(brs_lengths_line *out)
{
    if (out->image_count == 1 && out->loads[0] == 0) {
        out->image_count = 0;
        return FINE;
    }
    for (size_t i = 0; i < out->image_count; i++)
        if (out->loads[i] == 0) return LOAD_ZERO;
    return FINE;
}

/* The second field, if any, from the cursor on; *list gets its bounds. */
static verdict read_images(cursor *c, brs_lengths_line *out, cursor *list)
{
    skip_blanks(c);
    if (c->at == c->end) return FINE;
    /* Text that does not start like a list is what it always was: a line
     * that is not a positive integer ("5 # tokens"). */
    if (!is_digit(c->text[c->at]) && c->text[c->at] != ',') return NOT_A_LENGTH;
    *list = (cursor){c->text, c->at, c->at};
    while (list->end < c->end && !is_blank(c->text[list->end])) list->end++;
    c->at = list->end;
    verdict found = read_loads(&(cursor){list->text, list->at, list->end}, out);
    if (found != FINE) return found;
    skip_blanks(c);
    return c->at == c->end ? FINE : THIRD_FIELD;
}

static verdict read_line(brs_lengths_line *out, const char *text, size_t size, cursor *list)
{
    cursor c = {text, 0, size};
    out->image_count = 0;
    verdict found = read_length(&c, &out->length);
    if (found == FINE) found = read_images(&c, out, list);
    if (found == FINE && out->length == 0) found = LENGTH_ZERO;
    return found == FINE ? check_loads(out) : found;
}

int brs_lengths_line_read(brs_lengths_line *out, size_t number, const char *text, size_t size,
                          char *problem, size_t problem_size)
{
    if (size == 0) {
        snprintf(problem, problem_size,
                 "line %zu is empty: write one token count >= 1 on every line", number);
        return -1;
    }
    cursor list = {text, 0, size};
    verdict found = read_line(out, text, size, &list);
    if (found == FINE) return 0;
    char quoted[48];
    if (explanations[found].quotes_list)
        brs_text_escape(quoted, sizeof quoted, text + list.at, list.end - list.at);
    else
        brs_text_escape(quoted, sizeof quoted, text, size);
    snprintf(problem, problem_size, "line %zu: '%s' %s", number, quoted, explanations[found].text);
    return -1;
}
