/* The host vector backend: OpenMP threads over contiguous ranges of block
 * rows (the same split for every op, so each thread keeps touching the
 * same pages).  Dot products are summed per thread and then in thread
 * order, so a solve is deterministic for a given thread count. */
#include "solve_internal.h"

#include <complex.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

/* GMRES passes over k vectors work on chunks of this many values: 8-16 KB
 * of u stay in L1 while the k vectors stream by in runs long enough for the
 * hardware prefetchers. */
#define SV_CHUNK 2048
/* Below this many values one thread does the pass. */
#define PARALLEL_MIN 32768
/* Dot slots per thread, padded to a cache line against false sharing. */
#define PAD 8

typedef struct cpu_op {
    int64_t n;
    int bs;
    const void *inv; /* NULL: M = I */
    void *v[2 * SV_MAX_DOTS];
    sv_scalar s[2];
    int k;
    const sv_scalar *c;
} cpu_op;

typedef void (*cpu_fn)(const cpu_op *o, int64_t r0, int64_t r1, double *red, void *scratch);
typedef struct cpu_kernels {
    cpu_fn zero, copy, precond, dots, mdot, axpy, xpby, residual, cg_step, bicg_p, bicg_s,
        bicg_x, lincomb, gmres_x;
} cpu_kernels;

#define T double
#define SUF d
#include "cpu_ops.h"
#undef T
#undef SUF
#define T float
#define SUF s
#include "cpu_ops.h"
#undef T
#undef SUF
#define CPLX
#define T double _Complex
#define SUF z
#include "cpu_ops.h"
#undef T
#undef SUF
#define T float _Complex
#define SUF c
#include "cpu_ops.h"
#undef T
#undef SUF
#undef CPLX

typedef struct cpu_ctx {
    const bsrmv_matrix *A;
    const bsrmv_precond *P;
    const cpu_kernels *k;
} cpu_ctx;

static const cpu_kernels *K(const sv_backend *be)
{
    return ((const cpu_ctx *)be->ctx)->k;
}

/* Runs fn over all block rows and sums its nred partial sums over the
 * threads: into out[0..nred), or with sc into the scalars sc[0..nred/np)
 * (np = 2 sums a scalar for the complex types, else 1). */
static bsrmv_status run_(const sv_backend *be, cpu_fn fn, cpu_op *o, int nred, double *out,
                         sv_scalar *sc)
{
    const cpu_ctx *c = be->ctx;
    o->n = be->n;
    o->bs = be->bs;
    o->inv = c->P ? c->P->inv : NULL;
    const int nt = be->n < PARALLEL_MIN ? 1 : omp_get_max_threads();
    const int slots = (nred + PAD - 1) / PAD * PAD;
    /* gmres_x: y and M y of one block */
    const size_t scratch = (size_t)2 * be->bs * bsrmv_type_parts(be->type);
    double *red = bsrmv_calloc((size_t)nt * ((size_t)slots + scratch) + 1, sizeof *red);
    if (!red)
        return bsrmv_fail(BSRMV_ERR_NOMEM, "out of memory for %d threads' partial sums", nt);
    int team = 1;
#pragma omp parallel num_threads(nt)
    {
        const int p = omp_get_thread_num(), np = omp_get_num_threads();
        if (p == 0)
            team = np;
        const int64_t r0 = be->mb * p / np, r1 = be->mb * (p + 1) / np;
        fn(o, r0, r1, red + (size_t)p * slots, red + (size_t)nt * slots + (size_t)p * scratch);
    }
    const int np = bsrmv_type_parts(be->type);
    for (int i = 0; i < nred; i++) {
        double t = 0;
        for (int p = 0; p < team; p++)
            t += red[(size_t)p * slots + i];
        if (!sc)
            out[i] = t;
        else if (i % np)
            sc[i / np].im = t;
        else
            sc[i / np] = sv_sc(t, 0);
    }
    bsrmv_free(red);
    return BSRMV_SUCCESS;
}

static bsrmv_status run(const sv_backend *be, cpu_fn fn, cpu_op *o, int nred, double *out)
{
    return run_(be, fn, o, nred, out, NULL);
}

