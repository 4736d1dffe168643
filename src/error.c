/* Status names and the per-thread message of the last failure. */
#include "internal.h"

#include <stdarg.h>
#include <stdio.h>

static _Thread_local char last_message[512];

bsrmv_status bsrmv_fail(bsrmv_status s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_message, sizeof last_message, fmt, ap);
    va_end(ap);
    return s;
}

const char *bsrmv_version(void)
{
    return BSRMV_VERSION_STRING;
}

const char *bsrmv_last_error(void)
{
    return last_message;
}

const char *bsrmv_status_string(bsrmv_status s)
{
    switch (s) {
    case BSRMV_SUCCESS: return "BSRMV_SUCCESS";
    case BSRMV_ERR_ARGUMENT: return "BSRMV_ERR_ARGUMENT";
    case BSRMV_ERR_NOMEM: return "BSRMV_ERR_NOMEM";
    case BSRMV_ERR_OVERFLOW: return "BSRMV_ERR_OVERFLOW";
    case BSRMV_ERR_STRUCTURE: return "BSRMV_ERR_STRUCTURE";
    case BSRMV_ERR_DIMENSION: return "BSRMV_ERR_DIMENSION";
    case BSRMV_ERR_IO: return "BSRMV_ERR_IO";
    case BSRMV_ERR_FORMAT: return "BSRMV_ERR_FORMAT";
    case BSRMV_ERR_UNSUPPORTED: return "BSRMV_ERR_UNSUPPORTED";
    case BSRMV_ERR_DEVICE: return "BSRMV_ERR_DEVICE";
    case BSRMV_ERR_DEVICE_NOMEM: return "BSRMV_ERR_DEVICE_NOMEM";
    case BSRMV_ERR_NO_DEVICE: return "BSRMV_ERR_NO_DEVICE";
    case BSRMV_ERR_SINGULAR: return "BSRMV_ERR_SINGULAR";
    case BSRMV_ERR_NOT_CONVERGED: return "BSRMV_ERR_NOT_CONVERGED";
    }
    return "BSRMV_ERR_(unknown)";
}

size_t bsrmv_type_size(bsrmv_type t)
{
    switch (t) {
    case BSRMV_FLOAT: return sizeof(float);
    case BSRMV_DOUBLE: return sizeof(double);
    case BSRMV_COMPLEX_FLOAT: return 2 * sizeof(float);
    case BSRMV_COMPLEX_DOUBLE: return 2 * sizeof(double);
    }
    return 0;
}

const char *bsrmv_type_name(bsrmv_type t)
{
    switch (t) {
    case BSRMV_FLOAT: return "float";
    case BSRMV_DOUBLE: return "double";
    case BSRMV_COMPLEX_FLOAT: return "complex float";
    case BSRMV_COMPLEX_DOUBLE: return "complex double";
    }
    return "unknown type";
}

bsrmv_status bsrmv_refuse_complex(bsrmv_type t, const char *who)
{
    if (bsrmv_type_is_complex(t))
        return bsrmv_fail(BSRMV_ERR_UNSUPPORTED,
                          "%s: %s values are not supported here (docs/COMPLEX.md lists the "
                          "entry points that take complex matrices)",
                          who, bsrmv_type_name(t));
    return BSRMV_SUCCESS;
}
