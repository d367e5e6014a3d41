/*
 * brs.i - the one SWIG interface of libbrs, for every target language
 * (built here for Python as `brs_swig` and for Tcl).
 *
 * The target language sees:
 *   Sampler(lengths, name, value, ...)       lengths: a native list of ints;
 *                      then any option of the library's table by its name
 *                      (Python: Sampler(lengths, **options)), a number or the name
 *                      of one of its values (sync "step"); an option not given keeps
 *                      the library's default. The options of the 1.4 constructor may
 *                      still come first by position: batch_size grad_accum dp_size
 *                      rank seed shuffle drop_last alpha intercept max_tokens packed
 *                      pad_to_multiple_of.
 *     .set_epoch(e) .epoch() .steps_per_epoch() .fingerprint() (16 hex chars)
 *     .stream_fingerprint() (16 hex chars; leaves out dp_size, batch_size,
 *                      grad_accum and sync: equal for one sample stream split otherwise)
 *     .check_epoch() -> [least max_tokens that plans the epoch, micro-batches needed]
 *     .set_length_buckets(buckets)  buckets: a native list of ints, increasing
 *                      ([] clears them); .validate() refuses a sample above the last
 *     .length_buckets() -> [buckets]   .bucket_ladder(steps_per_doubling=0) -> [buckets]:
 *                      the library's default ladder for the lengths (not set)
 *     .shapes()     -> [[batch size, padded length], ...]: the distinct shapes this
 *                      rank runs in the epoch (from set_epoch), sorted
 *     .shape_vocabulary() -> [[batch size, padded length], ...]: with max_shapes, the
 *                      shapes every micro-batch of the run has, sorted ([] without)
 *     .plan(step)   -> [rank][micro] -> [dataset indices]   (epoch from set_epoch)
 *     .plan_batch(lengths, images) -> [rank][micro] -> [positions into lengths]:
 *                      one step of those lengths alone, this sampler's configuration;
 *                      images (optional) as set_encoder_loads takes them, one per length
 *     .stats()      -> [rank][micro] -> [padded_tokens, real_tokens, cost]
 *                      of the step planned last
 *     .plan_int(BRS_PLAN_*) .plan_double(BRS_PLAN_*)   totals of that step
 *     .set_encoder_loads(images)  images: a native list with one list of patch
 *                      counts per sample ([] for a sample without images; [] clears)
 *     .encoder_load(index) -> [images, patches]   of one sample
 *     .encoder_stats() -> [rank][micro] -> [encoder_tokens, images, encoder_cost]
 *                      of the step planned last
 *     .set_option(name, v) .get_option(name)   any option by its name
 *     .set_int(BRS_OPT_*, v) .set_double(BRS_OPT_*, v) .get_int(k) .get_double(k)
 *     .validate()
 *   version_number() version_string() strerror(code)
 *   option_bounds_int(key), option_bounds_double(key) -> [lower, upper]
 *   option_count() option_key(i) option_find(name) option_name(key) option_help(key)
 *   option_value_name(key, v) option_value_find(key, name) option_keyword(key)
 *   option_scope(key) option_type(key) option_default_int(key) option_default_double(key)
 *   every BRS_* constant of brs.h.
 * A negative status raises the language's error (ValueError, MemoryError or
 * RuntimeError in Python; a Tcl error) whose message is brs_strerror() plus
 * the handle's detail message.
 *
 * Everything is written once in C below; the only per-language code is the
 * conversion of lists (the BRS_TARGET sections), kept to a few lines each.
 */
%module brs_swig

%include <stdint.i>

%{
#include <brs.h>

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
%}

/* ------------------------------------------------------------------------ */
/* Constants: every BRS_* macro of the header; its functions are wrapped by  */
/* the class and functions below instead (they use out-parameters).          */
/* ------------------------------------------------------------------------ */

%rename("$ignore", regextarget=1) "^brs_";
%include <brs.h>

/* ------------------------------------------------------------------------ */
/* Errors: every fallible call takes a hidden first argument, BrsError *err, */
/* that it fills on failure; the argout typemap turns it into an exception.  */
/* ------------------------------------------------------------------------ */

%{
typedef struct {
    brs_status status;
    int kind;  /* the SWIG error category when not the status's (a wrong type), or 0 */
    char message[512];
} BrsError;

/* Records a failure: "<strerror> (brs status <code>): <detail>". */
static void brs_swig_fail(BrsError *err, brs_status status, const char *detail)
{
    err->status = status;
    snprintf(err->message, sizeof err->message, "%s (brs status %d)%s%s",
             brs_strerror(status), (int)status, detail && *detail ? ": " : "",
             detail ? detail : "");
}

/* The SWIG error category of a status, mapped once for every language. */
static int brs_swig_error_kind(brs_status status)
{
    switch (status) {
    case BRS_ERR_NO_MEMORY:
        return SWIG_MemoryError;
    case BRS_ERR_STATE:
    case BRS_ERR_NULL_POINTER:
        return SWIG_RuntimeError;
    default:
        return SWIG_ValueError;
    }
}
%}

%typemap(in, numinputs=0) BrsError *err (BrsError temp) {
    temp.status = BRS_OK;
    temp.kind = 0;
    temp.message[0] = '\0';
    $1 = &temp;
}
%typemap(argout) BrsError *err {
    if ($1->status != BRS_OK) {
#ifdef SWIGPYTHON
        /* The result object was built before the check: drop it. */
        Py_XDECREF($result);
        $result = NULL;
#endif
        SWIG_exception_fail($1->kind ? $1->kind : brs_swig_error_kind($1->status),
                            $1->message);
    }
}

/* ------------------------------------------------------------------------ */
/* Encoder loads: a list of lists flattened as brs_sampler_set_encoder_loads */
/* takes it (sample i's patch counts are patches[offsets[i] .. offsets[i+1]))*/
/* The BRS_TARGET typemaps walk the lists; these helpers hold the arrays.    */
/* ------------------------------------------------------------------------ */

%{
typedef struct {
    uint32_t *patches;
    uint64_t *offsets;
    size_t n, used, room;
    int error; /* 0, or the SWIG error kind of the first failure */
    char message[96];
} BrsImages;

static void images_fail(BrsImages *im, int kind, size_t sample, const char *what)
{
    if (im->error) return;
    im->error = kind;
    snprintf(im->message, sizeof im->message, "images[%zu] %s", sample, what);
}

static void images_start(BrsImages *im, size_t n)
{
    memset(im, 0, sizeof *im);
    im->n = n;
    im->room = n + 1;
    im->offsets = (uint64_t *)malloc((n + 1) * sizeof *im->offsets);
    im->patches = (uint32_t *)malloc(im->room * sizeof *im->patches);
    if (!im->offsets || !im->patches)
        images_fail(im, SWIG_MemoryError, 0, "cannot be copied: no memory");
    else
        im->offsets[0] = 0;
}

/* One patch count of sample i; is_count is 0 for an item that is no
 * non-negative integer. A 0 is passed on: the library's message names it. */
static void images_add(BrsImages *im, size_t i, int is_count, uint64_t patches)
{
    if (im->error) return;
    if (!is_count || patches > UINT32_MAX) {
        images_fail(im, SWIG_ValueError, i, "holds a patch count that is not in 1 .. 2**32-1");
        return;
    }
    if (im->used == im->room) {
        uint32_t *grown = (uint32_t *)realloc(im->patches, 2 * im->room * sizeof *grown);
        if (!grown) {
            images_fail(im, SWIG_MemoryError, i, "cannot be copied: no memory");
            return;
        }
        im->patches = grown;
        im->room *= 2;
    }
    im->patches[im->used++] = (uint32_t)patches;
}

static void images_next(BrsImages *im, size_t i)
{
    if (!im->error) im->offsets[i + 1] = im->used;
}
%}