/* run for ops that return k scalars */
static bsrmv_status run_sc(const sv_backend *be, cpu_fn fn, cpu_op *o, int k, sv_scalar *sc)
{
    return run_(be, fn, o, k * (bsrmv_type_parts(be->type)), NULL, sc);
}

static bsrmv_status cpu_zero(sv_backend *be, void *x);

static bsrmv_status cpu_alloc(sv_backend *be, int count, void **v)
{
    size_t bytes;
    if (!bsrmv_bytes(sv_slot(be) * count, bsrmv_type_size(be->type), &bytes))
        return bsrmv_fail(BSRMV_ERR_OVERFLOW, "%d solver vectors overflow size_t", count);
    *v = bsrmv_big_alloc(bytes);
    if (!*v)
        return bsrmv_fail(BSRMV_ERR_NOMEM, "out of memory for %d solver vectors (%.3g GB)",
                          count, (double)bytes * 1e-9);
    /* first touch by the threads that will use each page */
    bsrmv_status st = BSRMV_SUCCESS;
    for (int i = 0; i < count && !st; i++)
        st = cpu_zero(be, sv_vec(be, *v, i));
    if (st) {
        bsrmv_big_free(*v);
        *v = NULL;
    }
    return st;
}

static void cpu_release(sv_backend *be, void *v)
{
    bsrmv_big_free(v);
}

static bsrmv_status cpu_sync(sv_backend *be)
{
    return BSRMV_SUCCESS;
}

static bsrmv_status cpu_spmv(sv_backend *be, const void *x, void *y)
{
    return bsrmv_spmv(BSRMV_OP_N, 1.0, ((const cpu_ctx *)be->ctx)->A, x, be->n, 0.0, y, be->n);
}

#define V(p) ((void *)(p))

static bsrmv_status cpu_zero(sv_backend *be, void *x)
{
    cpu_op o = {.v = {x}};
    return run(be, K(be)->zero, &o, 0, NULL);
}

static bsrmv_status cpu_copy(sv_backend *be, const void *x, void *y)
{
    cpu_op o = {.v = {V(x), y}};
    return run(be, K(be)->copy, &o, 0, NULL);
}

static bsrmv_status cpu_precond(sv_backend *be, const void *r, void *z)
{
    if (!be->has_p)
        return cpu_copy(be, r, z);
    cpu_op o = {.v = {V(r), z}};
    return run(be, K(be)->precond, &o, 0, NULL);
}

static bsrmv_status cpu_dots(sv_backend *be, int k, const void *const *a, const void *const *b,
                             sv_scalar *out)
{
    cpu_op o = {.k = k};
    for (int i = 0; i < k; i++) {
        o.v[i] = V(a[i]);
        o.v[SV_MAX_DOTS + i] = V(b[i]);
    }
    return run_sc(be, K(be)->dots, &o, k, out);
}

static bsrmv_status cpu_mdot(sv_backend *be, int k, const void *Vs, const void *u,
                             sv_scalar *out)
{
    cpu_op o = {.v = {V(Vs), V(u)}, .k = k};
    return run_sc(be, K(be)->mdot, &o, k, out);
}

static bsrmv_status cpu_axpy(sv_backend *be, sv_scalar alpha, const void *x, void *y)
{
    cpu_op o = {.v = {V(x), y}, .s = {alpha}};
    return run(be, K(be)->axpy, &o, 0, NULL);
}

static bsrmv_status cpu_xpby(sv_backend *be, const void *z, sv_scalar beta, void *p)
{
    cpu_op o = {.v = {V(z), p}, .s = {beta}};
    return run(be, K(be)->xpby, &o, 0, NULL);
}

static bsrmv_status cpu_residual(sv_backend *be, const void *b, void *r, double *rr)
{
    cpu_op o = {.v = {V(b), r}};
    return run(be, K(be)->residual, &o, 1, rr);
}

static bsrmv_status cpu_cg_step(sv_backend *be, sv_scalar alpha, void *x, const void *p, void *r,
                                const void *q, void *z, double out[2])
{
    cpu_op o = {.v = {x, V(p), r, V(q), z}, .s = {alpha}};
    return run(be, K(be)->cg_step, &o, 2, out);
}

