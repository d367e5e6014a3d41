/* lengths_file.c - the lengths-file handle: a byte-at-a-time reader of the
 * format of docs/formats.md, so that a file is read in chunks of any size
 * (memory bounded by the values, not by a line, and a wrong file such as
 * /dev/zero stops at its first line) and a whole buffer goes through
 * exactly the same rules. One line's grammar is lengths_line.c's. */
#include "brs.h"
#include "formats/internal.h"
#include "util/message.h"

#include <stdlib.h>
#include <string.h>

/* Bounds the memory a wrong file can take (docs/formats.md). */
#define MAX_SAMPLES ((size_t)1 << 28)

struct brs_lengths_file {
    /* What has been read: lengths[count], the images' loads patches[...]
     * and, once an image is met (or the read finishes), offsets[count + 1]. */
    uint32_t *lengths;
    size_t count, capacity;
    uint32_t *patches;
    size_t patch_count, patch_capacity;
    uint64_t *offsets;
    size_t offset_capacity;
    int reading;                     /* begun and not finished */
    int ready;                       /* the latest read finished and was accepted */
    brs_status status;               /* of the read under way: BRS_OK until something is wrong */
    char name[200];                  /* the file's name as messages give it, escaped */
    char line[BRS_LENGTHS_LINE_MAX]; /* the line being read, without its end */
    size_t line_length;
    size_t line_number; /* 1-based */
    int after_cr;       /* the last byte ended a line with CR */
    struct brs_message message;
};

static const char null_handle_message[] = "brs_lengths_file_last_error: " BRS_MESSAGE_NULL_HANDLE;
/* Where *patches points when no sample has an image: never NULL. */
static const uint32_t no_patches[1];
static const char byte_order_mark[] = "\xEF\xBB\xBF";

/* Stop the read with `code` and "<name> <problem>" as the message. */
#define stop(f, code, ...) \
    ((void)((f)->status = brs_fail_about(&(f)->message, (code), (f)->name, " ", __VA_ARGS__)))

static void release(brs_lengths_file *f)
{
    free(f->lengths);
    free(f->patches);
    free(f->offsets);
    f->lengths = f->patches = NULL;
    f->offsets = NULL;
    f->count = f->capacity = f->patch_count = f->patch_capacity = f->offset_capacity = 0;
}

brs_status brs_lengths_file_new(brs_lengths_file **out)
{
    if (!out) return BRS_ERR_NULL_POINTER;
    *out = calloc(1, sizeof **out);
    return *out ? BRS_OK : BRS_ERR_NO_MEMORY;
}

void brs_lengths_file_free(brs_lengths_file *file)
{
    if (!file) return;
    release(file);
    free(file);
}

/* Room for `need` elements of `size` bytes in *array; 0, or -1 (array
 * unchanged) when memory runs out. */
static int reserve(void **array, size_t *capacity, size_t need, size_t size, size_t first)
{
    if (need <= *capacity) return 0;
    size_t grown = *capacity ? 2 * *capacity : first;
    while (grown < need) grown *= 2;
    void *bigger = realloc(*array, grown * size);
    if (!bigger) return -1;
    *array = bigger;
    *capacity = grown;
    return 0;
}

/* The offsets array from the first image on: every earlier sample has none. */
static int start_offsets(brs_lengths_file *f)
{
    if (f->offsets) return 0;
    f->offsets = calloc(f->capacity + 1, sizeof *f->offsets);
    f->offset_capacity = f->offsets ? f->capacity + 1 : 0;
    return f->offsets ? 0 : -1;
}

static int store(brs_lengths_file *f, const brs_lengths_line *line)
{
    if (reserve((void **)&f->lengths, &f->capacity, f->count + 1, sizeof *f->lengths, 4096) != 0)
        return -1;
    if (line->image_count > 0 &&
        (start_offsets(f) != 0 ||
         reserve((void **)&f->patches, &f->patch_capacity, f->patch_count + line->image_count,
                 sizeof *f->patches, 4096) != 0))
        return -1;
    if (f->offsets && reserve((void **)&f->offsets, &f->offset_capacity, f->count + 2,
                              sizeof *f->offsets, 4096) != 0)
        return -1;
    if (line->image_count > 0) { /* patches is NULL until the first image */
        memcpy(f->patches + f->patch_count, line->loads, line->image_count * sizeof *line->loads);
        f->patch_count += line->image_count;
    }
    f->lengths[f->count++] = line->length;
    if (f->offsets) f->offsets[f->count] = f->patch_count;
    return 0;
}

static void end_line(brs_lengths_file *f)
{
    const char *text = f->line;
    size_t size = f->line_length;
    if (f->line_number == 1 && size >= 3 && memcmp(text, byte_order_mark, 3) == 0) {
        text += 3; /* Notepad and some Windows tools start a text file with one */
        size -= 3;
    }
    brs_lengths_line line;
    char problem[256];
    if (brs_lengths_line_read(&line, f->line_number, text, size, problem, sizeof problem) != 0) {
        stop(f, BRS_ERR_INVALID_ARGUMENT, "%s", problem);
        return;
    }
    if (f->count == MAX_SAMPLES) {
        stop(f, BRS_ERR_TOO_LARGE,
             "has more than %zu lines, the most brs reads: plan a part of the dataset",
             MAX_SAMPLES);
        return;
    }
    if (store(f, &line) != 0) {
        stop(f, BRS_ERR_NO_MEMORY, "could not be read: out of memory after %zu lengths", f->count);
        return;
    }
    f->line_number++;
    f->line_length = 0;
}

