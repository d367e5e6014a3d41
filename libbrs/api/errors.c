/* errors.c - the status names (brs_strerror); the per-handle detail messages are
 * util/message.c's. */
#include "brs.h"

const char *brs_strerror(brs_status status)
{
    switch (status) {
    case BRS_OK: return "success";
    case BRS_ERR_NULL_POINTER: return "a required pointer argument is NULL";
    case BRS_ERR_INVALID_ARGUMENT: return "invalid argument";
    case BRS_ERR_UNSUPPORTED: return "unsupported key for this version of libbrs";
    case BRS_ERR_OUT_OF_RANGE: return "value out of range";
    case BRS_ERR_NO_MEMORY: return "out of memory";
    case BRS_ERR_STATE: return "handle not ready for this call";
    case BRS_ERR_INVALID_LENGTH: return "invalid sample length (must be >= 1)";
    case BRS_ERR_TOO_FEW_SAMPLES: return "too few samples for the configuration";
    case BRS_ERR_SAMPLE_TOO_LONG:
        return "a sample is longer than max_tokens or the last length bucket, or has more image "
               "patches than max_encoder_tokens";
    case BRS_ERR_CAP_INFEASIBLE:
        return "max_tokens (or max_encoder_tokens) cannot be met with this many micro-batches";
    case BRS_ERR_TOO_LARGE: return "configuration exceeds a limit of libbrs";
    default: return "unknown status";
    }
}
