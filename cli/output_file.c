/* output_file.c - temporary file, then rename (POSIX mkstemp and rename). */
#define _POSIX_C_SOURCE 200809L

#include "output_file.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fail.h"
#include "text_escape.h"

static char temporary[4096]; /* the file being written, "" when none */
static const char *target;   /* where it goes */

static void remove_temporary(void)
{
    if (temporary[0] != '\0')
        unlink(temporary);
    temporary[0] = '\0';
}

static const char *display(const char *path)
{
    static char text[256];
    text_escape(text, sizeof text, path, strlen(path));
    return text;
}

FILE *output_open(const char *path)
{
    if (path == NULL || strcmp(path, "-") == 0)
        return stdout;
    struct stat info;
    if (stat(path, &info) == 0 && S_ISDIR(info.st_mode))
        cli_bad_input("cannot write --output '%s': it is a directory; name a file", display(path));
    if (snprintf(temporary, sizeof temporary, "%s.tmp-XXXXXX", path) >= (int)sizeof temporary)
        cli_bad_input("cannot write --output '%s': the path is too long", display(path));
    int fd = mkstemp(temporary);
    if (fd < 0) {
        int cause = errno;
        temporary[0] = '\0';
        cli_bad_input("cannot write --output '%s': %s (name a file in an existing, writable "
                      "directory)",
                      display(path), strerror(cause));
    }
    atexit(remove_temporary);
    /* mkstemp makes the file private (0600); an output file gets the
     * permissions a plain fopen would give it. */
    mode_t mask = umask(0);
    umask(mask);
    fchmod(fd, 0666 & ~mask);
    FILE *out = fdopen(fd, "w");
    if (out == NULL) {
        close(fd);
        cli_failure("cannot write --output '%s': %s", display(path), strerror(errno));
    }
    target = path;
    return out;
}

void output_commit(FILE *out, const char *what)
{
    if (out == stdout) {
        if (fflush(stdout) != 0 || ferror(stdout))
            cli_failure("could not write %s to standard output: %s", what, strerror(errno));
        return;
    }
    int failed = fflush(out) != 0 || ferror(out);
    int cause = errno;
    if (fclose(out) != 0 && !failed) {
        failed = 1;
        cause = errno;
    }
    if (failed)
        cli_failure("could not write %s to '%s': %s", what, display(target), strerror(cause));
    if (rename(temporary, target) != 0)
        cli_failure("could not write %s to '%s': %s", what, display(target), strerror(errno));
    temporary[0] = '\0';
}
