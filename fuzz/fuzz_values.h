/* Values of every bsrmv_type as long double complex, for the targets that
 * check complex products (<complex.h>, with its I, reaches only them). */
#ifndef BSRMV_FUZZ_VALUES_H
#define BSRMV_FUZZ_VALUES_H

#include <bsrmv.h>
#include <complex.h>
#include <stdint.h>

typedef long double _Complex lc;

/* Value i of an array of type t. */
static inline lc getv(bsrmv_type t, const void *v, int64_t i)
{
    switch (t) {
    case BSRMV_FLOAT: return ((const float *)v)[i];
    case BSRMV_DOUBLE: return ((const double *)v)[i];
    case BSRMV_COMPLEX_FLOAT:
        return ((const float *)v)[2 * i] + I * (long double)((const float *)v)[2 * i + 1];
    default: return ((const double *)v)[2 * i] + I * (long double)((const double *)v)[2 * i + 1];
    }
}

/* Value i of an array of type t = x, rounded to t (the imaginary part
 * dropped for a real t). */
static inline void setv(bsrmv_type t, void *v, int64_t i, lc x)
{
    switch (t) {
    case BSRMV_FLOAT: ((float *)v)[i] = (float)creall(x); break;
    case BSRMV_DOUBLE: ((double *)v)[i] = (double)creall(x); break;
    case BSRMV_COMPLEX_FLOAT:
        ((float *)v)[2 * i] = (float)creall(x);
        ((float *)v)[2 * i + 1] = (float)cimagl(x);
        break;
    default:
        ((double *)v)[2 * i] = (double)creall(x);
        ((double *)v)[2 * i + 1] = (double)cimagl(x);
    }
}

#endif
