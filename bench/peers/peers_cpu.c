/* In-process, interleaved timing of y = A*x on one matrix (any source of
 * common.h, built by the library's own generator/reader/converter):
 *   bsrmv       bsrmv_spmv (kernel auto), OpenMP threads
 *   petsc-baij  PETSc MatMult on SeqBAIJ, 1 thread
 *   petsc-aij   PETSc MatMult on SeqAIJ holding the scalar expansion of the
 *               BSR matrix (explicit zeros of split blocks included, as
 *               cuSPARSE CSR_ALG1 gets it in `bsrmv bench --gpu`), 1 thread
 *   librsb      rsb_spmv, threads via RSB_IO_WANT_EXECUTING_THREADS
 * Each backend owns its own copy of the matrix (PETSc and librsb get their
 * arrays from bsrmv_matrix_arrays).  Per round, thread count and backend
 * (the backend order rotates each round): PEER_WARMUP calls, the first one
 * checked against bsrmv's y, then --reps timed calls, median reported as a
 * JSON line.  With --dump DIR it also writes the arrays for scipy_bsr.py.
 *
 * Built with HAVE_PETSC / HAVE_RSB when those libraries are present
 * (bench/peers/Makefile). */
#define _POSIX_C_SOURCE 200809L
#include "common.h"

#include <omp.h>
#include <stdlib.h>
#include <string.h>

#ifdef HAVE_PETSC
#include <petscmat.h>
#endif
#ifdef HAVE_RSB
#include <rsb.h>
#endif

struct backend {
    const char *name;
    const char *kernel;
    int max_threads;            /* 1: single-threaded library       */
    void *ctx;
    void (*set_threads)(void *ctx, int t);
    void (*spmv)(void *ctx);    /* y = A*x                          */
    const double *(*y)(void *ctx);
    const char *ref;            /* what rel_err is measured against */
};

/* ---- bsrmv ---------------------------------------------------------- */

struct bsrmv_ctx {
    struct peer_case *c;
    double *y;
};

static void bsrmv_threads(void *p, int t)
{
    (void)p;
    omp_set_num_threads(t);
}

static void bsrmv_run(void *p)
{
    struct bsrmv_ctx *b = p;
    if (bsrmv_spmv(BSRMV_OP_N, 1.0, b->c->A, b->c->x, b->c->info.cols, 0.0, b->y,
                   b->c->info.rows) != BSRMV_SUCCESS) {
        fprintf(stderr, "peers: bsrmv_spmv: %s\n", bsrmv_last_error());
        exit(1);
    }
}

static const double *bsrmv_y(void *p)
{
    return ((struct bsrmv_ctx *)p)->y;
}