/* ------------------------------------------------------------------------ */
/* Option values: what a native value given for an option is (BRS_TARGET's  */
/* brs_obj_value says), so that one C function sets any option by its name.  */
/* ------------------------------------------------------------------------ */

%{
enum {
    BRS_SWIG_VALUE_INT,
    BRS_SWIG_VALUE_DOUBLE,
    BRS_SWIG_VALUE_TEXT,
    BRS_SWIG_VALUE_TOO_BIG, /* an integer beyond int64_t */
    BRS_SWIG_VALUE_OTHER
};

typedef struct {
    int kind;          /* BRS_SWIG_VALUE_* */
    int64_t integer;   /* _INT */
    double number;     /* _DOUBLE */
    const char *text;  /* _TEXT: the text; _OTHER: its type's name, if known */
} BrsValue;

/* The constructor's arguments after the lengths, as the language passed them. */
typedef struct {
    size_t count;
    void *const *items; /* brs_obj */
} BrsArgs;
%}

/* ------------------------------------------------------------------------ */
/* BRS_TARGET: native lists, per target language.                           */
/*   brs_obj             a new native value (owned reference)                */
/*   brs_obj_list()      an empty list; brs_obj_append(list, item) appends   */
/*                       and consumes item, returns 0 if anything is NULL    */
/*   brs_obj_int/uint/double a number; brs_obj_release drops a value         */
/*   (const uint32_t *lengths, size_t n)  a list of ints as a C array        */
/*   brs_obj_value(o, &value)  what an option's value is (BrsValue)          */
/*   (...)               the constructor's extra arguments, as BrsArgs       */
/*   (const uint32_t *images, ...)  a list of lists of ints, via BrsImages   */
/* ------------------------------------------------------------------------ */

#if defined(SWIGPYTHON)
%{
typedef PyObject *brs_obj;
static brs_obj brs_obj_list(void) { return PyList_New(0); }
static brs_obj brs_obj_uint(uint64_t v) { return PyLong_FromUnsignedLongLong(v); }
static brs_obj brs_obj_int(int64_t v) { return PyLong_FromLongLong(v); }
static brs_obj brs_obj_double(double v) { return PyFloat_FromDouble(v); }
static void brs_obj_release(brs_obj o) { Py_XDECREF(o); }
static int brs_obj_append(brs_obj list, brs_obj item)
{
    int ok = list && item && PyList_Append(list, item) == 0;
    Py_XDECREF(item);
    return ok;
}
%}
%typemap(out) brs_obj { $result = $1; }
%typemap(in) brs_obj value { $1 = $input; }

%{
/* An int (bool and numpy integers included), a float, or a value's name. */
static void brs_obj_value(brs_obj o, BrsValue *value)
{
    value->kind = BRS_SWIG_VALUE_OTHER;
    value->text = Py_TYPE(o)->tp_name;
    if (PyUnicode_Check(o)) {
        value->text = PyUnicode_AsUTF8(o);
        value->kind = value->text ? BRS_SWIG_VALUE_TEXT : BRS_SWIG_VALUE_OTHER;
    } else if (PyIndex_Check(o)) {
        PyObject *number = PyNumber_Index(o);
        int overflow = 0;
        long long v = number ? PyLong_AsLongLongAndOverflow(number, &overflow) : -1;
        Py_XDECREF(number);
        if (overflow)
            value->kind = BRS_SWIG_VALUE_TOO_BIG;
        else if (!PyErr_Occurred()) {
            value->kind = BRS_SWIG_VALUE_INT;
            value->integer = v;
        }
    } else if (PyFloat_Check(o) || PyNumber_Check(o)) {
        double v = PyFloat_AsDouble(o);
        if (!PyErr_Occurred()) {
            value->kind = BRS_SWIG_VALUE_DOUBLE;
            value->number = v;
        }
    }
    PyErr_Clear(); /* a value that is none of these is reported as such */
}
%}

/* The extra positional arguments (the Python proxy passes the keywords as
 * name, value pairs after them). */
%typemap(in) (...) (BrsArgs args) {
    args.count = (size_t)PyTuple_GET_SIZE(varargs);
    args.items = (void *const *)PySequence_Fast_ITEMS(varargs);
    $1 = (void *)&args;
}

%typemap(in) (const uint32_t *lengths, size_t n), (const uint32_t *buckets, size_t n_buckets) {
    /* An iterator is no sequence: PySequence_Fast would drain it, forever if it never ends. */
    if (!PySequence_Check($input))
        SWIG_exception_fail(SWIG_TypeError, "$1_name must be a sequence of ints (list, tuple, "
                            "array); an iterator may never end: pass list(...) of it");
    PyObject *seq = PySequence_Fast($input, "$1_name must be a sequence of ints");
    if (!seq)
        SWIG_fail;
    $2 = (size_t)PySequence_Fast_GET_SIZE(seq);
    $1 = (uint32_t *)malloc(($2 ? $2 : 1) * sizeof(uint32_t));
    for (size_t i = 0; $1 && i < $2; i++) {
        /* PyNumber_Index also accepts numpy integers; it refuses floats. */
        PyObject *number = PyNumber_Index(PySequence_Fast_GET_ITEM(seq, (Py_ssize_t)i));
        unsigned long v = number ? PyLong_AsUnsignedLong(number) : 0;
        Py_XDECREF(number);
        if (PyErr_Occurred() || v > UINT32_MAX) {
            Py_DECREF(seq);
            PyErr_Format(PyExc_ValueError, "$1_name[%zu] is not an integer in 0 .. 2**32-1", i);
            SWIG_fail;
        }
        $1[i] = (uint32_t)v;
    }
    Py_DECREF(seq);
    if (!$1)
        SWIG_exception_fail(SWIG_MemoryError, "no memory for $1_name");
}
%typemap(in) (const void *indices, size_t n_indices), (const void *counts, size_t n_counts) {
    if (!PySequence_Check($input))
        SWIG_exception_fail(SWIG_TypeError, "$1_name must be a sequence of ints (list, tuple, "
                            "array), not an iterator: pass list(...) of it");
    PyObject *seq = PySequence_Fast($input, "$1_name must be a sequence of ints");
    if (!seq)
        SWIG_fail;
    $2 = (size_t)PySequence_Fast_GET_SIZE(seq);
    uint64_t *values = (uint64_t *)malloc(($2 ? $2 : 1) * sizeof(uint64_t));
    $1 = values;
    for (size_t i = 0; values && i < $2; i++) {
        PyObject *number = PyNumber_Index(PySequence_Fast_GET_ITEM(seq, (Py_ssize_t)i));
        unsigned long long v = number ? PyLong_AsUnsignedLongLong(number) : 0;
        Py_XDECREF(number);
        if (PyErr_Occurred()) {
            Py_DECREF(seq);
            PyErr_Format(PyExc_ValueError, "$1_name[%zu] is not an integer in 0 .. 2**64-1", i);
            SWIG_fail;
        }
        values[i] = (uint64_t)v;
    }
    Py_DECREF(seq);
    if (!$1)
        SWIG_exception_fail(SWIG_MemoryError, "no memory for $1_name");
}
%typemap(in) (const uint32_t *images, const void *image_offsets, size_t n_samples)
             (BrsImages im) {
    if (!PySequence_Check($input))
        SWIG_exception_fail(SWIG_TypeError, "images must be a sequence with one list of patch "
                            "counts per sample ([] for a sample without images)");
    PyObject *samples = PySequence_Fast($input, "images must be a sequence");
    if (!samples)
        SWIG_fail;
    images_start(&im, (size_t)PySequence_Fast_GET_SIZE(samples));
    for (size_t i = 0; !im.error && i < im.n; i++) {
        PyObject *entry = PySequence_Fast_GET_ITEM(samples, (Py_ssize_t)i);
        PyObject *list = PySequence_Check(entry) ? PySequence_Fast(entry, "") : NULL;
        if (!list)
            images_fail(&im, SWIG_TypeError, i, "is not a list of patch counts");
        for (Py_ssize_t j = 0; list && !im.error && j < PySequence_Fast_GET_SIZE(list); j++) {
            PyObject *number = PyNumber_Index(PySequence_Fast_GET_ITEM(list, j));
            unsigned long long v = number ? PyLong_AsUnsignedLongLong(number) : 0;
            Py_XDECREF(number);
            images_add(&im, i, !PyErr_Occurred(), v);
        }
        Py_XDECREF(list);
        images_next(&im, i);
    }
    Py_DECREF(samples);
    $1 = im.patches;
    $2 = im.offsets;
    $3 = im.n;
    if (im.error) {
        PyErr_Clear();
        SWIG_exception_fail(im.error, im.message);
    }
}
#elif defined(SWIGTCL)
%{
#ifndef TCL_SIZE_MAX
typedef int Tcl_Size; /* Tcl 8.6 counts list elements in int */
#endif
typedef Tcl_Obj *brs_obj;
static brs_obj brs_obj_list(void) { return Tcl_NewListObj(0, NULL); }
static brs_obj brs_obj_uint(uint64_t v) { return Tcl_NewWideIntObj((Tcl_WideInt)v); }
static brs_obj brs_obj_int(int64_t v) { return Tcl_NewWideIntObj((Tcl_WideInt)v); }
static brs_obj brs_obj_double(double v) { return Tcl_NewDoubleObj(v); }
static void brs_obj_release(brs_obj o)
{
    if (o) {
        Tcl_IncrRefCount(o);
        Tcl_DecrRefCount(o);
    }
}
static int brs_obj_append(brs_obj list, brs_obj item)
{
    return Tcl_ListObjAppendElement(NULL, list, item) == TCL_OK;
}
%}
%typemap(out) brs_obj { if ($1) Tcl_SetObjResult(interp, $1); }
%typemap(in) brs_obj value { $1 = $input; }

