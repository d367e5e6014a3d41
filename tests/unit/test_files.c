/* test_files.c - the file readers of brs.h (LIBBRS_1.5): the lengths file
 * with its encoder column, read whole and in chunks; the states and errors
 * of both readers; cost-model values by key. The rules themselves are
 * checked file by file by tests/vectors/formats through every surface. */
#include "brs_test.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static brs_lengths_file *lengths_reader(void)
{
    brs_lengths_file *f = NULL;
    CU_ASSERT_FATAL(brs_lengths_file_new(&f) == BRS_OK && f != NULL);
    return f;
}

static brs_cost_model_file *cost_model_reader(void)
{
    brs_cost_model_file *f = NULL;
    CU_ASSERT_FATAL(brs_cost_model_file_new(&f) == BRS_OK && f != NULL);
    return f;
}

static brs_status parse_text(brs_lengths_file *f, const char *text)
{
    return brs_lengths_file_parse(f, text, strlen(text), "data.lengths");
}

/* The file read as "length:load,load;" per sample, e.g. "5:;17:3,4;". */
static void describe(char *out, size_t size, const brs_lengths_file *f)
{
    const uint32_t *lengths, *patches;
    const uint64_t *offsets;
    size_t count, used = 0;
    CU_ASSERT_FATAL(brs_lengths_file_lengths(&lengths, &count, f) == BRS_OK);
    CU_ASSERT_FATAL(brs_lengths_file_images(&patches, &offsets, f) == BRS_OK);
    CU_ASSERT(offsets[0] == 0);
    out[0] = '\0';
    for (size_t i = 0; i < count && used < size; i++) {
        used += (size_t)snprintf(out + used, size - used, "%u:", lengths[i]);
        for (uint64_t k = offsets[i]; k < offsets[i + 1] && used < size; k++)
            used += (size_t)snprintf(out + used, size - used, k > offsets[i] ? ",%u" : "%u",
                                     patches[k]);
        if (used < size) used += (size_t)snprintf(out + used, size - used, ";");
    }
}

static void test_images_read(void)
{
    static const struct {
        const char *text, *read;
    } cases[] = {
        {"5\n17 3,004\n9 0\n", "5:;17:3,4;9:;"},
        {"7", "7:;"},
        {"1 2\r\n3\t4,5 \r6", "1:2;3:4,5;6:;"},
        {"\xEF\xBB\xBF"
         "8 4294967295",
         "8:4294967295;"},
        {"5 6\n", "5:6;"},
    };
    brs_lengths_file *f = lengths_reader();
    char got[256];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        CU_ASSERT_FATAL(parse_text(f, cases[i].text) == BRS_OK);
        describe(got, sizeof got, f);
        if (strcmp(got, cases[i].read) != 0)
            printf("\n  %s: read %s, expected %s\n", cases[i].text, got, cases[i].read);
        CU_ASSERT_STRING_EQUAL(got, cases[i].read);
        CU_ASSERT_STRING_EQUAL(brs_lengths_file_last_error(f), "");
    }
    brs_lengths_file_free(f);
}

/* Every chunk size reads what one parse reads, the message of a refused
 * file included. */
static void test_chunks_read_as_a_whole(void)
{
    static const char *const texts[] = {"5\r\n17 3,4\r\n\xEF\xBB\xBF", "12 1,2,3\n\n", "5\n6 7 8\n",
                                        "1\r\n2 30,40\r\n3"};
    brs_lengths_file *whole = lengths_reader(), *chunked = lengths_reader();
    for (size_t t = 0; t < sizeof texts / sizeof texts[0]; t++) {
        size_t size = strlen(texts[t]);
        brs_status want = parse_text(whole, texts[t]);
        char want_read[256] = "", got_read[256] = "";
        if (want == BRS_OK) describe(want_read, sizeof want_read, whole);
        for (size_t step = 1; step <= size; step++) {
            CU_ASSERT_FATAL(brs_lengths_file_begin(chunked, "data.lengths") == BRS_OK);
            for (size_t at = 0; at < size; at += step)
                brs_lengths_file_feed(chunked, texts[t] + at, size - at < step ? size - at : step);
            CU_ASSERT(brs_lengths_file_finish(chunked) == want);
            if (want == BRS_OK) {
                describe(got_read, sizeof got_read, chunked);
                CU_ASSERT_STRING_EQUAL(got_read, want_read);
            } else {
                CU_ASSERT_STRING_EQUAL(brs_lengths_file_last_error(chunked),
                                       brs_lengths_file_last_error(whole));
            }
        }
    }
    brs_lengths_file_free(whole);
    brs_lengths_file_free(chunked);
}

