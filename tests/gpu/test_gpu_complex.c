/* Complex values on the GPU (docs/COMPLEX.md): bsrmv_gpu_spmv_scalars of
 * float and double complex matrices against the long double complex
 * reference that tests the CPU product (testutil_complex.h), for every
 * compiled complex bs and a runtime one, both block orders, uploaded and
 * wrapped, OP_N under every candidate configuration (the plan's choice,
 * then each forced), OP_T and OP_C, alpha and beta in {0, 1, a complex
 * value}, y poisoned with NaN where beta == 0; empty rows, one block row,
 * a long row, non-square shapes; complex symmetric and Hermitian storage
 * (the SYM kernels and the full copy, every op; CG on Hermitian
 * storage); bsrmv_gpu_spmv's double scalars on complex matrices and
 * bsrmv_gpu_spmv_scalars on real ones; and the GPU entry points that
 * refuse complex matrices.
 * Exit 77 (skipped) when there is no CUDA device.
 * BSRMV_GPU_TEST_QUICK=1: fewer sizes, scalars and candidates (for
 * compute-sanitizer). */
#include "testutil_complex.h"

#include <cuda_runtime.h>
#include <math.h>

#define MAXCFG 128

static int quick;
static long runs, configs;

static const double _Complex coefs[] = {0.0, 1.0, -1.5 + 0.75 * I};

/* One product on the device, checked; dx holds x. */
static void one_case(const char *what, bsrmv_gpu_matrix *dA, const bsrmv_matrix *A, bsrmv_op op,
                     double _Complex a, double _Complex b, const void *x, void *dx, void *dy,
                     uint64_t seed)
{
    bsrmv_matrix_info in;
    TU_OK(bsrmv_matrix_get_info(A, &in));
    const size_t vs = bsrmv_type_size(in.vector_type);
    const int64_t nx = op == BSRMV_OP_N ? in.cols : in.rows;
    const int64_t ny = op == BSRMV_OP_N ? in.rows : in.cols;
    tu_scalar sa, sb;
    const tu_ldc alpha = tu_put_scalar(&sa, in.vector_type, a);
    const tu_ldc beta = tu_put_scalar(&sb, in.vector_type, b);
    /* beta == 0: y starts as NaN and must not leak into the result */
    void *y0 = b == 0 ? tu_nan_vector(ny, in.vector_type) : tu_random_vector(ny, in.vector_type, seed);
    void *y = malloc((size_t)(ny + 1) * vs);
    TU_CHECK(y != NULL, "out of memory");
    TU_OK(bsrmv_gpu_to_device(dy, y0, (size_t)ny * vs));
    bsrmv_status st = bsrmv_gpu_spmv_scalars(op, &sa, dA, dx, nx, &sb, dy, ny, NULL);
    bsrmv_gpu_plan_info pl;
    TU_OK(bsrmv_gpu_matrix_get_plan(dA, &pl));
    char cs[96], full[256];
    bsrmv_gpu_config_string(&pl.config, cs, sizeof cs);
    /* op T and C of full storage run the transpose kernel, not the plan's */
    const int symk = pl.config.kernel == BSRMV_GPU_SYM_ATOMIC || pl.config.kernel == BSRMV_GPU_SYM_WINDOW;
    snprintf(full, sizeof full, "%s [%s]", what, op == BSRMV_OP_N || symk ? cs : "transpose");
    TU_CHECK(st == BSRMV_SUCCESS, "%s %s: %s: %s", full, tu_op_name(op), bsrmv_status_string(st),
             bsrmv_last_error());
    TU_CHECK(cudaDeviceSynchronize() == cudaSuccess, "%s %s: kernel failed: %s", full,
             tu_op_name(op), cudaGetErrorString(cudaGetLastError()));
    TU_OK(bsrmv_gpu_to_host(y, dy, (size_t)ny * vs));
    tu_check_complex(full, A, op, alpha, x, beta, y0, y);
    ++runs;
    free(y0);
    free(y);
}

/* The (alpha, beta) pairs of op on dA: all nine when `full`, else three
 * that cover alpha and beta in {0, 1, other}. */
static void scalar_cases(const char *what, bsrmv_gpu_matrix *dA, const bsrmv_matrix *A,
                         bsrmv_op op, const void *x, void *dx, void *dy, uint64_t seed, int full)
{
    for (int ia = 0; ia < 3; ia++)
        for (int ib = 0; ib < 3; ib++)
            if (full || (ia + 1) % 3 == ib)
                one_case(what, dA, A, op, coefs[ia], coefs[ib], x, dx, dy, seed);
}

