/* The body of each spmv_<type>.c: kernel_template.h instantiated for one
 * type pair, and its table exported for the driver.  The includer defines
 * T, V and SUF, and optionally VOPS, SYM, SYM_ONLY, COMPLEX, CONJ(v) and
 * BLOCK_SIMD(clauses) (kernel_template.h says what each does).  With
 * SYM_ONLY the table is bsrmv_cpu_sym_kernels_SUF and holds the
 * symmetric-storage kernels alone. */
#include "spmv_kernels.h"

#include <omp.h>
#include <string.h>

#define PRAGMA_(x) _Pragma(#x)
#ifndef CONJ
#define CONJ(v) (v)
#endif
#ifndef BLOCK_SIMD
#define BLOCK_SIMD(clauses) PRAGMA_(omp simd clauses)
#define BLOCK_VECTORS /* real values and vectors of one type: kernel_template.h's vector types apply */
#endif

#include "kernel_template.h"

#ifdef SYM_ONLY
const cpu_kernels FN(bsrmv_cpu_sym_kernels) = {NULL, NULL, FN(sym_specialised),
                                               &FN(sym_generic), NULL};
#else

#ifdef SYM
#define SYM_TABLES_ FN(sym_specialised), &FN(sym_generic)
#else
#define SYM_TABLES_ NULL, NULL
#endif
#ifdef VOPS
#define VOPS_TABLE_ &FN(vops)
#else
#define VOPS_TABLE_ NULL
#endif
const cpu_kernels FN(bsrmv_cpu_kernels) = {FN(specialised), &FN(generic), SYM_TABLES_,
                                           VOPS_TABLE_};
#endif