/* ---- PETSc SeqBAIJ / SeqAIJ ----------------------------------------- */
#ifdef HAVE_PETSC
#define PCHK(call)                                                                   \
    do {                                                                             \
        PetscErrorCode e_ = (call);                                                  \
        if (e_) {                                                                    \
            fprintf(stderr, "peers: PETSc error %d in %s\n", (int)e_, #call);        \
            exit(1);                                                                 \
        }                                                                            \
    } while (0)

struct petsc_ctx {
    Mat A;
    Vec x, y;
    PetscInt *ia, *ja;
    PetscScalar *a;
    const PetscScalar *yv;
};

/* PETSc's own copy, from PetscInt CSR arrays: block CSR for SeqBAIJ, the
 * scalar expansion for SeqAIJ (aij).  MatCreateSeqBAIJWithArrays refuses
 * bs > 1 in PETSc 3.18, so the values go through
 * Mat{SeqAIJ,SeqBAIJ}SetPreallocationCSR, which reads blocks row-oriented
 * (PETSc's default) and stores them column-major, the layout of bsrmv's
 * BSRMV_COL_MAJOR. */
static void petsc_setup(struct petsc_ctx *p, const struct peer_case *c, int aij)
{
    const int64_t mb = c->info.mb, nnzb = c->info.nnzb;
    const int bs = c->bs;
    const int64_t bs2 = (int64_t)bs * bs, nval = nnzb * bs2;
    const int64_t nrow = aij ? c->info.rows : mb, nidx = aij ? nval : nnzb;
    if (nidx > (int64_t)PETSC_MAX_INT || c->info.rows > (int64_t)PETSC_MAX_INT) {
        fprintf(stderr, "peers: matrix too large for 32-bit PetscInt\n");
        exit(1);
    }
    PCHK(PetscMalloc1(nrow + 1, &p->ia));
    PCHK(PetscMalloc1(nidx, &p->ja));
    PCHK(PetscMalloc1(nval, &p->a));
    if (aij) {
        int64_t e = 0;
        p->ia[0] = 0;
        for (int64_t ib = 0; ib < mb; ib++)
            for (int r = 0; r < bs; r++) {
                for (int64_t k = c->row_ptr[ib]; k < c->row_ptr[ib + 1]; k++)
                    for (int col = 0; col < bs; col++) {
                        p->ja[e] = (PetscInt)((int64_t)c->col_idx[k] * bs + col);
                        p->a[e++] = c->val[k * bs2 + r + (int64_t)col * bs];
                    }
                p->ia[ib * bs + r + 1] = (PetscInt)e;
            }
    } else {
        for (int64_t i = 0; i <= mb; i++)
            p->ia[i] = (PetscInt)c->row_ptr[i];
        for (int64_t k = 0; k < nnzb; k++)
            p->ja[k] = (PetscInt)c->col_idx[k];
        for (int64_t k = 0; k < nnzb; k++)
            for (int r = 0; r < bs; r++)
                for (int col = 0; col < bs; col++)
                    p->a[k * bs2 + r * bs + col] = c->val[k * bs2 + r + col * bs];
    }
    PCHK(MatCreate(PETSC_COMM_SELF, &p->A));
    PCHK(MatSetSizes(p->A, (PetscInt)c->info.rows, (PetscInt)c->info.cols,
                     (PetscInt)c->info.rows, (PetscInt)c->info.cols));
    PCHK(MatSetType(p->A, aij ? MATSEQAIJ : MATSEQBAIJ));
    if (aij) {
        PCHK(MatSeqAIJSetPreallocationCSR(p->A, p->ia, p->ja, p->a));
    } else {
        PCHK(MatSetBlockSize(p->A, bs));
        PCHK(MatSeqBAIJSetPreallocationCSR(p->A, bs, p->ia, p->ja, p->a));
    }
    PCHK(MatAssemblyBegin(p->A, MAT_FINAL_ASSEMBLY));
    PCHK(MatAssemblyEnd(p->A, MAT_FINAL_ASSEMBLY));
    /* The inputs were copied: give the memory back before timing. */
    PCHK(PetscFree(p->ia));
    PCHK(PetscFree(p->ja));
    PCHK(PetscFree(p->a));
    PCHK(MatCreateVecs(p->A, &p->x, &p->y));
    PetscScalar *xv;
    PCHK(VecGetArray(p->x, &xv));
    memcpy(xv, c->x, (size_t)c->info.cols * sizeof(double));
    PCHK(VecRestoreArray(p->x, &xv));
}

static void petsc_threads(void *p, int t)
{
    (void)p;
    (void)t;
}

static void petsc_run(void *v)
{
    struct petsc_ctx *p = v;
    PCHK(MatMult(p->A, p->x, p->y));
}

static const double *petsc_y(void *v)
{
    struct petsc_ctx *p = v;
    PCHK(VecGetArrayRead(p->y, &p->yv));
    const double *y = p->yv;
    PCHK(VecRestoreArrayRead(p->y, &p->yv)); /* the storage stays valid */
    return y;
}

static void petsc_free(struct petsc_ctx *p)
{
    PCHK(VecDestroy(&p->x));
    PCHK(VecDestroy(&p->y));
    PCHK(MatDestroy(&p->A));
}
#endif

/* ---- librsb ----------------------------------------------------------- */
#ifdef HAVE_RSB
struct rsb_ctx {
    struct rsb_mtx_t *A;
    const double *x;
    double *y;
};

static void rsb_setup(struct rsb_ctx *r, const struct peer_case *c, double *build_ms)
{
    const int bs = c->bs;
    const int64_t bs2 = (int64_t)bs * bs, nnz = c->info.nnzb * bs2;
    if (nnz > 2147483647LL) {
        fprintf(stderr, "peers: matrix too large for librsb's int indices\n");
        exit(1);
    }
    /* Scalar COO, sorted by row then column, from the BSR arrays. */
    rsb_coo_idx_t *ia = peer_alloc((size_t)nnz * sizeof *ia);
    rsb_coo_idx_t *ja = peer_alloc((size_t)nnz * sizeof *ja);
    double *va = peer_alloc((size_t)nnz * sizeof *va);
    int64_t e = 0;
    for (int64_t ib = 0; ib < c->info.mb; ib++)
        for (int r = 0; r < bs; r++)
            for (int64_t k = c->row_ptr[ib]; k < c->row_ptr[ib + 1]; k++)
                for (int col = 0; col < bs; col++) {
                    ia[e] = (rsb_coo_idx_t)(ib * bs + r);
                    ja[e] = (rsb_coo_idx_t)((int64_t)c->col_idx[k] * bs + col);
                    va[e] = c->val[k * bs2 + r + (int64_t)col * bs];
                    e++;
                }
    rsb_err_t err = RSB_ERR_NO_ERROR;
    double t0 = peer_now_ms();
    r->A = rsb_mtx_alloc_from_coo_const(va, ia, ja, (rsb_nnz_idx_t)nnz, RSB_NUMERICAL_TYPE_DOUBLE,
                                        (rsb_coo_idx_t)c->info.rows,
                                        (rsb_coo_idx_t)c->info.cols, 1, 1,
                                        RSB_FLAG_DEFAULT_RSB_MATRIX_FLAGS | RSB_FLAG_SORTED_INPUT,
                                        &err);
    *build_ms = peer_now_ms() - t0;
    free(ia);
    free(ja);
    free(va);
    if (!r->A || err != RSB_ERR_NO_ERROR) {
        fprintf(stderr, "peers: rsb_mtx_alloc_from_coo_const failed (0x%x)\n", (unsigned)-err);
        exit(1);
    }
    r->x = c->x;
    r->y = peer_alloc((size_t)c->info.rows * sizeof(double));
}

static void rsb_threads(void *v, int t)
{
    (void)v;
    rsb_int_t nt = t;
    omp_set_num_threads(t);
    if (rsb_lib_set_opt(RSB_IO_WANT_EXECUTING_THREADS, &nt) != RSB_ERR_NO_ERROR)
        fprintf(stderr, "peers: librsb refused %d threads\n", t);
}

static void rsb_run(void *v)
{
    struct rsb_ctx *r = v;
    const double one = 1, zero = 0;
    if (rsb_spmv(RSB_TRANSPOSITION_N, &one, r->A, r->x, 1, &zero, r->y, 1) != RSB_ERR_NO_ERROR) {
        fprintf(stderr, "peers: rsb_spmv failed\n");
        exit(1);
    }
}

static const double *rsb_y(void *v)
{
    return ((struct rsb_ctx *)v)->y;
}
#endif

/* ---- scipy dump ------------------------------------------------------- */

static void write_file(const char *dir, const char *name, const void *p, size_t bytes)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(p, 1, bytes, f) != bytes || fclose(f) != 0) {
        fprintf(stderr, "peers: cannot write %s\n", path);
        exit(1);
    }
}