/* Every op on dA: OP_N under the plan's choice and every candidate
 * configuration, OP_T and OP_C (the transpose kernels).  x and y start
 * `shift` values into their allocations. */
static void run_matrix(const char *what, bsrmv_gpu_matrix *dA, const bsrmv_matrix *A, uint64_t seed,
                       int shift)
{
    bsrmv_matrix_info in;
    TU_OK(bsrmv_matrix_get_info(A, &in));
    const size_t vs = bsrmv_type_size(in.vector_type);
    const int64_t n = in.rows > in.cols ? in.rows : in.cols;
    void *mx, *my;
    TU_OK(bsrmv_gpu_malloc(&mx, (size_t)(n + shift) * vs));
    TU_OK(bsrmv_gpu_malloc(&my, (size_t)(n + shift) * vs));
    void *dx = (char *)mx + shift * vs, *dy = (char *)my + shift * vs;
    for (int op = 0; op < 3; op++) {
        const int64_t nx = op == BSRMV_OP_N ? in.cols : in.rows;
        void *x = tu_random_vector(nx, in.vector_type, seed + 1 + (uint64_t)op);
        TU_OK(bsrmv_gpu_to_device(dx, x, (size_t)nx * vs));
        TU_OK(bsrmv_gpu_matrix_set_config(dA, NULL));
        scalar_cases(what, dA, A, (bsrmv_op)op, x, dx, dy, seed + 7, !quick);
        if (op == BSRMV_OP_N) {
            bsrmv_gpu_config cfgs[MAXCFG];
            int nc = 0;
            TU_OK(bsrmv_gpu_candidates(dA, cfgs, MAXCFG, &nc));
            TU_CHECK(nc > 0 && nc <= MAXCFG, "%s: %d candidates", what, nc);
            for (int c = 0; c < nc; c++) {
                if (quick && c % 4)
                    continue;
                TU_OK(bsrmv_gpu_matrix_set_config(dA, &cfgs[c]));
                scalar_cases(what, dA, A, BSRMV_OP_N, x, dx, dy, seed + 11 + (uint64_t)c, 0);
                ++configs;
            }
            TU_OK(bsrmv_gpu_matrix_set_config(dA, NULL));
        }
        free(x);
    }
    bsrmv_gpu_free(mx);
    bsrmv_gpu_free(my);
}

/* A's arrays copied to the device by hand and wrapped, val `shift` values
 * into its allocation (mem[2]). */
static bsrmv_gpu_matrix *wrap_copy(const bsrmv_matrix *A, void **mem, int shift)
{
    bsrmv_matrix_info in;
    TU_OK(bsrmv_matrix_get_info(A, &in));
    const int32_t *ci;
    const void *val;
    int64_t *rp = tu_row_ptr64(A, &ci, &val);
    const size_t vbytes = (size_t)in.nnzb * in.bs * in.bs * bsrmv_type_size(in.type);
    TU_OK(bsrmv_gpu_malloc(&mem[0], (size_t)(in.mb + 1) * sizeof(int64_t)));
    TU_OK(bsrmv_gpu_malloc(&mem[1], (size_t)in.nnzb * sizeof(int32_t)));
    const size_t off = (size_t)shift * bsrmv_type_size(in.type);
    TU_OK(bsrmv_gpu_malloc(&mem[2], vbytes + off));
    void *dval = (char *)mem[2] + off;
    TU_OK(bsrmv_gpu_to_device(mem[0], rp, (size_t)(in.mb + 1) * sizeof(int64_t)));
    TU_OK(bsrmv_gpu_to_device(mem[1], ci, (size_t)in.nnzb * sizeof(int32_t)));
    TU_OK(bsrmv_gpu_to_device(dval, val, vbytes));
    free(rp);
    bsrmv_gpu_matrix *W;
    TU_OK(bsrmv_gpu_matrix_wrap(&W, in.mb, in.nb, in.bs, in.nnzb, mem[0], mem[1], dval, in.type,
                                in.order, 0));
    return W;
}

/* A of the shape in both complex types and both orders, uploaded; wrapped
 * too when `wrap`, and for complex float also with val, x and y one value
 * (8 bytes) off 16-byte alignment: the kernels that read two values per
 * 16-byte load (wide, vector stream) take their value-per-load variants,
 * the staged kernel, whose bulk copies need 16 bytes, by-column. */