static void test_lengths_messages(void)
{
    static const struct {
        const char *text, *message;
    } cases[] = {
        {"5\n6\n12 12,x\n", "data.lengths line 3: '12,x' is not a list of image loads: write the "
                            "length, then optionally each image's patch count, comma-separated"},
        {"5 1,2 3", "data.lengths line 1: '5 1,2 3' has a third field: write the length, then "
                    "optionally each image's patch count, comma-separated"},
        {"5 # tokens", "data.lengths line 1: '5 # tokens' is not a positive integer: write one "
                       "token count >= 1 per line"},
        {"0 x", "data.lengths line 1: '0 x' is not a positive integer: write one token count >= "
                "1 per line"},
        {"5 0,1", "data.lengths line 1: '0,1' holds an image load of 0: every image has at least "
                  "one patch (a lone 0 says the sample has no images)"},
        {"", "data.lengths has no lengths (expected one token count >= 1 per line)"},
    };
    brs_lengths_file *f = lengths_reader();
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        CU_ASSERT(parse_text(f, cases[i].text) == BRS_ERR_INVALID_ARGUMENT);
        CU_ASSERT_STRING_EQUAL(brs_lengths_file_last_error(f), cases[i].message);
    }
    /* Names are escaped: a terminal never receives the raw bytes. */
    CU_ASSERT(brs_lengths_file_parse(f, "x", 1, "a\x1b[31m") == BRS_ERR_INVALID_ARGUMENT);
    CU_ASSERT(strncmp(brs_lengths_file_last_error(f), "a\\x1b[31m line 1:", 17) == 0);
    brs_lengths_file_free(f);
}

static void test_lengths_states(void)
{
    brs_lengths_file *f = lengths_reader();
    const uint32_t *lengths, *patches;
    const uint64_t *offsets;
    size_t count;
    CU_ASSERT(brs_lengths_file_lengths(&lengths, &count, f) == BRS_ERR_STATE);
    CU_ASSERT(brs_lengths_file_images(&patches, &offsets, f) == BRS_ERR_STATE);
    CU_ASSERT(brs_lengths_file_feed(f, "5", 1) == BRS_ERR_STATE);
    CU_ASSERT(brs_lengths_file_finish(f) == BRS_ERR_STATE);
    CU_ASSERT(brs_lengths_file_last_error(f)[0] != '\0');
    CU_ASSERT(brs_lengths_file_begin(f, "x") == BRS_OK);
    CU_ASSERT(brs_lengths_file_feed(f, NULL, 0) == BRS_OK);
    CU_ASSERT(brs_lengths_file_feed(f, NULL, 1) == BRS_ERR_NULL_POINTER);
    CU_ASSERT(brs_lengths_file_feed(f, "5\n", 2) == BRS_OK);
    CU_ASSERT(brs_lengths_file_lengths(&lengths, &count, f) == BRS_ERR_STATE); /* not finished */
    CU_ASSERT(brs_lengths_file_finish(f) == BRS_OK);
    CU_ASSERT(brs_lengths_file_lengths(&lengths, &count, f) == BRS_OK && count == 1);
    /* After a problem, feeding more changes nothing and finish reports it. */
    CU_ASSERT(brs_lengths_file_begin(f, "x") == BRS_OK);
    CU_ASSERT(brs_lengths_file_feed(f, "5\n\0", 3) == BRS_ERR_INVALID_ARGUMENT);
    CU_ASSERT(brs_lengths_file_feed(f, "7\n", 2) == BRS_ERR_INVALID_ARGUMENT);
    CU_ASSERT(brs_lengths_file_finish(f) == BRS_ERR_INVALID_ARGUMENT);
    CU_ASSERT_STRING_EQUAL(brs_lengths_file_last_error(f),
                           "x line 2: a NUL byte at column 1: this is not a text file of one "
                           "token count per line");
    CU_ASSERT(brs_lengths_file_lengths(&lengths, &count, f) == BRS_ERR_STATE);
    brs_lengths_file_free(f);
    brs_lengths_file_free(NULL);
}

static const char calibrated[] =
    "{\"format\": \"brs-cost-model\", \"version\": 1, \"alpha\": 0.0028, \"intercept\": -0, "
    "\"max_tokens\": 47241, \"seconds_per_unit\": 6.6e-06, \"r2\": null, "
    "\"source\": \"calibrated\", \"memory\": {\"a\": [1, 2]}}";

static brs_status parse_model(brs_cost_model_file *f, const char *text)
{
    return brs_cost_model_file_parse(f, text, strlen(text), "model.json");
}

