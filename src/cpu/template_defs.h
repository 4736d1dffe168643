/* What the CPU kernel templates (kernel_template.h, spmm_template.h) and
 * their drivers share: the per-type name suffix, the inlining of the block
 * bodies, the entry points' instruction-set copies, when a call is worth
 * a parallel region, and how the drivers read scalars.  Not installed. */
#ifndef BSRMV_CPU_TEMPLATE_DEFS_H
#define BSRMV_CPU_TEMPLATE_DEFS_H

#include "bsrmv.h"

#include <omp.h>
#include <stdint.h>

#define FN_(name, suf) name##_##suf
#define FN2(name, suf) FN_(name, suf)
#define FN(name) FN2(name, SUF)
#define INLINE static inline __attribute__((always_inline))
/* The entry points, compiled once per instruction set where the build asks
 * for it (BSRMV_CPU_CLONES, set by CMakeLists.txt for x86-64 builds without
 * -march=native): the loader picks the AVX2/FMA copy on CPUs that have
 * them, the baseline copy elsewhere, so a portable binary keeps the
 * vectorised speed. */
#ifdef BSRMV_CPU_CLONES
#define KERNEL static __attribute__((target_clones("arch=x86-64-v3", "default")))
#else
#define KERNEL static
#endif

/* The block loops of the types GCC does not vectorise (float values with
 * double sums, complex): unrolled, their sums stay in registers.  The
 * sanitizer builds (BSRMV_CPU_ROLLED, CMakeLists.txt) keep them rolled. */
#ifdef BSRMV_CPU_ROLLED
#define BLOCK_UNROLL
#else
#define BLOCK_UNROLL _Pragma("GCC unroll 8")
#endif

/* A scalar of the vector type t at p (bsrmv_spmv_scalars and
 * bsrmv_spmm_scalars), as the drivers carry alpha and beta. */
static inline double _Complex load_scalar(bsrmv_type t, const void *p)
{
    switch (t) {
    case BSRMV_FLOAT: return *(const float *)p;
    case BSRMV_COMPLEX_FLOAT: return *(const float _Complex *)p;
    case BSRMV_COMPLEX_DOUBLE: return *(const double _Complex *)p;
    default: return *(const double *)p;
    }
}

/* The largest block, in bytes, that the general SpMV kernels prefetch
 * (prefetch_ahead): set once at load time (spmv.c), read-only after. */
extern int bsrmv_cpu_prefetch_max;

/* Below this many multiply-adds a parallel region costs more than it saves. */
#define PARALLEL_MIN_WORK ((int64_t)1 << 13)

static inline int threads_for(int64_t work)
{
    return work < PARALLEL_MIN_WORK ? 1 : omp_get_max_threads();
}

#endif