static void run_shape(const char *what, const tu_shape *sh, uint64_t seed, int wrap)
{
    const bsrmv_type types[] = {BSRMV_COMPLEX_FLOAT, BSRMV_COMPLEX_DOUBLE};
    for (int t = 0; t < 2; t++)
        for (int o = 0; o < 2; o++) {
            bsrmv_matrix *A = tu_random_bsr(sh, types[t], (bsrmv_order)o, seed + (uint64_t)(2 * t + o));
            char w[160];
            snprintf(w, sizeof w, "%s: bs=%d %s %s", what, sh->bs, t ? "z" : "c", o ? "row" : "col");
            bsrmv_gpu_matrix *dA;
            TU_OK(bsrmv_gpu_matrix_upload(&dA, A, 0, NULL));
            bsrmv_gpu_plan_info pl;
            TU_OK(bsrmv_gpu_matrix_get_plan(dA, &pl));
            TU_CHECK(pl.type == types[t] && pl.vector_type == types[t], "%s: plan types", w);
            run_matrix(w, dA, A, seed, 0);
            bsrmv_gpu_matrix_destroy(dA);
            for (int shift = 0; wrap && shift <= (types[t] == BSRMV_COMPLEX_FLOAT); shift++) {
                void *mem[3];
                bsrmv_gpu_matrix *W = wrap_copy(A, mem, shift);
                char ww[192];
                snprintf(ww, sizeof ww, "%s wrapped%s", w, shift ? ", 8 bytes off" : "");
                run_matrix(ww, W, A, seed + 5, shift);
                bsrmv_gpu_matrix_destroy(W);
                for (int k = 0; k < 3; k++)
                    bsrmv_gpu_free(mem[k]);
            }
            bsrmv_matrix_destroy(A);
        }
}

static void test_block_sizes(void)
{
    /* bs 1-8 are compiled for complex values, 11 runs the runtime-bs kernel */
    const int all[] = {1, 2, 3, 4, 5, 6, 7, 8, 11}, few[] = {1, 3, 8, 11};
    const int *bss = quick ? few : all;
    const int nbs = quick ? 4 : 9;
    for (int i = 0; i < nbs; i++) {
        const int bs = bss[i];
        const uint64_t seed = 5000 + 100 * (uint64_t)bs;
        tu_shape small = {37, 23, bs, 4.0, 0.2, -1, 0};
        run_shape("small non-square, empty rows", &small, seed, bs == 2 || bs == 3 || bs == 11);
        tu_shape one = {1, 40, bs, 10.0, 0.0, -1, 0};
        run_shape("one block row", &one, seed + 10, 0);
        if (!quick) {
            tu_shape mid = {400, 380, bs, 27.0, 0.05, 200, 300};
            run_shape("27 blocks a row, a row of 300", &mid, seed + 20, 0);
        }
    }
    tu_shape longrow = {5, 6000, 3, 2.0, 0.0, 2, 5000};
    run_shape("block row with 5000 blocks", &longrow, 77, 0);
    tu_shape empty = {20, 20, 3, 0.0, 1.0, -1, 0};
    run_shape("all rows empty", &empty, 5, 1);
}

/* Complex symmetric and Hermitian storage (docs/SYMMETRIC.md): S uploaded
 * as stored, against the reference of its full storage F (from_sym, which
 * test_herm checks against the dense matrix the stored blocks stand for):
 * the plan's choice (for matrices this small the full storage the handle
 * keeps, whose op T and C must not take A^T = A), then each SYM kernel
 * forced (global atomics; windows of one block row of one warp and of 4
 * rows per warp), every op, alpha and beta in {0, 1, other}, y NaN where
 * beta == 0 (all nine pairs where `full`, else three); with `tune` the
 * measured choice too. */
