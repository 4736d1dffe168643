/* Balanced GPU kernels (segmented, merge path, fragment) on the shapes that
 * break plain kernels: all-empty rows, one row holding every block, mb = 1,
 * rows much longer than a work unit, power-law and arrow patterns.  Unit
 * sizes from 1 block up put unit boundaries at every possible place (row
 * starts, row ends, inside rows, runs of empty rows).  Every result is
 * checked against the long-double reference; a cut row's partial sums are
 * combined in a fixed order, so repeated calls must agree bit for bit.
 * Also: arrays wrapped at unaligned addresses, the staged merge path on a
 * matrix large enough to refill its buffers, the plan picks a balanced
 * kernel for irregular rows and a plain one for a regular grid.  Exit 77
 * without a CUDA device. */
#include "testutil.h"

#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int quick;
static long runs;

typedef struct gpu_case {
    const bsrmv_matrix *A;
    bsrmv_matrix_info in;
    void *x, *y0, *y, *y2, *dx, *dy;
    size_t ts;
} gpu_case;

static void case_init(gpu_case *c, const bsrmv_matrix *A, uint64_t seed)
{
    c->A = A;
    TU_OK(bsrmv_matrix_get_info(A, &c->in));
    c->ts = bsrmv_type_size(c->in.type);
    const int64_t n = c->in.rows > c->in.cols ? c->in.rows : c->in.cols;
    c->x = tu_random_vector(n, c->in.type, seed);
    c->y0 = tu_random_vector(n, c->in.type, seed + 1);
    c->y = malloc(n * c->ts + 1);
    c->y2 = malloc(n * c->ts + 1);
    TU_OK(bsrmv_gpu_malloc(&c->dx, n * c->ts));
    TU_OK(bsrmv_gpu_malloc(&c->dy, n * c->ts));
    TU_OK(bsrmv_gpu_to_device(c->dx, c->x, n * c->ts));
}

static void case_free(gpu_case *c)
{
    free(c->x);
    free(c->y0);
    free(c->y);
    free(c->y2);
    bsrmv_gpu_free(c->dx);
    bsrmv_gpu_free(c->dy);
}

/* One SpMV with y poisoned (beta == 0) or y0; result in out. */
static void spmv_into(gpu_case *c, bsrmv_gpu_matrix *dA, double alpha, double beta, void *out,
                      const char *what)
{
    const int64_t ny = c->in.rows;
    if (beta == 0.0) {
        void *nan = tu_nan_vector(ny, c->in.type);
        TU_OK(bsrmv_gpu_to_device(c->dy, nan, ny * c->ts));
        free(nan);
    } else {
        TU_OK(bsrmv_gpu_to_device(c->dy, c->y0, ny * c->ts));
    }
    bsrmv_status st = bsrmv_gpu_spmv(BSRMV_OP_N, alpha, dA, c->dx, c->in.cols, beta, c->dy, ny, NULL);
    TU_CHECK(st == BSRMV_SUCCESS, "%s: %s", what, bsrmv_last_error());
    TU_CHECK(cudaDeviceSynchronize() == cudaSuccess, "%s: kernel failed: %s", what,
             cudaGetErrorString(cudaGetLastError()));
    TU_OK(bsrmv_gpu_to_host(out, c->dy, ny * c->ts));
}

static void check_config(gpu_case *c, bsrmv_gpu_matrix *dA, const bsrmv_gpu_config *cfg,
                         const char *shape)
{
    static const double ab[3][2] = {{1.0, 0.0}, {-2.5, 1.0}, {0.5, -2.5}};
    char cs[96], what[256];
    bsrmv_gpu_config_string(cfg, cs, sizeof cs);
    TU_OK(bsrmv_gpu_matrix_set_config(dA, cfg));
    for (int k = 0; k < (quick ? 2 : 3); ++k) {
        snprintf(what, sizeof what, "%s bs=%d %s %s %s alpha=%g beta=%g", shape, c->in.bs,
                 c->in.type == BSRMV_DOUBLE ? "double" : "float",
                 c->in.order == BSRMV_COL_MAJOR ? "col" : "row", cs, ab[k][0], ab[k][1]);
        spmv_into(c, dA, ab[k][0], ab[k][1], c->y, what);
        tu_check_result(what, c->A, BSRMV_OP_N, ab[k][0], c->x, ab[k][1], c->y0, c->y);
        spmv_into(c, dA, ab[k][0], ab[k][1], c->y2, what);
        TU_CHECK(memcmp(c->y, c->y2, c->in.rows * c->ts) == 0, "%s: two calls differ", what);
        ++runs;
    }
}