%{
/* A wide integer, a double, or else a value's name (Tcl has only strings). */
static void brs_obj_value(brs_obj o, BrsValue *value)
{
    Tcl_WideInt integer;
    double number;
    if (Tcl_GetWideIntFromObj(NULL, o, &integer) == TCL_OK) {
        value->kind = BRS_SWIG_VALUE_INT;
        value->integer = (int64_t)integer;
    } else if (Tcl_GetDoubleFromObj(NULL, o, &number) == TCL_OK) {
        value->kind = BRS_SWIG_VALUE_DOUBLE;
        value->number = number;
    } else {
        value->kind = BRS_SWIG_VALUE_TEXT;
        value->text = Tcl_GetString(o);
    }
}
%}

/* The words after the lengths (objv[1]), if any: `new_Sampler lengths name
 * value ...`; the constructor is the one function with (...). */
%typemap(default) (...) { $1 = NULL; }
%typemap(in) (...) (BrsArgs args) {
    args.count = (size_t)(objc - 2);
    args.items = (void *const *)(objv + 2);
    $1 = (void *)&args;
}

%typemap(in) (const uint32_t *lengths, size_t n), (const uint32_t *buckets, size_t n_buckets) {
    Tcl_Obj **items;
    Tcl_Size count;
    if (Tcl_ListObjGetElements(interp, $input, &count, &items) != TCL_OK)
        SWIG_fail;
    $2 = (size_t)count;
    $1 = (uint32_t *)malloc(($2 ? $2 : 1) * sizeof(uint32_t));
    for (size_t i = 0; $1 && i < $2; i++) {
        Tcl_WideInt v;
        if (Tcl_GetWideIntFromObj(NULL, items[i], &v) != TCL_OK || v < 0 || v > UINT32_MAX) {
            char message[80];
            snprintf(message, sizeof message, "$1_name[%zu] is not an integer in 0 .. 2**32-1", i);
            SWIG_exception_fail(SWIG_ValueError, message);
        }
        $1[i] = (uint32_t)v;
    }
    if (!$1)
        SWIG_exception_fail(SWIG_MemoryError, "no memory for $1_name");
}
%typemap(in) (const void *indices, size_t n_indices), (const void *counts, size_t n_counts) {
    Tcl_Obj **items;
    Tcl_Size count;
    if (Tcl_ListObjGetElements(interp, $input, &count, &items) != TCL_OK)
        SWIG_fail;
    $2 = (size_t)count;
    uint64_t *values = (uint64_t *)malloc(($2 ? $2 : 1) * sizeof(uint64_t));
    $1 = values;
    for (size_t i = 0; values && i < $2; i++) {
        Tcl_WideInt v;
        if (Tcl_GetWideIntFromObj(NULL, items[i], &v) != TCL_OK || v < 0) {
            char message[80];
            snprintf(message, sizeof message, "$1_name[%zu] is not a non-negative integer", i);
            SWIG_exception_fail(SWIG_ValueError, message);
        }
        values[i] = (uint64_t)v;
    }
    if (!$1)
        SWIG_exception_fail(SWIG_MemoryError, "no memory for $1_name");
}
%typemap(in) (const uint32_t *images, const void *image_offsets, size_t n_samples)
             (BrsImages im) {
    Tcl_Obj **samples, **items;
    Tcl_Size count, k = 0;
    if (Tcl_ListObjGetElements(interp, $input, &count, &samples) != TCL_OK)
        SWIG_fail;
    images_start(&im, (size_t)count);
    for (size_t i = 0; !im.error && i < im.n; i++) {
        if (Tcl_ListObjGetElements(NULL, samples[i], &k, &items) != TCL_OK)
            images_fail(&im, SWIG_ValueError, i, "is not a list of patch counts");
        for (Tcl_Size j = 0; !im.error && j < k; j++) {
            Tcl_WideInt v;
            int is_count = Tcl_GetWideIntFromObj(NULL, items[j], &v) == TCL_OK && v >= 0;
            images_add(&im, i, is_count, is_count ? (uint64_t)v : 0);
        }
        images_next(&im, i);
    }
    $1 = im.patches;
    $2 = im.offsets;
    $3 = im.n;
    if (im.error)
        SWIG_exception_fail(im.error, im.message);
}
#else
#error "brs.i: write the BRS_TARGET section (a few lines) for this language"
#endif

%typemap(freearg) (const uint32_t *lengths, size_t n), (const uint32_t *buckets, size_t n_buckets) { free($1); }
%typemap(freearg) (const void *indices, size_t n_indices), (const void *counts, size_t n_counts) { free((void *)$1); }
%typemap(freearg) (const uint32_t *images, const void *image_offsets, size_t n_samples) {
    free((void *)$1);
    free((void *)$2);
}
/* plan_batch's images: the same list of lists, optional (not given: NULL). */
%apply (const uint32_t *images, const void *image_offsets, size_t n_samples) {
    (const uint32_t *images, const void *image_offsets, size_t n_images) };
%typemap(default) (const uint32_t *images, const void *image_offsets, size_t n_images) {
    $1 = NULL;
    $2 = NULL;
    $3 = 0;
}

/* The loaded library must have the major version this module was built for. */
%init %{
    if (brs_version_number() / 10000 != BRS_VERSION_MAJOR) {
#if defined(SWIGPYTHON)
        PyErr_SetString(PyExc_ImportError, "brs_swig: libbrs has another major version");
        return NULL;
#elif defined(SWIGTCL)
        Tcl_SetResult(interp, (char *)"brs_swig: libbrs has another major version", TCL_STATIC);
        return TCL_ERROR;
#endif
    }
%}