static void sym_case(const char *what, const tu_shape *sh, bsrmv_type t, bsrmv_order o, int kind,
                     uint64_t seed, int full, int tune)
{
    bsrmv_matrix *S = tu_random_sym(sh, t, o, kind, seed, false), *F;
    TU_OK(bsrmv_matrix_from_sym(&F, S));
    bsrmv_gpu_matrix *dS;
    TU_OK(bsrmv_gpu_matrix_upload(&dS, S, 0, NULL));
    char w[192];
    snprintf(w, sizeof w, "%s: %s bs=%d mb=%lld %s %s", what,
             kind == BSRMV_SYM_HERMITIAN ? "Hermitian" : "symmetric", sh->bs, (long long)sh->mb,
             t == BSRMV_COMPLEX_DOUBLE ? "z" : "c", o == BSRMV_ROW_MAJOR ? "row" : "col");
    const bsrmv_gpu_config cfgs[] = {
        {BSRMV_GPU_SYM_ATOMIC, 32, 2, 256, 0}, /* 16 rows: past 48 KiB at complex double bs 32 */
        {BSRMV_GPU_SYM_WINDOW, 32, 1, 32, 0},
        {BSRMV_GPU_SYM_WINDOW, 32, 4, 128, 0},
    };
    const int ncfg = (int)(sizeof cfgs / sizeof cfgs[0]);
    const int64_t n = sh->mb * sh->bs;
    const size_t vs = bsrmv_type_size(t);
    void *dx, *dy;
    TU_OK(bsrmv_gpu_malloc(&dx, (size_t)n * vs));
    TU_OK(bsrmv_gpu_malloc(&dy, (size_t)n * vs));
    for (int op = 0; op < 3; op++) {
        void *x = tu_random_vector(n, t, seed + 1 + (uint64_t)op);
        TU_OK(bsrmv_gpu_to_device(dx, x, (size_t)n * vs));
        TU_OK(bsrmv_gpu_matrix_set_config(dS, NULL));
        bsrmv_gpu_plan_info pl;
        TU_OK(bsrmv_gpu_matrix_get_plan(dS, &pl));
        TU_CHECK(pl.config.kernel != BSRMV_GPU_SYM_ATOMIC && pl.config.kernel != BSRMV_GPU_SYM_WINDOW,
                 "%s: the plan runs %s, not the full storage", w, bsrmv_gpu_kernel_name(pl.config.kernel));
        scalar_cases(w, dS, F, (bsrmv_op)op, x, dx, dy, seed + 7, full);
        for (int c = 0; c < ncfg; c++) {
            if (quick && c == 1)
                continue;
            TU_OK(bsrmv_gpu_matrix_set_config(dS, &cfgs[c]));
            scalar_cases(w, dS, F, (bsrmv_op)op, x, dx, dy, seed + 11 + (uint64_t)c, full && c == 2);
            ++configs;
        }
        if (tune) {
            TU_OK(bsrmv_gpu_matrix_tune(dS, 0, 2, NULL, NULL));
            scalar_cases(w, dS, F, (bsrmv_op)op, x, dx, dy, seed + 17, 0);
        }
        free(x);
    }
    /* the SYM kernels' param is the op's; the full-storage kernels do not
     * read symmetric storage */
    const bsrmv_gpu_config bad[] = {{BSRMV_GPU_SYM_WINDOW, 32, 4, 128, 1},
                                    {BSRMV_GPU_SYM_ATOMIC, 32, 16, 256, 3},
                                    {BSRMV_GPU_BY_COLUMN, 32, 1, 128, 0}};
    for (size_t b = 0; b < sizeof bad / sizeof bad[0]; b++)
        TU_FAILS(bsrmv_gpu_matrix_set_config(dS, &bad[b]), BSRMV_ERR_UNSUPPORTED);
    bsrmv_gpu_free(dx);
    bsrmv_gpu_free(dy);
    bsrmv_gpu_matrix_destroy(dS);
    bsrmv_matrix_destroy(S);
    bsrmv_matrix_destroy(F);
}

static void test_sym_storage(void)
{
    /* 2, 3, 4, 6, 8 are the SYM kernels' compiled sizes, the others run
     * their runtime-bs kernel (bs 32: a warp-wide block line) */
    const int all[] = {1, 2, 3, 4, 5, 6, 8, 11, 16, 32}, few[] = {1, 3, 5, 8};
    const int *bss = quick ? few : all;
    const int nbs = quick ? 4 : 10;
    const bsrmv_type types[] = {BSRMV_COMPLEX_FLOAT, BSRMV_COMPLEX_DOUBLE};
    const long before = runs;
    int cases = 0;
    for (int i = 0; i < nbs; i++) {
        const int bs = bss[i];
        const int64_t mb = quick ? 300 : bs <= 8 ? 1000 : 200;
        const tu_shape shapes[] = {
            {1, 1, bs, 1.0, 0.0, -1, 0},
            {7, 7, bs, 3.0, 0.2, -1, 0},
            {mb, mb, bs, 8.0, 0.1, -1, 0},
            {mb, mb, bs, 4.0, 0.05, 0, mb}, /* the first row couples to every other */
        };
        const int nsh = (int)(sizeof shapes / sizeof shapes[0]);
        for (int k = 0; k < nsh; k++)
            for (int t = 0; t < 2; t++)
                for (int o = 0; o < 2; o++)
                    for (int kind = BSRMV_SYM_SYMMETRIC; kind <= BSRMV_SYM_HERMITIAN; kind++) {
                        const char *what = k == 0   ? "one block"
                                           : k == 1 ? "7 block rows, empty rows"
                                           : k == 2 ? "8 blocks a row"
                                                    : "first row couples to all";
                        sym_case(what, &shapes[k], types[t], (bsrmv_order)o, kind,
                                 9000 + 100 * (uint64_t)bs + (uint64_t)cases, !quick && k < 2,
                                 k == 2 && o == 0 && (bs == 3 || bs == 11));
                        cases++;
                    }
    }
    printf("symmetric and Hermitian storage: %d matrices, %ld products\n", cases, runs - before);
}

