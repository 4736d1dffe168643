/* Byte-stream helpers shared by the fuzz targets. */
#ifndef BSRMV_FUZZ_COMMON_H
#define BSRMV_FUZZ_COMMON_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct fz {
    const uint8_t *p;
    size_t n;
} fz;

/* Next byte, 0 once the input is used up. */
static inline unsigned fz_u8(fz *f)
{
    if (!f->n)
        return 0;
    f->n--;
    return *f->p++;
}

static inline uint32_t fz_u32(fz *f)
{
    uint32_t v = 0;
    for (int i = 0; i < 4; i++)
        v = v << 8 | fz_u8(f);
    return v;
}

/* A small double from the input: exact in float (k/16 for |k| < 256). */
static inline double fz_small(fz *f)
{
    return ((double)fz_u8(f) - 128.0) / 16.0;
}

/* Fails (abort: the fuzzer's crash) when got differs from want by more
 * than rounding in the given type over `terms` products of size mag. */
static inline void fz_close(double got, long double want, long double mag, int64_t terms,
                            int is_float)
{
    if (isnan(got) && isnan((double)want))
        return;
    long double eps = is_float ? 6e-8L : 1.2e-16L;
    long double tol = (long double)(terms + 2) * eps * (mag + 1e-30L) * 4;
    if (!(fabsl((long double)got - want) <= tol))
        abort();
}

#endif