#ifdef SWIGPYTHON
%feature("autodoc", "2");
#endif

/* ------------------------------------------------------------------------ */
/* Module functions                                                         */
/* ------------------------------------------------------------------------ */

%{
static uint32_t swig_version_number(void) { return brs_version_number(); }
static const char *swig_version_string(void) { return brs_version_string(); }
static const char *swig_strerror(int32_t status) { return brs_strerror(status); }

/* A list of two values (consumed); NULL if anything is missing. */
static brs_obj swig_pair(brs_obj first, brs_obj second)
{
    brs_obj list = brs_obj_list();
    int ok = brs_obj_append(list, first);
    if (!brs_obj_append(list, second) || !ok) {
        brs_obj_release(list);
        return NULL;
    }
    return list;
}

static brs_obj swig_option_bounds_int(BrsError *err, int32_t key)
{
    int64_t lower, upper;
    brs_status status = brs_option_bounds_int(&lower, &upper, key);
    brs_obj pair = NULL;
    if (status != BRS_OK)
        brs_swig_fail(err, status, "not an integer option");
    else if (!(pair = swig_pair(brs_obj_int(lower), brs_obj_int(upper))))
        brs_swig_fail(err, BRS_ERR_NO_MEMORY, "");
    return pair;
}

static brs_obj swig_option_bounds_double(BrsError *err, int32_t key)
{
    double lower, upper;
    brs_status status = brs_option_bounds_double(&lower, &upper, key);
    brs_obj pair = NULL;
    if (status != BRS_OK)
        brs_swig_fail(err, status, "not a double option");
    else if (!(pair = swig_pair(brs_obj_double(lower), brs_obj_double(upper))))
        brs_swig_fail(err, BRS_ERR_NO_MEMORY, "");
    return pair;
}

/* The option table (LIBBRS_1.1): names, types, defaults and help come from
 * the library, so scripts never restate them. */
static size_t swig_option_count(void)
{
    size_t count = 0;
    brs_option_count(&count);
    return count;
}

static int32_t swig_option_key(BrsError *err, size_t index)
{
    brs_option key = 0;
    brs_status status = brs_option_key(&key, index);
    if (status != BRS_OK)
        brs_swig_fail(err, status, "index is not below option_count()");
    return key;
}

static int32_t swig_option_find(BrsError *err, const char *name)
{
    brs_option key = 0;
    brs_status status = brs_option_find(&key, name);
    if (status != BRS_OK)
        brs_swig_fail(err, status, "no option has this name");
    return key;
}

/* The string queries share one shape: a static string or an error. */
static const char *swig_option_text(BrsError *err, brs_status status, const char *text,
                                    const char *why)
{
    if (status != BRS_OK) {
        brs_swig_fail(err, status, why);
        return NULL;
    }
    return text;
}

static const char *swig_option_name(BrsError *err, int32_t key)
{
    const char *name = NULL;
    brs_status status = brs_option_name(&name, key); /* before name is read */
    return swig_option_text(err, status, name, "unknown option key");
}

static const char *swig_option_help(BrsError *err, int32_t key)
{
    const char *text = NULL;
    brs_status status = brs_option_help(&text, key); /* before text is read */
    return swig_option_text(err, status, text, "unknown option key");
}

static const char *swig_option_value_name(BrsError *err, int32_t key, int64_t value)
{
    const char *name = NULL;
    brs_status status = brs_option_value_name(&name, key, value); /* before name is read */
    return swig_option_text(err, status, name,
                            "not an option with named values, or a value outside its bounds");
}

/* The value named `name` of an enum-like option (strategy "random" -> 1). */
static int64_t swig_option_value_find(BrsError *err, int32_t key, const char *name)
{
    int64_t value = 0;
    brs_status status = brs_option_value_find(&value, key, name);
    if (status != BRS_OK)
        brs_swig_fail(err, status, status == BRS_ERR_INVALID_ARGUMENT
                                       ? "the option has no value of this name"
                                       : "not an option with named values");
    return value;
}

static const char *swig_option_keyword(BrsError *err, int32_t key)
{
    const char *keyword = NULL;
    brs_status status = brs_option_keyword(&keyword, key); /* before keyword is read */
    return swig_option_text(err, status, keyword, "unknown option key");
}

static int32_t swig_option_scope(BrsError *err, int32_t key)
{
    int32_t scope = -1;
    brs_status status = brs_option_scope(&scope, key);
    if (status != BRS_OK)
        brs_swig_fail(err, status, "unknown option key");
    return scope;
}

static int32_t swig_option_type(BrsError *err, int32_t key)
{
    int32_t type = -1;
    brs_status status = brs_option_type(&type, key);
    if (status != BRS_OK)
        brs_swig_fail(err, status, "unknown option key");
    return type;
}

static int64_t swig_option_default_int(BrsError *err, int32_t key)
{
    int64_t value = 0;
    brs_status status = brs_option_default_int(&value, key);
    if (status != BRS_OK)
        brs_swig_fail(err, status, "not an integer option");
    return value;
}

static double swig_option_default_double(BrsError *err, int32_t key)
{
    double value = 0;
    brs_status status = brs_option_default_double(&value, key);
    if (status != BRS_OK)
        brs_swig_fail(err, status, "not a double option");
    return value;
}
%}

%rename(option_count) swig_option_count;
%rename(option_key) swig_option_key;
%rename(option_find) swig_option_find;
%rename(option_name) swig_option_name;
%rename(option_help) swig_option_help;
%rename(option_value_name) swig_option_value_name;
%rename(option_value_find) swig_option_value_find;
%rename(option_keyword) swig_option_keyword;
%rename(option_scope) swig_option_scope;
%rename(option_type) swig_option_type;
%rename(option_default_int) swig_option_default_int;
%rename(option_default_double) swig_option_default_double;
size_t swig_option_count(void);
int32_t swig_option_key(BrsError *err, size_t index);
int32_t swig_option_find(BrsError *err, const char *name);
const char *swig_option_name(BrsError *err, int32_t key);
const char *swig_option_help(BrsError *err, int32_t key);
const char *swig_option_value_name(BrsError *err, int32_t key, int64_t value);
int64_t swig_option_value_find(BrsError *err, int32_t key, const char *name);
const char *swig_option_keyword(BrsError *err, int32_t key);
int32_t swig_option_scope(BrsError *err, int32_t key);
int32_t swig_option_type(BrsError *err, int32_t key);
int64_t swig_option_default_int(BrsError *err, int32_t key);
double swig_option_default_double(BrsError *err, int32_t key);

%rename(version_number) swig_version_number;
%rename(version_string) swig_version_string;
%rename(strerror) swig_strerror;
%rename(option_bounds_int) swig_option_bounds_int;
%rename(option_bounds_double) swig_option_bounds_double;
uint32_t swig_version_number(void);
const char *swig_version_string(void);
const char *swig_strerror(int32_t status);
brs_obj swig_option_bounds_int(BrsError *err, int32_t key);
brs_obj swig_option_bounds_double(BrsError *err, int32_t key);

/* ------------------------------------------------------------------------ */
/* The Sampler class: a sampler handle plus the plan it computes into.      */
/* ------------------------------------------------------------------------ */

