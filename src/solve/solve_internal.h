/* Internal interface of the iterative solvers.
 *
 * The methods (cg.c, bicgstab.c, gmres.c) are written once against a
 * "vector backend": a table of fused vector operations on vectors that live
 * wherever the backend keeps them.  cpu.c implements it on the host with
 * OpenMP, src/cuda/solve.cu on the device.  Every operation is one pass over
 * memory; ops.c wraps each call and counts the bytes that pass moves, so the
 * traffic per iteration is known exactly (docs/SOLVERS.md lists it).
 *
 * Conventions of the operations: vectors hold n = mb*bs values of the
 * backend's type; dot products a.b are a^H b (conjugated first factor for
 * the complex types), accumulated in double.  Scalars travel as sv_scalar
 * pairs whatever the type: a real backend reads .re and returns .im = 0, and
 * the host arithmetic below is exact on such pairs, so real solves do the
 * same operations as with plain doubles.  M is the block
 * Jacobi inverse when has_p is set, else the identity: then the ops do not
 * write their M-outputs (z, phat, shat), and the methods pass the input
 * vector itself in their place. */
#ifndef BSRMV_SOLVE_INTERNAL_H
#define BSRMV_SOLVE_INTERNAL_H

#ifdef __cplusplus
extern "C" {
#endif

#include "internal.h"

#include <math.h>

struct bsrmv_precond {
    int64_t mb;
    int bs;
    bsrmv_type type;
    void *inv; /* mb inverse diagonal blocks, bs*bs values each, column-major */
};

/* A scalar of the methods (plain C: the header is shared with C++). */
typedef struct sv_scalar {
    double re, im;
} sv_scalar;

static inline sv_scalar sv_sc(double re, double im)
{
    sv_scalar s = {re, im};
    return s;
}
static inline sv_scalar sv_sc_add(sv_scalar a, sv_scalar b)
{
    return sv_sc(a.re + b.re, a.im + b.im);
}
static inline sv_scalar sv_sc_sub(sv_scalar a, sv_scalar b)
{
    return sv_sc(a.re - b.re, a.im - b.im);
}
static inline sv_scalar sv_sc_conj(sv_scalar a)
{
    return sv_sc(a.re, -a.im);
}
/* Real pairs take the real product and quotient alone: no rounding or
 * signed zeros from the zero imaginary parts. */
static inline sv_scalar sv_sc_mul(sv_scalar a, sv_scalar b)
{
    if (a.im == 0 && b.im == 0)
        return sv_sc(a.re * b.re, 0);
    return sv_sc(a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re);
}
static inline sv_scalar sv_sc_div(sv_scalar a, sv_scalar b)
{
    if (b.im == 0)
        return sv_sc(a.re / b.re, a.im == 0 ? 0 : a.im / b.re);
    /* Smith's algorithm: no overflow from squaring b */
    if (fabs(b.re) >= fabs(b.im)) {
        const double q = b.im / b.re, d = b.re + b.im * q;
        return sv_sc((a.re + a.im * q) / d, (a.im - a.re * q) / d);
    }
    const double q = b.re / b.im, d = b.re * q + b.im;
    return sv_sc((a.re * q + a.im) / d, (a.im * q - a.re) / d);
}
static inline double sv_sc_abs(sv_scalar a)
{
    return a.im == 0 ? fabs(a.re) : hypot(a.re, a.im);
}
static inline int sv_sc_isfinite(sv_scalar a)
{
    return isfinite(a.re) && isfinite(a.im);
}

/* The options' defaults (bsrmv.h). */
#define SV_DEFAULT_RTOL 1e-8
#define SV_DEFAULT_MAX_ITER 1000

/* Most pairs one `dots` call takes. */
#define SV_MAX_DOTS 4

typedef struct sv_backend sv_backend;
struct sv_backend {
    void *ctx;
    /* a backend layered on another (src/mpi/solve.c's on this rank's): its
     * own state, which copies of the backend (multi.c's columns) keep */
    void *layer;
    int64_t n, mb;
    int bs;
    bsrmv_type type;
    int has_p;
    double spmv_bytes; /* one y = A x: values, indices, x and y */
    /* the reductions are collective over processes (src/mpi/solve.c): every
     * process takes part in each, even one that holds no rows */
    int collective;

    /* count contiguous vectors (vector i at sv_vec(be, v, i): n values
     * apart, one where n is 0, so that the vectors of a process without
     * rows still lie at distinct addresses, by which the several
     * right-hand sides' scheduler tells them apart on every process),
     * zero-filled so that no page is first touched inside the timed loop;
     * release(NULL) is a no-op */
    bsrmv_status (*alloc)(sv_backend *be, int count, void **v);
    void (*release)(sv_backend *be, void *v);
    /* waits for the queued work (the device's stream); no-op on the host */
    bsrmv_status (*sync)(sv_backend *be);

    bsrmv_status (*spmv)(sv_backend *be, const void *x, void *y); /* y = A x */
    bsrmv_status (*zero)(sv_backend *be, void *x);
    bsrmv_status (*copy)(sv_backend *be, const void *x, void *y);
    bsrmv_status (*precond)(sv_backend *be, const void *r, void *z); /* z = M r */
    /* out[i] = a[i].b[i], i < k <= SV_MAX_DOTS */
    bsrmv_status (*dots)(sv_backend *be, int k, const void *const *a, const void *const *b,
                         sv_scalar *out);
    /* out[i] = V_i.u, i < k */
    bsrmv_status (*mdot)(sv_backend *be, int k, const void *V, const void *u, sv_scalar *out);
    bsrmv_status (*axpy)(sv_backend *be, sv_scalar alpha, const void *x, void *y); /* y += alpha x */
    bsrmv_status (*xpby)(sv_backend *be, const void *z, sv_scalar beta, void *p); /* p = z + beta p */
    /* r = b - r (r holds A x on entry); *rr = r.r */
    bsrmv_status (*residual)(sv_backend *be, const void *b, void *r, double *rr);
    /* CG: x += alpha p; r -= alpha q; z = M r; out = {Re r.z, r.r} */
    bsrmv_status (*cg_step)(sv_backend *be, sv_scalar alpha, void *x, const void *p, void *r,
                            const void *q, void *z, double out[2]);
    /* BiCGSTAB: p = r + beta (p - omega v); phat = M p */
    bsrmv_status (*bicg_p)(sv_backend *be, sv_scalar beta, sv_scalar omega, const void *r, void *p,
                           const void *v, void *phat);
    /* BiCGSTAB: s = r - alpha v, in place of r; shat = M s */
    bsrmv_status (*bicg_s)(sv_backend *be, sv_scalar alpha, void *r, const void *v, void *shat);
    /* BiCGSTAB: x += alpha phat + omega shat; r = r - omega t (r holds s);
     * out = {r.r, r0.r} */
    bsrmv_status (*bicg_x)(sv_backend *be, sv_scalar alpha, sv_scalar omega, void *x,
                           const void *phat, const void *shat, void *r, const void *t,
                           const void *r0, sv_scalar out[2]);
    /* GMRES: u -= sum_i c_i V_i; *uu = u.u  (c: k host scalars) */
    bsrmv_status (*lincomb)(sv_backend *be, int k, const sv_scalar *c, const void *V, void *u,
                            double *uu);
    /* GMRES: x += M (sum_i c_i V_i) */
    bsrmv_status (*gmres_x)(sv_backend *be, int k, const sv_scalar *c, const void *V, void *x);
    /* Y = A X for k column-major vectors (leading dimensions in values),
     * whose spans may interleave; NULL where the matrix has no SpMM (then
     * the products of several right-hand sides are separate spmv calls) */
    bsrmv_status (*spmm)(sv_backend *be, int k, const void *X, int64_t ldx, void *Y,
                         int64_t ldy);
};

/* One solve: the backend, the resolved options, what the report gets. */
typedef struct sv_run {
    sv_backend *be;
    double rtol;
    int max_iter, restart;
    int (*monitor)(int iter, double rel_residual, void *ctx);
    void *monitor_ctx;
    double bnorm;      /* ||b||_2 > 0 */
    int x_is_zero;     /* x == 0 on entry: the first residual is b */
    /* filled by the method */
    int iterations;
    int converged;
    double rel_residual;
    double bytes;      /* traffic of the ops, counted by ops.c */
    double t0;         /* set by bsrmv_sv_start */
} sv_run;

/* Runs `method` on the backend: checks b, handles b == 0, times the
 * iterations, recomputes the true residual and fills *rep (may be NULL). */
bsrmv_status bsrmv_sv_solve(bsrmv_solver method, sv_backend *be, const void *b, void *x,
                            const bsrmv_solve_options *opt, bsrmv_solve_report *rep);

/* Several right-hand sides (multi.c): bsrmv_sv_solve of every column of
 * B (n x k, leading dimension ldb) into the same column of X, each on the
 * backend `be` with its products batched into be->spmm calls; reports has
 * k entries (may be NULL).  The caller has run bsrmv_sv_check on the
 * first columns and bsrmv_sv_check_multi. */
bsrmv_status bsrmv_sv_solve_multi(bsrmv_solver method, sv_backend *be, int k, const void *B,
                                  int64_t ldb, void *X, int64_t ldx,
                                  const bsrmv_solve_options *opt, bsrmv_solve_report *reports);
/* k >= 1, ldb and ldx >= max(1, n), the spans of B and X within the
 * address space and disjoint (messages start with `who`). */
bsrmv_status bsrmv_sv_check_multi(const char *who, int64_t n, int k, const void *B, int64_t ldb,
                                  const void *X, int64_t ldx, size_t vs);

/* Iterative refinement (refine.c): true residuals on `hi` (the matrix in
 * working precision), corrections by `method` on `lo` (its float copy with
 * the same vectors, and the preconditioner); fills *rep (may be NULL). */
bsrmv_status bsrmv_sv_refine(bsrmv_solver method, sv_backend *hi, sv_backend *lo, const void *b,
                             void *x, const bsrmv_solve_options *opt, bsrmv_solve_report *rep);
/* The matrix pair of a refined solve: A double, the copy of the same shape
 * with double vectors. */
bsrmv_status bsrmv_sv_check_refine(const char *who, int64_t mb, int64_t nb, int bs,
                                   bsrmv_type type, bsrmv_type vtype, int64_t lmb, int64_t lnb,
                                   int lbs, bsrmv_type lvtype);

/* The methods: iterate from x (r.x_is_zero: x == 0) until converged. */
bsrmv_status bsrmv_sv_cg(sv_run *r, const void *b, void *x);
bsrmv_status bsrmv_sv_bicgstab(sv_run *r, const void *b, void *x);
bsrmv_status bsrmv_sv_gmres(sv_run *r, const void *b, void *x);

/* ---- run.c: shared by the methods ---------------------------------- */

/* Monotonic wall time in seconds. */
double bsrmv_sv_now(void);
/* Called by a method once its vectors are allocated: the report's time
 * and traffic start here. */
void bsrmv_sv_start(sv_run *r);

/* Shared by the methods: the monitor and the stopping test after an
 * iteration.  Returns 1 to stop (the monitor said so: *st is set). */
int bsrmv_sv_monitor(sv_run *r, double rel, bsrmv_status *st);
/* r = b - A x into res (x == 0 allowed via r->x_is_zero on the first call);
 * returns ||res|| / ||b|| in *rel. */
bsrmv_status bsrmv_sv_true_residual(sv_run *r, const void *b, const void *x, void *res,
                                    double *rel);
/* The recurrence of `method` reached rtol: the true residual into *rel.
 * One still above rtol that gained less than 10% on *last_true (the
 * previous check) means the type cannot resolve rtol: BSRMV_ERR_NOT_CONVERGED
 * ("stagnated"); else *last_true = *rel and the caller goes on. */
bsrmv_status bsrmv_sv_confirm(sv_run *r, const char *method, const void *b, const void *x,
                              void *res, double *rel, double *last_true);
/* At exit: converged if rel <= rtol, else the iteration-limit error. */
bsrmv_status bsrmv_sv_finish(sv_run *r, const char *method, double rel);

/* Counted wrappers (ops.c): call the backend op and add its traffic. */
bsrmv_status sv_spmv(sv_run *r, const void *x, void *y);
bsrmv_status sv_zero(sv_run *r, void *x);
bsrmv_status sv_copy(sv_run *r, const void *x, void *y);
bsrmv_status sv_precond(sv_run *r, const void *v, void *z);
bsrmv_status sv_dots(sv_run *r, int k, const void *const *a, const void *const *b,
                     sv_scalar *out);
bsrmv_status sv_mdot(sv_run *r, int k, const void *V, const void *u, sv_scalar *out);
bsrmv_status sv_axpy(sv_run *r, sv_scalar alpha, const void *x, void *y);
bsrmv_status sv_xpby(sv_run *r, const void *z, sv_scalar beta, void *p);
bsrmv_status sv_residual(sv_run *r, const void *b, void *res, double *rr);
bsrmv_status sv_cg_step(sv_run *r, sv_scalar alpha, void *x, const void *p, void *res,
                        const void *q, void *z, double out[2]);
bsrmv_status sv_bicg_p(sv_run *r, sv_scalar beta, sv_scalar omega, const void *res, void *p,
                       const void *v, void *phat);
bsrmv_status sv_bicg_s(sv_run *r, sv_scalar alpha, void *res, const void *v, void *shat);
bsrmv_status sv_bicg_x(sv_run *r, sv_scalar alpha, sv_scalar omega, void *x, const void *phat,
                       const void *shat, void *res, const void *t, const void *r0,
                       sv_scalar out[2]);
bsrmv_status sv_lincomb(sv_run *r, int k, const sv_scalar *c, const void *V, void *u,
                        double *uu);
bsrmv_status sv_gmres_x(sv_run *r, int k, const sv_scalar *c, const void *V, void *x);

/* The values from one vector of a set to the next: n, at least 1. */
static inline int64_t sv_slot(const sv_backend *be)
{
    return be->n > 0 ? be->n : 1;
}

/* Vector i of a contiguous set of vectors of length n. */
static inline void *sv_vec(const sv_backend *be, void *V, int64_t i)
{
    return (char *)V + (size_t)i * (size_t)sv_slot(be) * bsrmv_type_size(be->type);
}

/* The host backend for A (and P, may be NULL); bsrmv_sv_cpu_free releases
 * its scratch. */
bsrmv_status bsrmv_sv_cpu_init(sv_backend *be, const bsrmv_matrix *A, const bsrmv_precond *P);
void bsrmv_sv_cpu_free(sv_backend *be);

/* The device backend (src/cuda/solve.cu; CUDA builds only) for dA and dP
 * (may be NULL) on `stream`, after bsrmv_gpu_solve's argument checks, with
 * room for the reductions of `method`; the caller has made dA's device
 * current.  bsrmv_sv_gpu_free releases it (and is a no-op on a backend
 * whose init failed). */
bsrmv_status bsrmv_sv_gpu_init(sv_backend *be, bsrmv_solver method, const bsrmv_gpu_matrix *dA,
                               const bsrmv_gpu_precond *dP, const void *d_b, void *d_x, int64_t n,
                               const bsrmv_solve_options *opt, void *stream);
void bsrmv_sv_gpu_free(sv_backend *be);

/* bsrmv_spmm_cols on the device (src/cuda/spmm.cu): Y = A X for k
 * column-major vectors in device memory, past bsrmv_gpu_spmm's overlap
 * check; dA's device is current, dA has SpMM (full storage, one
 * precision). */
bsrmv_status bsrmv_gpu_spmm_cols(const bsrmv_gpu_matrix *dA, int k, const void *d_X, int64_t ldx,
                                void *d_Y, int64_t ldy, void *stream);

/* GMRES cycle length the options ask for (restart, else the default,
 * capped by max_iter): a backend sizes its reduction buffers by it. */
int bsrmv_sv_restart(const bsrmv_solve_options *opt);

/* Argument checks shared by bsrmv_solve and bsrmv_gpu_solve. */
bsrmv_status bsrmv_sv_check(bsrmv_solver method, int64_t mb, int64_t nb, int bs,
                            bsrmv_type type, int64_t n, const void *b, const void *x,
                            const bsrmv_solve_options *opt);
/* A preconditioner's shape and type (pmb, pbs, ptype) against the matrix's. */
bsrmv_status bsrmv_sv_check_precond(int64_t pmb, int pbs, bsrmv_type ptype, int64_t mb, int bs,
                                    bsrmv_type type);

#ifdef __cplusplus
}
#endif

#endif
