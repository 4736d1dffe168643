/* A scalar of a distributed matrix's type, as bsrmv_spmv_scalars and
 * bsrmv_spmm_scalars read it (src/mpi/spmv.c, spmm.c; C only: gpu.cu,
 * which includes dist_internal.h, is C++). */
#ifndef BSRMV_DIST_SCALAR_H
#define BSRMV_DIST_SCALAR_H

#include "internal.h"

typedef union dist_scalar {
    float f;
    double d;
    float _Complex c;
    double _Complex z;
} dist_scalar;

static inline dist_scalar dist_scalar_of(bsrmv_type t, double re)
{
    dist_scalar v = {.z = 0};
    switch (t) {
    case BSRMV_FLOAT: v.f = (float)re; break;
    case BSRMV_DOUBLE: v.d = re; break;
    case BSRMV_COMPLEX_FLOAT: v.c = (float)re; break;
    default: v.z = re;
    }
    return v;
}

static inline int dist_scalar_is_zero(bsrmv_type t, const void *s)
{
    switch (t) {
    case BSRMV_FLOAT: return *(const float *)s == 0;
    case BSRMV_DOUBLE: return *(const double *)s == 0;
    case BSRMV_COMPLEX_FLOAT: return *(const float _Complex *)s == 0;
    default: return *(const double _Complex *)s == 0;
    }
}

#endif
