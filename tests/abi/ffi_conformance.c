/*
 * ffi_conformance.c - call every export of libbrs.so.1 through libffi.
 *
 *     ffi_conformance LIBRARY.so.1 LIBBRS.SYM
 *
 * A binding written in any language sees libbrs the way this program does:
 * a shared object opened at run time, symbols looked up by name, calls
 * built from a description of the signature. The description here is
 * abi_table.h; this file checks that
 *   - every table line has the exact type brs.h declares (at compile time,
 *     with _Generic: a changed header fails the build of this test);
 *   - the table names exactly the symbols of the version script, and each
 *     resolves in the .so in the version node of its table (LIBBRS_1.0,
 *     LIBBRS_1.1, LIBBRS_1.2, LIBBRS_1.3, LIBBRS_1.4, LIBBRS_1.5, LIBBRS_1.6, ...);
 *   - every function taking pointers rejects NULL with BRS_ERR_NULL_POINTER
 *     (the *_free functions accept NULL, the *_last_error functions return a
 *     static message);
 *   - a real session (sampler, options, the option table with its value
 *     names, keywords and scopes, plans, a loaded plan, micro-batches, length
 *     buckets, the epoch's shapes, the shape vocabulary, a lengths file and a
 *     cost-model file read and refused) works when driven only through
 *     ffi_call, and every export was called.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <ffi.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "abi_table.h"

#define MAX_ARGS 7
#define MAX_SYMBOLS 256

/* ---- compile time: the table against the header ------------------------ */

#define CHECK_SIGNATURE(name, ret, n, args)                                       \
    _Static_assert(_Generic(&name, ABI_FN_TYPE(ret, n, args): 1, default: 0),    \
                   "abi_table.h: the line of " #name " does not match brs.h");
BRS_ABI_TABLE(CHECK_SIGNATURE)

#define FN_ID(name, ret, n, args) FN_##name,
enum fn_id { BRS_ABI_TABLE(FN_ID) FN_COUNT };

/* ---- the table at run time ---------------------------------------------- */

struct abi_fn {
    const char *name;
    const char *node; /* the version node of libbrs.sym */
    const char *ret_token; /* "STATUS", "VOID", "CSTR", "U32" */
    ffi_type *ret;
    unsigned nargs;
    ffi_type *args[MAX_ARGS];
    int is_ptr[MAX_ARGS];
    const char *arg_token[MAX_ARGS]; /* "SAMPLER_P", "OPTION", ... */
    void (*code)(void); /* resolved from the .so */
    ffi_cif cif;
    unsigned calls;
};

#define TOKEN_NAME(T) #T
#define FN_ROW(node, name, ret, n, args)                                           \
    {#name, node, #ret, ABI_FFI(ret), n, {ABI_MAP(n, ABI_FFI, NULL, args)},      \
     {ABI_MAP(n, ABI_IS_PTR, 0, args)}, {ABI_MAP(n, TOKEN_NAME, NULL, args)}, NULL, {0}, 0},
#define FN_ROW_1_0(name, ret, n, args) FN_ROW("LIBBRS_1.0", name, ret, n, args)
#define FN_ROW_1_1(name, ret, n, args) FN_ROW("LIBBRS_1.1", name, ret, n, args)
#define FN_ROW_1_2(name, ret, n, args) FN_ROW("LIBBRS_1.2", name, ret, n, args)
#define FN_ROW_1_3(name, ret, n, args) FN_ROW("LIBBRS_1.3", name, ret, n, args)
#define FN_ROW_1_4(name, ret, n, args) FN_ROW("LIBBRS_1.4", name, ret, n, args)
#define FN_ROW_1_5(name, ret, n, args) FN_ROW("LIBBRS_1.5", name, ret, n, args)
#define FN_ROW_1_6(name, ret, n, args) FN_ROW("LIBBRS_1.6", name, ret, n, args)
static struct abi_fn fns[FN_COUNT] = {
    BRS_ABI_TABLE_1_0(FN_ROW_1_0) BRS_ABI_TABLE_1_1(FN_ROW_1_1) BRS_ABI_TABLE_1_2(FN_ROW_1_2)
        BRS_ABI_TABLE_1_3(FN_ROW_1_3) BRS_ABI_TABLE_1_4(FN_ROW_1_4) BRS_ABI_TABLE_1_5(FN_ROW_1_5)
            BRS_ABI_TABLE_1_6(FN_ROW_1_6)};

static int failures;

static void fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("FAIL: ", stdout);
    vprintf(fmt, ap);
    fputc('\n', stdout);
    va_end(ap);
    failures++;
}

static void check(bool ok, const char *what)
{
    if (!ok)
        fail("%s", what);
}

/* ---- the vocabulary against libffi -------------------------------------- */

static bool ffi_is_signed(const ffi_type *t)
{
    return t->type == FFI_TYPE_SINT8 || t->type == FFI_TYPE_SINT16 ||
           t->type == FFI_TYPE_SINT32 || t->type == FFI_TYPE_SINT64;
}