/* Every balanced kernel and group width built for this bs, unit sizes that
 * cut at every granularity. */
static void check_all(const bsrmv_matrix *A, const char *shape, uint64_t seed)
{
    gpu_case c;
    case_init(&c, A, seed);
    bsrmv_gpu_matrix *dA;
    TU_OK(bsrmv_gpu_matrix_upload(&dA, A, 0, NULL));
    static const bsrmv_gpu_kernel kinds[3] = {BSRMV_GPU_SEGMENTED, BSRMV_GPU_MERGE_PATH,
                                              BSRMV_GPU_FRAGMENT};
    static const int groups[] = {1, 4, 8, 16, 32};
    static const int units[] = {1, 2, 3, 7, 64, 1000};
    int tried = 0;
    for (int k = 0; k < 3; ++k)
        for (int g = 0; g < 5; ++g)
            for (int u = 0; u < 6; ++u)
                /* rows 2-4: the staged lane-sequential merge path (sm_90) */
                for (int r = 1; r <= (kinds[k] == BSRMV_GPU_MERGE_PATH && groups[g] == 1 ? 4 : 1); ++r) {
                    if (quick && (u + r) % 2 == 0)
                        continue;
                    /* the staged one with 2 warps per thread block */
                    bsrmv_gpu_config cfg = {kinds[k], groups[g], r, r > 1 ? 64 : 256, units[u]};
                    if (bsrmv_gpu_matrix_set_config(dA, &cfg) == BSRMV_ERR_UNSUPPORTED)
                        continue; /* this group width is not built for this bs */
                    check_config(&c, dA, &cfg, shape);
                    ++tried;
                }
    /* threads 0: K3 thread blocks walk the units (group = column phases,
     * rows = slices of each block row; bs >= 2) */
    int tried_k3 = 0;
    for (int k = 0; k < 3; k += 2)
        for (int g = 8; g <= 32; g *= 4)
            for (int ns = 1; ns <= (kinds[k] == BSRMV_GPU_FRAGMENT ? 2 : 1); ++ns)
                for (int u = 0; u < 6; ++u) {
                    if (quick && (u + ns) % 2 == 0)
                        continue;
                    bsrmv_gpu_config cfg = {kinds[k], g, ns, 0, units[u]};
                    /* K3 needs bs >= 2 and at most 512 threads (row-major
                     * blocks: a thread per row and column phase) */
                    if (bsrmv_gpu_matrix_set_config(dA, &cfg) == BSRMV_ERR_UNSUPPORTED) {
                        TU_CHECK(c.in.bs == 1 || (c.in.order == BSRMV_ROW_MAJOR &&
                                                  (c.in.bs + ns - 1) / ns * g > 512),
                                 "%s bs=%d: %s/g%d/r%d/t0 refused", shape, c.in.bs,
                                 k ? "fragment" : "segmented", g, ns);
                        continue;
                    }
                    check_config(&c, dA, &cfg, shape);
                    ++tried_k3;
                }
    /* threads 0, rows 0: K2 thread arrays walk the fragments (group = thread
     * groups), built for column-major blocks of bs 12 and 16 (4 groups), 24
     * and 32 (4 and 8), refused elsewhere */
    int tried_k2 = 0;
    for (int g = 4; g <= 8; g *= 2)
        for (int u = 0; u < 6; ++u) {
            bsrmv_gpu_config cfg = {BSRMV_GPU_FRAGMENT, g, 0, 0, units[u]};
            if (bsrmv_gpu_matrix_set_config(dA, &cfg) == BSRMV_ERR_UNSUPPORTED)
                continue;
            check_config(&c, dA, &cfg, shape);
            ++tried_k2;
        }
    const int bs = c.in.bs, col = c.in.order == BSRMV_COL_MAJOR;
    const int want_k2 = !col ? 0 : bs == 12 || bs == 16 ? 6 : bs == 24 || bs == 32 ? 12 : 0;
    TU_CHECK(tried_k2 == want_k2, "%s bs=%d: %d K2 unit configurations, wanted %d", shape, bs, tried_k2,
             want_k2);
    TU_CHECK(tried >= (quick ? 9 : 18), "%s bs=%d: only %d balanced configurations", shape,
             c.in.bs, tried);
    TU_CHECK(c.in.bs == 1 || tried_k3 >= (quick ? 8 : 18), "%s bs=%d: only %d K3 unit configurations",
             shape, c.in.bs, tried_k3);
    bsrmv_gpu_matrix_destroy(dA);
    case_free(&c);
}