%{
typedef struct {
    brs_sampler *sampler;
    brs_plan *plan;   /* reused across steps; holds the step planned last */
    uint64_t epoch;
    int planned;      /* plan holds a step */
    int64_t dp_size, grad_accum;  /* the shape of that step */
    char fingerprint[17];  /* the hex digits either fingerprint returns */
} Sampler;

/* The 16 hex digits of a fingerprint, in storage that lives as long as self. */
static const char *sampler_hex(Sampler *self, uint64_t value)
{
    snprintf(self->fingerprint, sizeof self->fingerprint, "%016" PRIx64, value);
    return self->fingerprint;
}

static int sampler_check(BrsError *err, Sampler *self, brs_status status)
{
    if (status != BRS_OK)
        brs_swig_fail(err, status, brs_sampler_last_error(self->sampler));
    return status == BRS_OK;
}

static int plan_check(BrsError *err, Sampler *self, brs_status status)
{
    if (status != BRS_OK)
        brs_swig_fail(err, status, brs_plan_last_error(self->plan));
    return status == BRS_OK;
}

static void sampler_destroy(Sampler *self)
{
    if (self) {
        brs_plan_free(self->plan);
        brs_sampler_free(self->sampler);
        free(self);
    }
}

/* A value of the wrong kind for option `name`: a TypeError, as a wrong type
 * is (an OverflowError for an integer beyond int64_t). */
static int sampler_wrong_kind(BrsError *err, const char *name, const char *wanted,
                              const BrsValue *value)
{
    char detail[300], got[160] = "";
    if (value->kind == BRS_SWIG_VALUE_TOO_BIG)
        snprintf(got, sizeof got, "; the value given does not fit int64_t");
    else if (value->kind == BRS_SWIG_VALUE_DOUBLE)
        snprintf(got, sizeof got, "; got %g", value->number);
    else if (value->kind == BRS_SWIG_VALUE_TEXT)
        snprintf(got, sizeof got, "; got \"%s\"", value->text);
    else if (value->text)
        snprintf(got, sizeof got, "; got a %s", value->text);
    snprintf(detail, sizeof detail, "%s takes %s%s", name, wanted, got);
    brs_swig_fail(err, BRS_ERR_INVALID_ARGUMENT, detail);
    err->kind = value->kind == BRS_SWIG_VALUE_TOO_BIG ? SWIG_OverflowError : SWIG_TypeError;
    return 0;
}

/* The number of value `value` of an enum-like option (sync "step" is 1),
 * found by the library (brs_option_value_find). */
static int sampler_named_value(BrsError *err, brs_option key, const char *option,
                               const BrsValue *value, int64_t *out)
{
    brs_status status = brs_option_value_find(out, key, value->text);
    if (status == BRS_OK)
        return 1;
    if (status != BRS_ERR_INVALID_ARGUMENT) /* a plain number given as text */
        return sampler_wrong_kind(err, option, "an integer (int64_t)", value);
    int64_t lower, upper;
    const char *name;
    char names[256] = "", detail[400];
    if (brs_option_bounds_int(&lower, &upper, key) != BRS_OK)
        lower = 0, upper = -1;
    for (int64_t v = lower; v <= upper && brs_option_value_name(&name, key, v) == BRS_OK; v++) {
        size_t used = strlen(names);
        snprintf(names + used, sizeof names - used, "%s%s", v == lower ? "" : ", ", name);
    }
    snprintf(detail, sizeof detail, "%s = \"%s\" is none of its values (%s), or a number",
             option, value->text, names);
    brs_swig_fail(err, BRS_ERR_OUT_OF_RANGE, detail);
    return 0;
}

/* The key and type of the option named `name` in the library's table. */
static int sampler_find_option(BrsError *err, const char *name, brs_option *key, int32_t *type)
{
    if (brs_option_find(key, name) == BRS_OK && brs_option_type(type, *key) == BRS_OK)
        return 1;
    char detail[200];
    snprintf(detail, sizeof detail, "no option is named \"%s\" (option_count() and "
             "option_name(option_key(i)) list them)", name);
    brs_swig_fail(err, BRS_ERR_UNSUPPORTED, detail);
    return 0;
}

/* Sets the option named `name` of the library's table: its key, type and
 * value names come from the table, so a new option needs no code here. */
static int sampler_set_named(BrsError *err, Sampler *self, const char *name,
                             const BrsValue *value)
{
    brs_option key;
    int32_t type;
    if (!sampler_find_option(err, name, &key, &type))
        return 0;
    if (type == BRS_OPTION_DOUBLE) {
        if (value->kind != BRS_SWIG_VALUE_INT && value->kind != BRS_SWIG_VALUE_DOUBLE)
            return sampler_wrong_kind(err, name, "a number (double)", value);
        double v = value->kind == BRS_SWIG_VALUE_INT ? (double)value->integer : value->number;
        return sampler_check(err, self, brs_sampler_set_double(self->sampler, key, v));
    }
    int64_t v = value->integer;
    if (value->kind == BRS_SWIG_VALUE_TEXT) {
        if (!sampler_named_value(err, key, name, value, &v))
            return 0;
    } else if (value->kind != BRS_SWIG_VALUE_INT) {
        return sampler_wrong_kind(err, name, "an integer (int64_t)", value);
    }
    return sampler_check(err, self, brs_sampler_set_int(self->sampler, key, v));
}

/* The positional parameters of the 1.4 constructor, in their order, so that
 * scripts written for it keep working. Frozen: options added since are given
 * by name. */
static const char *const sampler_positional[] = {
    "batch_size", "grad_accum", "dp_size", "rank", "seed", "shuffle", "drop_last",
    "alpha", "intercept", "max_tokens", "packed", "pad_to_multiple_of",
};

/* The constructor's options: numbers by position first, then name, value pairs. */
static int sampler_configure(BrsError *err, Sampler *self, const BrsArgs *args)
{
    size_t count = args ? args->count : 0, i = 0;
    BrsValue value, name;
    const size_t positional = sizeof sampler_positional / sizeof sampler_positional[0];
    for (; i < count; i++) {
        brs_obj_value((brs_obj)args->items[i], &value);
        if (value.kind == BRS_SWIG_VALUE_TEXT)
            break;
        if (i == positional) {
            brs_swig_fail(err, BRS_ERR_INVALID_ARGUMENT, "more values by position than the "
                          "1.4 constructor had: give the options after pad_to_multiple_of by "
                          "name");
            return 0;
        }
        if (!sampler_set_named(err, self, sampler_positional[i], &value))
            return 0;
    }
    for (; i < count; i += 2) {
        brs_obj_value((brs_obj)args->items[i], &name);
        if (name.kind != BRS_SWIG_VALUE_TEXT || i + 1 == count) {
            brs_swig_fail(err, BRS_ERR_INVALID_ARGUMENT, "after the values by position come "
                          "option names, each followed by its value");
            return 0;
        }
        brs_obj_value((brs_obj)args->items[i + 1], &value);
        if (!sampler_set_named(err, self, name.text, &value))
            return 0;
    }
    return 1;
}

static Sampler *sampler_create(BrsError *err, const uint32_t *lengths, size_t n,
                               const BrsArgs *args)
{
    Sampler *self = (Sampler *)calloc(1, sizeof *self);
    if (!self || brs_sampler_new(&self->sampler) != BRS_OK ||
        brs_plan_new(&self->plan) != BRS_OK) {
        brs_swig_fail(err, BRS_ERR_NO_MEMORY, "");
        sampler_destroy(self);
        return NULL;
    }
    if (!sampler_check(err, self,
                       brs_sampler_set_lengths(self->sampler, lengths, n, BRS_LENGTHS_COPY)) ||
        !sampler_configure(err, self, args) ||
        !sampler_check(err, self, brs_sampler_validate(self->sampler))) {
        sampler_destroy(self);
        return NULL;
    }
    return self;
}

/* The value the library holds for an option, a native int or float. */
static brs_obj sampler_get_named(BrsError *err, Sampler *self, const char *name)
{
    brs_option key;
    int32_t type;
    if (!sampler_find_option(err, name, &key, &type))
        return NULL;
    int64_t integer = 0;
    double number = 0;
    if (type == BRS_OPTION_DOUBLE)
        return sampler_check(err, self, brs_sampler_get_double(&number, self->sampler, key))
                   ? brs_obj_double(number) : NULL;
    return sampler_check(err, self, brs_sampler_get_int(&integer, self->sampler, key))
               ? brs_obj_int(integer) : NULL;
}

/* One native list per (rank, micro) slot of the planned step, made by `item`. */
static brs_obj sampler_collect(BrsError *err, Sampler *self,
                               brs_obj (*item)(BrsError *, Sampler *, int64_t, int64_t))
{
    brs_obj ranks = brs_obj_list();
    for (int64_t r = 0; ranks && r < self->dp_size; r++) {
        brs_obj micros = brs_obj_list();
        for (int64_t m = 0; micros && m < self->grad_accum; m++)
            if (!brs_obj_append(micros, item(err, self, r, m))) {
                brs_obj_release(micros);
                micros = NULL;
            }
        if (!brs_obj_append(ranks, micros)) {
            brs_obj_release(ranks);
            ranks = NULL;
        }
    }
    if (!ranks && err->status == BRS_OK)
        brs_swig_fail(err, BRS_ERR_NO_MEMORY, "building the result lists");
    return ranks;
}

static brs_obj sampler_indices(BrsError *err, Sampler *self, int64_t rank, int64_t micro)
{
    const uint64_t *indices;
    size_t count;
    if (!plan_check(err, self, brs_plan_micro_batch(&indices, &count, self->plan, rank, micro)))
        return NULL;
    brs_obj list = brs_obj_list();
    for (size_t i = 0; list && i < count; i++)
        if (!brs_obj_append(list, brs_obj_uint(indices[i]))) {
            brs_obj_release(list);
            list = NULL;
        }
    return list;
}

static brs_obj sampler_stats(BrsError *err, Sampler *self, int64_t rank, int64_t micro)
{
    uint64_t padded, real;
    double cost;
    if (!plan_check(err, self,
                    brs_plan_micro_batch_stats(&padded, &real, &cost, self->plan, rank, micro)))
        return NULL;
    brs_obj list = brs_obj_list();
    if (!brs_obj_append(list, brs_obj_uint(padded)) ||
        !brs_obj_append(list, brs_obj_uint(real)) ||
        !brs_obj_append(list, brs_obj_double(cost))) {
        brs_obj_release(list);
        return NULL;
    }
    return list;
}

/* A native list of `count` uint64 values; NULL when it cannot be built. */
static brs_obj sampler_u64_list(const uint64_t *values, size_t count)
{
    brs_obj list = brs_obj_list();
    for (size_t i = 0; list && i < count; i++)
        if (!brs_obj_append(list, brs_obj_uint(values[i]))) {
            brs_obj_release(list);
            list = NULL;
        }
    return list;
}

/* [indices, first_rank, degree, padded_tokens, real_tokens, cost, ranges] of
 * global rank `rank`'s context-parallel micro-batch at micro-step `micro`
 * (brs_plan_cp_*): ranges the flat (index, start, end) triples it computes. */
static brs_obj sampler_cp_item(BrsError *err, Sampler *self, int64_t rank, int64_t micro)
{
    const uint64_t *indices;
    size_t count, ranges_count = 0;
    uint64_t first, degree, padded, real;
    double cost;
    if (!plan_check(err, self, brs_plan_cp_micro_batch(&indices, &count, &first, &degree,
                                                       self->plan, (uint64_t)rank,
                                                       (uint64_t)micro)) ||
        !plan_check(err, self, brs_plan_cp_micro_batch_stats(&padded, &real, &cost, self->plan,
                                                             (uint64_t)rank, (uint64_t)micro)) ||
        !plan_check(err, self, brs_plan_cp_token_ranges(NULL, &ranges_count, self->plan,
                                                        (uint64_t)rank, (uint64_t)micro, 0)))
        return NULL;
    uint64_t *ranges = malloc((ranges_count ? ranges_count : 1) * 3 * sizeof *ranges);
    if (!ranges) {
        brs_swig_fail(err, BRS_ERR_NO_MEMORY, "building the token ranges");
        return NULL;
    }
    brs_obj item = NULL;
    if (plan_check(err, self, brs_plan_cp_token_ranges(ranges, &ranges_count, self->plan,
                                                       (uint64_t)rank, (uint64_t)micro,
                                                       ranges_count))) {
        item = brs_obj_list();
        if (!brs_obj_append(item, sampler_u64_list(indices, count)) ||
            !brs_obj_append(item, brs_obj_uint(first)) ||
            !brs_obj_append(item, brs_obj_uint(degree)) ||
            !brs_obj_append(item, brs_obj_uint(padded)) ||
            !brs_obj_append(item, brs_obj_uint(real)) ||
            !brs_obj_append(item, brs_obj_double(cost)) ||
            !brs_obj_append(item, sampler_u64_list(ranges, 3 * ranges_count))) {
            brs_obj_release(item);
            item = NULL;
            brs_swig_fail(err, BRS_ERR_NO_MEMORY, "building the result lists");
        }
    }
    free(ranges);
    return item;
}

/* sampler_cp_item of every global rank (dp_size x cp_size) and micro-step. */
static brs_obj sampler_cp_collect(BrsError *err, Sampler *self)
{
    int64_t cp_size = 1;
    if (!plan_check(err, self, brs_plan_get_int(&cp_size, self->plan, BRS_PLAN_CP_SIZE)))
        return NULL;
    brs_obj ranks = brs_obj_list();
    for (int64_t r = 0; ranks && r < self->dp_size * cp_size; r++) {
        brs_obj micros = brs_obj_list();
        for (int64_t m = 0; micros && m < self->grad_accum; m++) {
            brs_obj item = sampler_cp_item(err, self, r, m);
            if (!item || !brs_obj_append(micros, item)) {
                brs_obj_release(micros);
                micros = NULL;
            }
        }
        if (!micros || !brs_obj_append(ranks, micros)) {
            brs_obj_release(ranks);
            ranks = NULL;
        }
    }
    if (!ranks && err->status == BRS_OK)
        brs_swig_fail(err, BRS_ERR_NO_MEMORY, "building the result lists");
    return ranks;
}

/* [encoder_tokens, images, encoder_cost] of one micro-batch: all 0 without
 * encoder loads. */
static brs_obj sampler_encoder(BrsError *err, Sampler *self, int64_t rank, int64_t micro)
{
    uint64_t tokens, images;
    double cost;
    if (!plan_check(err, self, brs_plan_micro_batch_encoder(&tokens, &images, &cost, self->plan,
                                                            rank, micro)))
        return NULL;
    brs_obj list = brs_obj_list();
    if (!brs_obj_append(list, brs_obj_uint(tokens)) ||
        !brs_obj_append(list, brs_obj_uint(images)) ||
        !brs_obj_append(list, brs_obj_double(cost))) {
        brs_obj_release(list);
        return NULL;
    }
    return list;
}

/* A native list of `count` token counts; NULL (and err set) when it cannot
 * be built. */
static brs_obj sampler_u32_list(BrsError *err, const uint32_t *values, size_t count)
{
    brs_obj list = brs_obj_list();
    for (size_t i = 0; list && i < count; i++)
        if (!brs_obj_append(list, brs_obj_uint(values[i]))) {
            brs_obj_release(list);
            list = NULL;
        }
    if (!list)
        brs_swig_fail(err, BRS_ERR_NO_MEMORY, "building the result list");
    return list;
}

/* The buckets the sampler holds, a native list; [] when none are set. */
static brs_obj sampler_buckets(BrsError *err, Sampler *self)
{
    const uint32_t *buckets = NULL;
    size_t count = 0;
    if (!sampler_check(err, self,
                       brs_sampler_get_length_buckets(&buckets, &count, self->sampler)))
        return NULL;
    return sampler_u32_list(err, buckets, count);
}

/* The default ladder: its length first, then the buckets. */
static brs_obj sampler_ladder(BrsError *err, Sampler *self, uint32_t steps_per_doubling)
{
    size_t count = 0;
    if (!sampler_check(err, self, brs_sampler_bucket_ladder(NULL, &count, self->sampler,
                                                            steps_per_doubling, 0)))
        return NULL;
    uint32_t *ladder = (uint32_t *)malloc((count ? count : 1) * sizeof *ladder);
    brs_obj list = NULL;
    if (!ladder)
        brs_swig_fail(err, BRS_ERR_NO_MEMORY, "no memory for the ladder");
    else if (sampler_check(err, self, brs_sampler_bucket_ladder(ladder, &count, self->sampler,
                                                                steps_per_doubling, count)))
        list = sampler_u32_list(err, ladder, count);
    free(ladder);
    return list;
}

/* count pairs as [[batch size, padded length], ...]; NULL (and err set) without memory. */
static brs_obj sampler_pair_list(BrsError *err, const uint64_t *pairs, size_t count)
{
    brs_obj list = brs_obj_list();
    for (size_t i = 0; list && i < count; i++)
        if (!brs_obj_append(list, swig_pair(brs_obj_uint(pairs[2 * i]),
                                            brs_obj_uint(pairs[2 * i + 1])))) {
            brs_obj_release(list);
            list = NULL;
        }
    if (!list)
        brs_swig_fail(err, BRS_ERR_NO_MEMORY, "building the shapes");
    return list;
}

/* The epoch's distinct shapes, [[batch size, padded length], ...]: their
 * count first, then the pairs. */
static brs_obj sampler_shapes(BrsError *err, Sampler *self)
{
    size_t count = 0;
    if (!sampler_check(err, self,
                       brs_sampler_shapes(NULL, &count, self->sampler, self->epoch, 0)))
        return NULL;
    uint64_t *pairs = (uint64_t *)malloc((count ? 2 * count : 1) * sizeof *pairs);
    brs_obj list = NULL;
    if (!pairs)
        brs_swig_fail(err, BRS_ERR_NO_MEMORY, "no memory for the shapes");
    else if (sampler_check(err, self, brs_sampler_shapes(pairs, &count, self->sampler,
                                                         self->epoch, count)))
        list = sampler_pair_list(err, pairs, count);
    free(pairs);
    return list;
}

/* The run's shape vocabulary (max_shapes > 0), [[batch size, padded length],
 * ...]; [] when max_shapes is 0. Its count first, then the pairs. */
static brs_obj sampler_shape_vocabulary(BrsError *err, Sampler *self)
{
    size_t count = 0;
    if (!sampler_check(err, self, brs_sampler_shape_vocabulary(NULL, &count, self->sampler, 0)))
        return NULL;
    uint64_t *pairs = (uint64_t *)malloc((count ? 2 * count : 1) * sizeof *pairs);
    brs_obj list = NULL;
    if (!pairs)
        brs_swig_fail(err, BRS_ERR_NO_MEMORY, "no memory for the shape vocabulary");
    else if (sampler_check(err, self, brs_sampler_shape_vocabulary(pairs, &count, self->sampler,
                                                                   count)))
        list = sampler_pair_list(err, pairs, count);
    free(pairs);
    return list;
}

static int sampler_require_plan(BrsError *err, Sampler *self)
{
    if (!self->planned)
        brs_swig_fail(err, BRS_ERR_STATE, "call plan(step) first");
    return self->planned;
}
%}