static void test_cost_model_values(void)
{
    brs_cost_model_file *f = cost_model_reader();
    CU_ASSERT_FATAL(parse_model(f, calibrated) == BRS_OK);
    double value = -1;
    int64_t integer = -1;
    int32_t present = -1;
    CU_ASSERT(brs_cost_model_file_get_double(&value, f, "alpha") == BRS_OK && value == 0.0028);
    CU_ASSERT(brs_cost_model_file_get_double(&value, f, "intercept") == BRS_OK && value == 0.0);
    CU_ASSERT(!signbit(value)); /* -0 reads as 0 */
    CU_ASSERT(brs_cost_model_file_get_double(&value, f, "seconds_per_unit") == BRS_OK &&
              value == 6.6e-06);
    CU_ASSERT(brs_cost_model_file_get_int(&integer, f, "max_tokens") == BRS_OK && integer == 47241);
    CU_ASSERT(brs_cost_model_file_get_int(&integer, f, "version") == BRS_OK && integer == 1);
    CU_ASSERT(brs_cost_model_file_has(&present, f, "r2") == BRS_OK && present == 0);
    CU_ASSERT(brs_cost_model_file_has(&present, f, "timings") == BRS_OK && present == 0);
    CU_ASSERT(brs_cost_model_file_has(&present, f, "memory") == BRS_OK && present == 1);
    CU_ASSERT(brs_cost_model_file_get_double(&value, f, "r2") == BRS_ERR_STATE);
    CU_ASSERT(strstr(brs_cost_model_file_last_error(f), "key \"r2\" is absent or null") != NULL);
    CU_ASSERT(brs_cost_model_file_get_double(&value, f, "max_tokens") == BRS_ERR_UNSUPPORTED);
    CU_ASSERT(brs_cost_model_file_get_int(&integer, f, "alpha") == BRS_ERR_UNSUPPORTED);
    CU_ASSERT(brs_cost_model_file_has(&present, f, "alpha2") == BRS_ERR_UNSUPPORTED);
    const char *json;
    size_t length;
    CU_ASSERT(brs_cost_model_file_get_json(&json, &length, f, "source") == BRS_OK && length == 12 &&
              memcmp(json, "\"calibrated\"", 12) == 0);
    CU_ASSERT(brs_cost_model_file_get_json(&json, &length, f, "memory") == BRS_OK && length == 13 &&
              memcmp(json, "{\"a\": [1, 2]}", 13) == 0);
    CU_ASSERT(brs_cost_model_file_get_json(&json, &length, f, "max_tokens") == BRS_OK &&
              length == 5 && memcmp(json, "47241", 5) == 0);
    brs_cost_model_file_free(f);
}

static void test_cost_model_refusals(void)
{
    brs_cost_model_file *f = cost_model_reader();
    double value;
    CU_ASSERT(brs_cost_model_file_get_double(&value, f, "alpha") == BRS_ERR_STATE);
    CU_ASSERT(parse_model(f, "{\"format\": \"brs-cost-model\", \"version\": 1, \"alpha\": 1}") ==
              BRS_ERR_INVALID_ARGUMENT);
    CU_ASSERT_STRING_EQUAL(brs_cost_model_file_last_error(f),
                           "model.json: key \"intercept\" is missing");
    CU_ASSERT(brs_cost_model_file_get_double(&value, f, "alpha") == BRS_ERR_STATE);
    CU_ASSERT(parse_model(f, "{\"a\": 1,}") == BRS_ERR_INVALID_ARGUMENT);
    CU_ASSERT_STRING_EQUAL(brs_cost_model_file_last_error(f),
                           "model.json: not a valid JSON cost-model file at byte 9: a member "
                           "name (a string) is expected");
    static char big[BRS_COST_MODEL_FILE_MAX_BYTES + 1];
    CU_ASSERT(brs_cost_model_file_parse(f, big, sizeof big, "big.json") == BRS_ERR_TOO_LARGE);
    CU_ASSERT_STRING_EQUAL(brs_cost_model_file_last_error(f),
                           "big.json: larger than 16777216 bytes: this is not a cost-model file");
    CU_ASSERT(brs_cost_model_file_parse(f, NULL, 0, "empty.json") == BRS_ERR_INVALID_ARGUMENT);
    CU_ASSERT(parse_model(f, calibrated) == BRS_OK);
    CU_ASSERT_STRING_EQUAL(brs_cost_model_file_last_error(f), "");
    brs_cost_model_file_free(f);
    brs_cost_model_file_free(NULL);
}

int main(int argc, char **argv)
{
    static const bt_test tests[] = {
        {"images read", test_images_read},
        {"chunks read as a whole", test_chunks_read_as_a_whole},
        {"lengths messages", test_lengths_messages},
        {"lengths states", test_lengths_states},
        {"cost-model values", test_cost_model_values},
        {"cost-model refusals", test_cost_model_refusals},
        {NULL, NULL},
    };
    return bt_run("files", tests, argc - 1, argv + 1);
}