static bsrmv_matrix *shaped(int64_t mb, int64_t nb, int bs, double mean, double empty,
                            int64_t long_row, int64_t long_len, bsrmv_type t, bsrmv_order o,
                            uint64_t seed)
{
    tu_shape sh = {mb, nb, bs, mean, empty, long_row, long_len};
    bsrmv_matrix *A = tu_random_bsr(&sh, t, o, seed);
    TU_CHECK(A != NULL, "tu_random_bsr");
    return A;
}

static void test_shapes(int bs, bsrmv_type t, bsrmv_order o, uint64_t seed)
{
    struct {
        const char *name;
        bsrmv_matrix *A;
    } m[6];
    int n = 0;
    m[n].name = "all-empty";
    m[n++].A = shaped(40, 30, bs, 0, 1.0, -1, 0, t, o, seed);
    m[n].name = "one-row-holds-all";
    m[n++].A = shaped(30, 700, bs, 0, 1.0, 7, 700, t, o, seed + 1);
    m[n].name = "mb=1";
    m[n++].A = shaped(1, 900, bs, 0, 0, 0, 900, t, o, seed + 2);
    m[n].name = "random+long";
    m[n++].A = shaped(300, 320, bs, 3, 0.3, 150, 320, t, o, seed + 3);
    bsrmv_matrix *P = NULL;
    TU_OK(bsrmv_generate_powerlaw(&P, 600, 600, bs, 4.0, 1.8, 500, seed + 4, t, o));
    m[n].name = "powerlaw";
    m[n++].A = P;
    bsrmv_matrix *W = NULL;
    TU_OK(bsrmv_generate_arrow(&W, 200, 2, bs, seed + 5, t, o));
    m[n].name = "arrow";
    m[n++].A = W;
    for (int i = 0; i < n; ++i) {
        check_all(m[i].A, m[i].name, seed + 10 + i);
        bsrmv_matrix_destroy(m[i].A);
    }
}

/* Arrays one element past an aligned address: 16-byte loads need them
 * aligned.  A wrapped val runs the other gather of the lane-sequential
 * merge path (bs 2 and 4), the value-per-lane stream of double bs 8 and
 * the value-per-lane row walk at bs 16 (fragments and segments); an
 * offset x with an aligned val the same fallbacks where the fast path
 * loads x 16 bytes at a time (row-major blocks in the merge path, the
 * wide stream and walk).  Also many units per warp (small units on a
 * larger matrix). */