/* CG on the device with Hermitian storage of a Hermitian positive
 * definite system, on the plan (the full copy) and on a SYM kernel:
 * converged, the residual of the full matrix (long double) within the
 * tolerance, close to the host's solution with the same storage. */
static void test_cg_herm(void)
{
    const bsrmv_type types[] = {BSRMV_COMPLEX_FLOAT, BSRMV_COMPLEX_DOUBLE};
    const bsrmv_gpu_config win = {BSRMV_GPU_SYM_WINDOW, 32, 4, 128, 0};
    for (int t = 0; t < 2; t++)
        for (int bs = 3; bs <= 5; bs += 2) {
            tu_csys H = tu_csys_make(300, bs, types[t], BSRMV_ROW_MAJOR, TU_HPD, 70 + (uint64_t)(bs + t));
            bsrmv_matrix *S;
            TU_OK(bsrmv_matrix_to_herm(&S, H.A, 1e-6));
            const int64_t n = H.n;
            const size_t bytes = (size_t)n * bsrmv_type_size(types[t]);
            const double rtol = types[t] == BSRMV_COMPLEX_DOUBLE ? 1e-9 : 1e-4;
            bsrmv_solve_options opt = {.rtol = rtol, .max_iter = 2000, .x0_zero = 1};
            bsrmv_solve_report rh, rd;
            void *b = tu_random_vector(n, types[t], 71), *xh = tu_nan_vector(n, types[t]);
            void *xd = tu_nan_vector(n, types[t]), *db, *dx;
            TU_OK(bsrmv_solve(BSRMV_SOLVER_CG, S, NULL, b, xh, n, &opt, &rh));
            bsrmv_gpu_matrix *dS;
            TU_OK(bsrmv_gpu_matrix_upload(&dS, S, 0, NULL));
            TU_OK(bsrmv_gpu_malloc(&db, bytes));
            TU_OK(bsrmv_gpu_malloc(&dx, bytes));
            TU_OK(bsrmv_gpu_to_device(db, b, bytes));
            for (int k = 0; k < 2; k++) {
                if (k == 1)
                    TU_OK(bsrmv_gpu_matrix_set_config(dS, &win));
                TU_OK(bsrmv_gpu_solve(BSRMV_SOLVER_CG, dS, NULL, db, dx, n, &opt, &rd, NULL));
                TU_OK(bsrmv_gpu_to_host(xd, dx, bytes));
                const double rel = tu_csys_residual(&H, b, xd);
                long double dd = 0, hh = 0;
                for (int64_t i = 0; i < n; i++) {
                    const tu_ldc v = tu_cget(xh, types[t], i), d = tu_cget(xd, types[t], i) - v;
                    dd += creall(d * conjl(d));
                    hh += creall(v * conjl(v));
                }
                const double dist = (double)sqrtl(dd / hh);
                printf("cg on Hermitian storage: bs %d %s %s: %d iterations (host %d), residual "
                       "%.2e, |xd-xh|/|xh| %.2e\n",
                       bs, t ? "z" : "c", k ? "sym_window" : "plan", rd.iterations, rh.iterations, rel,
                       dist);
                TU_CHECK(rh.converged && rd.converged, "cg on Hermitian storage: not converged");
                TU_CHECK(rel <= 2 * rtol, "cg on Hermitian storage: residual %g", rel);
                TU_CHECK(dist <= (t ? 1e-6 : 1e-2), "cg on Hermitian storage: solutions differ by %g",
                         dist);
            }
            bsrmv_gpu_free(db);
            bsrmv_gpu_free(dx);
            bsrmv_gpu_matrix_destroy(dS);
            bsrmv_matrix_destroy(S);
            tu_csys_drop(&H);
            free(b);
            free(xh);
            free(xd);
        }
}

/* bsrmv_gpu_spmv's double scalars on complex matrices, and
 * bsrmv_gpu_spmv_scalars on real ones: the same products. */