/* Raw little-endian arrays plus meta.txt for bench/peers/scipy_bsr.py. */
static void dump(const struct peer_case *c, const char *dir)
{
    const int64_t nnzb = c->info.nnzb, bs2 = (int64_t)c->bs * c->bs;
    write_file(dir, "row_ptr.i64", c->row_ptr, (size_t)(c->info.mb + 1) * 8);
    write_file(dir, "col_idx.i32", c->col_idx, (size_t)nnzb * 4);
    write_file(dir, "val_colmajor.f64", c->val, (size_t)(nnzb * bs2) * 8);
    write_file(dir, "x.f64", c->x, (size_t)c->info.cols * 8);
    write_file(dir, "y_bsrmv.f64", c->y_bsrmv, (size_t)c->info.rows * 8);
    char meta[512];
    int n = snprintf(meta, sizeof meta,
                     "matrix %s\nbs %d\nmb %lld\nnb %lld\nnnzb %lld\nrows %lld\ncols %lld\n"
                     "bytes %lld\n",
                     c->matrix, c->bs, (long long)c->info.mb, (long long)c->info.nb,
                     (long long)nnzb, (long long)c->info.rows, (long long)c->info.cols,
                     (long long)c->bytes);
    write_file(dir, "meta.txt", meta, (size_t)n);
}

/* ---- timing ----------------------------------------------------------- */

static void measure(struct peer_case *c, const struct peer_options *o, struct backend *b,
                    int threads, int round, double *times)
{
    b->set_threads(b->ctx, threads);
    struct peer_record r = {.backend = b->name, .kernel = b->kernel, .via = "lib",
                            .ref = b->ref, .threads = threads, .round = round};
    for (int w = 0; w < PEER_WARMUP; w++) {
        b->spmv(b->ctx);
        if (w == 0)
            r.rel_err = peer_rel_err(b->y(b->ctx),
                                     strcmp(b->ref, "long-double") == 0 ? c->y_ref
                                                                       : c->y_bsrmv,
                                     c->info.rows);
    }
    for (int i = 0; i < o->reps; i++) {
        double t0 = peer_now_ms();
        b->spmv(b->ctx);
        times[i] = peer_now_ms() - t0;
    }
    r.time_ms = peer_median(times, o->reps);
    peer_emit(c, &r);
}