static void test_offset_arrays(int bs, bsrmv_type t, bsrmv_order o, uint64_t seed)
{
    bsrmv_matrix *P = NULL;
    const int64_t mb = bs <= 4 ? 30000 : 2000;
    TU_OK(bsrmv_generate_powerlaw(&P, mb, mb, bs, 4.0, 1.8, mb / 10, seed, t, o));
    bsrmv_matrix_info in;
    TU_OK(bsrmv_matrix_get_info(P, &in));
    const int64_t *rp;
    const int32_t *ci;
    const void *v;
    TU_OK(bsrmv_matrix_arrays(P, &rp, &ci, &v));
    const size_t ts = bsrmv_type_size(t), nv = (size_t)in.nnzb * bs * bs;
    char *d_rp, *d_ci, *d_v;
    TU_OK(bsrmv_gpu_malloc((void **)&d_rp, (in.mb + 2) * sizeof(int64_t)));
    TU_OK(bsrmv_gpu_malloc((void **)&d_ci, (in.nnzb + 1) * sizeof(int32_t)));
    TU_OK(bsrmv_gpu_malloc((void **)&d_v, (nv + 1) * ts));
    TU_OK(bsrmv_gpu_to_device(d_rp + sizeof(int64_t), rp, (in.mb + 1) * sizeof(int64_t)));
    TU_OK(bsrmv_gpu_to_device(d_ci + sizeof(int32_t), ci, in.nnzb * sizeof(int32_t)));
    TU_OK(bsrmv_gpu_to_device(d_v + ts, v, nv * ts));
    bsrmv_gpu_matrix *dA;
    TU_OK(bsrmv_gpu_matrix_wrap(&dA, in.mb, in.nb, bs, in.nnzb,
                                (const int64_t *)(d_rp + sizeof(int64_t)),
                                (const int32_t *)(d_ci + sizeof(int32_t)), d_v + ts, t, o, 0));
    bsrmv_gpu_matrix *dB; /* val aligned, for the offset x */
    TU_OK(bsrmv_gpu_matrix_upload(&dB, P, 0, NULL));
    gpu_case c;
    case_init(&c, P, seed + 1);
    const int64_t n = in.rows > in.cols ? in.rows : in.cols;
    void *dx_aligned = c.dx, *dx_mem;
    TU_OK(bsrmv_gpu_malloc(&dx_mem, (n + 1) * ts));
    TU_OK(bsrmv_gpu_to_device((char *)dx_mem + ts, c.x, n * ts));
    static const int units[] = {3, 64, 256};
    for (int m = 0; m < 2; ++m) {
        bsrmv_gpu_matrix *M = m ? dB : dA;
        const char *shape = m ? "powerlaw-offset-x" : "powerlaw-offset-arrays";
        c.dx = m ? (char *)dx_mem + ts : dx_aligned;
        for (int u = 0; u < 3; ++u) {
            bsrmv_gpu_config cfg = {bs <= 4 ? BSRMV_GPU_MERGE_PATH : BSRMV_GPU_FRAGMENT,
                                    bs <= 4 ? 1 : 32, 1, 256, units[u]};
            check_config(&c, M, &cfg, shape);
            if (bs > 4) {
                cfg.kernel = BSRMV_GPU_SEGMENTED;
                check_config(&c, M, &cfg, shape);
            }
            /* staged: k_mergeseq for the offset arrays; for the offset x,
             * x loaded a value at a time (row-major blocks) */
            cfg.rows = 2;
            if (bs <= 4 && bsrmv_gpu_matrix_set_config(M, &cfg) != BSRMV_ERR_UNSUPPORTED)
                check_config(&c, M, &cfg, shape);
        }
    }
    c.dx = dx_aligned;
    bsrmv_gpu_free(dx_mem);
    bsrmv_gpu_matrix_destroy(dB);
    case_free(&c);
    bsrmv_gpu_matrix_destroy(dA);
    bsrmv_gpu_free(d_rp);
    bsrmv_gpu_free(d_ci);
    bsrmv_gpu_free(d_v);
    bsrmv_matrix_destroy(P);
}

/* The staged merge path (sm_90) on matrices sized by the SM count, so
 * that every warp of its persistent grid runs through more units than it
 * has buffers: buffers are refilled, and their barriers go through both
 * parities.  The second matrix is the first with as many empty block rows
 * again at its end, nnzb not a multiple of 4 and mb even: every unit of
 * the empty rows reaches the last 16 bytes of col_idx and of row_ptr,
 * which the lanes load themselves (tails) before the buffer is refilled. */