static void test_scalar_entries(void)
{
    tu_shape sh = {30, 25, 3, 4.0, 0.1, -1, 0};
    const bsrmv_type types[] = {BSRMV_FLOAT, BSRMV_DOUBLE, BSRMV_COMPLEX_FLOAT, BSRMV_COMPLEX_DOUBLE};
    for (int t = 0; t < 4; t++) {
        bsrmv_matrix *A = tu_random_bsr(&sh, types[t], BSRMV_COL_MAJOR, 40 + (uint64_t)t);
        bsrmv_gpu_matrix *dA;
        TU_OK(bsrmv_gpu_matrix_upload(&dA, A, 0, NULL));
        const size_t vs = bsrmv_type_size(types[t]);
        void *dx, *dy;
        TU_OK(bsrmv_gpu_malloc(&dx, 90 * vs));
        TU_OK(bsrmv_gpu_malloc(&dy, 90 * vs));
        for (int op = 0; op < 3; op++) {
            const int64_t nx = op == BSRMV_OP_N ? 75 : 90, ny = op == BSRMV_OP_N ? 90 : 75;
            void *x = tu_random_vector(nx, types[t], 50);
            void *y0 = tu_random_vector(ny, types[t], 51);
            void *y = tu_copy_vector(y0, ny, types[t]);
            TU_OK(bsrmv_gpu_to_device(dx, x, (size_t)nx * vs));
            TU_OK(bsrmv_gpu_to_device(dy, y0, (size_t)ny * vs));
            TU_OK(bsrmv_gpu_spmv((bsrmv_op)op, -2.5, dA, dx, nx, 0.5, dy, ny, NULL));
            TU_OK(bsrmv_gpu_to_host(y, dy, (size_t)ny * vs));
            tu_check_complex("double scalars", A, (bsrmv_op)op, -2.5, x, 0.5, y0, y);
            if (tu_parts(types[t]) == 1)
                one_case("real scalars by pointer", dA, A, (bsrmv_op)op, 3.0, -1.0, x, dx, dy, 52);
            free(x);
            free(y0);
            free(y);
        }
        bsrmv_gpu_free(dx);
        bsrmv_gpu_free(dy);
        bsrmv_gpu_matrix_destroy(dA);
        bsrmv_matrix_destroy(A);
    }
}

/* The measured choice (bsrmv_gpu_matrix_tune) times the complex
 * candidates and keeps one that computes the product. */
static void test_measured_choice(void)
{
    const bsrmv_type types[] = {BSRMV_COMPLEX_FLOAT, BSRMV_COMPLEX_DOUBLE};
    const int bss[] = {3, 11};
    for (int t = 0; t < 2; t++)
        for (int i = 0; i < 2; i++) {
            tu_shape sh = {300, 300, bss[i], 12.0, 0.05, -1, 0};
            bsrmv_matrix *A = tu_random_bsr(&sh, types[t], BSRMV_ROW_MAJOR, 60 + (uint64_t)(2 * t + i));
            bsrmv_gpu_matrix *dA;
            TU_OK(bsrmv_gpu_matrix_upload(&dA, A, 0, NULL));
            double ms = 0;
            TU_OK(bsrmv_gpu_matrix_tune(dA, 0, 3, NULL, &ms));
            bsrmv_gpu_plan_info pl;
            TU_OK(bsrmv_gpu_matrix_get_plan(dA, &pl));
            TU_CHECK(pl.from_tune_table == 2 && ms > 0, "measured choice: from %d, %g ms", pl.from_tune_table, ms);
            const int64_t n = sh.mb * sh.bs;
            const size_t vs = bsrmv_type_size(types[t]);
            void *x = tu_random_vector(n, types[t], 61), *dx, *dy;
            TU_OK(bsrmv_gpu_malloc(&dx, (size_t)n * vs));
            TU_OK(bsrmv_gpu_malloc(&dy, (size_t)n * vs));
            TU_OK(bsrmv_gpu_to_device(dx, x, (size_t)n * vs));
            scalar_cases("measured choice", dA, A, BSRMV_OP_N, x, dx, dy, 62, 0);
            free(x);
            bsrmv_gpu_free(dx);
            bsrmv_gpu_free(dy);
            bsrmv_gpu_matrix_destroy(dA);
            bsrmv_matrix_destroy(A);
        }
}

/* The candidates of complex matrices are the built complex families:
 * by-block/K1 and by-column everywhere, wide, vector stream and staged at
 * the sizes their complex lists name (so that test_block_sizes forces
 * them), no others. */