/* Each integer token's ffi_type has its C type's width and signedness. */
#define CHECK_INT_TOKEN(T)                                                         \
    if (ABI_FFI_##T.size != sizeof(ABI_C_##T) ||                                   \
        ffi_is_signed(&ABI_FFI_##T) != ((ABI_C_##T)-1 < (ABI_C_##T)1))             \
        fail("vocabulary token " #T ": ffi_type does not match its C type");
#define CHECK_PTR_TOKEN(T)                                                         \
    if (ABI_FFI_##T.size != sizeof(ABI_C_##T))                                     \
        fail("vocabulary token " #T ": pointer size mismatch");

static void check_vocabulary(void)
{
    CHECK_INT_TOKEN(U32) CHECK_INT_TOKEN(I32) CHECK_INT_TOKEN(STATUS)
    CHECK_INT_TOKEN(OPTION) CHECK_INT_TOKEN(PLAN_KEY) CHECK_INT_TOKEN(I64)
    CHECK_INT_TOKEN(U64) CHECK_INT_TOKEN(SIZE)
    CHECK_PTR_TOKEN(CSTR) CHECK_PTR_TOKEN(SAMPLER_PP) CHECK_PTR_TOKEN(SAMPLER_P)
    CHECK_PTR_TOKEN(PLAN_PP) CHECK_PTR_TOKEN(U64_CPP) CHECK_PTR_TOKEN(DOUBLE_P)
    CHECK_PTR_TOKEN(OPTION_P) CHECK_PTR_TOKEN(I32_P) CHECK_PTR_TOKEN(CSTR_P)
    CHECK_PTR_TOKEN(CSTR_IN) CHECK_PTR_TOKEN(U64_CP) CHECK_PTR_TOKEN(U32_P)
    CHECK_PTR_TOKEN(U32_CPP) CHECK_PTR_TOKEN(LENGTHS_FILE_PP) CHECK_PTR_TOKEN(LENGTHS_FILE_P)
    CHECK_PTR_TOKEN(COST_MODEL_FILE_PP) CHECK_PTR_TOKEN(COST_MODEL_FILE_P)
    if (ABI_FFI_DOUBLE.size != sizeof(double) || ABI_FFI_DOUBLE.type != FFI_TYPE_DOUBLE)
        fail("vocabulary token DOUBLE: ffi_type does not match double");
}

/* ---- the table against the version script and the .so ------------------ */

static int read_version_script(const char *path, char names[][64], int max)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        fail("cannot open version script %s", path);
        return 0;
    }
    int n = 0;
    char word[128];
    /* Symbols are the "brs_..." words that end with ';' (globs, node names
     * and the "global:"/"local:" labels are not). */
    while (fscanf(f, " %127[^ \t\n]", word) == 1) {
        size_t len = strlen(word);
        if (strncmp(word, "brs_", 4) != 0 || word[len - 1] != ';' || len >= 64)
            continue;
        if (n == max) {
            fail("%s: more than %d symbols", path, max);
            break;
        }
        word[len - 1] = '\0';
        strcpy(names[n++], word);
    }
    fclose(f);
    return n;
}

static int find_fn(const char *name)
{
    for (int i = 0; i < FN_COUNT; i++)
        if (strcmp(fns[i].name, name) == 0)
            return i;
    return -1;
}

static void check_table_against_script(const char *script)
{
    static char names[MAX_SYMBOLS][64];
    int n = read_version_script(script, names, MAX_SYMBOLS);
    bool listed[FN_COUNT] = {false};
    for (int i = 0; i < n; i++) {
        int id = find_fn(names[i]);
        if (id < 0)
            fail("%s is in %s but has no line in abi_table.h", names[i], script);
        else
            listed[id] = true;
    }
    for (int i = 0; i < FN_COUNT; i++)
        if (!listed[i])
            fail("%s has a line in abi_table.h but is not in %s", fns[i].name, script);
}

static void *open_library(const char *path)
{
    void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!lib)
        fail("dlopen %s: %s", path, dlerror());
    return lib;
}

/* Resolve every table line in its version node and prepare its call frame. */
static void resolve_all(void *lib)
{
    for (int i = 0; i < FN_COUNT; i++) {
        struct abi_fn *f = &fns[i];
        void *sym = dlvsym(lib, f->name, f->node);
        if (!sym) {
            fail("%s: %s %s", f->name,
                 dlsym(lib, f->name) ? "exported, but not in node" : "not exported; expected in",
                 f->node);
            continue;
        }
        /* ISO C has no object-to-function pointer conversion; POSIX
         * guarantees the representations agree. */
        memcpy(&f->code, &sym, sizeof sym);
        if (ffi_prep_cif(&f->cif, FFI_DEFAULT_ABI, f->nargs, f->ret, f->args) != FFI_OK)
            fail("%s: ffi_prep_cif failed", f->name);
    }
}

/* ---- calling through libffi --------------------------------------------- */

/* ffi_call widens integer results to ffi_arg: read them from the union. */
union ffi_result {
    ffi_arg u;
    ffi_sarg s;
    double d;
    void *p;
};

static union ffi_result invoke(enum fn_id id, void **values)
{
    union ffi_result r;
    memset(&r, 0, sizeof r);
    if (fns[id].code) {
        ffi_call(&fns[id].cif, fns[id].code, &r, values);
        fns[id].calls++;
    }
    return r;
}

static brs_status call_status(enum fn_id id, void **values)
{
    return (brs_status)invoke(id, values).s;
}

static const char *call_string(enum fn_id id, void **values)
{
    return invoke(id, values).p;
}

/* Argument lists: ARGS(&a, &b) is the void *[] ffi_call expects. */
#define ARGS(...) ((void *[]){__VA_ARGS__})
#define NO_ARGS NULL

static void expect_status(brs_status got, brs_status want, const char *what)
{
    if (got != want)
        fail("%s: status %d, expected %d", what, (int)got, (int)want);
}

/* ---- NULL handles and NULL out-parameters ------------------------------- */

/* Valid objects to pass where a pointer argument is not the one set NULL. */
struct valid_args {
    brs_sampler *sampler;
    brs_plan *plan;
    brs_lengths_file *lengths_file;
    brs_cost_model_file *cost_model_file;
    uint32_t lengths[1];
    uint32_t buckets[1];
    const uint32_t *bucket_view;
    int64_t i64[2];
    uint64_t u64[2];
    double dbl[2];
    size_t size;
    const uint64_t *indices;
    brs_option key;
    int32_t i32;
    const char *text;
};

union scalar {
    int32_t i32;
    int64_t i64;
    uint64_t u64;
    size_t size;
    double d;
};

static bool is_token(const struct abi_fn *f, unsigned arg, const char *token)
{
    return strcmp(f->arg_token[arg], token) == 0;
}

/* A valid value for scalar argument `arg` of f, so that only the NULL
 * pointer is wrong: a key that suits the function (the *_double functions
 * take a double key), n = 1, rank = micro = epoch = step = 0. */
static union scalar valid_scalar(const struct abi_fn *f, unsigned arg)
{
    bool takes_double = strstr(f->name, "_double") != NULL;
    union scalar v;
    memset(&v, 0, sizeof v);
    if (is_token(f, arg, "OPTION"))
        v.i32 = takes_double ? BRS_OPT_ALPHA : BRS_OPT_BATCH_SIZE;
    else if (is_token(f, arg, "PLAN_KEY"))
        v.i32 = takes_double ? BRS_PLAN_MAX_COST : BRS_PLAN_STEP;
    else if (is_token(f, arg, "I32"))
        v.i32 = BRS_LENGTHS_COPY;
    else if (is_token(f, arg, "SIZE"))
        v.size = 1;
    else if (is_token(f, arg, "DOUBLE"))
        v.d = 0.5;
    return v;
}

/* Store a valid pointer for argument `arg` of f in slots[arg]; return its
 * address (what ffi_call takes). Two out-parameters of one type (bounds
 * lower/upper) get distinct objects. */
static void *valid_pointer(const struct abi_fn *f, unsigned arg, struct valid_args *va,
                           void *slots[])
{
    if (is_token(f, arg, "SAMPLER_P") || is_token(f, arg, "SAMPLER_CP"))
        slots[arg] = va->sampler;
    else if (is_token(f, arg, "PLAN_P") || is_token(f, arg, "PLAN_CP"))
        slots[arg] = va->plan;
    else if (is_token(f, arg, "LENGTHS_FILE_P") || is_token(f, arg, "LENGTHS_FILE_CP"))
        slots[arg] = va->lengths_file;
    else if (is_token(f, arg, "COST_MODEL_FILE_P") || is_token(f, arg, "COST_MODEL_FILE_CP"))
        slots[arg] = va->cost_model_file;
    else if (is_token(f, arg, "U32_CP"))
        slots[arg] = va->lengths;
    else if (is_token(f, arg, "U32_P"))
        slots[arg] = va->buckets;
    else if (is_token(f, arg, "U32_CPP"))
        slots[arg] = &va->bucket_view;
    else if (is_token(f, arg, "I64_P"))
        slots[arg] = &va->i64[arg % 2];
    else if (is_token(f, arg, "U64_P"))
        slots[arg] = &va->u64[arg % 2];
    else if (is_token(f, arg, "DOUBLE_P"))
        slots[arg] = &va->dbl[arg % 2];
    else if (is_token(f, arg, "SIZE_P"))
        slots[arg] = &va->size;
    else if (is_token(f, arg, "U64_CPP"))
        slots[arg] = &va->indices;
    else if (is_token(f, arg, "U64_CP"))
        slots[arg] = va->u64;
    else if (is_token(f, arg, "OPTION_P"))
        slots[arg] = &va->key;
    else if (is_token(f, arg, "I32_P"))
        slots[arg] = &va->i32;
    else if (is_token(f, arg, "CSTR_P"))
        slots[arg] = &va->text;
    else if (is_token(f, arg, "CSTR_IN"))
        slots[arg] = (void *)"batch_size";
    else
        slots[arg] = NULL; /* out-handles (T **) are alone in their calls */
    return &slots[arg];
}

static void check_null_result(const struct abi_fn *f, union ffi_result r, const char *what)
{
    if (strcmp(f->ret_token, "STATUS") == 0 && (brs_status)r.s != BRS_ERR_NULL_POINTER)
        fail("%s(%s): status %d, expected BRS_ERR_NULL_POINTER", f->name, what, (int)(brs_status)r.s);
    if (strcmp(f->ret_token, "CSTR") == 0 && (r.p == NULL || *(const char *)r.p == '\0'))
        fail("%s(%s): expected a static message, got %s", f->name, what,
             r.p ? "\"\"" : "NULL");
}

/* Call f with pointer argument `null_arg` NULL (or all of them when
 * null_arg < 0), every other argument valid. */
static void call_with_null(enum fn_id id, int null_arg, struct valid_args *va)
{
    struct abi_fn *f = &fns[id];
    union scalar scalars[MAX_ARGS];
    void *slots[MAX_ARGS];
    void *values[MAX_ARGS];
    for (unsigned a = 0; a < f->nargs; a++) {
        if (!f->is_ptr[a]) {
            scalars[a] = valid_scalar(f, a);
            values[a] = &scalars[a];
        } else if (null_arg < 0 || (unsigned)null_arg == a) {
            slots[a] = NULL;
            values[a] = &slots[a];
        } else {
            values[a] = valid_pointer(f, a, va, slots);
        }
    }
    char what[32];
    snprintf(what, sizeof what, null_arg < 0 ? "all NULL" : "arg %d NULL", null_arg);
    check_null_result(f, invoke(id, values), what);
}

static void check_null_pointers(struct valid_args *va)
{
    for (int id = 0; id < FN_COUNT; id++) {
        const struct abi_fn *f = &fns[id];
        unsigned pointers = 0;
        for (unsigned a = 0; a < f->nargs; a++)
            pointers += (unsigned)f->is_ptr[a];
        if (pointers == 0 || !f->code)
            continue;
        call_with_null((enum fn_id)id, -1, va);
        /* A free function must not be handed a valid handle here. */
        if (pointers < 2 || strcmp(f->ret_token, "STATUS") != 0)
            continue;
        for (unsigned a = 0; a < f->nargs; a++)
            if (f->is_ptr[a])
                call_with_null((enum fn_id)id, (int)a, va);
    }
}

/* ---- a real session, through ffi_call only ------------------------------ */

static brs_sampler *new_sampler(void)
{
    brs_sampler *s = NULL;
    brs_sampler **out = &s;
    expect_status(call_status(FN_brs_sampler_new, ARGS(&out)), BRS_OK, "brs_sampler_new");
    check(s != NULL, "brs_sampler_new returned no handle");
    return s;
}

static brs_plan *new_plan(void)
{
    brs_plan *p = NULL;
    brs_plan **out = &p;
    expect_status(call_status(FN_brs_plan_new, ARGS(&out)), BRS_OK, "brs_plan_new");
    check(p != NULL, "brs_plan_new returned no handle");
    return p;
}

static void free_sampler(brs_sampler *s)
{
    invoke(FN_brs_sampler_free, ARGS(&s));
}

static void free_plan(brs_plan *p)
{
    invoke(FN_brs_plan_free, ARGS(&p));
}

static brs_status set_int(brs_sampler *s, brs_option key, int64_t value)
{
    return call_status(FN_brs_sampler_set_int, ARGS(&s, &key, &value));
}

static brs_status set_double(brs_sampler *s, brs_option key, double value)
{
    return call_status(FN_brs_sampler_set_double, ARGS(&s, &key, &value));
}

static int64_t get_int(const brs_sampler *s, brs_option key)
{
    int64_t v = -1;
    int64_t *out = &v;
    expect_status(call_status(FN_brs_sampler_get_int, ARGS(&out, &s, &key)), BRS_OK,
                  "brs_sampler_get_int");
    return v;
}

static uint64_t fingerprint(const brs_sampler *s)
{
    uint64_t v = 0;
    uint64_t *out = &v;
    expect_status(call_status(FN_brs_sampler_fingerprint, ARGS(&out, &s)), BRS_OK,
                  "brs_sampler_fingerprint");
    return v;
}

static const char *sampler_error(const brs_sampler *s)
{
    return call_string(FN_brs_sampler_last_error, ARGS(&s));
}

static const char *plan_error(const brs_plan *p)
{
    return call_string(FN_brs_plan_last_error, ARGS(&p));
}

static void check_versions(void)
{
    uint32_t number = (uint32_t)invoke(FN_brs_version_number, NO_ARGS).u;
    check(number == BRS_VERSION_NUMBER, "brs_version_number != BRS_VERSION_NUMBER");
    char want[32];
    snprintf(want, sizeof want, "%d.%d.%d", BRS_VERSION_MAJOR, BRS_VERSION_MINOR,
             BRS_VERSION_PATCH);
    const char *got = call_string(FN_brs_version_string, NO_ARGS);
    if (!got || strcmp(got, want) != 0)
        fail("brs_version_string: \"%s\", expected \"%s\"", got ? got : "(null)", want);
}

static void check_strerror(void)
{
    brs_status unknown = -1000;
    const char *unknown_text = call_string(FN_brs_strerror, ARGS(&unknown));
    check(unknown_text && *unknown_text, "brs_strerror(unknown) is empty");
    for (brs_status code = BRS_OK; code >= BRS_ERR_TOO_LARGE; code--) {
        const char *text = call_string(FN_brs_strerror, ARGS(&code));
        if (!text || !*text || (unknown_text && strcmp(text, unknown_text) == 0))
            fail("brs_strerror(%d) does not name the code", (int)code);
    }
}

static void check_bounds(void)
{
    int64_t lo = 0, hi = 0, *plo = &lo, *phi = &hi;
    double dlo = 0, dhi = 0, *pdlo = &dlo, *pdhi = &dhi;
    brs_option key = BRS_OPT_BATCH_SIZE;
    expect_status(call_status(FN_brs_option_bounds_int, ARGS(&plo, &phi, &key)), BRS_OK,
                  "bounds_int(BATCH_SIZE)");
    check(1 <= lo && lo <= 8 && 8 <= hi, "bounds of BATCH_SIZE do not hold its default 8");
    key = BRS_OPT_ALPHA;
    expect_status(call_status(FN_brs_option_bounds_int, ARGS(&plo, &phi, &key)),
                  BRS_ERR_UNSUPPORTED, "bounds_int(ALPHA), a double option");
    expect_status(call_status(FN_brs_option_bounds_double, ARGS(&pdlo, &pdhi, &key)), BRS_OK,
                  "bounds_double(ALPHA)");
    check(dlo == 0.0 && dhi == 1000.0, "bounds of ALPHA are not [0, 1000]");
    key = BRS_OPT_DP_SIZE;
    expect_status(call_status(FN_brs_option_bounds_double, ARGS(&pdlo, &pdhi, &key)),
                  BRS_ERR_UNSUPPORTED, "bounds_double(DP_SIZE), an int option");
    key = 9999;
    expect_status(call_status(FN_brs_option_bounds_int, ARGS(&plo, &phi, &key)),
                  BRS_ERR_UNSUPPORTED, "bounds_int(unknown key)");
}

#define N_SAMPLES 96
#define BATCH 4
#define GRAD_ACCUM 2
#define DP_SIZE 3

static void fill_lengths(uint32_t *lengths, size_t n)
{
    uint64_t x = 12345; /* a fixed LCG: any skewed spread of lengths will do */
    for (size_t i = 0; i < n; i++) {
        x = x * 6364136223846793005u + 1442695040888963407u;
        lengths[i] = 1 + (uint32_t)((x >> 33) % ((i % 7 == 0) ? 900 : 120));
    }
}

static void configure(brs_sampler *s, const uint32_t *lengths)
{
    const uint32_t *lp = lengths;
    size_t n = N_SAMPLES;
    int32_t mode = BRS_LENGTHS_COPY;
    expect_status(call_status(FN_brs_sampler_set_lengths, ARGS(&s, &lp, &n, &mode)), BRS_OK,
                  "set_lengths");
    const int64_t options[][2] = {{BRS_OPT_BATCH_SIZE, BATCH}, {BRS_OPT_GRAD_ACCUM, GRAD_ACCUM},
                                  {BRS_OPT_DP_SIZE, DP_SIZE},  {BRS_OPT_SEED, 7},
                                  {BRS_OPT_SHUFFLE, 1},        {BRS_OPT_DROP_LAST, 1}};
    for (size_t i = 0; i < sizeof options / sizeof options[0]; i++) {
        expect_status(set_int(s, (brs_option)options[i][0], options[i][1]), BRS_OK, "set_int");
        if (get_int(s, (brs_option)options[i][0]) != options[i][1])
            fail("get_int(%d) does not return the value set", (int)options[i][0]);
    }
    expect_status(set_double(s, BRS_OPT_ALPHA, 0.002), BRS_OK, "set_double(ALPHA)");
    expect_status(set_double(s, BRS_OPT_INTERCEPT, 5.0), BRS_OK, "set_double(INTERCEPT)");
    double alpha = -1, *out = &alpha;
    brs_option key = BRS_OPT_ALPHA;
    expect_status(call_status(FN_brs_sampler_get_double, ARGS(&out, &s, &key)), BRS_OK,
                  "get_double(ALPHA)");
    check(fabs(alpha - 0.002) < 1e-9, "get_double(ALPHA) does not return 0.002");
}

static void check_option_errors(brs_sampler *s)
{
    expect_status(set_int(s, 9999, 1), BRS_ERR_UNSUPPORTED, "set_int(unknown key)");
    check(*sampler_error(s) != '\0', "no message after set_int(unknown key)");
    expect_status(set_int(s, BRS_OPT_BATCH_SIZE, 0), BRS_ERR_OUT_OF_RANGE, "set_int(BATCH_SIZE, 0)");
    check(get_int(s, BRS_OPT_BATCH_SIZE) == BATCH, "a rejected set_int changed the option");
    expect_status(set_double(s, BRS_OPT_ALPHA, NAN), BRS_ERR_OUT_OF_RANGE, "set_double(ALPHA, NaN)");
    expect_status(set_double(s, BRS_OPT_DP_SIZE, 1.0), BRS_ERR_UNSUPPORTED,
                  "set_double(DP_SIZE), an int option");
}

static uint64_t steps_per_epoch(brs_sampler *s)
{
    expect_status(call_status(FN_brs_sampler_validate, ARGS(&s)), BRS_OK, "validate");
    uint64_t steps = 0, *out = &steps;
    expect_status(call_status(FN_brs_sampler_steps_per_epoch, ARGS(&out, &s)), BRS_OK,
                  "steps_per_epoch");
    return steps;
}

static int64_t plan_int(const brs_plan *p, brs_plan_key key)
{
    int64_t v = -1, *out = &v;
    expect_status(call_status(FN_brs_plan_get_int, ARGS(&out, &p, &key)), BRS_OK, "plan_get_int");
    return v;
}

static double plan_double(const brs_plan *p, brs_plan_key key)
{
    double v = -1, *out = &v;
    expect_status(call_status(FN_brs_plan_get_double, ARGS(&out, &p, &key)), BRS_OK,
                  "plan_get_double");
    return v;
}

struct step_totals {
    uint64_t padded, real, max_padded;
    double max_cost;
};

/* Check one micro-batch against the lengths; mark its indices seen. */
static void check_micro_batch(const brs_plan *p, int64_t rank, int64_t micro,
                              const uint32_t *lengths, unsigned *seen, struct step_totals *t)
{
    const uint64_t *indices = NULL, **pi = &indices;
    size_t count = 0, *pc = &count;
    if (call_status(FN_brs_plan_micro_batch, ARGS(&pi, &pc, &p, &rank, &micro)) != BRS_OK ||
        count == 0 || !indices) {
        fail("micro_batch(rank %lld, micro %lld) failed or is empty", (long long)rank,
             (long long)micro);
        return;
    }
    uint64_t longest = 0, real = 0;
    for (size_t i = 0; i < count; i++) {
        if (indices[i] >= N_SAMPLES) {
            fail("micro_batch index %llu out of range", (unsigned long long)indices[i]);
            return;
        }
        seen[indices[i]]++;
        longest = lengths[indices[i]] > longest ? lengths[indices[i]] : longest;
        real += lengths[indices[i]];
    }
    uint64_t padded = 0, real_got = 0, *pp = &padded, *pr = &real_got;
    double cost = 0, *pcost = &cost;
    expect_status(call_status(FN_brs_plan_micro_batch_stats, ARGS(&pp, &pr, &pcost, &p, &rank, &micro)),
                  BRS_OK, "micro_batch_stats");
    check(padded == count * longest, "micro_batch_stats: padded tokens != count * longest");
    check(real_got == real, "micro_batch_stats: real tokens != sum of lengths");
    check(cost > 0, "micro_batch_stats: cost is not positive");
    t->padded += padded;
    t->real += real;
    t->max_padded = padded > t->max_padded ? padded : t->max_padded;
    t->max_cost = cost > t->max_cost ? cost : t->max_cost;
}

static void check_step(const brs_plan *p, uint64_t step, const uint32_t *lengths, unsigned *seen)
{
    check(plan_int(p, BRS_PLAN_EPOCH) == 0, "BRS_PLAN_EPOCH");
    check((uint64_t)plan_int(p, BRS_PLAN_STEP) == step, "BRS_PLAN_STEP");
    check(plan_int(p, BRS_PLAN_NUM_SAMPLES) == BATCH * GRAD_ACCUM * DP_SIZE, "BRS_PLAN_NUM_SAMPLES");
    check(plan_int(p, BRS_PLAN_DP_SIZE) == DP_SIZE, "BRS_PLAN_DP_SIZE");
    check(plan_int(p, BRS_PLAN_GRAD_ACCUM) == GRAD_ACCUM, "BRS_PLAN_GRAD_ACCUM");
    struct step_totals t = {0, 0, 0, 0.0};
    for (int64_t rank = 0; rank < DP_SIZE; rank++)
        for (int64_t micro = 0; micro < GRAD_ACCUM; micro++)
            check_micro_batch(p, rank, micro, lengths, seen, &t);
    check((uint64_t)plan_int(p, BRS_PLAN_TOTAL_PADDED_TOKENS) == t.padded, "TOTAL_PADDED_TOKENS");
    check((uint64_t)plan_int(p, BRS_PLAN_TOTAL_REAL_TOKENS) == t.real, "TOTAL_REAL_TOKENS");
    check((uint64_t)plan_int(p, BRS_PLAN_MAX_PADDED_TOKENS) == t.max_padded, "MAX_PADDED_TOKENS");
    double max_cost = plan_double(p, BRS_PLAN_MAX_COST);
    check(fabs(max_cost - t.max_cost) <= 1e-9 * max_cost, "MAX_COST != largest micro-batch cost");
    check(plan_double(p, BRS_PLAN_LOWER_BOUND) <= max_cost, "LOWER_BOUND above MAX_COST");
}

static void check_plan_errors(brs_plan *p, const brs_sampler *s, uint64_t steps)
{
    uint64_t epoch = 0, step = 0;
    int64_t rank = DP_SIZE, micro = 0;
    const uint64_t *indices = NULL, **pi = &indices;
    size_t count = 0, *pc = &count;
    expect_status(call_status(FN_brs_plan_compute, ARGS(&p, &s, &epoch, &step)), BRS_OK, "plan step 0");
    expect_status(call_status(FN_brs_plan_micro_batch, ARGS(&pi, &pc, &p, &rank, &micro)),
                  BRS_ERR_OUT_OF_RANGE, "micro_batch(rank == dp_size)");
    int64_t v = 0, *pv = &v;
    brs_plan_key bad_key = 9999;
    expect_status(call_status(FN_brs_plan_get_int, ARGS(&pv, &p, &bad_key)), BRS_ERR_UNSUPPORTED,
                  "plan_get_int(unknown key)");
    step = steps;
    expect_status(call_status(FN_brs_plan_compute, ARGS(&p, &s, &epoch, &step)), BRS_ERR_OUT_OF_RANGE,
                  "plan_compute(step == steps per epoch)");
    check(*plan_error(p) != '\0', "no message after plan_compute out of range");
    brs_plan_key key = BRS_PLAN_STEP;
    expect_status(call_status(FN_brs_plan_get_int, ARGS(&pv, &p, &key)), BRS_ERR_STATE,
                  "plan_get_int after a failed compute");
}

/* The option table through ffi: every key has a name that finds it again,
 * a type, a default of that type within its bounds, and help. */
static brs_status value_find(int64_t *value, brs_option key, const char *name)
{
    return call_status(FN_brs_option_value_find, ARGS(&value, &key, &name));
}

/* LIBBRS_1.6: every value name found back (brs_option_value_find), every
 * option's keyword and scope; the known ones by name. */
static void check_option_names(size_t count)
{
    for (size_t i = 0; i < count; i++) {
        brs_option key = 0, *pkey = &key;
        expect_status(call_status(FN_brs_option_key, ARGS(&pkey, &i)), BRS_OK, "option_key");
        int64_t lo = 0, hi = -1, *plo = &lo, *phi = &hi, found = -1;
        int32_t type = -1, *ptype = &type;
        expect_status(call_status(FN_brs_option_type, ARGS(&ptype, &key)), BRS_OK, "option_type");
        if (type == BRS_OPTION_INT)
            expect_status(call_status(FN_brs_option_bounds_int, ARGS(&plo, &phi, &key)), BRS_OK,
                          "option_bounds_int");
        const char *name = NULL, **pname = &name;
        bool named = type == BRS_OPTION_INT &&
                     call_status(FN_brs_option_value_name, ARGS(&pname, &key, &lo)) == BRS_OK;
        for (int64_t v = lo; named && v <= hi; v++) {
            expect_status(call_status(FN_brs_option_value_name, ARGS(&pname, &key, &v)), BRS_OK,
                          "option_value_name");
            expect_status(value_find(&found, key, name), BRS_OK, "option_value_find(a name)");
            check(found == v, "option_value_find(option_value_name(v)) != v");
        }
        if (!named)
            expect_status(value_find(&found, key, "1"), BRS_ERR_UNSUPPORTED,
                          "option_value_find(an option of plain numbers)");
        const char *keyword = NULL, **pkeyword = &keyword;
        expect_status(call_status(FN_brs_option_keyword, ARGS(&pkeyword, &key)), BRS_OK,
                      "option_keyword");
        check(keyword && *keyword, "an option without a keyword");
        int32_t scope = -1, *pscope = &scope;
        expect_status(call_status(FN_brs_option_scope, ARGS(&pscope, &key)), BRS_OK,
                      "option_scope");
        check(scope == BRS_OPTION_SCOPE_RANK || scope == BRS_OPTION_SCOPE_SPLIT ||
                  scope == BRS_OPTION_SCOPE_RUN,
              "an option's scope is none of RANK, SPLIT, RUN");
        check((scope == BRS_OPTION_SCOPE_RANK) == (key == BRS_OPT_RANK),
              "the rank is not the one option of scope RANK");
    }
    int64_t found = -1;
    expect_status(value_find(&found, BRS_OPT_STRATEGY, "random"), BRS_OK,
                  "option_value_find(STRATEGY, random)");
    check(found == BRS_STRATEGY_RANDOM, "strategy random is not BRS_STRATEGY_RANDOM");
    expect_status(value_find(&found, BRS_OPT_SYNC, "step"), BRS_OK,
                  "option_value_find(SYNC, step)");
    check(found == BRS_SYNC_STEP, "sync step is not BRS_SYNC_STEP");
    found = -1;
    expect_status(value_find(&found, BRS_OPT_STRATEGY, "Random"), BRS_ERR_INVALID_ARGUMENT,
                  "option_value_find(STRATEGY, Random)");
    expect_status(value_find(&found, BRS_OPT_SYNC, ""), BRS_ERR_INVALID_ARGUMENT,
                  "option_value_find(SYNC, \"\")");
    check(found == -1, "a refused option_value_find wrote its value");
    expect_status(value_find(&found, 9999, "random"), BRS_ERR_UNSUPPORTED,
                  "option_value_find(unknown key)");
    const struct {
        brs_option key;
        const char *keyword;
        int32_t scope;
    } known[] = {{BRS_OPT_BATCH_SIZE, "per_device_batch_size", BRS_OPTION_SCOPE_SPLIT},
                 {BRS_OPT_DP_SIZE, "dp_size", BRS_OPTION_SCOPE_SPLIT},
                 {BRS_OPT_SYNC, "sync", BRS_OPTION_SCOPE_SPLIT},
                 {BRS_OPT_RANK, "rank", BRS_OPTION_SCOPE_RANK},
                 {BRS_OPT_SEED, "seed", BRS_OPTION_SCOPE_RUN},
                 {BRS_OPT_MAX_SHAPES, "max_shapes", BRS_OPTION_SCOPE_RUN}};
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) {
        brs_option key = known[i].key;
        const char *keyword = NULL, **pkeyword = &keyword;
        int32_t scope = -1, *pscope = &scope;
        expect_status(call_status(FN_brs_option_keyword, ARGS(&pkeyword, &key)), BRS_OK,
                      "option_keyword");
        check(keyword && strcmp(keyword, known[i].keyword) == 0, "an option's keyword differs");
        expect_status(call_status(FN_brs_option_scope, ARGS(&pscope, &key)), BRS_OK,
                      "option_scope");
        check(scope == known[i].scope, "an option's scope differs");
    }
    brs_option unknown = 9999;
    const char *keyword = NULL, **pkeyword = &keyword;
    int32_t scope = -1, *pscope = &scope;
    expect_status(call_status(FN_brs_option_keyword, ARGS(&pkeyword, &unknown)),
                  BRS_ERR_UNSUPPORTED, "option_keyword(unknown key)");
    expect_status(call_status(FN_brs_option_scope, ARGS(&pscope, &unknown)), BRS_ERR_UNSUPPORTED,
                  "option_scope(unknown key)");
}

static void check_option_table(void)
{
    size_t count = 0, *pcount = &count;
    expect_status(call_status(FN_brs_option_count, ARGS(&pcount)), BRS_OK, "option_count");
    check(count >= 13, "option_count below the 13 options of 1.1");
    for (size_t i = 0; i < count; i++) {
        brs_option key = 0, found = 0, *pkey = &key, *pfound = &found;
        const char *name = NULL, *help = NULL, **pname = &name, **phelp = &help;
        int32_t type = -1, *ptype = &type;
        expect_status(call_status(FN_brs_option_key, ARGS(&pkey, &i)), BRS_OK, "option_key");
        expect_status(call_status(FN_brs_option_name, ARGS(&pname, &key)), BRS_OK, "option_name");
        expect_status(call_status(FN_brs_option_help, ARGS(&phelp, &key)), BRS_OK, "option_help");
        check(name && *name && help && *help, "option without a name or help");
        if (!name)
            continue;
        expect_status(call_status(FN_brs_option_find, ARGS(&pfound, &name)), BRS_OK, "option_find");
        check(found == key, "option_find(option_name(key)) != key");
        expect_status(call_status(FN_brs_option_type, ARGS(&ptype, &key)), BRS_OK, "option_type");
        if (type == BRS_OPTION_INT) {
            int64_t value = 0, lo = 0, hi = 0, *pv = &value, *plo = &lo, *phi = &hi;
            expect_status(call_status(FN_brs_option_default_int, ARGS(&pv, &key)), BRS_OK,
                          "option_default_int");
            expect_status(call_status(FN_brs_option_bounds_int, ARGS(&plo, &phi, &key)), BRS_OK,
                          "option_bounds_int");
            check(lo <= value && value <= hi, "an integer default outside its bounds");
        } else {
            double value = -1, lo = 0, hi = 0, *pv = &value, *plo = &lo, *phi = &hi;
            expect_status(call_status(FN_brs_option_default_double, ARGS(&pv, &key)), BRS_OK,
                          "option_default_double");
            expect_status(call_status(FN_brs_option_bounds_double, ARGS(&plo, &phi, &key)), BRS_OK,
                          "option_bounds_double");
            check(type == BRS_OPTION_DOUBLE && lo <= value && value <= hi,
                  "a double default outside its bounds");
        }
    }
    brs_option strategy = BRS_OPT_STRATEGY;
    int64_t random = BRS_STRATEGY_RANDOM, past = 3;
    const char *value_name = NULL, **pvalue = &value_name;
    expect_status(call_status(FN_brs_option_value_name, ARGS(&pvalue, &strategy, &random)), BRS_OK,
                  "option_value_name(STRATEGY, RANDOM)");
    check(value_name && strcmp(value_name, "random") == 0, "strategy 1 is not named random");
    expect_status(call_status(FN_brs_option_value_name, ARGS(&pvalue, &strategy, &past)),
                  BRS_ERR_OUT_OF_RANGE, "option_value_name(STRATEGY, 3)");
    check_option_names(count);
}

/* Loads step 0's micro-batches back into a second plan: the same queries. */
static void check_load(const brs_plan *p, const brs_sampler *s)
{
    enum { K = DP_SIZE * GRAD_ACCUM };
    uint64_t indices[BATCH * K], counts[K];
    size_t used = 0;
    for (int64_t rank = 0; rank < DP_SIZE; rank++)
        for (int64_t micro = 0; micro < GRAD_ACCUM; micro++) {
            const uint64_t *mb = NULL, **pmb = &mb;
            size_t count = 0, *pc = &count;
            expect_status(call_status(FN_brs_plan_micro_batch, ARGS(&pmb, &pc, &p, &rank, &micro)),
                          BRS_OK, "micro_batch");
            counts[rank * GRAD_ACCUM + micro] = count;
            for (size_t i = 0; i < count && used < BATCH * K; i++) indices[used++] = mb[i];
        }
    brs_plan *loaded = new_plan();
    const uint64_t *pi = indices, *pc = counts;
    size_t k = K;
    uint64_t epoch = 0, step = 0;
    expect_status(call_status(FN_brs_plan_load, ARGS(&loaded, &s, &pi, &pc, &k, &epoch, &step)),
                  BRS_OK, "plan_load");
    check(plan_int(loaded, BRS_PLAN_TOTAL_PADDED_TOKENS) == plan_int(p, BRS_PLAN_TOTAL_PADDED_TOKENS),
          "a loaded plan has other padded tokens");
    check(plan_double(loaded, BRS_PLAN_MICRO_SYNC_TIME) == plan_double(p, BRS_PLAN_MICRO_SYNC_TIME),
          "a loaded plan has another sync time");
    k = K - 1;
    expect_status(call_status(FN_brs_plan_load, ARGS(&loaded, &s, &pi, &pc, &k, &epoch, &step)),
                  BRS_ERR_INVALID_ARGUMENT, "plan_load(K - 1 micro-batches)");
    free_plan(loaded);
}

/* The epoch check names the least cap that plans the epoch: that cap
 * passes, one token less does not. */
static void check_epoch_cap(brs_sampler *s)
{
    uint64_t cap = 0, needed = 0, *pcap = &cap, *pneeded = &needed, epoch = 0;
    const brs_sampler *cs = s;
    expect_status(call_status(FN_brs_sampler_check_epoch, ARGS(&pcap, &pneeded, &cs, &epoch)),
                  BRS_OK, "check_epoch (no cap)");
    check(needed == 1 && cap > 0, "check_epoch without a cap: 1 micro-batch, a positive cap");
    expect_status(set_int(s, BRS_OPT_MAX_TOKENS, (int64_t)cap), BRS_OK, "set_int(MAX_TOKENS)");
    expect_status(call_status(FN_brs_sampler_check_epoch, ARGS(&pcap, &pneeded, &cs, &epoch)),
                  BRS_OK, "check_epoch (at the least cap)");
    check(needed <= DP_SIZE * GRAD_ACCUM, "check_epoch: more micro-batches than K at its cap");
    expect_status(set_int(s, BRS_OPT_MAX_TOKENS, (int64_t)cap - 1), BRS_OK, "set_int(MAX_TOKENS)");
    brs_status below = call_status(FN_brs_sampler_check_epoch, ARGS(&pcap, &pneeded, &cs, &epoch));
    check(below == BRS_ERR_CAP_INFEASIBLE || below == BRS_ERR_SAMPLE_TOO_LONG,
          "check_epoch accepts a cap below its least");
    check(*sampler_error(s) != '\0', "no message after a failed check_epoch");
    expect_status(set_int(s, BRS_OPT_MAX_TOKENS, 0), BRS_OK, "set_int(MAX_TOKENS, 0)");
}

/* A batch planned on its own: every position once, and the same plan as
 * the one step of an epoch of those lengths with shuffle off. */
static void check_batch(const brs_sampler *s, const uint32_t *lengths)
{
    enum { K = DP_SIZE * GRAD_ACCUM, N = BATCH * K - 1 };
    brs_plan *batch = new_plan(), *epoch_plan = new_plan();
    brs_sampler *one = new_sampler();
    if (!batch || !epoch_plan || !one) {
        free_plan(batch);
        free_plan(epoch_plan);
        free_sampler(one);
        return;
    }
    const uint32_t *pl = lengths;
    size_t n = N;
    expect_status(call_status(FN_brs_plan_compute_batch, ARGS(&batch, &s, &pl, &n)), BRS_OK,
                  "plan_compute_batch");
    configure(one, lengths);
    expect_status(call_status(FN_brs_sampler_set_lengths,
                              ARGS(&one, &pl, &n, &(int32_t){BRS_LENGTHS_COPY})),
                  BRS_OK, "set_lengths(batch)");
    expect_status(set_int(one, BRS_OPT_SHUFFLE, 0), BRS_OK, "set_int(SHUFFLE, 0)");
    expect_status(set_int(one, BRS_OPT_DROP_LAST, 0), BRS_OK, "set_int(DROP_LAST, 0)");
    uint64_t zero = 0;
    const brs_sampler *cone = one;
    expect_status(call_status(FN_brs_plan_compute, ARGS(&epoch_plan, &cone, &zero, &zero)),
                  BRS_OK, "plan_compute(one-step epoch)");
    unsigned seen[N] = {0};
    for (int64_t rank = 0; rank < DP_SIZE; rank++)
        for (int64_t micro = 0; micro < GRAD_ACCUM; micro++) {
            const uint64_t *a = NULL, *b = NULL, **pa = &a, **pb = &b;
            size_t ca = 0, cb = 0, *pca = &ca, *pcb = &cb;
            const brs_plan *cb_plan = batch, *ce_plan = epoch_plan;
            expect_status(call_status(FN_brs_plan_micro_batch,
                                      ARGS(&pa, &pca, &cb_plan, &rank, &micro)),
                          BRS_OK, "micro_batch(batch)");
            expect_status(call_status(FN_brs_plan_micro_batch,
                                      ARGS(&pb, &pcb, &ce_plan, &rank, &micro)),
                          BRS_OK, "micro_batch(one-step epoch)");
            check(ca == cb && (ca == 0 || memcmp(a, b, ca * sizeof *a) == 0),
                  "a batch plan differs from its one-step epoch");
            for (size_t i = 0; i < ca; i++)
                if (a[i] < N) seen[a[i]]++;
        }
    for (size_t i = 0; i < N; i++)
        if (seen[i] != 1) fail("batch position %zu appears %u times (expected once)", i, seen[i]);
    n = K - 1;
    expect_status(call_status(FN_brs_plan_compute_batch, ARGS(&batch, &s, &pl, &n)),
                  BRS_ERR_TOO_FEW_SAMPLES, "plan_compute_batch(K - 1 samples)");
    free_plan(batch);
    free_plan(epoch_plan);
    free_sampler(one);
}

static uint64_t stream_fingerprint(const brs_sampler *s)
{
    uint64_t v = 0;
    uint64_t *out = &v;
    expect_status(call_status(FN_brs_sampler_stream_fingerprint, ARGS(&out, &s)), BRS_OK,
                  "brs_sampler_stream_fingerprint");
    return v;
}

/* The stream fingerprint follows the seed but not how a step is split into
 * micro-steps; the sampler is left configured as it came. */
static void check_stream_fingerprint(brs_sampler *s)
{
    uint64_t stream = stream_fingerprint(s), fp = fingerprint(s);
    expect_status(set_int(s, BRS_OPT_GRAD_ACCUM, GRAD_ACCUM + 1), BRS_OK,
                  "set_int(GRAD_ACCUM, GRAD_ACCUM + 1)");
    check(stream_fingerprint(s) == stream, "the stream fingerprint covers grad_accum");
    check(fingerprint(s) != fp, "the fingerprint ignores grad_accum");
    expect_status(set_int(s, BRS_OPT_GRAD_ACCUM, GRAD_ACCUM), BRS_OK, "set_int(GRAD_ACCUM)");
    expect_status(set_int(s, BRS_OPT_SEED, 8), BRS_OK, "set_int(SEED, 8)");
    check(stream_fingerprint(s) != stream, "the stream fingerprint ignores the seed");
    expect_status(set_int(s, BRS_OPT_SEED, 7), BRS_OK, "set_int(SEED, 7)");
}

#define MAX_LADDER 128
/* at most steps per epoch x grad_accum */
#define MAX_SHAPES (N_SAMPLES / (BATCH * GRAD_ACCUM * DP_SIZE) * GRAD_ACCUM)

static brs_status set_buckets(brs_sampler *s, const uint32_t *buckets, size_t n)
{
    return call_status(FN_brs_sampler_set_length_buckets, ARGS(&s, &buckets, &n));
}

/* The sampler's buckets: their count, *out pointing at them. */
static size_t get_buckets(const uint32_t **out, const brs_sampler *s)
{
    size_t count = 0, *pc = &count;
    expect_status(call_status(FN_brs_sampler_get_length_buckets, ARGS(&out, &pc, &s)), BRS_OK,
                  "get_length_buckets");
    return count;
}

/* The default ladder of the lengths, asked for its length, then filled;
 * set as the buckets and read back; a bad ladder leaves them; cleared. The
 * sampler is left configured as it came. */
static void check_length_buckets(brs_sampler *s, const uint32_t *lengths)
{
    const brs_sampler *cs = s;
    uint32_t ladder[MAX_LADDER], *none = NULL, *pl = ladder, steps = 0;
    size_t count = 0, *pc = &count, capacity = 0;
    expect_status(call_status(FN_brs_sampler_bucket_ladder, ARGS(&none, &pc, &cs, &steps, &capacity)),
                  BRS_OK, "bucket_ladder(count only)");
    if (count < 2 || count > MAX_LADDER) {
        fail("bucket_ladder: %zu buckets for lengths 1..900", count);
        return;
    }
    capacity = count - 1;
    expect_status(call_status(FN_brs_sampler_bucket_ladder, ARGS(&pl, &pc, &cs, &steps, &capacity)),
                  BRS_ERR_OUT_OF_RANGE, "bucket_ladder(one bucket too few)");
    capacity = count;
    expect_status(call_status(FN_brs_sampler_bucket_ladder, ARGS(&pl, &pc, &cs, &steps, &capacity)),
                  BRS_OK, "bucket_ladder");
    uint32_t longest = 0;
    for (size_t i = 0; i < N_SAMPLES; i++)
        longest = lengths[i] > longest ? lengths[i] : longest;
    for (size_t i = 1; i < count; i++)
        check(ladder[i] > ladder[i - 1], "the ladder is not increasing");
    check(ladder[count - 1] >= longest, "the ladder does not hold the longest sample");

    uint64_t fp = fingerprint(s);
    expect_status(set_buckets(s, ladder, count), BRS_OK, "set_length_buckets(the ladder)");
    const uint32_t *got = NULL;
    check(get_buckets(&got, s) == count && got && memcmp(got, ladder, count * sizeof *got) == 0,
          "get_length_buckets does not return the buckets set");
    check(fingerprint(s) != fp, "the fingerprint ignores the length buckets");
    uint32_t repeated[2] = {64, 64};
    expect_status(set_buckets(s, repeated, 2), BRS_ERR_INVALID_ARGUMENT,
                  "set_length_buckets(64, 64)");
    check(*sampler_error(s) != '\0', "no message after set_length_buckets(64, 64)");
    check(get_buckets(&got, s) == count, "a refused set_length_buckets changed the buckets");
    uint32_t short_ladder[1] = {longest - 1};
    expect_status(set_buckets(s, short_ladder, 1), BRS_OK, "set_length_buckets(below the longest)");
    expect_status(call_status(FN_brs_sampler_validate, ARGS(&s)), BRS_ERR_SAMPLE_TOO_LONG,
                  "validate with a sample above the last bucket");
    expect_status(set_buckets(s, NULL, 0), BRS_OK, "set_length_buckets(NULL, 0)");
    check(get_buckets(&got, s) == 0 && got == NULL, "cleared buckets are still there");
    check(fingerprint(s) == fp, "cleared buckets left the fingerprint changed");
}

/* Shapes of the sampler's rank (0) in `epoch`, walked from the plan of
 * every step: sorted by size, then length, without repeats. */
static size_t walked_shapes(uint64_t *out, const brs_sampler *s, uint64_t epoch, uint64_t steps)
{
    brs_plan *p = new_plan();
    size_t n = 0;
    int64_t rank = 0;
    for (uint64_t step = 0; p && step < steps; step++) {
        expect_status(call_status(FN_brs_plan_compute, ARGS(&p, &s, &epoch, &step)), BRS_OK,
                      "plan_compute(shapes)");
        for (int64_t micro = 0; micro < GRAD_ACCUM; micro++) {
            const uint64_t *indices = NULL, **pi = &indices;
            size_t count = 0, *pc = &count;
            uint64_t padded = 0, real = 0, *pp = &padded, *pr = &real;
            double cost = 0, *pcost = &cost;
            expect_status(call_status(FN_brs_plan_micro_batch, ARGS(&pi, &pc, &p, &rank, &micro)),
                          BRS_OK, "micro_batch(shapes)");
            expect_status(call_status(FN_brs_plan_micro_batch_stats,
                                      ARGS(&pp, &pr, &pcost, &p, &rank, &micro)),
                          BRS_OK, "micro_batch_stats(shapes)");
            if (count == 0 || n == MAX_SHAPES)
                continue;
            uint64_t size = count, length = padded / count;
            size_t at = 0;
            while (at < n && (out[2 * at] < size || (out[2 * at] == size && out[2 * at + 1] < length)))
                at++;
            if (at < n && out[2 * at] == size && out[2 * at + 1] == length)
                continue;
            memmove(&out[2 * at + 2], &out[2 * at], (n - at) * 2 * sizeof *out);
            out[2 * at] = size;
            out[2 * at + 1] = length;
            n++;
        }
    }
    free_plan(p);
    return n;
}

/* The epoch's shapes: the count alone, then every pair, equal to the shapes
 * the plans of the epoch's steps run on rank 0; padded to a multiple of 16
 * with pad_to_multiple_of. The sampler is left configured as it came. */
static void check_shapes(brs_sampler *s)
{
    const brs_sampler *cs = s;
    uint64_t steps = steps_per_epoch(s), epoch = 1;
    for (int64_t multiple = 1; multiple <= 16; multiple *= 16) {
        expect_status(set_int(s, BRS_OPT_PAD_TO_MULTIPLE_OF, multiple), BRS_OK,
                      "set_int(PAD_TO_MULTIPLE_OF)");
        uint64_t want[2 * MAX_SHAPES], got[2 * MAX_SHAPES], *none = NULL, *pg = got;
        size_t n = walked_shapes(want, s, epoch, steps);
        size_t count = 0, *pc = &count, capacity = 0;
        expect_status(call_status(FN_brs_sampler_shapes, ARGS(&none, &pc, &cs, &epoch, &capacity)),
                      BRS_OK, "shapes(count only)");
        check(count == n && n > 0, "shapes: the count is not that of the plans' shapes");
        if (count == 0 || count > MAX_SHAPES)
            continue;
        capacity = count;
        expect_status(call_status(FN_brs_sampler_shapes, ARGS(&pg, &pc, &cs, &epoch, &capacity)),
                      BRS_OK, "shapes");
        check(memcmp(got, want, 2 * n * sizeof *got) == 0, "shapes differ from the plans' shapes");
        for (size_t i = 0; i < n; i++)
            check(got[2 * i + 1] % (uint64_t)multiple == 0,
                  "a shape's length is not a multiple of pad_to_multiple_of");
    }
    expect_status(set_int(s, BRS_OPT_PAD_TO_MULTIPLE_OF, 1), BRS_OK,
                  "set_int(PAD_TO_MULTIPLE_OF, 1)");
}

/* Whether (size, length) is one of the n pairs of shapes. */
static bool has_shape(const uint64_t *shapes, size_t n, uint64_t size, uint64_t length)
{
    for (size_t i = 0; i < n; i++)
        if (shapes[2 * i] == size && shapes[2 * i + 1] == length)
            return true;
    return false;
}

/* LIBBRS_1.6: none without max_shapes; with it, the count alone, a call
 * without room, then every pair: sorted, at most max_shapes, and holding
 * the shapes the plans of two epochs run on rank 0. The sampler is left
 * configured as it came. */
static void check_shape_vocabulary(brs_sampler *s)
{
    const brs_sampler *cs = s;
    uint64_t shapes[2 * MAX_SHAPES], walked[2 * MAX_SHAPES], *none = NULL, *ps = shapes;
    size_t count = 99, *pc = &count, capacity = 0;
    expect_status(call_status(FN_brs_sampler_shape_vocabulary, ARGS(&none, &pc, &cs, &capacity)),
                  BRS_OK, "shape_vocabulary(max_shapes 0)");
    check(count == 0, "shape_vocabulary: pairs without max_shapes");
    const int64_t most = 4;
    expect_status(set_int(s, BRS_OPT_MAX_SHAPES, most), BRS_OK, "set_int(MAX_SHAPES)");
    check(get_int(s, BRS_OPT_MAX_SHAPES) == most, "get_int(MAX_SHAPES)");
    expect_status(call_status(FN_brs_sampler_shape_vocabulary, ARGS(&none, &pc, &cs, &capacity)),
                  BRS_OK, "shape_vocabulary(count only)");
    check(count > 0 && count <= (size_t)most, "shape_vocabulary: a count outside 1 .. max_shapes");
    if (count == 0 || count > (size_t)most) {
        expect_status(set_int(s, BRS_OPT_MAX_SHAPES, 0), BRS_OK, "set_int(MAX_SHAPES, 0)");
        return;
    }
    size_t n = count;
    if (n > 1) {
        capacity = n - 1;
        expect_status(call_status(FN_brs_sampler_shape_vocabulary, ARGS(&ps, &pc, &cs, &capacity)),
                      BRS_ERR_OUT_OF_RANGE, "shape_vocabulary(without room)");
        check(count == n, "shape_vocabulary without room: the count differs");
    }
    capacity = n;
    expect_status(call_status(FN_brs_sampler_shape_vocabulary, ARGS(&ps, &pc, &cs, &capacity)),
                  BRS_OK, "shape_vocabulary");
    check(count == n, "shape_vocabulary: the count differs from the count alone");
    for (size_t i = 1; i < n; i++)
        check(shapes[2 * i - 2] < shapes[2 * i] ||
                  (shapes[2 * i - 2] == shapes[2 * i] && shapes[2 * i - 1] < shapes[2 * i + 1]),
              "shape_vocabulary: pairs not sorted by size, then length");
    uint64_t steps = steps_per_epoch(s);
    for (uint64_t epoch = 0; epoch < 2; epoch++) {
        size_t w = walked_shapes(walked, s, epoch, steps);
        check(w > 0 && w <= n, "shape_vocabulary: an epoch runs more shapes than it has");
        for (size_t i = 0; i < w; i++)
            check(has_shape(shapes, n, walked[2 * i], walked[2 * i + 1]),
                  "a planned micro-batch's shape is not in the vocabulary");
    }
    expect_status(set_int(s, BRS_OPT_MAX_SHAPES, 0), BRS_OK, "set_int(MAX_SHAPES, 0)");
}

/* Context parallelism (LIBBRS_1.6): dp_size 3 x cp_size 2 ranks, packed,
 * a cap per rank; every rank's micro-batch, stats and token ranges read
 * through ffi_call: every rank of a group reads the same samples, the
 * ranges of a group cover each sample once, and every sample of the epoch
 * is in one group. */
static void check_context_parallel(brs_sampler *s, const uint32_t *lengths)
{
    expect_status(set_int(s, BRS_OPT_PACKED, 1), BRS_OK, "set_int(PACKED)");
    expect_status(set_int(s, BRS_OPT_CP_SIZE, 2), BRS_OK, "set_int(CP_SIZE)");
    expect_status(set_int(s, BRS_OPT_MAX_TOKENS_PER_RANK, 1000), BRS_OK,
                  "set_int(MAX_TOKENS_PER_RANK)");
    expect_status(set_double(s, BRS_OPT_CP_COMM_COST, 0.25), BRS_OK, "set_double(CP_COMM_COST)");
    brs_plan *p = new_plan();
    const brs_plan *cp = p;
    uint64_t steps = steps_per_epoch(s), covered[N_SAMPLES] = {0};
    unsigned seen[N_SAMPLES] = {0};
    for (uint64_t epoch = 0, step = 0; p && step < steps; step++) {
        expect_status(call_status(FN_brs_plan_compute, ARGS(&p, &s, &epoch, &step)), BRS_OK,
                      "plan_compute(cp)");
        uint64_t micro_steps = 0, *pm = &micro_steps;
        expect_status(call_status(FN_brs_plan_cp_micro_steps, ARGS(&pm, &cp)), BRS_OK,
                      "cp_micro_steps");
        check(micro_steps == GRAD_ACCUM, "cp_micro_steps != grad_accum");
        for (uint64_t micro = 0; micro < micro_steps; micro++)
            for (uint64_t rank = 0; rank < DP_SIZE * 2; rank++) {
                const uint64_t *indices = NULL, **pi = &indices;
                size_t count = 0, *pc = &count;
                uint64_t first = 0, degree = 0, *pf = &first, *pd = &degree;
                expect_status(call_status(FN_brs_plan_cp_micro_batch,
                                          ARGS(&pi, &pc, &pf, &pd, &cp, &rank, &micro)),
                              BRS_OK, "cp_micro_batch");
                check(first <= rank && rank < first + degree && first % degree == 0,
                      "cp_micro_batch: a rank outside its aligned group");
                uint64_t padded = 0, real = 0, *pp = &padded, *pr = &real;
                double cost = -1, *pcost = &cost;
                expect_status(call_status(FN_brs_plan_cp_micro_batch_stats,
                                          ARGS(&pp, &pr, &pcost, &cp, &rank, &micro)),
                              BRS_OK, "cp_micro_batch_stats");
                check(padded <= 1000 && real <= padded, "cp_micro_batch_stats: above the cap");
                uint64_t ranges[3 * 2 * N_SAMPLES], *none = NULL, *pg = ranges;
                size_t n = 0, *pn = &n, zero = 0, room = 2 * N_SAMPLES;
                expect_status(call_status(FN_brs_plan_cp_token_ranges,
                                          ARGS(&none, &pn, &cp, &rank, &micro, &zero)),
                              BRS_OK, "cp_token_ranges(count only)");
                expect_status(call_status(FN_brs_plan_cp_token_ranges,
                                          ARGS(&pg, &pn, &cp, &rank, &micro, &room)),
                              BRS_OK, "cp_token_ranges");
                uint64_t sum = 0;
                for (size_t q = 0; q < n; q++) {
                    uint64_t index = ranges[3 * q];
                    check(index < N_SAMPLES && ranges[3 * q + 2] <= lengths[index],
                          "cp_token_ranges: a range outside its sample");
                    if (index >= N_SAMPLES) continue;
                    covered[index] += ranges[3 * q + 2] - ranges[3 * q + 1];
                    sum += ranges[3 * q + 2] - ranges[3 * q + 1];
                }
                check(sum == real, "cp_token_ranges: the ranges do not sum to the real tokens");
                if (rank == first)
                    for (size_t j = 0; j < count; j++)
                        if (indices[j] < N_SAMPLES) seen[indices[j]]++;
            }
    }
    for (size_t i = 0; i < N_SAMPLES; i++) {
        check(seen[i] == 1, "cp: a sample not in exactly one micro-batch of the epoch");
        check(covered[i] == lengths[i], "cp: a sample's tokens not covered exactly once");
    }
    if (p) free_plan(p);
    expect_status(set_int(s, BRS_OPT_CP_SIZE, 1), BRS_OK, "set_int(CP_SIZE, 1)");
    expect_status(set_int(s, BRS_OPT_MAX_TOKENS_PER_RANK, 0), BRS_OK,
                  "set_int(MAX_TOKENS_PER_RANK, 0)");
    expect_status(set_double(s, BRS_OPT_CP_COMM_COST, 0.1), BRS_OK, "set_double(CP_COMM_COST)");
    expect_status(set_int(s, BRS_OPT_PACKED, 0), BRS_OK, "set_int(PACKED, 0)");
}

static void check_session(void)
{
    uint32_t lengths[N_SAMPLES];
    fill_lengths(lengths, N_SAMPLES);
    brs_sampler *s = new_sampler();
    if (!s)
        return;
    configure(s, lengths);
    check_option_errors(s);
    uint64_t fp = fingerprint(s);
    expect_status(set_int(s, BRS_OPT_SEED, 8), BRS_OK, "set_int(SEED, 8)");
    check(fingerprint(s) != fp, "the fingerprint ignores the seed");
    expect_status(set_int(s, BRS_OPT_SEED, 7), BRS_OK, "set_int(SEED, 7)");
    check(fingerprint(s) == fp, "the fingerprint is not a function of the configuration");
    check_stream_fingerprint(s);

    check_epoch_cap(s);
    check_batch(s, lengths);
    check_length_buckets(s, lengths);
    check_shapes(s);
    check_shape_vocabulary(s);
    check_context_parallel(s, lengths);
    uint64_t steps = steps_per_epoch(s);
    check(steps == N_SAMPLES / (BATCH * GRAD_ACCUM * DP_SIZE), "steps_per_epoch");
    brs_plan *p = new_plan();
    unsigned seen[N_SAMPLES] = {0};
    for (uint64_t epoch = 0, step = 0; p && step < steps; step++) {
        expect_status(call_status(FN_brs_plan_compute, ARGS(&p, &s, &epoch, &step)), BRS_OK,
                      "plan_compute");
        check_step(p, step, lengths, seen);
    }
    for (size_t i = 0; i < N_SAMPLES; i++)
        if (seen[i] != 1)
            fail("sample %zu appears %u times in epoch 0 (expected once)", i, seen[i]);
    if (p) {
        uint64_t epoch = 0, step = 0;
        expect_status(call_status(FN_brs_plan_compute, ARGS(&p, &s, &epoch, &step)), BRS_OK,
                      "plan_compute");
        check_load(p, s);
        check_plan_errors(p, s, steps);
    }
    free_plan(p);
    free_sampler(s);
}

/* ---- the file readers, through ffi_call only ---------------------------- */

static brs_lengths_file *new_lengths_file(void)
{
    brs_lengths_file *f = NULL, **out = &f;
    expect_status(call_status(FN_brs_lengths_file_new, ARGS(&out)), BRS_OK, "lengths_file_new");
    check(f != NULL, "brs_lengths_file_new returned no handle");
    return f;
}

static void free_lengths_file(brs_lengths_file *f)
{
    invoke(FN_brs_lengths_file_free, ARGS(&f));
}

static brs_cost_model_file *new_cost_model_file(void)
{
    brs_cost_model_file *f = NULL, **out = &f;
    expect_status(call_status(FN_brs_cost_model_file_new, ARGS(&out)), BRS_OK,
                  "cost_model_file_new");
    check(f != NULL, "brs_cost_model_file_new returned no handle");
    return f;
}

static void free_cost_model_file(brs_cost_model_file *f)
{
    invoke(FN_brs_cost_model_file_free, ARGS(&f));
}

static brs_status parse_lengths(brs_lengths_file *f, const char *text, const char *name)
{
    size_t size = strlen(text);
    return call_status(FN_brs_lengths_file_parse, ARGS(&f, &text, &size, &name));
}

/* The file read: its lengths and images, in the order of want[] (a length,
 * then its images' loads, then 0). */
static void check_lengths_read(const brs_lengths_file *f, const uint32_t *want, size_t samples,
                               const char *what)
{
    const uint32_t *lengths = NULL, *patches = NULL, **pl = &lengths, **pp = &patches;
    const uint64_t *offsets = NULL, **po = &offsets;
    size_t count = 0, *pc = &count;
    expect_status(call_status(FN_brs_lengths_file_lengths, ARGS(&pl, &pc, &f)), BRS_OK, what);
    expect_status(call_status(FN_brs_lengths_file_images, ARGS(&pp, &po, &f)), BRS_OK, what);
    if (count != samples || !lengths || !patches || !offsets) {
        fail("%s: %zu samples, expected %zu", what, count, samples);
        return;
    }
    check(offsets[0] == 0, "lengths file: offsets[0] is not 0");
    for (size_t i = 0; i < samples; i++) {
        check(lengths[i] == *want++, "lengths file: a length differs");
        for (uint64_t image = offsets[i]; image < offsets[i + 1]; image++)
            check(patches[image] == *want++, "lengths file: an image load differs");
        check(*want++ == 0, "lengths file: a sample has too few images");
    }
}

/* A file read whole, then in chunks that cut its lines, then refused. */
static void check_lengths_file(void)
{
    static const char text[] = "5\r\n17 3,004\n9 0\n12\t7";
    static const uint32_t want[] = {5, 0, 17, 3, 4, 0, 9, 0, 12, 7, 0};
    const char *name = "data.lengths";
    brs_lengths_file *f = new_lengths_file();
    if (!f)
        return;
    expect_status(parse_lengths(f, text, name), BRS_OK, "lengths_file_parse");
    check_lengths_read(f, want, 4, "lengths file read whole");
    expect_status(call_status(FN_brs_lengths_file_begin, ARGS(&f, &name)), BRS_OK,
                  "lengths_file_begin");
    for (size_t at = 0; at < sizeof text - 1; at += 2) {
        const char *chunk = text + at;
        size_t size = sizeof text - 1 - at < 2 ? 1 : 2;
        expect_status(call_status(FN_brs_lengths_file_feed, ARGS(&f, &chunk, &size)), BRS_OK,
                      "lengths_file_feed");
    }
    expect_status(call_status(FN_brs_lengths_file_finish, ARGS(&f)), BRS_OK,
                  "lengths_file_finish");
    check_lengths_read(f, want, 4, "lengths file read in chunks");
    expect_status(parse_lengths(f, "5\n1.5\n", name), BRS_ERR_INVALID_ARGUMENT,
                  "lengths_file_parse(a refused file)");
    const char *message = call_string(FN_brs_lengths_file_last_error, ARGS(&f));
    check(message && strstr(message, "data.lengths line 2: '1.5' is not a positive integer"),
          "lengths file: the message does not name the file, the line and the problem");
    const uint32_t *lengths = NULL, **pl = &lengths;
    size_t count = 0, *pc = &count;
    expect_status(call_status(FN_brs_lengths_file_lengths, ARGS(&pl, &pc, &f)), BRS_ERR_STATE,
                  "lengths_file_lengths after a refused file");
    free_lengths_file(f);
}

static double cost_model_double(const brs_cost_model_file *f, const char *key)
{
    double value = -1, *pv = &value;
    expect_status(call_status(FN_brs_cost_model_file_get_double, ARGS(&pv, &f, &key)), BRS_OK,
                  key);
    return value;
}

/* A calibrated file's values by key, an absent key, then a refused file. */
static void check_cost_model_file(void)
{
    const char *text = "{\"format\": \"brs-cost-model\", \"version\": 1, \"alpha\": 0.25, "
                       "\"intercept\": 3, \"max_tokens\": 4096, \"r2\": null, "
                       "\"model\": \"m\\u00e9\", \"timings\": [1, {\"x\": 2}]}";
    const char *name = "model.json", *key = "max_tokens";
    size_t size = strlen(text);
    brs_cost_model_file *f = new_cost_model_file();
    if (!f)
        return;
    expect_status(call_status(FN_brs_cost_model_file_parse, ARGS(&f, &text, &size, &name)),
                  BRS_OK, "cost_model_file_parse");
    check(cost_model_double(f, "alpha") == 0.25 && cost_model_double(f, "intercept") == 3.0,
          "cost model: alpha or intercept differs");
    int64_t max_tokens = 0, *pm = &max_tokens;
    expect_status(call_status(FN_brs_cost_model_file_get_int, ARGS(&pm, &f, &key)), BRS_OK,
                  "cost_model_file_get_int(max_tokens)");
    check(max_tokens == 4096, "cost model: max_tokens differs");
    int32_t present = -1, *pp = &present;
    key = "r2";
    expect_status(call_status(FN_brs_cost_model_file_has, ARGS(&pp, &f, &key)), BRS_OK,
                  "cost_model_file_has(r2)");
    check(present == 0, "cost model: a null r2 is present");
    const char *json = NULL, **pj = &json;
    size_t length = 0, *pl = &length;
    key = "timings";
    expect_status(call_status(FN_brs_cost_model_file_get_json, ARGS(&pj, &pl, &f, &key)), BRS_OK,
                  "cost_model_file_get_json(timings)");
    check(json && length == 13 && memcmp(json, "[1, {\"x\": 2}]", 13) == 0,
          "cost model: the JSON of timings differs");
    text = "{\"format\": \"brs-cost-model\", \"version\": 1, \"alpha\": -1, \"intercept\": 0}";
    size = strlen(text);
    expect_status(call_status(FN_brs_cost_model_file_parse, ARGS(&f, &text, &size, &name)),
                  BRS_ERR_INVALID_ARGUMENT, "cost_model_file_parse(a negative alpha)");
    const char *message = call_string(FN_brs_cost_model_file_last_error, ARGS(&f));
    check(message && strstr(message, "model.json: key \"alpha\" is -1, out of range"),
          "cost model: the message does not name the file and the key");
    free_cost_model_file(f);
}

static void check_all_called(void)
{
    for (int i = 0; i < FN_COUNT; i++)
        if (fns[i].code && fns[i].calls == 0)
            fail("%s was never called through libffi", fns[i].name);
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: %s LIBRARY.so.1 LIBBRS.SYM\n", argv[0]);
        return 2;
    }
    check_vocabulary();
    check_table_against_script(argv[2]);
    void *lib = open_library(argv[1]);
    if (!lib)
        return 1;
    resolve_all(lib);

    struct valid_args va;
    memset(&va, 0, sizeof va);
    va.lengths[0] = 1;
    va.sampler = new_sampler();
    va.plan = new_plan();
    va.lengths_file = new_lengths_file();
    va.cost_model_file = new_cost_model_file();
    check_null_pointers(&va);
    free_plan(va.plan);
    free_sampler(va.sampler);
    free_lengths_file(va.lengths_file);
    free_cost_model_file(va.cost_model_file);

    check_versions();
    check_strerror();
    check_bounds();
    check_option_table();
    check_session();
    check_lengths_file();
    check_cost_model_file();
    check_all_called();
    dlclose(lib);
    printf("%s: %d failure(s), %d functions called through libffi\n",
           failures ? "FAIL" : "PASS", failures, FN_COUNT);
    return failures ? 1 : 0;
}