static void take_byte(brs_lengths_file *f, char byte)
{
    if (f->after_cr && byte == '\n') {
        f->after_cr = 0; /* the LF of a CRLF: the line has ended already */
        return;
    }
    f->after_cr = byte == '\r';
    if (byte == '\n' || byte == '\r') {
        end_line(f);
    } else if (byte == '\0') {
        stop(f, BRS_ERR_INVALID_ARGUMENT,
             "line %zu: a NUL byte at column %zu: this is not a text file of one token count "
             "per line",
             f->line_number, f->line_length + 1);
    } else if (f->line_length == BRS_LENGTHS_LINE_MAX) {
        stop(f, BRS_ERR_INVALID_ARGUMENT,
             "line %zu is longer than %d bytes: write one token count >= 1 per line",
             f->line_number, BRS_LENGTHS_LINE_MAX);
    } else {
        f->line[f->line_length++] = byte;
    }
}

brs_status brs_lengths_file_begin(brs_lengths_file *file, const char *name)
{
    if (!file) return BRS_ERR_NULL_POINTER;
    if (!name)
        return brs_fail(&file->message, BRS_ERR_NULL_POINTER,
                        "brs_lengths_file_begin: name is NULL");
    release(file);
    file->reading = 1;
    file->ready = 0;
    file->status = BRS_OK;
    file->line_length = 0;
    file->line_number = 1;
    file->after_cr = 0;
    brs_text_escape(file->name, sizeof file->name, name, strlen(name));
    brs_message_clear(&file->message);
    return BRS_OK;
}

static brs_status not_reading(const brs_lengths_file *f, const char *call)
{
    return brs_fail(&f->message, BRS_ERR_STATE,
                    "%s: no read under way: call brs_lengths_file_begin first", call);
}

brs_status brs_lengths_file_feed(brs_lengths_file *file, const char *bytes, size_t size)
{
    if (!file) return BRS_ERR_NULL_POINTER;
    if (!bytes && size > 0)
        return brs_fail(&file->message, BRS_ERR_NULL_POINTER,
                        "brs_lengths_file_feed: bytes is NULL (size 0 feeds nothing)");
    if (!file->reading) return not_reading(file, "brs_lengths_file_feed");
    for (size_t i = 0; i < size && file->status == BRS_OK; i++) take_byte(file, bytes[i]);
    return file->status;
}

brs_status brs_lengths_file_finish(brs_lengths_file *file)
{
    if (!file) return BRS_ERR_NULL_POINTER;
    if (!file->reading) return not_reading(file, "brs_lengths_file_finish");
    if (file->status == BRS_OK && file->line_length > 0)
        end_line(file); /* the last line needs no end */
    if (file->status == BRS_OK && file->count == 0)
        stop(file, BRS_ERR_INVALID_ARGUMENT,
             "has no lengths (expected one token count >= 1 per line)");
    if (file->status == BRS_OK && !file->offsets && start_offsets(file) != 0)
        stop(file, BRS_ERR_NO_MEMORY, "could not be read: out of memory after %zu lengths",
             file->count);
    file->reading = 0;
    file->ready = file->status == BRS_OK;
    if (!file->ready) release(file); /* a refused file hands out nothing */
    return file->status;
}

brs_status brs_lengths_file_parse(brs_lengths_file *file, const char *bytes, size_t size,
                                  const char *name)
{
    if (!file) return BRS_ERR_NULL_POINTER;
    if (!bytes && size > 0)
        return brs_fail(&file->message, BRS_ERR_NULL_POINTER,
                        "brs_lengths_file_parse: bytes is NULL (size 0 is an empty file)");
    brs_status status = brs_lengths_file_begin(file, name);
    if (status == BRS_OK) brs_lengths_file_feed(file, bytes, size);
    return status == BRS_OK ? brs_lengths_file_finish(file) : status;
}

static brs_status not_ready(const brs_lengths_file *f, const char *call)
{
    return brs_fail(&f->message, BRS_ERR_STATE, "%s: no lengths file was read%s", call,
                    f->reading ? " to its end: call brs_lengths_file_finish first"
                               : ": parse one first");
}

brs_status brs_lengths_file_lengths(const uint32_t **lengths, size_t *count,
                                    const brs_lengths_file *file)
{
    if (!file) return BRS_ERR_NULL_POINTER;
    if (!lengths || !count)
        return brs_fail(&file->message, BRS_ERR_NULL_POINTER,
                        "brs_lengths_file_lengths: %s is NULL", !lengths ? "lengths" : "count");
    if (!file->ready) return not_ready(file, "brs_lengths_file_lengths");
    *lengths = file->lengths;
    *count = file->count;
    return BRS_OK;
}

brs_status brs_lengths_file_images(const uint32_t **patches, const uint64_t **offsets,
                                   const brs_lengths_file *file)
{
    if (!file) return BRS_ERR_NULL_POINTER;
    if (!patches || !offsets)
        return brs_fail(&file->message, BRS_ERR_NULL_POINTER, "brs_lengths_file_images: %s is NULL",
                        !patches ? "patches" : "offsets");
    if (!file->ready) return not_ready(file, "brs_lengths_file_images");
    *patches = file->patches ? file->patches : no_patches;
    *offsets = file->offsets;
    return BRS_OK;
}

const char *brs_lengths_file_last_error(const brs_lengths_file *file)
{
    return file ? brs_message_text(&file->message) : null_handle_message;
}