static bsrmv_status cpu_bicg_p(sv_backend *be, sv_scalar beta, sv_scalar omega, const void *r,
                               void *p, const void *v, void *phat)
{
    cpu_op o = {.v = {V(r), p, V(v), phat}, .s = {beta, omega}};
    return run(be, K(be)->bicg_p, &o, 0, NULL);
}

static bsrmv_status cpu_bicg_s(sv_backend *be, sv_scalar alpha, void *r, const void *v, void *shat)
{
    cpu_op o = {.v = {r, V(v), shat}, .s = {alpha}};
    return run(be, K(be)->bicg_s, &o, 0, NULL);
}

static bsrmv_status cpu_bicg_x(sv_backend *be, sv_scalar alpha, sv_scalar omega, void *x,
                               const void *phat, const void *shat, void *r, const void *t,
                               const void *r0, sv_scalar out[2])
{
    cpu_op o = {.v = {x, V(phat), V(shat), r, V(t), V(r0)}, .s = {alpha, omega}};
    const int cplx = bsrmv_type_is_complex(be->type);
    double d[3];
    bsrmv_status st = run(be, K(be)->bicg_x, &o, 2 + cplx, d);
    out[0] = sv_sc(d[0], 0);
    out[1] = sv_sc(d[1], cplx ? d[2] : 0);
    return st;
}

static bsrmv_status cpu_lincomb(sv_backend *be, int k, const sv_scalar *c, const void *Vs, void *u,
                                double *uu)
{
    cpu_op o = {.v = {V(Vs), u}, .k = k, .c = c};
    return run(be, K(be)->lincomb, &o, 1, uu);
}

static bsrmv_status cpu_gmres_x(sv_backend *be, int k, const sv_scalar *c, const void *Vs, void *x)
{
    cpu_op o = {.v = {V(Vs), x}, .k = k, .c = c};
    return run(be, K(be)->gmres_x, &o, 0, NULL);
}

static bsrmv_status cpu_spmm(sv_backend *be, int k, const void *X, int64_t ldx, void *Y,
                             int64_t ldy)
{
    return bsrmv_spmm_cols(((const cpu_ctx *)be->ctx)->A, k, X, ldx, Y, ldy);
}

bsrmv_status bsrmv_sv_cpu_init(sv_backend *be, const bsrmv_matrix *A, const bsrmv_precond *P)
{
    memset(be, 0, sizeof *be);
    cpu_ctx *c = bsrmv_malloc(sizeof *c);
    if (!c)
        return bsrmv_fail(BSRMV_ERR_NOMEM, "out of memory for the solver context");
    c->A = A;
    c->P = P;
    be->ctx = c;
    be->mb = A ? A->mb : P->mb;
    be->bs = A ? A->bs : P->bs;
    be->type = A ? A->vtype : P->type;
    c->k = be->type == BSRMV_DOUBLE           ? &kernels_d
           : be->type == BSRMV_FLOAT          ? &kernels_s
           : be->type == BSRMV_COMPLEX_DOUBLE ? &kernels_z
                                              : &kernels_c;
    be->n = be->mb * be->bs;
    be->has_p = P != NULL;
    be->spmv_bytes = A ? bsrmv_matrix_spmv_bytes(A) : 0;
    be->alloc = cpu_alloc;
    be->release = cpu_release;
    be->sync = cpu_sync;
    be->spmv = cpu_spmv;
    be->zero = cpu_zero;
    be->copy = cpu_copy;
    be->precond = cpu_precond;
    be->dots = cpu_dots;
    be->mdot = cpu_mdot;
    be->axpy = cpu_axpy;
    be->xpby = cpu_xpby;
    be->residual = cpu_residual;
    be->cg_step = cpu_cg_step;
    be->bicg_p = cpu_bicg_p;
    be->bicg_s = cpu_bicg_s;
    be->bicg_x = cpu_bicg_x;
    be->lincomb = cpu_lincomb;
    be->gmres_x = cpu_gmres_x;
    be->spmm = A ? cpu_spmm : NULL;
    return BSRMV_SUCCESS;
}

void bsrmv_sv_cpu_free(sv_backend *be)
{
    bsrmv_free(be->ctx);
    be->ctx = NULL;
}