static void test_families(void)
{
    static const struct {
        bsrmv_type type;
        int bs, wide, vec_stream, staged, k2;
    } want[] = {
        {BSRMV_COMPLEX_DOUBLE, 2, 1, 0, 0, 0}, {BSRMV_COMPLEX_DOUBLE, 3, 0, 0, 1, 0},
        {BSRMV_COMPLEX_DOUBLE, 4, 1, 0, 0, 0}, {BSRMV_COMPLEX_DOUBLE, 6, 0, 0, 0, 1},
        {BSRMV_COMPLEX_DOUBLE, 7, 0, 0, 1, 1}, {BSRMV_COMPLEX_DOUBLE, 8, 1, 0, 1, 1},
        {BSRMV_COMPLEX_FLOAT, 2, 1, 0, 0, 0},  {BSRMV_COMPLEX_FLOAT, 3, 1, 1, 1, 0},
        {BSRMV_COMPLEX_FLOAT, 4, 0, 1, 0, 0},  {BSRMV_COMPLEX_FLOAT, 6, 1, 0, 0, 0},
        {BSRMV_COMPLEX_FLOAT, 7, 1, 0, 1, 0},  {BSRMV_COMPLEX_FLOAT, 8, 0, 1, 0, 0},
    };
    /* the staged kernel's bulk copies are sm_90's */
    int dev = 0, major = 0;
    TU_CHECK(cudaGetDevice(&dev) == cudaSuccess &&
                 cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) == cudaSuccess,
             "device attributes");
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        for (int o = 0; o < 2; o++) {
            /* up to 27 blocks a row, as on the grids the families are for
             * (the staged kernel's buffers are sized by the longest row) */
            tu_shape sh = {60, 60, want[i].bs, 13.5, 0.0, -1, 0};
            bsrmv_matrix *A = tu_random_bsr(&sh, want[i].type, (bsrmv_order)o, 90 + i);
            bsrmv_gpu_matrix *dA;
            TU_OK(bsrmv_gpu_matrix_upload(&dA, A, 0, NULL));
            bsrmv_gpu_config cfgs[MAXCFG];
            int nc = 0, n[BSRMV_GPU_LANE_BLOCK + 1] = {0};
            TU_OK(bsrmv_gpu_candidates(dA, cfgs, MAXCFG, &nc));
            TU_CHECK(nc > 0 && nc <= MAXCFG, "%d candidates", nc);
            for (int c = 0; c < nc; c++) {
                TU_CHECK(cfgs[c].kernel >= 0 && cfgs[c].kernel <= BSRMV_GPU_LANE_BLOCK, "kernel %d",
                         (int)cfgs[c].kernel);
                n[cfgs[c].kernel]++;
            }
            const int others = nc - n[BSRMV_GPU_BY_BLOCK] - n[BSRMV_GPU_K1_SMALL] -
                               n[BSRMV_GPU_BY_COLUMN] - n[BSRMV_GPU_WIDE] - n[BSRMV_GPU_VEC_STREAM] -
                               n[BSRMV_GPU_STAGED] - n[BSRMV_GPU_K2_MEDIUM];
            TU_CHECK(n[BSRMV_GPU_BY_COLUMN] > 0 && others == 0 &&
                         (n[BSRMV_GPU_K2_MEDIUM] > 0) == want[i].k2 &&
                         (n[BSRMV_GPU_WIDE] > 0) == want[i].wide &&
                         (n[BSRMV_GPU_VEC_STREAM] > 0) == want[i].vec_stream &&
                         (n[BSRMV_GPU_STAGED] > 0) == (want[i].staged && major >= 9),
                     "%s bs=%d %s: %d by-column, %d wide, %d vector stream, %d staged, %d K2, "
                     "%d others of %d",
                     want[i].type == BSRMV_COMPLEX_DOUBLE ? "z" : "c", want[i].bs, o ? "row" : "col",
                     n[BSRMV_GPU_BY_COLUMN], n[BSRMV_GPU_WIDE], n[BSRMV_GPU_VEC_STREAM],
                     n[BSRMV_GPU_STAGED], n[BSRMV_GPU_K2_MEDIUM], others, nc);
            bsrmv_gpu_matrix_destroy(dA);
            bsrmv_matrix_destroy(A);
        }
}