static void test_merge_staged(int bs, bsrmv_type t, bsrmv_order o, uint64_t seed)
{
    int dev = 0, major = 0, sms = 0;
    TU_CHECK(cudaGetDevice(&dev) == cudaSuccess &&
                 cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) == cudaSuccess &&
                 cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) == cudaSuccess,
             "device attributes");
    if (major < 9)
        return;
    const int64_t mb = ((int64_t)sms * (quick ? 200 : 8000) / bs) & ~(int64_t)1;
    bsrmv_matrix *P = NULL;
    bsrmv_matrix_info in;
    do { /* a seed whose nnzb leaves a col_idx tail */
        bsrmv_matrix_destroy(P);
        TU_OK(bsrmv_generate_powerlaw(&P, mb, mb, bs, 4.0, 1.8, mb / 20, seed++, t, o));
        TU_OK(bsrmv_matrix_get_info(P, &in));
    } while (in.nnzb % 4 == 0);
    const int64_t *rp;
    const int32_t *ci;
    const void *v;
    TU_OK(bsrmv_matrix_arrays(P, &rp, &ci, &v));
    int64_t *rp2 = malloc((size_t)(2 * mb + 1) * sizeof *rp2);
    TU_CHECK(rp2 != NULL, "malloc");
    for (int64_t i = 0; i <= 2 * mb; ++i)
        rp2[i] = rp[i <= mb ? i : mb];
    bsrmv_matrix *E = NULL;
    TU_OK(bsrmv_matrix_create(&E, 2 * mb, mb, bs, in.nnzb, rp2, ci, v, t, o));
    free(rp2);
    static const int units[] = {8, 256};
    for (int k = 0; k < 2; ++k) {
        const bsrmv_matrix *A = k ? E : P;
        gpu_case c;
        case_init(&c, A, seed + 1);
        bsrmv_gpu_matrix *dA;
        TU_OK(bsrmv_gpu_matrix_upload(&dA, A, 0, NULL));
        for (int u = quick; u < 2; ++u)
            for (int r = 2; r <= 4; ++r) {
                bsrmv_gpu_config cfg = {BSRMV_GPU_MERGE_PATH, 1, r, r == 3 ? 256 : 32,
                                        k ? 1 : quick ? 8 : units[u]};
                check_config(&c, dA, &cfg, k ? "powerlaw-sm-sized+empty-tail" : "powerlaw-sm-sized");
            }
        bsrmv_gpu_matrix_destroy(dA);
        case_free(&c);
    }
    bsrmv_matrix_destroy(E);
    bsrmv_matrix_destroy(P);
}

static int balanced(bsrmv_gpu_kernel k)
{
    return k == BSRMV_GPU_SEGMENTED || k == BSRMV_GPU_MERGE_PATH || k == BSRMV_GPU_FRAGMENT;
}

/* The plan: balanced for a power-law matrix, plain for a regular grid; a
 * block size the balanced kernels do not cover is refused. */
