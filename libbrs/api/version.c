/* version.c - the version of the library actually loaded. */
#include "brs.h"

#define BRS_STRINGIFY_(x) #x
#define BRS_STRINGIFY(x) BRS_STRINGIFY_(x)

uint32_t brs_version_number(void)
{
    return BRS_VERSION_MAJOR * 10000u + BRS_VERSION_MINOR * 100u + BRS_VERSION_PATCH;
}

const char *brs_version_string(void)
{
    return BRS_STRINGIFY(BRS_VERSION_MAJOR) "." BRS_STRINGIFY(BRS_VERSION_MINOR) "." BRS_STRINGIFY(
        BRS_VERSION_PATCH);
}