/* What the GPU does not build for complex values says so. */
static void test_refusals(void)
{
    tu_shape sh = {16, 16, 2, 3.0, 0.0, -1, 0};
    bsrmv_matrix *A = tu_random_bsr(&sh, BSRMV_COMPLEX_DOUBLE, BSRMV_COL_MAJOR, 9);
    bsrmv_gpu_matrix *dA;
    TU_OK(bsrmv_gpu_matrix_upload(&dA, A, 0, NULL));
    void *dx, *dy;
    TU_OK(bsrmv_gpu_malloc(&dx, 32 * 16));
    TU_OK(bsrmv_gpu_malloc(&dy, 32 * 16));
    double _Complex one = 1.0;
    TU_FAILS(bsrmv_gpu_spmv_scalars(BSRMV_OP_N, NULL, dA, dx, 32, &one, dy, 32, NULL),
             BSRMV_ERR_ARGUMENT);
    TU_FAILS(bsrmv_gpu_spmv_scalars(BSRMV_OP_N, &one, dA, dx, 32, NULL, dy, 32, NULL),
             BSRMV_ERR_ARGUMENT);
    TU_FAILS(bsrmv_gpu_spmv_scalars(BSRMV_OP_N, &one, NULL, dx, 32, &one, dy, 32, NULL),
             BSRMV_ERR_ARGUMENT);
    TU_FAILS(bsrmv_gpu_spmv_scalars(BSRMV_OP_N, &one, dA, dx, 31, &one, dy, 32, NULL),
             BSRMV_ERR_DIMENSION);
    TU_FAILS(bsrmv_gpu_spmv_scalars((bsrmv_op)7, &one, dA, dx, 32, &one, dy, 32, NULL),
             BSRMV_ERR_ARGUMENT);
    TU_FAILS(bsrmv_gpu_spmv_scalars(BSRMV_OP_N, &one, dA, dx, 32, &one, dx, 32, NULL),
             BSRMV_ERR_ARGUMENT); /* x and y overlap */
    /* a complex double is one 16-byte load: x, y and a wrapped val 8 bytes off */
    TU_FAILS(bsrmv_gpu_spmv_scalars(BSRMV_OP_N, &one, dA, (char *)dx + 8, 32, &one, dy, 32, NULL),
             BSRMV_ERR_ARGUMENT);
    TU_FAILS(bsrmv_gpu_spmv_scalars(BSRMV_OP_N, &one, dA, dx, 32, &one, (char *)dy + 8, 32, NULL),
             BSRMV_ERR_ARGUMENT);
    {
        void *mem[3];
        bsrmv_gpu_matrix *W = wrap_copy(A, mem, 0);
        bsrmv_gpu_matrix *bad = NULL;
        bsrmv_matrix_info in;
        TU_OK(bsrmv_matrix_get_info(A, &in));
        TU_CHECK(in.nnzb > 0, "the refusal needs blocks");
        TU_FAILS(bsrmv_gpu_matrix_wrap(&bad, in.mb, in.nb, in.bs, in.nnzb, mem[0], mem[1],
                                       (char *)mem[2] + 8, in.type, in.order, 0),
                 BSRMV_ERR_ARGUMENT);
        TU_CHECK(bad == NULL, "a refused wrap leaves no handle");
        bsrmv_gpu_matrix_destroy(W);
        for (int k = 0; k < 3; k++)
            bsrmv_gpu_free(mem[k]);
    }
    /* the complex kernels stop at bs 32 */
    {
        tu_shape big = {2, 2, 33, 1.0, 0.0, -1, 0};
        bsrmv_matrix *B = tu_random_bsr(&big, BSRMV_COMPLEX_FLOAT, BSRMV_COL_MAJOR, 3);
        bsrmv_gpu_matrix *dB = NULL;
        TU_FAILS(bsrmv_gpu_matrix_upload(&dB, B, 0, NULL), BSRMV_ERR_UNSUPPORTED);
        TU_CHECK(dB == NULL, "a refused upload leaves no handle");
        bsrmv_matrix_destroy(B);
    }
    double ms;
    TU_FAILS(bsrmv_gpu_gather_bound(dA, dx, 1, &ms), BSRMV_ERR_UNSUPPORTED);
    /* families and groups without complex instantiations at bs 2 */
    const bsrmv_gpu_config no[] = {{BSRMV_GPU_WIDE, 32, 1, 128, 0},
                                   {BSRMV_GPU_STAGED, 4, 1, 128, 3},
                                   {BSRMV_GPU_VEC_STREAM, 32, 1, 128, 0},
                                   {BSRMV_GPU_MERGE_PATH, 32, 1, 256, 256},
                                   {BSRMV_GPU_BY_COLUMN, 32, 4, 256, 4}};
    for (size_t i = 0; i < sizeof no / sizeof no[0]; i++)
        TU_FAILS(bsrmv_gpu_matrix_set_config(dA, &no[i]), BSRMV_ERR_UNSUPPORTED);
    bsrmv_gpu_free(dx);
    bsrmv_gpu_free(dy);
    bsrmv_gpu_matrix_destroy(dA);
    bsrmv_matrix_destroy(A);
}

int main(void)
{
    if (tu_no_gpu())
        return 77;
    quick = tu_gpu_quick();
    test_refusals();
    test_families();
    test_scalar_entries();
    test_measured_choice();
    test_block_sizes();
    test_sym_storage();
    test_cg_herm();
    printf("test_gpu_complex: ok (%ld products, %ld forced configurations)\n", runs, configs);
    return 0;
}