static void test_plan(void)
{
    bsrmv_matrix *P = NULL, *G = NULL;
    TU_OK(bsrmv_generate_powerlaw(&P, 20000, 20000, 2, 4.0, 1.8, 10000, 5, BSRMV_DOUBLE,
                                  BSRMV_COL_MAJOR));
    TU_OK(bsrmv_generate_grid(&G, 20, 20, 20, 2, 27, 5, BSRMV_DOUBLE, BSRMV_COL_MAJOR));
    bsrmv_gpu_matrix *dP, *dG;
    TU_OK(bsrmv_gpu_matrix_upload(&dP, P, 0, NULL));
    TU_OK(bsrmv_gpu_matrix_upload(&dG, G, 0, NULL));
    bsrmv_gpu_plan_info pp, pg;
    TU_OK(bsrmv_gpu_matrix_get_plan(dP, &pp));
    TU_OK(bsrmv_gpu_matrix_get_plan(dG, &pg));
    TU_CHECK(balanced(pp.config.kernel), "power-law plan: %s", bsrmv_gpu_kernel_name(pp.config.kernel));
    TU_CHECK(!balanced(pg.config.kernel), "grid plan: %s", bsrmv_gpu_kernel_name(pg.config.kernel));
    /* the plan's units fit the matrix to the device: 8 merge-path units or
     * 16 fragments per SM where the table's are larger */
    if (pp.config.kernel == BSRMV_GPU_MERGE_PATH || pp.config.kernel == BSRMV_GPU_FRAGMENT) {
        const int merge = pp.config.kernel == BSRMV_GPU_MERGE_PATH;
        if (pp.config.group == 1 || (!merge && pp.config.threads > 0)) {
            int sms = 0;
            TU_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0) == cudaSuccess, "SM count");
            bsrmv_matrix_info pi;
            TU_OK(bsrmv_matrix_get_info(P, &pi));
            const int64_t work = merge ? pi.mb + pi.nnzb : pi.nnzb, units = (merge ? 8 : 16) * (int64_t)sms;
            const int64_t fit = (work + units - 1) / units, least = merge ? 8 : 4;
            TU_CHECK(pp.config.param <= (fit < least ? least : fit), "power-law plan: units of %d for %lld on %d SMs",
                     pp.config.param, (long long)work, sms);
        }
    }
    gpu_case c;
    case_init(&c, P, 77);
    check_config(&c, dP, &pp.config, "powerlaw-auto");
    case_free(&c);
    bsrmv_gpu_matrix_destroy(dP);
    bsrmv_gpu_matrix_destroy(dG);
    bsrmv_matrix_destroy(P);
    bsrmv_matrix_destroy(G);

    bsrmv_matrix *B = shaped(10, 10, 40, 2, 0, -1, 0, BSRMV_FLOAT, BSRMV_COL_MAJOR, 3);
    bsrmv_gpu_matrix *dB;
    TU_OK(bsrmv_gpu_matrix_upload(&dB, B, 0, NULL));
    bsrmv_gpu_config big = {BSRMV_GPU_MERGE_PATH, 32, 1, 256, 4};
    TU_FAILS(bsrmv_gpu_matrix_set_config(dB, &big), BSRMV_ERR_UNSUPPORTED);
    bsrmv_gpu_matrix_destroy(dB);
    bsrmv_matrix_destroy(B);
}

int main(void)
{
    if (tu_no_gpu())
        return 77;
    quick = tu_gpu_quick() != 0;
    test_plan();
    printf("plan: ok\n");
    static const int full[] = {1, 2, 3, 4, 8, 16, 5, 6, 12, 24, 32};
    static const int small[] = {1, 2, 4, 5, 8, 16};
    const int *list = quick ? small : full;
    const int nl = quick ? 6 : (int)(sizeof full / sizeof *full);
    uint64_t seed = 500;
    for (int i = 0; i < nl; ++i) {
        for (int t = 0; t < 2; ++t)
            for (int o = 0; o < 2; ++o) {
                if (quick && t != o)
                    continue;
                test_shapes(list[i], t ? BSRMV_DOUBLE : BSRMV_FLOAT,
                            o ? BSRMV_ROW_MAJOR : BSRMV_COL_MAJOR, seed += 100);
                if (list[i] <= 4 || list[i] == 6 || list[i] == 8 || list[i] == 12 || list[i] == 16)
                    test_offset_arrays(list[i], t ? BSRMV_DOUBLE : BSRMV_FLOAT,
                                       o ? BSRMV_ROW_MAJOR : BSRMV_COL_MAJOR, seed += 100);
                if (list[i] == 2 || list[i] == 4)
                    test_merge_staged(list[i], t ? BSRMV_DOUBLE : BSRMV_FLOAT,
                                      o ? BSRMV_ROW_MAJOR : BSRMV_COL_MAJOR, seed += 100);
            }
        printf("bs=%d: ok (%ld runs so far)\n", list[i], runs);
        fflush(stdout);
    }
    printf("gpu balanced: %ld SpMV runs, all correct and repeatable\n", runs);
    return 0;
}