int main(int argc, char **argv)
{
    struct peer_options o;
    peer_parse(argc, argv, &o);
#ifdef HAVE_PETSC
    PCHK(PetscInitializeNoArguments());
#endif
#ifdef HAVE_RSB
    if (rsb_lib_init(RSB_NULL_INIT_OPTIONS) != RSB_ERR_NO_ERROR) {
        fprintf(stderr, "peers: rsb_lib_init failed\n");
        return 1;
    }
#endif
    double t0 = peer_now_ms();
    struct peer_case c;
    peer_case_init(&c, &o, 1);
    fprintf(stderr, "peers: %s bs %d: generated in %.0f ms (%.0f MB of values)\n", c.matrix,
            c.bs, peer_now_ms() - t0, (double)c.info.nnzb * c.bs * c.bs * 8e-6);
    if (o.dump)
        dump(&c, o.dump);

    struct backend be[4];
    int nb = 0;
    struct bsrmv_ctx bctx = {.c = &c, .y = peer_alloc((size_t)c.info.rows * sizeof(double))};
    int special = (c.bs >= 1 && c.bs <= 8) || c.bs == 12 || c.bs == 16 || c.bs == 24 || c.bs == 32;
    if (peer_wants(&o, "bsrmv"))
        be[nb++] = (struct backend){"bsrmv", special ? "specialised" : "auto-generic", 1 << 30,
                                    &bctx, bsrmv_threads, bsrmv_run, bsrmv_y, "long-double"};
#ifdef HAVE_PETSC
    static const char *const petsc_name[2] = {"petsc-baij", "petsc-aij"};
    static const char *const petsc_kernel[2] = {"seqbaij", "seqaij"};
    struct petsc_ctx pctx[2] = {{0}};
    int have_petsc[2] = {0, 0};
    for (int aij = 0; aij < 2; aij++) {
        if (!peer_wants(&o, petsc_name[aij]))
            continue;
        t0 = peer_now_ms();
        petsc_setup(&pctx[aij], &c, aij);
        have_petsc[aij] = 1;
        fprintf(stderr, "peers: PETSc %s built in %.0f ms\n", petsc_kernel[aij],
                peer_now_ms() - t0);
        be[nb++] = (struct backend){petsc_name[aij], petsc_kernel[aij], 1, &pctx[aij],
                                    petsc_threads, petsc_run, petsc_y, "bsrmv"};
    }
#endif
#ifdef HAVE_RSB
    struct rsb_ctx rctx = {0};
    if (peer_wants(&o, "librsb")) {
        double build_ms;
        t0 = peer_now_ms();
        rsb_threads(NULL, o.threads[o.n_threads - 1]);
        rsb_setup(&rctx, &c, &build_ms);
        fprintf(stderr, "peers: librsb matrix built in %.0f ms (%.0f ms with the COO)\n",
                build_ms, peer_now_ms() - t0);
        be[nb++] = (struct backend){"librsb", "rsb", 1 << 30, &rctx, rsb_threads, rsb_run, rsb_y,
                                    "bsrmv"};
    }
#endif
    double *times = peer_alloc((size_t)o.reps * sizeof(double));
    for (int round = 1; round <= o.rounds; round++)
        for (int ti = 0; ti < o.n_threads; ti++)
            for (int j = 0; j < nb; j++) {
                struct backend *b = &be[(j + round - 1) % nb];
                if (o.threads[ti] > b->max_threads)
                    continue;
                measure(&c, &o, b, o.threads[ti], round, times);
            }
    free(times);
#ifdef HAVE_RSB
    if (rctx.A)
        rsb_mtx_free(rctx.A);
    free(rctx.y);
    rsb_lib_exit(RSB_NULL_EXIT_OPTIONS);
#endif
#ifdef HAVE_PETSC
    for (int aij = 0; aij < 2; aij++)
        if (have_petsc[aij])
            petsc_free(&pctx[aij]);
    PCHK(PetscFinalize());
#endif
    free(bctx.y);
    peer_case_free(&c);
    return 0;
}
