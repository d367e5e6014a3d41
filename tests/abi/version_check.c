/*
 * version_check.c - the version macros, the Meson project version and the
 * loaded library agree.
 *
 *     version_check MESON_PROJECT_VERSION
 *
 * A binding reads the macros when it is written and the functions when it
 * loads the library; both must say the version that Meson built.
 */
#include <stdio.h>
#include <string.h>

#include "brs.h"

static int failures;

static void expect(int ok, const char *what)
{
    if (!ok) {
        printf("FAIL: %s\n", what);
        failures++;
    }
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s MESON_PROJECT_VERSION\n", argv[0]);
        return 2;
    }
    char macros[64];
    snprintf(macros, sizeof macros, "%d.%d.%d", BRS_VERSION_MAJOR, BRS_VERSION_MINOR,
             BRS_VERSION_PATCH);
    const long number = BRS_VERSION_MAJOR * 10000L + BRS_VERSION_MINOR * 100L + BRS_VERSION_PATCH;
    const char *runtime = brs_version_string();

    printf("meson %s, macros %s (%d), runtime %s (%lu)\n", argv[1], macros, BRS_VERSION_NUMBER,
           runtime ? runtime : "(null)", (unsigned long)brs_version_number());
    expect(strcmp(macros, argv[1]) == 0, "BRS_VERSION_MAJOR.MINOR.PATCH != meson.project_version()");
    expect(BRS_VERSION_NUMBER == number, "BRS_VERSION_NUMBER != MAJOR*10000 + MINOR*100 + PATCH");
    expect(runtime && strcmp(runtime, argv[1]) == 0, "brs_version_string() != meson.project_version()");
    expect(brs_version_number() == (unsigned long)number, "brs_version_number() != the macros");
    expect(BRS_VERSION_MINOR < 100 && BRS_VERSION_PATCH < 100, "MINOR and PATCH must stay below 100");
    return failures ? 1 : 0;
}
