/* The plan of a device matrix, made once when the handle is made: the
 * matrix's features, the kernel configuration the tables choose (a tune
 * file's rows first, then the built-in table), and the balanced kernels'
 * work units.  The tables themselves are host code (src/plan/). */
#include "handle.cuh"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

namespace bsrmv_cuda {

/* ---- the tune file ($BSRMV_TUNE_FILE or bsrmv_gpu_load_tune_file) ---- */

static pthread_mutex_t tune_lock = PTHREAD_MUTEX_INITIALIZER;
static plan_table tune_tab;
static bool tune_env_done = false;

static bsrmv_status load_tune_locked(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return bsrmv_fail(BSRMV_ERR_IO, "cannot open tune file %s", path);
    size_t cap = 1 << 16, n = 0;
    char *text = (char *)malloc(cap);
    for (size_t got; text && (got = fread(text + n, 1, cap - n - 1, f)) > 0;) {
        n += got;
        if (n + 1 == cap) {
            char *t = (char *)realloc(text, cap *= 2);
            if (!t)
                free(text);
            text = t;
        }
    }
    fclose(f);
    if (!text)
        return bsrmv_fail(BSRMV_ERR_NOMEM, "out of memory reading tune file %s", path);
    text[n] = 0;
    plan_table t;
    bsrmv_status st = plan_table_parse(text, path, &t);
    free(text);
    if (st)
        return st;
    plan_table_free(&tune_tab);
    tune_tab = t;
    return BSRMV_SUCCESS;
}

static int accept_built(const bsrmv_gpu_config *c, void *m)
{
    return cfg_built((const bsrmv_gpu_matrix *)m, *c);
}

/* The short rows of the segmented scheme: a plain kernel that can skip the
 * long rows -- not staged (buffers sized by the longest row), not the flat
 * stream (runs of rows), not row-per-thread, not another balanced one. */
static int accept_short(const bsrmv_gpu_config *c, void *m)
{
    return !is_balanced(c->kernel) && c->kernel != BSRMV_GPU_STAGED && c->kernel != BSRMV_GPU_ROW_PER_THREAD &&
           !(c->kernel == BSRMV_GPU_BY_COLUMN && c->param > 0) && accept_built(c, m);
}

/* The complex choices on 27-point grids (the grid conditions of the real
 * table; the first row that matches), from every built candidate timed
 * against cuSPARSE's complex paths (docs/COMPLEX.md).  H100 (~400 MB, memsm 25): wide at bs 2, staged
 * at complex float bs 3 and complex double bs 3 and 7, K2 at complex
 * double bs 8 (2834 GB/s against by-column's 2675); by-block at bs 2-4
 * otherwise, by-column elsewhere.  H200 (~512 MB, memsm 37; times in
 * ms, this choice against the next best): complex float bs 2 wide
 * with 128 threads (0.1558 against 256 threads' 0.1619 column-major,
 * 0.1723 against 0.1741 row-major); complex double bs 3
 * by-block column-major, staged with 8 lanes a row row-major (0.1440
 * against by-block's 0.1548); complex float bs 4 and 8 the vector
 * stream (row-major 0.1345 against by-block's 0.1485; 0.1227 against
 * by-column's 0.1379), bs 5 by-block (0.1386 against by-column's
 * 0.1673); complex double bs 8 by-column (0.1352 against K2's
 * 0.1501).  Row-major blocks of complex double bs 4 and 8 the wide
 * kernel, whose lanes read a block's rows (0.1313 against by-block's
 * 0.1394, 0.1383 against by-column's 0.1737), column-major complex
 * double bs 4 too (0.1314 against by-block's 0.1345); complex float bs 6
 * and 7 in both orders: bs 6 0.1343 column-major against by-column's
 * 0.1424 and 0.1349 row-major against 0.1677, bs 7 with 32 lanes
 * column-major (0.1362 against staged's 0.1538 and 16 lanes' 0.1383),
 * 16 row-major (0.1309 against staged's 0.1468). */
struct CplxGridChoice {
    bsrmv_type type;
    int bs, h200, order; /* h200: memsm >= 30 (1) or below (0); -1: either */
    bsrmv_gpu_config cfg;
};
static const CplxGridChoice cplx_grid[] = {
    {BSRMV_COMPLEX_DOUBLE, 2, -1, -1, {BSRMV_GPU_WIDE, 16, 1, 128, 0}},
    {BSRMV_COMPLEX_FLOAT, 2, 1, -1, {BSRMV_GPU_WIDE, 8, 1, 128, 0}},
    {BSRMV_COMPLEX_FLOAT, 2, 0, -1, {BSRMV_GPU_WIDE, 8, 1, 256, 0}},
    {BSRMV_COMPLEX_DOUBLE, 3, 1, BSRMV_ROW_MAJOR, {BSRMV_GPU_STAGED, 8, 1, 128, 3}},
    {BSRMV_COMPLEX_DOUBLE, 3, 1, -1, {BSRMV_GPU_BY_BLOCK, 32, 1, 128, 0}},
    {BSRMV_COMPLEX_FLOAT, 3, 1, -1, {BSRMV_GPU_STAGED, 4, 1, 128, 3}},
    {BSRMV_COMPLEX_FLOAT, 4, 1, -1, {BSRMV_GPU_VEC_STREAM, 32, 4, 128, 0}},
    {BSRMV_COMPLEX_FLOAT, 5, 1, -1, {BSRMV_GPU_BY_BLOCK, 32, 1, 128, 0}},
    {BSRMV_COMPLEX_FLOAT, 7, 1, BSRMV_COL_MAJOR, {BSRMV_GPU_WIDE, 32, 1, 128, 0}},
    {BSRMV_COMPLEX_FLOAT, 7, 1, BSRMV_ROW_MAJOR, {BSRMV_GPU_WIDE, 16, 1, 128, 0}},
    {BSRMV_COMPLEX_FLOAT, 8, 1, -1, {BSRMV_GPU_VEC_STREAM, 32, 1, 128, 0}},
    {BSRMV_COMPLEX_DOUBLE, 4, 1, -1, {BSRMV_GPU_WIDE, 32, 1, 128, 0}},
    {BSRMV_COMPLEX_DOUBLE, 8, 1, BSRMV_ROW_MAJOR, {BSRMV_GPU_WIDE, 32, 1, 128, 0}},
    {BSRMV_COMPLEX_FLOAT, 6, 1, -1, {BSRMV_GPU_WIDE, 16, 1, 128, 0}},
    {BSRMV_COMPLEX_FLOAT, 3, 0, -1, {BSRMV_GPU_STAGED, 2, 1, 128, 3}},
    {BSRMV_COMPLEX_DOUBLE, 3, 0, -1, {BSRMV_GPU_STAGED, 8, 1, 256, 3}},
    {BSRMV_COMPLEX_DOUBLE, 7, 0, -1, {BSRMV_GPU_STAGED, 8, 1, 128, 3}},
    {BSRMV_COMPLEX_DOUBLE, 8, 0, -1, {BSRMV_GPU_K2_MEDIUM, 4, 1, 0, 8}},
};

static bsrmv_gpu_config fallback(const bsrmv_gpu_matrix *m)
{
    /* Windows of up to 16 block rows (4 warps of 4 rows at bs 2-4, 8 of 2
     * from bs 6, 8 of 4 at bs 5), fewer where bs would take them past 48
     * KiB of shared memory, and halved until the
     * matrix makes two windows per SM: a window is one thread block's,
     * and too few of them leave the device waiting on each warp's walk.
     * H100, scripts/gpu_sym.sh: 4-row windows took 0.33-0.95x the time of
     * 16-row ones on SPD grids of ~400 MB and promoted bcsstk16/25,
     * crystm01, msc04515, s1rmq4m1 at bs 3, 4, 6; on bcsstk16 at bs 6
     * (4884 block rows) 2 rows a warp took 24.2 us against 30.0 with 4
     * (1.53x the full storage, was 1.24x), on s1rmq4m1 21.7 against 25.6;
     * bcsstk25 (15439 block rows, 482 windows of 32) keeps 4 rows.
     * Both GPUs' suite runs (SPD grids of ~550 MB): 4 warps at bs 3 and 4
     * (H100 0.1336 / 0.1196 ms against 8 warps' 0.1373 / 0.1208, H200
     * 0.1163 / 0.0982 against 0.1193 / 0.0996), 2 rows a warp at bs 6
     * (H100 0.1155 against 0.1197, H200 0.1019 against 0.1059). */
    if (m->sym) {
        const int warps = m->bs <= 4 ? 4 : 8, cap = m->bs >= 6 ? 2 : 4;
        const int64_t ts = (int64_t)bsrmv_type_size(m->type), per_row = warps * (int64_t)m->bs * ts;
        int64_t rows = (48 * 1024 - warps * 32 * ts) / per_row; /* less the warps' scratch */
        rows = rows < 1 ? 1 : rows > cap ? cap : rows;
        while (rows > 1 && m->mb < 2 * (int64_t)(m->sms > 0 ? m->sms : 1) * warps * rows)
            rows /= 2;
        return bsrmv_gpu_config{BSRMV_GPU_SYM_WINDOW, 32, (int)rows, 32 * warps, 0};
    }
    if (bsrmv_type_is_complex(m->type)) {
        const bool grid = m->feat.v[PF_L2] >= 2 && m->feat.v[PF_MAXMEAN] <= 2;
        const int h200 = m->feat.v[PF_MEMSM] >= 30;
        for (const CplxGridChoice &r : cplx_grid)
            if (grid && r.type == m->type && r.bs == m->bs && (r.h200 < 0 || r.h200 == h200) &&
                (r.order < 0 || r.order == (int)m->order)) { /* the first that matches, if built */
                if (cfg_built(m, r.cfg))
                    return r.cfg;
                break;
            }
        if (m->bs >= 2 && m->bs <= 4)
            return bsrmv_gpu_config{BSRMV_GPU_BY_BLOCK, 32, 1, 128, 0};
    }
    const bsrmv_gpu_config c = m->bs <= 32 ? bsrmv_gpu_config{BSRMV_GPU_BY_COLUMN, 32, 1, 128, 0}
                                           : bsrmv_gpu_config{BSRMV_GPU_K3_LARGE, 32, 1, 0, 0};
    return plan_complete(c, &m->feat);
}

/* ---- the balanced kernels' work units ---- */

/* A matrix of fewer units than the device runs at once is done in one
 * wave, and its time is about that of one unit: such units should be
 * small.  8 merge-path units or 16 fragments per SM, at least 8 items or
 * 4 blocks; the tables' sizes come from matrices of many waves.  H100,
 * lp_ship04l, ca-GrQc, add32 and crack promoted (7,586 to 91,480 merge
 * items, 6,380 to 60,760 blocks), sizes 8-64 items (bs 3, 6) and 4-32
 * blocks (bs 8): the fastest was the size nearest to these counts, e.g.
 * lp_ship04l at bs 3 7.3 us with 8 items against 9.4 with the table's 64,
 * at bs 6 9.1 us against 13.2, ca-GrQc at bs 8 12.1 us with 16 blocks
 * against 14.7 with 32; halving the units again cost up to 25%. */
bsrmv_gpu_config plan_fit_units(const bsrmv_gpu_matrix *m, bsrmv_gpu_config c)
{
    const bool merge = c.kernel == BSRMV_GPU_MERGE_PATH && c.group == 1;
    if (!merge && !(c.kernel == BSRMV_GPU_FRAGMENT && c.threads > 0))
        return c;
    const int64_t sms = m->sms > 0 ? m->sms : 1;
    const int64_t units = merge ? 8 * sms : 16 * sms, least = merge ? 8 : 4;
    int64_t p = ((merge ? m->mb + m->nnzb : m->nnzb) + units - 1) / units;
    p = p < least ? least : p;
    if (p < c.param)
        c.param = (int)p;
    return c;
}

void plan_free(bsrmv_gpu_matrix *m)
{
    cudaFree(m->sched_mem);
    m->sched_mem = nullptr;
    m->sched_bytes = 0;
    m->sched = Schedule{};
}

/* The work units of balanced config c (nothing for other kernels), from
 * the host copy of row_ptr. */
static bsrmv_status build_schedule(bsrmv_gpu_matrix *m, const bsrmv_gpu_config &c)
{
    if (m->sched_mem && m->sched_for.kernel == c.kernel && m->sched_for.param == c.param)
        return BSRMV_SUCCESS;
    DeviceScope ds;
    cudaError_t e = ds.enter(m->device);
    if (e != cudaSuccess)
        return cuda_fail(e, "cudaSetDevice");
    if (!is_balanced(c.kernel)) {
        plan_free(m);
        return BSRMV_SUCCESS;
    }
    const int kind = c.kernel == BSRMV_GPU_SEGMENTED ? SCHED_LONGROWS
                     : c.kernel == BSRMV_GPU_MERGE_PATH ? SCHED_MERGE : SCHED_FRAGMENT;
    HostSchedule hs;
    if (!schedule_build(kind, c.param, m->h_row_ptr, m->mb, &hs)) {
        schedule_free(&hs);
        return bsrmv_fail(BSRMV_ERR_NOMEM, "out of host memory for the work units");
    }
    /* one allocation: unit_row, unit_blk, slot, fix, pieces (256-byte aligned parts) */
    auto up = [](size_t b) { return (b + 255) & ~(size_t)255; };
    const size_t n1 = sizeof(int64_t) * (size_t)(hs.nunits + 1);
    const size_t b_slot = sizeof(int64_t) * (size_t)hs.nunits, b_fix = sizeof(int64_t) * 3 * (size_t)hs.nfix;
    const size_t b_pieces = (size_t)hs.nslots * (size_t)m->bs * bsrmv_type_size(m->vtype); /* the sums' type */
    const size_t total = 4 * up(n1) + up(b_slot) + up(b_fix) + up(b_pieces);
    plan_free(m);
    char *d = nullptr;
    if ((e = cudaMalloc((void **)&d, total)) == cudaSuccess) {
        char *p = d;
        auto put = [&](const void *src, size_t b) -> void * {
            void *at = p;
            p += up(b);
            if (b && e == cudaSuccess)
                e = cudaMemcpy(at, src, b, cudaMemcpyHostToDevice);
            return at;
        };
        m->sched.nunits = hs.nunits;
        m->sched.unit_row = (const int64_t *)put(hs.unit_row, n1);
        m->sched.unit_blk = (const int64_t *)put(hs.unit_blk, n1);
        m->sched.end_row = (const int64_t *)put(hs.end_row, n1);
        m->sched.end_blk = (const int64_t *)put(hs.end_blk, n1);
        m->sched.slot = (const int64_t *)put(hs.slot, b_slot);
        m->sched.nfix = hs.nfix;
        m->sched.max_rows = hs.max_rows > INT32_MAX ? INT32_MAX : (int)hs.max_rows;
        m->sched.max_blocks = hs.max_blocks > INT32_MAX ? INT32_MAX : (int)hs.max_blocks;
        m->sched.fix = (const int64_t *)put(hs.fix, b_fix);
        m->sched.pieces = p; /* written by the kernel */
    }
    schedule_free(&hs);
    if (e != cudaSuccess) {
        cudaFree(d);
        m->sched = Schedule{};
        cudaGetLastError();
        return cuda_fail(e, "allocating the balanced kernel's work units");
    }
    m->sched_mem = d;
    m->sched_bytes = total;
    m->sched_for = c;
    return BSRMV_SUCCESS;
}

bsrmv_status plan_set(bsrmv_gpu_matrix *m, const bsrmv_gpu_config &c)
{
    bsrmv_status st = build_schedule(m, c);
    if (st)
        return st;
    m->cfg = c;
    m->from_tune = 0;
    m->table_row = -1;
    m->use_full = false;
    return BSRMV_SUCCESS;
}

bsrmv_status plan_choose(bsrmv_gpu_matrix *m)
{
    bsrmv_gpu_config c;
    int row = -1;
    pthread_mutex_lock(&tune_lock);
    if (!tune_env_done) {
        tune_env_done = true;
        const char *p = getenv("BSRMV_TUNE_FILE");
        if (p && *p)
            load_tune_locked(p); /* a bad file is ignored here: the built-in table applies */
    }
    const int from_tune = plan_table_lookup(&tune_tab, &m->feat, accept_built, m, &c, nullptr);
    pthread_mutex_unlock(&tune_lock);
    /* the built-in table is measured on real matrices: complex ones take
     * the tune file's z and c rows, else the fallback's rule */
    if (!from_tune && (bsrmv_type_is_complex(m->type) ||
                       !plan_table_lookup(plan_default_table(), &m->feat, accept_built, m, &c, &row)))
        c = fallback(m);
    bsrmv_status st = plan_set(m, from_tune ? c : plan_fit_units(m, c));
    m->from_tune = from_tune;
    m->table_row = from_tune ? -1 : row;
    m->use_full = m->full != nullptr;
    return st;
}

/* As plan_choose tries them: the tune file's rows, then the built-in
 * table's (real values; their units fitted to the matrix), then the
 * fallback. */
int plan_rank(const bsrmv_gpu_matrix *m, bsrmv_gpu_config *out, int max)
{
    void *ctx = const_cast<bsrmv_gpu_matrix *>(m);
    pthread_mutex_lock(&tune_lock);
    int n = max > 0 ? plan_table_rank(&tune_tab, &m->feat, accept_built, ctx, out, max, nullptr) : 0;
    pthread_mutex_unlock(&tune_lock);
    if (!bsrmv_type_is_complex(m->type) && n < max) {
        bsrmv_gpu_config d[16];
        const int nd = plan_table_rank(plan_default_table(), &m->feat, accept_built, ctx, d, 16, nullptr);
        for (int i = 0; i < nd; ++i)
            plan_rank_add(plan_fit_units(m, d[i]), accept_built, ctx, out, max, &n);
    }
    plan_rank_add(plan_fit_units(m, fallback(m)), accept_built, ctx, out, max, &n);
    return n;
}

static int cols_host(void *ctx, int64_t first, int n, int32_t *out)
{
    memcpy(out, (const int32_t *)ctx + first, sizeof *out * (size_t)n);
    return 0;
}

static int cols_device(void *ctx, int64_t first, int n, int32_t *out)
{
    return (int)cudaMemcpy(out, (const int32_t *)ctx + first, sizeof *out * (size_t)n, cudaMemcpyDeviceToHost);
}

bsrmv_status plan_analyse(bsrmv_gpu_matrix *m, const int64_t *h_row_ptr, const int32_t *h_col_idx)
{
    size_t brp = 0;
    bsrmv_bytes(m->mb + 1, sizeof(int64_t), &brp);
    if (!(m->h_row_ptr = (int64_t *)malloc(brp)))
        return bsrmv_fail(BSRMV_ERR_NOMEM, "out of host memory (%zu bytes for the plan's row_ptr)", brp);
    memcpy(m->h_row_ptr, h_row_ptr, brp);
    int64_t mn = INT64_MAX;
    for (int64_t i = 0; i < m->mb; ++i) {
        const int64_t l = h_row_ptr[i + 1] - h_row_ptr[i];
        mn = l < mn ? l : mn;
    }
    plan_features_rows(&m->feat, h_row_ptr, m->mb, m->nb, m->bs, m->type, m->vtype, m->order);
    /* a sample of col_idx: from the host where the caller has it there */
    const int ce = h_col_idx ? plan_features_spread(&m->feat, h_row_ptr, m->mb, m->nb, cols_host, (void *)h_col_idx)
                             : plan_features_spread(&m->feat, h_row_ptr, m->mb, m->nb, cols_device, m->col_idx);
    if (ce)
        return cuda_fail((cudaError_t)ce, "cudaMemcpy(col_idx sample)");
    m->len_min = m->mb ? mn : 0;
    m->len_max = (int64_t)m->feat.v[PF_LENMAX];
    m->empty = (int64_t)(m->feat.v[PF_EMPTY] * (double)m->mb + 0.5);
    m->len_mean = m->feat.v[PF_MEAN];
    m->len_std = m->feat.v[PF_CV] * m->len_mean;
    int sms = 0, l2 = 0, mem_khz = 0, bus_bits = 0, ccmaj = 0, ccmin = 0, optin = 0;
    CU_RET(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, m->device), "cudaDeviceGetAttribute");
    CU_RET(cudaDeviceGetAttribute(&ccmaj, cudaDevAttrComputeCapabilityMajor, m->device), "cudaDeviceGetAttribute");
    CU_RET(cudaDeviceGetAttribute(&ccmin, cudaDevAttrComputeCapabilityMinor, m->device), "cudaDeviceGetAttribute");
    CU_RET(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, m->device),
           "cudaDeviceGetAttribute");
    CU_RET(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, m->device), "cudaDeviceGetAttribute");
    CU_RET(cudaDeviceGetAttribute(&mem_khz, cudaDevAttrMemoryClockRate, m->device), "cudaDeviceGetAttribute");
    CU_RET(cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, m->device),
           "cudaDeviceGetAttribute");
    m->sms = sms;
    m->cc = 10 * ccmaj + ccmin;
    m->l2 = (size_t)l2;
    m->smem_optin = (size_t)optin;
    /* double data rate: two transfers of the bus width per memory clock */
    plan_features_device(&m->feat, (double)l2, 2.0 * mem_khz * 1e3 * (bus_bits / 8.0) / 1e9, sms, m->cc);
    if (!plan_table_lookup(plan_default_table(), &m->feat, accept_short, m, &m->short_cfg, nullptr))
        m->short_cfg = {BSRMV_GPU_BY_COLUMN, 32, 1, 128, 0};
    return plan_choose(m);
}

} // namespace bsrmv_cuda

using namespace bsrmv_cuda;

extern "C" bsrmv_status bsrmv_gpu_load_tune_file(const char *path)
{
    pthread_mutex_lock(&tune_lock);
    bsrmv_status s = BSRMV_SUCCESS;
    tune_env_done = true;
    if (!path)
        path = getenv("BSRMV_TUNE_FILE");
    if (path && *path)
        s = load_tune_locked(path);
    pthread_mutex_unlock(&tune_lock);
    return s;
}