#ifdef SWIGPYTHON
/* Keywords become name, value pairs after the values given by position. */
%feature("shadow") Sampler::Sampler %{
    def __init__(self, lengths, *positional, **options):
        r"""Sampler(lengths, **options): any option of the library's table by its name
        (option_name(option_key(i)) for i below option_count()): a number, or the name of
        one of its values (sync="step"). An option not given keeps the library's default.
        The options of the 1.4 constructor may also come first by position, in its order."""
        pairs = [item for pair in options.items() for item in pair]
        _brs_swig.Sampler_swiginit(self, _brs_swig.new_Sampler(lengths, *positional, *pairs))
%}
#endif

typedef struct {} Sampler;

%extend Sampler {
    /* The (...) typemaps pass the options given after the lengths as one
     * BrsArgs pointer (NULL when there are none). */
    Sampler(BrsError *err, const uint32_t *lengths, size_t n, ...) {
        va_list ap;
        va_start(ap, n);
        const BrsArgs *args = va_arg(ap, const BrsArgs *);
        va_end(ap);
        return sampler_create(err, lengths, n, args);
    }

    ~Sampler() { sampler_destroy($self); }

    void set_epoch(uint64_t epoch) { $self->epoch = epoch; }

    uint64_t epoch() { return $self->epoch; }

    uint64_t steps_per_epoch(BrsError *err) {
        uint64_t steps = 0;
        sampler_check(err, $self, brs_sampler_steps_per_epoch(&steps, $self->sampler));
        return steps;
    }

    const char *fingerprint(BrsError *err) {
        uint64_t value = 0;
        sampler_check(err, $self, brs_sampler_fingerprint(&value, $self->sampler));
        return sampler_hex($self, value);
    }

    /* Equal for samplers that draw the same samples in the same order, however
     * each step is split among ranks and micro-steps. */
    const char *stream_fingerprint(BrsError *err) {
        uint64_t value = 0;
        sampler_check(err, $self, brs_sampler_stream_fingerprint(&value, $self->sampler));
        return sampler_hex($self, value);
    }

    void validate(BrsError *err) {
        sampler_check(err, $self, brs_sampler_validate($self->sampler));
    }

    /* [least max_tokens that plans every step of the epoch, most
     * micro-batches a step needs]; raises when max_tokens cannot plan it. */
    brs_obj check_epoch(BrsError *err) {
        uint64_t cap = 0, needed = 0;
        brs_obj pair = NULL;
        if (sampler_check(err, $self, brs_sampler_check_epoch(&cap, &needed, $self->sampler,
                                                               $self->epoch)) &&
            !(pair = swig_pair(brs_obj_uint(cap), brs_obj_uint(needed))))
            brs_swig_fail(err, BRS_ERR_NO_MEMORY, "");
        return pair;
    }

    /* The padded lengths a micro-batch may take (brs_sampler_set_length_buckets);
     * [] clears them. validate() and plan() refuse a sample above the last. */
    void set_length_buckets(BrsError *err, const uint32_t *buckets, size_t n_buckets) {
        sampler_check(err, $self,
                      brs_sampler_set_length_buckets($self->sampler, buckets, n_buckets));
    }

    brs_obj length_buckets(BrsError *err) { return sampler_buckets(err, $self); }

    /* The library's default ladder of buckets for the lengths (0: its default
     * steps per doubling); not set: pass it to set_length_buckets. */
    brs_obj bucket_ladder(BrsError *err, uint32_t steps_per_doubling = 0) {
        return sampler_ladder(err, $self, steps_per_doubling);
    }

    /* The distinct [batch size, padded length] this rank runs in the epoch. */
    brs_obj shapes(BrsError *err) { return sampler_shapes(err, $self); }

    /* The run's shape vocabulary with max_shapes > 0: the at most max_shapes
     * [batch size, padded length] that every micro-batch of every rank in
     * every epoch has, chosen once from the lengths; [] without max_shapes. */
    brs_obj shape_vocabulary(BrsError *err) { return sampler_shape_vocabulary(err, $self); }

    /* A vision-language dataset's images: one list of patch counts (the
     * encoder's tokens) per sample, [] for none (brs_sampler_set_encoder_loads);
     * [] clears them. validate() and plan() refuse a list per sample that is not
     * one per length, or a sample above max_encoder_tokens. */
    void set_encoder_loads(BrsError *err, const uint32_t *images, const void *image_offsets,
                           size_t n_samples) {
        /* image_offsets holds uint64_t (const void *: see load below). */
        sampler_check(err, $self, brs_sampler_set_encoder_loads(
                                      $self->sampler, images, (const uint64_t *)image_offsets,
                                      n_samples));
    }

    /* [images, patches summed] of sample `index`; [0, 0] without loads. */
    brs_obj encoder_load(BrsError *err, uint64_t index) {
        uint64_t images = 0, patches = 0;
        brs_obj pair = NULL;
        if (sampler_check(err, $self,
                          brs_sampler_encoder_load(&images, &patches, $self->sampler, index)) &&
            !(pair = swig_pair(brs_obj_uint(images), brs_obj_uint(patches))))
            brs_swig_fail(err, BRS_ERR_NO_MEMORY, "");
        return pair;
    }

    void set_int(BrsError *err, int32_t key, int64_t value) {
        sampler_check(err, $self, brs_sampler_set_int($self->sampler, key, value));
    }

    void set_double(BrsError *err, int32_t key, double value) {
        sampler_check(err, $self, brs_sampler_set_double($self->sampler, key, value));
    }

    int64_t get_int(BrsError *err, int32_t key) {
        int64_t value = 0;
        sampler_check(err, $self, brs_sampler_get_int(&value, $self->sampler, key));
        return value;
    }

    double get_double(BrsError *err, int32_t key) {
        double value = 0;
        sampler_check(err, $self, brs_sampler_get_double(&value, $self->sampler, key));
        return value;
    }

    /* Any option of the library's table by its name, as the constructor takes
     * it (a number, or a value's name); validate() checks the whole. */
    void set_option(BrsError *err, const char *name, brs_obj value) {
        BrsValue v;
        brs_obj_value(value, &v);
        sampler_set_named(err, $self, name, &v);
    }

    /* The value the library holds for the option `name`: an int, or a float. */
    brs_obj get_option(BrsError *err, const char *name) {
        return sampler_get_named(err, $self, name);
    }

    /* Plans step `step` of the current epoch for every rank. */
    brs_obj plan(BrsError *err, uint64_t step) {
        $self->planned = 0;
        if (!plan_check(err, $self, brs_plan_compute($self->plan, $self->sampler, $self->epoch,
                                                     step)) ||
            !plan_check(err, $self,
                        brs_plan_get_int(&$self->dp_size, $self->plan, BRS_PLAN_DP_SIZE)) ||
            !plan_check(err, $self,
                        brs_plan_get_int(&$self->grad_accum, $self->plan, BRS_PLAN_GRAD_ACCUM)))
            return NULL;
        $self->planned = 1;
        return sampler_collect(err, $self, sampler_indices);
    }

    /* Plans one step of these lengths alone (an RL batch, a window of a
     * stream) with this sampler's configuration (brs_plan_compute_batch);
     * the indices are positions into lengths. images, if given, lists each
     * sample's patch counts as set_encoder_loads takes them
     * (brs_plan_compute_batch_images); the sampler's own loads play no part. */
    brs_obj plan_batch(BrsError *err, const uint32_t *lengths, size_t n,
                       const uint32_t *images, const void *image_offsets, size_t n_images) {
        $self->planned = 0;
        if (image_offsets && n_images != n) {
            char message[128];
            snprintf(message, sizeof message, "images has %zu lists for %zu lengths: give one "
                     "per sample, [] for a sample without images", n_images, n);
            brs_swig_fail(err, BRS_ERR_INVALID_ARGUMENT, message);
            return NULL;
        }
        brs_status status =
            image_offsets ? brs_plan_compute_batch_images($self->plan, $self->sampler, lengths,
                                                          images,
                                                          (const uint64_t *)image_offsets, n)
                          : brs_plan_compute_batch($self->plan, $self->sampler, lengths, n);
        if (!plan_check(err, $self, status) ||
            !plan_check(err, $self,
                        brs_plan_get_int(&$self->dp_size, $self->plan, BRS_PLAN_DP_SIZE)) ||
            !plan_check(err, $self,
                        brs_plan_get_int(&$self->grad_accum, $self->plan, BRS_PLAN_GRAD_ACCUM)))
            return NULL;
        $self->planned = 1;
        return sampler_collect(err, $self, sampler_indices);
    }

    /* Loads micro-batches made elsewhere (a peer sampler's) as step `step` of
     * the current epoch: indices concatenated rank-major, counts[dp_size *
     * grad_accum] their sizes (brs_plan_load); returns them as plan() does. */
    brs_obj load(BrsError *err, const void *indices, size_t n_indices, const void *counts,
                 size_t n_counts, uint64_t step) {
        /* The typemaps above write uint64_t arrays (SWIG names uint64_t
         * unsigned long long, another type on LP64): const void * carries
         * them unchanged. */
        const uint64_t *index = (const uint64_t *)indices, *count = (const uint64_t *)counts;
        $self->planned = 0;
        uint64_t total = 0;
        for (size_t i = 0; i < n_counts; i++) total += count[i];
        if (total != n_indices) {
            brs_swig_fail(err, BRS_ERR_INVALID_ARGUMENT,
                          "the counts do not add up to the number of indices");
            return NULL;
        }
        if (!plan_check(err, $self, brs_plan_load($self->plan, $self->sampler, index, count,
                                                  n_counts, $self->epoch, step)) ||
            !plan_check(err, $self,
                        brs_plan_get_int(&$self->dp_size, $self->plan, BRS_PLAN_DP_SIZE)) ||
            !plan_check(err, $self,
                        brs_plan_get_int(&$self->grad_accum, $self->plan, BRS_PLAN_GRAD_ACCUM)))
            return NULL;
        $self->planned = 1;
        return sampler_collect(err, $self, sampler_indices);
    }

    brs_obj stats(BrsError *err) {
        return sampler_require_plan(err, $self) ? sampler_collect(err, $self, sampler_stats)
                                                : NULL;
    }

    /* The planned step's context-parallel view: for every global rank (dp
     * index x cp_size + cp index) and micro-step, [indices, first_rank,
     * degree, padded_tokens, real_tokens, cost, ranges] (brs_plan_cp_*;
     * ranges the flat (index, start, end) triples the rank computes). */
    /* The micro-steps every global rank runs in the planned step. */
    int64_t cp_micro_steps(BrsError *err) {
        uint64_t count = 0;
        if (sampler_require_plan(err, $self))
            plan_check(err, $self, brs_plan_cp_micro_steps(&count, $self->plan));
        return (int64_t)count;
    }

    brs_obj cp_micro_batches(BrsError *err) {
        return sampler_require_plan(err, $self) ? sampler_cp_collect(err, $self) : NULL;
    }

    brs_obj encoder_stats(BrsError *err) {
        return sampler_require_plan(err, $self) ? sampler_collect(err, $self, sampler_encoder)
                                                : NULL;
    }

    int64_t plan_int(BrsError *err, int32_t key) {
        int64_t value = 0;
        if (sampler_require_plan(err, $self))
            plan_check(err, $self, brs_plan_get_int(&value, $self->plan, key));
        return value;
    }

    double plan_double(BrsError *err, int32_t key) {
        double value = 0;
        if (sampler_require_plan(err, $self))
            plan_check(err, $self, brs_plan_get_double(&value, $self->plan, key));
        return value;
    }
}
