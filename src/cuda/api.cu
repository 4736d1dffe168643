/* The C API of the CUDA backend: device matrices, the plan (analysis +
 * dispatcher + tune table), SpMV, device helpers.  Every CUDA call is
 * checked; failures become a bsrmv_status with a message (bsrmv_fail), and
 * whatever was allocated is freed. */
#include "common.cuh"
#include "errors.cuh"
#include "schedule.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

using namespace bsrmv_cuda;

struct bsrmv_gpu_matrix {
    int device;
    int64_t mb, nb, nnzb;
    int bs;
    bsrmv_type type;
    bsrmv_order order;
    int64_t *row_ptr;
    int32_t *col_idx;
    void *val;
    bool owns;
    size_t dev_bytes;
    /* plan */
    int64_t len_min, len_max, empty;
    double len_mean, len_std;
    int sms, cc;
    size_t l2, smem_optin;
    double dram_gbps; /* peak DRAM bandwidth from the memory clock and bus width (0: unknown) */
    bsrmv_gpu_config cfg;
    int from_tune;
    /* work units of a balanced cfg (k_balanced.cu); sched_for says which */
    Schedule sched;
    bsrmv_gpu_config sched_for;
    void *sched_mem;
    size_t sched_bytes;
};


/* ------------------------------------------------------------------ */
/* launching one configuration                                         */
/* ------------------------------------------------------------------ */

static bool is_balanced(bsrmv_gpu_kernel k)
{
    return k == BSRMV_GPU_SEGMENTED || k == BSRMV_GPU_MERGE_PATH || k == BSRMV_GPU_FRAGMENT;
}

/* The units depend on the schedule kind and unit size only. */
static bool schedule_matches(const bsrmv_gpu_matrix *m, const bsrmv_gpu_config &c)
{
    return m->sched_mem && m->sched_for.kernel == c.kernel && m->sched_for.param == c.param;
}

static Launch decode(const bsrmv_gpu_config &c)
{
    Launch l = {};
    l.dry = 0;
    l.group = c.group;
    l.rows = c.rows;
    l.threads = c.threads;
    l.param = c.param;
    return l;
}

/* dry: only ask whether the instantiation exists. */
static bsrmv_gpu_config short_rows_config(const bsrmv_gpu_matrix *m);

template <typename T>
static int launch_cfg(const bsrmv_gpu_matrix *m, const bsrmv_gpu_config &c, const Args<T> &a,
                      cudaStream_t s, cudaError_t *err, bool dry)
{
    const int order = m->order == BSRMV_COL_MAJOR ? COL : ROW;
    Launch l = decode(c);
    l.dry = dry;
    l.sched = is_balanced(c.kernel) && schedule_matches(m, c) ? &m->sched : nullptr;
    l.merge = c.kernel == BSRMV_GPU_MERGE_PATH;
    l.len_max = m->len_max;
    l.sms = m->sms;
    l.cc = m->cc;
    l.smem_optin = m->smem_optin;
    const Args<T> &d = a;
    switch (c.kernel) {
    case BSRMV_GPU_BY_BLOCK:
    case BSRMV_GPU_K1_SMALL:
        return launch_byblock<T>(d, order, l, s, err);
    case BSRMV_GPU_BY_COLUMN:
        return launch_bycolumn<T>(d, order, l, s, err);
    case BSRMV_GPU_ROW_PER_THREAD:
        return launch_rowthread<T>(d, order, l, s, err);
    case BSRMV_GPU_WIDE:
        return launch_wide<T>(d, order, l, s, err);
    case BSRMV_GPU_VEC_STREAM:
        return launch_vecstream<T>(d, order, l, s, err);
    case BSRMV_GPU_STAGED:
        return launch_staged<T>(d, order, l, s, err);
    case BSRMV_GPU_K2_MEDIUM:
        return launch_k2<T>(d, order, l, s, err);
    case BSRMV_GPU_K3_LARGE:
        return launch_k3<T>(d, order, l, s, err);
    case BSRMV_GPU_TRANSPOSE:
        return launch_transpose<T>(d, order, l, s, err);
    case BSRMV_GPU_SEGMENTED: { /* short rows: a plain kernel; long rows: segments */
        Args<T> shorts = a;
        shorts.long_len = c.param;
        const int r = launch_cfg<T>(m, short_rows_config(m), shorts, s, err, dry);
        if (r != LAUNCH_OK)
            return r;
        return launch_balanced<T>(d, order, l, s, err);
    }
    case BSRMV_GPU_MERGE_PATH:
    case BSRMV_GPU_FRAGMENT:
        return launch_balanced<T>(d, order, l, s, err);
    default:
        return LAUNCH_NOT_BUILT;
    }
}

static bool cfg_built(const bsrmv_gpu_matrix *m, const bsrmv_gpu_config &c)
{
    cudaError_t err = cudaSuccess;
    int r = m->type == BSRMV_DOUBLE ? launch_cfg<double>(m, c, Args<double>{0, m->nb, m->bs}, 0, &err, true)
                                    : launch_cfg<float>(m, c, Args<float>{0, m->nb, m->bs}, 0, &err, true);
    return r == LAUNCH_OK;
}

/* ------------------------------------------------------------------ */
/* candidates, default rule, tune table                                */
/* ------------------------------------------------------------------ */

/* Work-unit scale of the balanced kernels: 8192 values of val (256 per
 * lane of a warp), at least 8 blocks.  Units of ~1000 values lost 2-3x to
 * their per-unit overhead on an H200 power-law matrix. */
static int balanced_unit(int bs)
{
    const int v = 8192 / (bs * bs);
    return v < 8 ? 8 : v;
}

/* Row lengths spread enough that a plain kernel (a group per block row)
 * would leave most of the GPU waiting for the longest rows: the longest row
 * is far above the mean and long in absolute terms. */
static bool irregular(const bsrmv_gpu_matrix *m)
{
    return m->len_max >= 256 && (double)m->len_max > 16.0 * m->len_mean;
}

static int build_candidates(const bsrmv_gpu_matrix *m, bsrmv_gpu_config *out, int max)
{
    int n = 0;
    auto add = [&](bsrmv_gpu_kernel k, int g, int r, int t, int p) {
        bsrmv_gpu_config c = {k, g, r, t, p};
        if (!cfg_built(m, c))
            return;
        if (n < max && out)
            out[n] = c;
        ++n;
    };
    const int bs = m->bs;
    /* Eberhardt-Hoemmen by-block: a warp per block row */
    add(BSRMV_GPU_BY_BLOCK, 32, 1, 128, 0);
    /* K1: (truncated) warps or sub-warps, several rows per thread array */
    for (int g : {8, 16, 32})
        for (int r : {1, 4})
            if (!(g == 32 && r == 1))
                add(BSRMV_GPU_K1_SMALL, g, r, 256, 0);
    /* by-column: paper variant, then sub-warp groups */
    add(BSRMV_GPU_BY_COLUMN, 32, 1, 128, 0);
    for (int g : {8, 16, 32})
        for (int r : {1, 4})
            add(BSRMV_GPU_BY_COLUMN, g, r, 256, 0);
    /* by-column flat-stream mode (k_flat.cu): a warp streams `rows` block
     * rows as one run, param = unrolled steps */
    for (int r : {2, 4, 8})
        add(BSRMV_GPU_BY_COLUMN, 32, r, 256, 4);
    add(BSRMV_GPU_BY_COLUMN, 32, 4, 128, 4);
    /* wide: a group per block row, 16-byte loads (bs 2, 4, 8..32) */
    for (int g : {8, 16, 32})
        for (int t : {128, 256})
            add(BSRMV_GPU_WIDE, g, 1, t, 0);
    /* vector stream: 16-byte pieces of a block row's run of val, 1..32 block
     * rows per warp (the launcher refuses more rows than a warp has units) */
    for (int r : {1, 2, 3, 4, 8, 16, 32})
        add(BSRMV_GPU_VEC_STREAM, 32, r, 128, 0);
    /* staged: lanes per scalar row x threads, 3 stage buffers; one
     * geometry with a fourth buffer for the copies and one with it for the
     * gather (rows 2), level or slower on the grids of session 18 (the
     * launcher refuses what does not fit shared memory) */
    add(BSRMV_GPU_STAGED, 2, 1, 128, 3);
    for (int g : {4, 8})
        for (int t : {128, 256})
            add(BSRMV_GPU_STAGED, g, 1, t, 3);
    add(BSRMV_GPU_STAGED, 4, 1, 128, 4);
    add(BSRMV_GPU_STAGED, 8, 2, 256, 4);
    /* row per thread */
    if (bs >= 8) {
        add(BSRMV_GPU_ROW_PER_THREAD, 0, 1, 128, 4);
        add(BSRMV_GPU_ROW_PER_THREAD, 0, 1, 256, 4);
        add(BSRMV_GPU_ROW_PER_THREAD, 0, 1, 256, 8);
    }
    /* K2 */
    for (int ntg : {2, 4, 8}) {
        if (bs * ntg > 1024)
            continue;
        int nta = 256 / (bs * ntg);
        if (nta < 1)
            nta = 1;
        for (int r : {1, 4})
            add(BSRMV_GPU_K2_MEDIUM, ntg, r, 0, nta);
    }
    /* K3: NTG column phases, param row slices per block row: row-major
     * slices of all, 16 or 8 rows, column-major ones of all, 1/2 or 1/4
     * of the rows (4 per thread: threads stay within 512) */
    if (bs >= 9) {
        const bool row = m->order == BSRMV_ROW_MAJOR;
        const int nss[3] = {1, row ? (bs + 15) / 16 : 2, row ? (bs + 7) / 8 : 4};
        for (int ntg : {8, 32})
            for (int i = 0; i < 3; ++i)
                if (i == 0 || nss[i] != nss[i - 1])
                    add(BSRMV_GPU_K3_LARGE, ntg, 1, 0, nss[i]);
    }
    /* CSR (bs 1): scalar (thread per row) and narrow vector kernels */
    if (bs == 1)
        for (int g : {1, 4})
            add(BSRMV_GPU_BY_COLUMN, g, 1, 256, 0);
    /* balanced: unit sizes around the default, narrower groups with
     * proportionally smaller units */
    const int unit = balanced_unit(bs);
    for (int f : {1, 2, 4})
        add(BSRMV_GPU_MERGE_PATH, 32, 1, 256, unit * f / 8);
    /* lane-sequential merge path: a few items per lane (larger units carry
     * more loads per chain of dependent ones, but take more shared memory
     * per warp; H100 power-law runs: 128-256 best at bs 1-4, 192 at bs 2) */
    const int seq_unit = 32 * (bs <= 4 ? 8 : 2);
    for (int f : {1, 2, 3, 4})
        add(BSRMV_GPU_MERGE_PATH, 1, 1, 256, seq_unit * f / 4);
    /* the same with 2-4 unit buffers per warp filled by the copy engine
     * (sm_90, bs 2 and 4), a warp per thread block (shared memory per
     * warp is large: whole warps fill an SM without a remainder) */
    for (int r : {2, 3, 4})
        for (int f : {1, 2, 4})
            add(BSRMV_GPU_MERGE_PATH, 1, r, 32, seq_unit * f / 4);
    for (int f : {1, 2, 4})
        add(BSRMV_GPU_FRAGMENT, 32, 1, 256, unit * f / 4);
    for (int g : {8, 32})
        for (int f : {1, 4})
            add(BSRMV_GPU_SEGMENTED, g, 1, 256, unit * f);
    return n;
}

struct TuneEntry {
    bsrmv_type type;
    bsrmv_order order;
    int bs;
    bsrmv_gpu_config cfg;
};
static pthread_mutex_t tune_lock = PTHREAD_MUTEX_INITIALIZER;
static TuneEntry *tune_tab = nullptr;
static int tune_n = 0;
static bool tune_env_done = false;

static bsrmv_status load_tune_locked(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return bsrmv_fail(BSRMV_ERR_IO, "cannot open tune file %s", path);
    TuneEntry *tab = nullptr;
    int n = 0, cap = 0, lineno = 0;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        ++lineno;
        char *h = strchr(line, '#');
        if (h)
            *h = 0;
        char ty[16], ord[16], kn[32];
        int bs, g, r, t, p;
        int got = sscanf(line, "%15s %15s %d %31s %d %d %d %d", ty, ord, &bs, kn, &g, &r, &t, &p);
        if (got <= 0)
            continue;
        TuneEntry e;
        int k = -1;
        for (int i = 1; strcmp(bsrmv_gpu_kernel_name((bsrmv_gpu_kernel)i), "unknown"); ++i)
            if (!strcmp(kn, bsrmv_gpu_kernel_name((bsrmv_gpu_kernel)i)))
                k = i;
        bool ok = got == 8 && k > 0 && bs >= 1 && (!strcmp(ty, "double") || !strcmp(ty, "float")) &&
                  (!strcmp(ord, "col") || !strcmp(ord, "row"));
        if (!ok) {
            fclose(f);
            free(tab);
            return bsrmv_fail(BSRMV_ERR_FORMAT, "%s:%d: expected 'type order bs kernel group rows threads param'",
                              path, lineno);
        }
        e.type = !strcmp(ty, "double") ? BSRMV_DOUBLE : BSRMV_FLOAT;
        e.order = !strcmp(ord, "col") ? BSRMV_COL_MAJOR : BSRMV_ROW_MAJOR;
        e.bs = bs;
        e.cfg = {(bsrmv_gpu_kernel)k, g, r, t, p};
        if (n == cap) {
            cap = cap ? 2 * cap : 32;
            TuneEntry *nt = (TuneEntry *)realloc(tab, cap * sizeof *tab);
            if (!nt) {
                fclose(f);
                free(tab);
                return bsrmv_fail(BSRMV_ERR_NOMEM, "tune table");
            }
            tab = nt;
        }
        tab[n++] = e; /* a later line for the same key wins (see lookup) */
    }
    fclose(f);
    free(tune_tab);
    tune_tab = tab;
    tune_n = n;
    return BSRMV_SUCCESS;
}

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

static bool tune_lookup(const bsrmv_gpu_matrix *m, bsrmv_gpu_config *cfg)
{
    pthread_mutex_lock(&tune_lock);
    if (!tune_env_done) {
        tune_env_done = true;
        const char *p = getenv("BSRMV_TUNE_FILE");
        if (p && *p)
            load_tune_locked(p); /* a bad file is ignored here: the default rule applies */
    }
    bool found = false;
    for (int i = tune_n - 1; i >= 0 && !found; --i)
        if (tune_tab[i].type == m->type && tune_tab[i].order == m->order && tune_tab[i].bs == m->bs &&
            is_balanced(tune_tab[i].cfg.kernel) == irregular(m)) {
            *cfg = tune_tab[i].cfg;
            found = true;
        }
    pthread_mutex_unlock(&tune_lock);
    return found;
}

/* The default rule, derived from `bsrmv tune` runs on an H100 (27-point
 * grids of 150-300 MB, docs/GPU.md has the tables):
 *  - bs <= 7: warp-level kernels, one block row per (sub-)warp group, many
 *    groups in flight (rows = 1 won everywhere on the H100: consecutive
 *    groups stream consecutive parts of val; on the H200, K1 with 4 rows
 *    per warp at bs 3, below);
 *  - bs 8..32: KSPARSE K2 (bs x NTG thread arrays, register blocking,
 *    double buffering), NTG 4 up to bs 16, 8 above where it is built;
 *  - larger (and some runtime sizes from 13 on): K3 (row slices, a
 *    column stream; below).  The device enters through the tune
 *    table (measured per device) and the DRAM bandwidth per SM; the rule
 *    was measured on 132-SM, 50 MB-L2 H100s and H200s.
 * Row-major double blocks (session 8): by-column with its batched gather
 * at bs 6 and 7, by-block at bs 5 (K1 at bs 3, below).  float follows
 * the column-major rule there, but for bs 6-7 (session 11, below).
 * The wide kernel (session 9, measured on an H200, 27- and 7-point
 * grids, docs/GPU.md): every row-major size it has (0.98x at double bs 8,
 * 1.18-4.5x elsewhere), column-major double bs 2, 16 (1.06-1.16x; bs 4
 * until session 10) and float bs 2, 4, 8, 16, 32 (1.04-1.3x; float bs 8
 * went to the vector stream in session 22); K2 stays at
 * double bs 8, 12, 24, 32 and float bs 12, 24.
 * By-block and K1 with gather_sum's batch (session 10, H200): K1 with 4
 * block rows per warp at bs 3 (1.13x by-block before, 1.03x after, both
 * orders; float 1.05x), by-block at bs 5 in both orders and types
 * (double column-major: 1.09x by-column) and at double column-major bs 4
 * (1.02-1.04x wide in two runs; by-block g32 3861-3882 GB/s).
 * float bs 6 and 7 (session 11, H200, every kernel on 27-point grids of
 * each type and order): K2 with 2 thread groups (column-major bs 6: 1.43x
 * the flat stream it replaced; row-major bs 6: 1.22x by-column), except
 * row-major bs 7, where by-column now batches its loads (1.15x K2).
 * Both devices (session 11, every type and order): the wide kernel's
 * width at double bs 2 and float bs 4 follows the DRAM bandwidth per SM
 * (below); at double row-major bs 4 by-block (H100: 1.05x wide, H200:
 * 1.01x).
 * Sizes without a compiled kernel (session 12, H200, bs 9-100, every
 * type and order): K2's runtime path, 8 thread groups at bs 17-31 and
 * 64-128, 4 elsewhere; but row-per-thread at float column-major bs
 * 11-15 (1.05-1.6x K2).  Session 16 (H100, 150 MB grids, bs 9-256):
 * K3's column stream wherever it led K2 and row-per-thread by more than
 * noise -- row-major double (bs 9-11: 1.04-1.13x K2, 13-256: 1.1-2.4x),
 * float >= 64 (1.0-2.5x) and 33-40 (1.06-1.08x K2 in slices of 8 rows;
 * bs 40 0.95x in slices of 14), but K2 at 41-63, where its chunks of up
 * to 16 rows waste little (bs 44: 1.19x K3, 48: 1.16x, 56: 1.08x),
 * column-major >= 17 (float 1.13-1.5x, double 1.0-1.13x at 17-20 and
 * 1.05-1.35x above; at 13-15 K2 led by 2-10%).  Above
 * bs 128 K3 alone beats cuSPARSE's CSR (1.22-1.9x; K2 ran at 0.4-0.7x
 * it).  Slices, column-major: one up to bs 64 for float (bs 33: 1.45x
 * two), for double up to 40 (bs 33: 1.10x two; bs 48-64: two 1.02-1.09x
 * one).
 * Column-major bs 9-10 and double bs 11 (session 15, H200):
 * row-per-thread (x in shared memory, 128 threads) wherever its thread
 * per row finds 1024 threads per SM.  On 27-point grids of 300-340 MB
 * it ran at 1.07-1.18x by-column (double bs 9-10), 1.12x K2 (double bs
 * 11) and 1.17-1.26x K2 (float); with fewer rows it fell behind (double
 * bs 9, 8,000 block rows: by-column 1.27x; bs 11, 5,800: K2 1.35x), and
 * at double bs 13 and 15 K2 stayed ahead even with the threads
 * (1.04x).
 * The vector stream (session 17, H100, 27-point grids of ~300 MB, three
 * runs): float bs 6 with 3 block rows per warp, 1.15-1.19x K2 column-major
 * and 1.30-1.37x K2 row-major; double bs 8 with one, 1.03-1.05x K2
 * (column-major) and wide (row-major); float column-major bs 8 with one,
 * 1.025-1.035x wide (sessions 17-22).  Elsewhere it trailed:
 * at odd bs its pieces straddle blocks and a 27-block row is one or two
 * masked batches (bs 3: 0.7x K1), at bs 2 and 4 0.95-1.0x wide.
 * The staged kernel (session 18, H100, the same grids, runs 6-7): float
 * bs 3 with 2 lanes per row 2434-2456 GB/s against K1 2062-2127
 * (1.15-1.19x), float bs 7 2558-2599 against K2 / by-column 1954-2020
 * (1.27-1.32x), float bs 12 with 4 lanes 2578-2689 against K2 / wide
 * 2479-2538 (1.04-1.07x), double bs 2 with 8 lanes and 256 threads
 * 2546-2587 against wide 2416-2500 (1.03-1.05x).  It trailed at float bs
 * 5 (0.94-0.96x by-block), 6 (level with the vector stream; ahead
 * with the L2 priorities of session 21, 1.02-1.05x in session 22), float
 * row-major bs 2 (0.94x wide) and double bs 6 (level with by-column).
 * Its buffers are sized by the longest row; the rule keeps it to rows
 * within 2x of the mean (measured: the grids, 27 against 25.6-26.2), where
 * stages are mostly full. */
static bsrmv_gpu_config plain_rule(const bsrmv_gpu_matrix *m, bool staged_ok = true)
{
    const int bs = m->bs;
    const bool row = m->order == BSRMV_ROW_MAJOR;
    const bool dbl = m->type == BSRMV_DOUBLE;
    const bsrmv_gpu_config bycol32 = {BSRMV_GPU_BY_COLUMN, 32, 1, 128, 0};
    const bsrmv_gpu_config byblock = {BSRMV_GPU_BY_BLOCK, 32, 1, 128, 0};
    /* Peak DRAM bandwidth per SM: an H200 has 37 GB/s, an H100 25.  At
     * float bs 4 the wide kernel wants 2 block rows per warp on the former
     * (H200, both orders: a warp per row ran at 93.0-98.3% of it in the 4
     * runs of sessions 11-14 that picked it) and one on the latter (H100:
     * 1.04-1.05x 2 rows).  At bs 2 it takes 4 rows everywhere: with its
     * L2 priorities (session 21) double bs 2 ran at 1.02-1.04x 2 rows on
     * the H100, which before had wanted 2 (1.13x 4 rows, session 11) */
    const bool slow_mem = m->dram_gbps > 0 && m->sms > 0 && m->dram_gbps / m->sms < 30;
    /* a warp per block row, but for bs 2, and float bs 4 where memory per SM is fast */
    const int wide_g = bs == 2 ? 8 : bs == 4 && !dbl && !slow_mem ? 16 : 32;
    const bsrmv_gpu_config wide = {BSRMV_GPU_WIDE, wide_g, 1, 128, 0};
    /* where wide is the pick among the sizes it has: every row-major one
     * but double bs 4 (by-block), and these column-major ones */
    const bool use_wide = row ? !(dbl && (bs == 4 || bs == 8)) : bs == 2 || bs == 16 || (!dbl && (bs == 4 || bs == 32));
    bsrmv_gpu_config c = bycol32;
    auto k2 = [&](int ntg) {
        int nta = 256 / (bs * ntg);
        return bsrmv_gpu_config{BSRMV_GPU_K2_MEDIUM, ntg, 1, 0, nta < 1 ? 1 : nta};
    };
    /* K3: row-major, 8 threads along each row (32 from bs 33 for double,
     * from 64 for float), in one slice up to bs 32, else in slices of 8
     * rows; column-major,
     * 32 column phases in slices of up to 64 rows (4 per thread), double
     * up to 40 below bs 128 */
    const bool k3_narrow = row && (bs <= 32 || (!dbl && bs < 64));
    const int k3_rows = row ? (bs <= 32 ? bs : 8) : dbl && bs < 128 ? 40 : 64;
    const bsrmv_gpu_config k3 = {BSRMV_GPU_K3_LARGE, k3_narrow ? 8 : 32, 1, 0, (bs + k3_rows - 1) / k3_rows};
    /* staged (sm_90): float bs 3, 6, 7 and 12, both orders, where its
     * buffers, sized by the longest row, are mostly full.  Double bs 2 went
     * back to wide when its loads got L2 priorities (session 21: wide g8
     * 1.05-1.10x staged); float bs 6 came to it from the vector stream
     * (1.02-1.04x with the priorities, session 21 runs 7-8) */
    const bsrmv_gpu_config staged = {BSRMV_GPU_STAGED, bs == 6 || bs == 12 ? 4 : 2, 1, 128, 3};
    const bool use_staged = staged_ok && !dbl && (bs == 3 || bs == 6 || bs == 7 || bs == 12) &&
                            (double)m->len_max <= 2.0 * m->len_mean && cfg_built(m, staged);
    if (bs == 1) /* CSR: the vector kernel, 4 lanes per row */
        c = {BSRMV_GPU_BY_COLUMN, 4, 1, 256, 0};
    else if (use_staged)
        c = staged;
    else if (use_wide && cfg_built(m, wide)) /* BSRMV_WIDE_LIST's sizes */
        c = wide;
    else if (bs == 3 && !dbl)
        c = {BSRMV_GPU_K1_SMALL, 32, 4, 256, 0};
    else if (bs <= 5) /* double bs 3 (by-block 1.04-1.06x K1 in session 21), bs 4: double */
        c = byblock;
    else if (bs == 6 && !dbl) /* without staged: 3 block rows per warp, the most bs 6 float has */
        c = {BSRMV_GPU_VEC_STREAM, 32, 3, 128, 0};
    else if (bs <= 7) /* double bs 6, 7 and row-major float 7: by_column batched
                       * (sessions 8, 11); column-major float 7: K2 (session 11) */
        c = dbl || (row && bs == 7) ? bycol32 : k2(2);
    else if (bs == 8 && (dbl || !row)) /* float column-major too: 1.025-1.035x wide (H100, sessions 17-21) */
        c = {BSRMV_GPU_VEC_STREAM, 32, 1, 128, 0};
    else if (bs == 8) /* K2 (2 groups) ahead since the load hints (common.cuh) */
        c = k2(2);
    else if (bs == 12 || bs == 16)
        c = k2(4);
    else if (bs == 24 || bs == 32)
        c = k2(dbl ? 8 : 4);
    else if (!row && (bs <= 10 || (dbl && bs == 11))) /* row-per-thread, given the threads */
        c = (int64_t)m->mb * bs >= 1024 * (int64_t)m->sms
                ? bsrmv_gpu_config{BSRMV_GPU_ROW_PER_THREAD, 0, 1, 128, 4}
            : dbl && bs <= 10 ? bycol32
                              : k2(4);
    else if (row ? dbl || bs >= 64 || (bs > 32 && bs <= 40) : bs >= 17)
        /* the runtime sizes from here on */
        c = k3;
    else if (!dbl && !row)
        c = {BSRMV_GPU_ROW_PER_THREAD, 0, 1, 256, 8};
    else if (bs < 16 || bs > 32)
        c = k2(4);
    else
        c = k2(8);
    /* Short rows (7-point grids, ~7 blocks per row; `bsrmv tune --stencil 7`
     * on an H100, double col-major, docs/GPU.md): one row is too little
     * work for a warp, so narrower groups over 4 consecutive rows win for
     * bs <= 4, and K2 with 2 thread groups above.  Measured for double
     * col-major only; other cases keep the rule above. */
    if (m->len_mean < 12 && dbl && !row && bs >= 2 && bs <= 7)
        c = bs == 2 ? bsrmv_gpu_config{BSRMV_GPU_K1_SMALL, 8, 4, 256, 0}
            : bs <= 4 ? bsrmv_gpu_config{BSRMV_GPU_BY_COLUMN, 16, 4, 256, 0}
                      : k2(2);
    if (!cfg_built(m, c)) /* a size outside the lists above */
        c = bs <= 32 ? bsrmv_gpu_config{BSRMV_GPU_BY_COLUMN, 32, 1, 128, 0} : k3;
    return c;
}

/* The plain kernel of the segmented scheme's short rows: the rule's choice
 * where it can skip the long rows -- without staged, whose buffers are
 * sized by the longest row, the rule's next choice -- but not the
 * flat-stream mode, which streams runs of rows, nor row-per-thread. */
static bsrmv_gpu_config short_rows_config(const bsrmv_gpu_matrix *m)
{
    bsrmv_gpu_config c = plain_rule(m, false);
    if ((c.kernel == BSRMV_GPU_BY_COLUMN && c.param > 0) || c.kernel == BSRMV_GPU_ROW_PER_THREAD)
        c = {BSRMV_GPU_BY_COLUMN, 32, 1, 128, 0};
    return c;
}

static bsrmv_gpu_config default_rule(const bsrmv_gpu_matrix *m)
{
    /* irregular rows, from power-law runs on an H100 (docs/GPU.md): the
     * lane-sequential merge path at bs 2-4 (units of 4-6 items per lane), the
     * merge-path flat stream at bs 1 and 5-7, fragments above: the stream at
     * bs 8-15 with half-size units (H200, bs 8: 3119 GB/s against 2892 with
     * the full size, which leaves the last wave of warps half empty), the
     * row walk from 16 on.
     * Session 19 (H100, four runs): at bs 2 units of 128 items ran at
     * 1.05-1.06x 256 in both orders (the arrow: 0.95x); at bs 4 the staged
     * variant (each unit's col_idx and row_ptr copied ahead, 3 buffers) at
     * 1.05-1.07x the unstaged one in double and 1.08x in float
     * column-major blocks, but 0.92x in float row-major ones (16-byte x
     * loads there), and 0.93-0.96x at bs 2.
     * Session 20 (H100, four runs): at bs 2 units of 192 items, 1.05x 128
     * on power-law in both orders and 1.06-1.10x on the arrow (256:
     * 0.94-0.95x 128). */
    const int bs = m->bs, unit = balanced_unit(bs);
    if (!irregular(m) || bs > 32)
        return plain_rule(m);
    if (bs >= 8)
        return {BSRMV_GPU_FRAGMENT, 32, 1, 256, bs < 16 ? unit / 2 : unit};
    if (bs == 1 || bs > 4)
        return {BSRMV_GPU_MERGE_PATH, 32, 1, 256, unit / (bs == 1 ? 8 : 4)};
    const bsrmv_gpu_config staged = {BSRMV_GPU_MERGE_PATH, 1, 3, 32, 128};
    if (bs == 4 && (m->type == BSRMV_DOUBLE || m->order == BSRMV_COL_MAJOR) && cfg_built(m, staged))
        return staged;
    return {BSRMV_GPU_MERGE_PATH, 1, 1, 256, bs == 2 ? 192 : 128};
}

static void free_schedule(bsrmv_gpu_matrix *m)
{
    cudaFree(m->sched_mem);
    m->sched_mem = nullptr;
    m->sched_bytes = 0;
    m->sched = Schedule{};
}

/* The work units of balanced config c (nothing for other kernels). */
static bsrmv_status build_schedule(bsrmv_gpu_matrix *m, const bsrmv_gpu_config &c)
{
    if (schedule_matches(m, c))
        return BSRMV_SUCCESS;
    DeviceScope ds;
    cudaError_t e = ds.enter(m->device);
    if (e != cudaSuccess)
        return cuda_fail(e, "cudaSetDevice");
    if (!is_balanced(c.kernel)) {
        free_schedule(m);
        return BSRMV_SUCCESS;
    }
    size_t brp = 0;
    bsrmv_bytes(m->mb + 1, sizeof(int64_t), &brp);
    int64_t *h = (int64_t *)malloc(brp);
    if (!h)
        return bsrmv_fail(BSRMV_ERR_NOMEM, "out of host memory (%zu bytes for row_ptr)", brp);
    if ((e = cudaMemcpy(h, m->row_ptr, brp, cudaMemcpyDeviceToHost)) != cudaSuccess) {
        free(h);
        return cuda_fail(e, "cudaMemcpy(row_ptr)");
    }
    const int kind = c.kernel == BSRMV_GPU_SEGMENTED ? SCHED_LONGROWS
                     : c.kernel == BSRMV_GPU_MERGE_PATH ? SCHED_MERGE : SCHED_FRAGMENT;
    HostSchedule hs;
    const bool ok = schedule_build(kind, c.param, h, m->mb, &hs);
    free(h);
    if (!ok) {
        schedule_free(&hs);
        return bsrmv_fail(BSRMV_ERR_NOMEM, "out of host memory for the work units");
    }
    /* one allocation: unit_row, unit_blk, slot, fix, pieces (256-byte aligned parts) */
    auto up = [](size_t b) { return (b + 255) & ~(size_t)255; };
    const size_t n1 = sizeof(int64_t) * (size_t)(hs.nunits + 1);
    const size_t b_slot = sizeof(int64_t) * (size_t)hs.nunits, b_fix = sizeof(int64_t) * 3 * (size_t)hs.nfix;
    const size_t b_pieces = (size_t)hs.nslots * (size_t)m->bs * bsrmv_type_size(m->type);
    const size_t total = 4 * up(n1) + up(b_slot) + up(b_fix) + up(b_pieces);
    free_schedule(m);
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

static bsrmv_status plan(bsrmv_gpu_matrix *m)
{
    bsrmv_gpu_config c;
    int from_tune = tune_lookup(m, &c) && cfg_built(m, c);
    if (!from_tune)
        c = default_rule(m);
    bsrmv_status st = build_schedule(m, c);
    if (st)
        return st;
    m->cfg = c;
    m->from_tune = from_tune;
    return BSRMV_SUCCESS;
}

/* Row statistics and device properties; row_ptr on the host. */
static bsrmv_status analyse(bsrmv_gpu_matrix *m, const int64_t *h_row_ptr)
{
    int64_t mn = INT64_MAX, mx = 0, empty = 0;
    double sum = 0, sq = 0;
    for (int64_t i = 0; i < m->mb; ++i) {
        int64_t l = h_row_ptr[i + 1] - h_row_ptr[i];
        mn = l < mn ? l : mn;
        mx = l > mx ? l : mx;
        empty += l == 0;
        sum += (double)l;
        sq += (double)l * (double)l;
    }
    m->len_min = m->mb ? mn : 0;
    m->len_max = mx;
    m->empty = empty;
    m->len_mean = m->mb ? sum / (double)m->mb : 0;
    m->len_std = m->mb ? sqrt(fmax(0.0, sq / (double)m->mb - m->len_mean * m->len_mean)) : 0;
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
    m->dram_gbps = 2.0 * mem_khz * 1e3 * (bus_bits / 8.0) / 1e9;
    return plan(m);
}

static bsrmv_status check_shape(int64_t mb, int64_t nb, int bs, int64_t nnzb, bsrmv_type type,
                                bsrmv_order order)
{
    if (mb < 0 || nb < 0 || bs < 1 || nnzb < 0)
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "bad sizes mb=%lld nb=%lld bs=%d nnzb=%lld", (long long)mb,
                          (long long)nb, bs, (long long)nnzb);
    if (type != BSRMV_FLOAT && type != BSRMV_DOUBLE)
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "unknown type %d", (int)type);
    if (order != BSRMV_COL_MAJOR && order != BSRMV_ROW_MAJOR)
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "unknown order %d", (int)order);
    int64_t t;
    if (!bsrmv_mul64(mb, bs, &t) || !bsrmv_mul64(nb, bs, &t) || !bsrmv_mul64(bs, bs, &t) ||
        !bsrmv_mul64(nnzb, t, &t) || t > INT64_MAX / 8)
        return bsrmv_fail(BSRMV_ERR_OVERFLOW, "matrix size overflows 64-bit offsets");
    return BSRMV_SUCCESS;
}

/* ------------------------------------------------------------------ */
/* device matrices                                                     */
/* ------------------------------------------------------------------ */

extern "C" bsrmv_status bsrmv_gpu_device_count(int *count)
{
    if (!count)
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "count is NULL");
    *count = 0;
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess) {
        cudaGetLastError();
        return bsrmv_fail(BSRMV_ERR_NO_DEVICE, "no CUDA device: %s", cudaGetErrorString(e));
    }
    if (n == 0)
        return bsrmv_fail(BSRMV_ERR_NO_DEVICE, "no CUDA device");
    *count = n;
    return BSRMV_SUCCESS;
}

extern "C" bsrmv_status bsrmv_gpu_device_name(int device, char *name, size_t len)
{
    if (!name || len == 0)
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "name is NULL");
    cudaDeviceProp p;
    CU_RET(cudaGetDeviceProperties(&p, device), "cudaGetDeviceProperties");
    snprintf(name, len, "%s", p.name);
    return BSRMV_SUCCESS;
}

static void free_matrix(bsrmv_gpu_matrix *m)
{
    if (!m)
        return;
    if (m->owns) {
        DeviceScope ds;
        ds.enter(m->device);
        cudaFree(m->row_ptr);
        cudaFree(m->col_idx);
        cudaFree(m->val);
    }
    if (m->sched_mem) {
        DeviceScope ds;
        ds.enter(m->device);
        free_schedule(m);
    }
    free(m);
}

extern "C" void bsrmv_gpu_matrix_destroy(bsrmv_gpu_matrix *dA)
{
    free_matrix(dA);
}

/* What upload and wrap share: check the shape and the device, make the
 * device current for the caller's scope, and allocate the handle. */
static bsrmv_status new_handle(bsrmv_gpu_matrix **out, int64_t mb, int64_t nb, int bs, int64_t nnzb,
                               bsrmv_type type, bsrmv_order order, int device, DeviceScope &ds)
{
    bsrmv_status st = check_shape(mb, nb, bs, nnzb, type, order);
    if (st)
        return st;
    int ndev = 0;
    if ((st = bsrmv_gpu_device_count(&ndev)))
        return st;
    if (device < 0 || device >= ndev)
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "device %d out of range (%d devices)", device, ndev);
    cudaError_t e = ds.enter(device);
    if (e != cudaSuccess)
        return cuda_fail(e, "cudaSetDevice");
    bsrmv_gpu_matrix *m = (bsrmv_gpu_matrix *)calloc(1, sizeof *m);
    if (!m)
        return bsrmv_fail(BSRMV_ERR_NOMEM, "out of host memory");
    m->device = device;
    m->mb = mb;
    m->nb = nb;
    m->nnzb = nnzb;
    m->bs = bs;
    m->type = type;
    m->order = order;
    *out = m;
    return BSRMV_SUCCESS;
}

extern "C" bsrmv_status bsrmv_gpu_matrix_upload(bsrmv_gpu_matrix **dA, const bsrmv_matrix *A, int device,
                                                void *stream)
{
    if (!dA)
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "dA is NULL");
    *dA = nullptr;
    if (!A)
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "A is NULL");
    DeviceScope ds;
    bsrmv_gpu_matrix *m;
    bsrmv_status st = new_handle(&m, A->mb, A->nb, A->bs, A->nnzb, A->type, A->order, device, ds);
    if (st)
        return st;
    m->owns = true;
    cudaError_t e = cudaSuccess;
    size_t brp = 0, bci = 0, bval = 0;
    bsrmv_bytes(A->mb + 1, sizeof(int64_t), &brp);
    bsrmv_bytes(A->nnzb, sizeof(int32_t), &bci);
    bsrmv_bytes(A->nnzb * A->bs * A->bs, bsrmv_type_size(A->type), &bval);
    cudaStream_t s = (cudaStream_t)stream;
    const char *what = "cudaMalloc";
    if ((e = cudaMalloc((void **)&m->row_ptr, brp)) == cudaSuccess &&
        (e = cudaMalloc((void **)&m->col_idx, bci ? bci : 16)) == cudaSuccess &&
        (e = cudaMalloc(&m->val, bval ? bval : 16)) == cudaSuccess) {
        what = "cudaMemcpyAsync";
        if ((e = cudaMemcpyAsync(m->row_ptr, A->row_ptr, brp, cudaMemcpyHostToDevice, s)) == cudaSuccess &&
            (!bci || (e = cudaMemcpyAsync(m->col_idx, A->col_idx, bci, cudaMemcpyHostToDevice, s)) == cudaSuccess) &&
            (!bval || (e = cudaMemcpyAsync(m->val, A->val, bval, cudaMemcpyHostToDevice, s)) == cudaSuccess)) {
            what = "cudaStreamSynchronize";
            e = cudaStreamSynchronize(s);
        }
    }
    if (e != cudaSuccess) {
        st = cuda_fail(e, what);
        char msg[512];
        snprintf(msg, sizeof msg, "%s", bsrmv_last_error());
        free_matrix(m);
        cudaGetLastError();
        return bsrmv_fail(st, "uploading a %lld-block matrix (%.3g MB): %s", (long long)A->nnzb,
                          (double)(brp + bci + bval) / 1e6, msg);
    }
    m->dev_bytes = brp + bci + bval;
    if ((st = analyse(m, A->row_ptr))) {
        free_matrix(m);
        return st;
    }
    *dA = m;
    return BSRMV_SUCCESS;
}

extern "C" bsrmv_status bsrmv_gpu_matrix_wrap(bsrmv_gpu_matrix **dA, int64_t mb, int64_t nb, int bs,
                                              int64_t nnzb, const int64_t *d_row_ptr,
                                              const int32_t *d_col_idx, const void *d_val,
                                              bsrmv_type type, bsrmv_order order, int device)
{
    if (!dA)
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "dA is NULL");
    *dA = nullptr;
    DeviceScope ds;
    bsrmv_gpu_matrix *m;
    bsrmv_status st = new_handle(&m, mb, nb, bs, nnzb, type, order, device, ds);
    if (st)
        return st;
    if ((st = check_device_ptr(d_row_ptr, device, "row_ptr")) ||
        (nnzb > 0 && ((st = check_device_ptr(d_col_idx, device, "col_idx")) ||
                      (st = check_device_ptr(d_val, device, "val"))))) {
        free_matrix(m);
        return st;
    }
    size_t brp = 0;
    int64_t *h = NULL;
    cudaError_t e;
    if (!bsrmv_bytes(mb + 1, sizeof(int64_t), &brp))
        st = bsrmv_fail(BSRMV_ERR_OVERFLOW, "row_ptr size");
    else if (!(h = (int64_t *)malloc(brp)))
        st = bsrmv_fail(BSRMV_ERR_NOMEM, "out of host memory (%zu bytes for row_ptr)", brp);
    else if ((e = cudaMemcpy(h, d_row_ptr, brp, cudaMemcpyDeviceToHost)) != cudaSuccess)
        st = cuda_fail(e, "cudaMemcpy(row_ptr)");
    else if (h[0] != 0 || h[mb] != nnzb)
        st = bsrmv_fail(BSRMV_ERR_STRUCTURE, "row_ptr[0] must be 0 and row_ptr[mb] == nnzb");
    for (int64_t i = 0; !st && i < mb; ++i)
        if (h[i + 1] < h[i])
            st = bsrmv_fail(BSRMV_ERR_STRUCTURE, "row_ptr decreases at block row %lld", (long long)i);
    if (st) {
        free(h);
        free_matrix(m);
        return st;
    }
    m->row_ptr = (int64_t *)d_row_ptr;
    m->col_idx = (int32_t *)d_col_idx;
    m->val = (void *)d_val;
    m->owns = false;
    st = analyse(m, h);
    free(h);
    if (st) {
        free_matrix(m);
        return st;
    }
    *dA = m;
    return BSRMV_SUCCESS;
}

extern "C" bsrmv_status bsrmv_gpu_matrix_set_config(bsrmv_gpu_matrix *dA, const bsrmv_gpu_config *cfg)
{
    if (!dA)
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "dA is NULL");
    if (!cfg || cfg->kernel == BSRMV_GPU_AUTO)
        return plan(dA);
    if (cfg->kernel == BSRMV_GPU_TRANSPOSE || !cfg_built(dA, *cfg)) {
        char b[96];
        bsrmv_gpu_config_string(cfg, b, sizeof b);
        return bsrmv_fail(BSRMV_ERR_UNSUPPORTED, "kernel %s is not built for bs=%d", b, dA->bs);
    }
    bsrmv_status st = build_schedule(dA, *cfg);
    if (st)
        return st;
    dA->cfg = *cfg;
    dA->from_tune = 0;
    return BSRMV_SUCCESS;
}

extern "C" bsrmv_status bsrmv_gpu_candidates(const bsrmv_gpu_matrix *dA, bsrmv_gpu_config *cfgs, int max,
                                             int *n)
{
    if (!dA || !n || (max > 0 && !cfgs))
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "NULL argument");
    *n = build_candidates(dA, cfgs, max);
    return BSRMV_SUCCESS;
}

extern "C" bsrmv_status bsrmv_gpu_matrix_get_plan(const bsrmv_gpu_matrix *m, bsrmv_gpu_plan_info *p)
{
    if (!m || !p)
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "NULL argument");
    p->device = m->device;
    p->mb = m->mb;
    p->nb = m->nb;
    p->nnzb = m->nnzb;
    p->bs = m->bs;
    p->type = m->type;
    p->order = m->order;
    p->row_len_min = m->len_min;
    p->row_len_max = m->len_max;
    p->empty_rows = m->empty;
    p->row_len_mean = m->len_mean;
    p->row_len_std = m->len_std;
    p->config = m->cfg;
    p->from_tune_table = m->from_tune;
    p->owns_arrays = m->owns;
    p->device_bytes = (m->owns ? m->dev_bytes : 0) + m->sched_bytes;
    return BSRMV_SUCCESS;
}

/* ------------------------------------------------------------------ */
/* SpMV                                                                */
/* ------------------------------------------------------------------ */

template <typename T>
static bsrmv_status spmv_t(bsrmv_op op, double alpha, const bsrmv_gpu_matrix *m, const void *x,
                           double beta, void *y, int64_t ny, cudaStream_t s)
{
    cudaError_t e;
    const T ta = (T)alpha, tb = (T)beta;
    if (ny == 0)
        return BSRMV_SUCCESS;
    if (ta == T(0) || (op == BSRMV_OP_T && m->nnzb == 0)) {
        if ((e = launch_scale<T>((T *)y, ny, tb, s)) != cudaSuccess)
            return cuda_fail(e, "launching the y = beta*y kernel");
        return BSRMV_SUCCESS;
    }
    Args<T> a;
    a.mb = m->mb;
    a.nb = m->nb;
    a.bs = m->bs;
    a.row_ptr = m->row_ptr;
    a.col_idx = m->col_idx;
    a.val = (const T *)m->val;
    a.x = (const T *)x;
    a.y = (T *)y;
    a.alpha = ta;
    a.beta = tb;
    a.long_len = 0;
    bsrmv_gpu_config c = m->cfg;
    if (op == BSRMV_OP_T) {
        if ((e = launch_scale<T>((T *)y, ny, tb, s)) != cudaSuccess)
            return cuda_fail(e, "launching the y = beta*y kernel");
        c = {BSRMV_GPU_TRANSPOSE, 0, 0, 0, 0};
    }
    e = cudaSuccess;
    int r = launch_cfg<T>(m, c, a, s, &e, false);
    if (r == LAUNCH_NOT_BUILT) {
        char b[96];
        bsrmv_gpu_config_string(&c, b, sizeof b);
        return bsrmv_fail(BSRMV_ERR_UNSUPPORTED, "kernel %s is not built for bs=%d", b, m->bs);
    }
    if (r != LAUNCH_OK || e != cudaSuccess) {
        char b[96], what[160];
        bsrmv_gpu_config_string(&c, b, sizeof b);
        snprintf(what, sizeof what, "launching %s (bs=%d)", b, m->bs);
        return cuda_fail(e, what);
    }
    return BSRMV_SUCCESS;
}

extern "C" bsrmv_status bsrmv_gpu_spmv(bsrmv_op op, double alpha, const bsrmv_gpu_matrix *dA, const void *d_x,
                                       int64_t nx, double beta, void *d_y, int64_t ny, void *stream)
{
    if (!dA)
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "dA is NULL");
    if (op != BSRMV_OP_N && op != BSRMV_OP_T)
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "unknown op %d", (int)op);
    const int64_t rows = dA->mb * dA->bs, cols = dA->nb * dA->bs;
    const int64_t want_x = op == BSRMV_OP_N ? cols : rows, want_y = op == BSRMV_OP_N ? rows : cols;
    if (nx != want_x || ny != want_y)
        return bsrmv_fail(BSRMV_ERR_DIMENSION,
                          "x has %lld entries and y %lld; op(A) needs %lld and %lld", (long long)nx,
                          (long long)ny, (long long)want_x, (long long)want_y);
    if (isnan(alpha) || isnan(beta)) {
        /* allowed: NaN propagates as on the CPU */
    }
    DeviceScope ds;
    cudaError_t e = ds.enter(dA->device);
    if (e != cudaSuccess)
        return cuda_fail(e, "cudaSetDevice");
    bsrmv_status st;
    if (ny > 0 && (st = check_device_ptr(d_y, dA->device, "y")))
        return st;
    if (alpha != 0.0 && nx > 0 && (st = check_device_ptr(d_x, dA->device, "x")))
        return st;
    cudaGetLastError(); /* a non-sticky error left by someone else is not ours */
    cudaStream_t s = (cudaStream_t)stream;
    return dA->type == BSRMV_DOUBLE ? spmv_t<double>(op, alpha, dA, d_x, beta, d_y, ny, s)
                                    : spmv_t<float>(op, alpha, dA, d_x, beta, d_y, ny, s);
}

/* ------------------------------------------------------------------ */
/* helpers                                                             */
/* ------------------------------------------------------------------ */

extern "C" bsrmv_status bsrmv_gpu_malloc(void **p, size_t bytes)
{
    if (!p)
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "p is NULL");
    *p = nullptr;
    cudaError_t e = cudaMalloc(p, bytes ? bytes : 16);
    if (e != cudaSuccess) {
        *p = nullptr;
        cudaGetLastError();
        char what[96];
        snprintf(what, sizeof what, "cudaMalloc(%zu bytes)", bytes);
        return cuda_fail(e, what);
    }
    return BSRMV_SUCCESS;
}

extern "C" void bsrmv_gpu_free(void *p)
{
    if (p)
        cudaFree(p);
}

extern "C" bsrmv_status bsrmv_gpu_to_device(void *d_dst, const void *src, size_t bytes)
{
    if (bytes == 0)
        return BSRMV_SUCCESS;
    CU_RET(cudaMemcpy(d_dst, src, bytes, cudaMemcpyHostToDevice), "cudaMemcpy host to device");
    return BSRMV_SUCCESS;
}

extern "C" bsrmv_status bsrmv_gpu_to_host(void *dst, const void *d_src, size_t bytes)
{
    if (bytes == 0)
        return BSRMV_SUCCESS;
    CU_RET(cudaMemcpy(dst, d_src, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy device to host");
    return BSRMV_SUCCESS;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The median time (ms) of `reps` runs of pass(), each between two events on
 * the default stream, after a warm-up run; t: room for reps times.  Each
 * run is queued behind a stall, so that its time is the GPU's alone
 * (bsrmv_gpu_stall): pass() is one launch, queued in a few microseconds. */
template <typename F>
static cudaError_t median_ms(F pass, int reps, double *t, double *ms)
{
    cudaEvent_t e0 = nullptr, e1 = nullptr;
    cudaError_t e = cudaEventCreate(&e0);
    if (e == cudaSuccess)
        e = cudaEventCreate(&e1);
    if (e == cudaSuccess && (e = pass()) == cudaSuccess)
        e = cudaDeviceSynchronize();
    for (int i = 0; i < reps && e == cudaSuccess; ++i) {
        float m = 0;
        if ((e = stall_pass(50, 0)) == cudaSuccess && (e = cudaEventRecord(e0, 0)) == cudaSuccess &&
            (e = pass()) == cudaSuccess &&
            (e = cudaEventRecord(e1, 0)) == cudaSuccess && (e = cudaEventSynchronize(e1)) == cudaSuccess)
            e = cudaEventElapsedTime(&m, e0, e1);
        t[i] = m;
    }
    if (e == cudaSuccess) {
        qsort(t, reps, sizeof *t, cmp_double);
        *ms = t[reps / 2];
    }
    if (e0)
        cudaEventDestroy(e0);
    if (e1)
        cudaEventDestroy(e1);
    return e;
}

extern "C" bsrmv_status bsrmv_gpu_stall(double us, void *stream)
{
    if (!(us > 0 && us <= 1e6))
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "stall of %g us: must be in (0, 1e6]", us);
    cudaGetLastError();
    CU_RET(stall_pass(us, (cudaStream_t)stream), "stall kernel");
    return BSRMV_SUCCESS;
}

extern "C" bsrmv_status bsrmv_gpu_read_bandwidth(size_t bytes, int reps, double *gbps)
{
    if (!gbps || reps < 1 || bytes < 16)
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "bad arguments");
    *gbps = 0;
    bytes &= ~(size_t)15;
    void *buf = nullptr;
    unsigned long long *sink = nullptr;
    double *t = (double *)malloc(sizeof(double) * reps), ms = 0;
    if (!t)
        return bsrmv_fail(BSRMV_ERR_NOMEM, "out of host memory");
    bsrmv_status st = BSRMV_SUCCESS;
    cudaError_t e;
    if ((e = cudaMalloc(&buf, bytes)) != cudaSuccess)
        st = cuda_fail(e, "cudaMalloc (read bandwidth buffer)");
    else if ((e = cudaMalloc((void **)&sink, sizeof *sink)) != cudaSuccess ||
             (e = cudaMemset(buf, 0x5a, bytes)) != cudaSuccess)
        st = cuda_fail(e, "read bandwidth buffer");
    else if ((e = median_ms([&] { return read_bandwidth_pass(buf, bytes, sink, 0); }, reps, t, &ms)) !=
             cudaSuccess)
        st = cuda_fail(e, "read kernel");
    else
        *gbps = (double)bytes / (ms * 1e6);
    cudaFree(buf);
    cudaFree(sink);
    free(t);
    return st;
}

extern "C" bsrmv_status bsrmv_gpu_gather_bound(const bsrmv_gpu_matrix *dA, const void *d_x, int reps,
                                               double *ms)
{
    if (!dA || !ms || reps < 1)
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "gather bound: %s",
                          !dA ? "dA is NULL" : !ms ? "ms is NULL" : "reps < 1");
    *ms = 0;
    if (dA->nnzb == 0)
        return BSRMV_SUCCESS;
    DeviceScope ds;
    cudaError_t e = ds.enter(dA->device);
    if (e != cudaSuccess)
        return cuda_fail(e, "cudaSetDevice");
    bsrmv_status st = check_device_ptr(d_x, dA->device, "x");
    if (st)
        return st;
    cudaGetLastError();
    double *t = (double *)malloc(sizeof(double) * reps);
    if (!t)
        return bsrmv_fail(BSRMV_ERR_NOMEM, "out of host memory");
    void *sink = nullptr;
    const int order = dA->order == BSRMV_COL_MAJOR ? COL : ROW;
    if ((e = cudaMalloc(&sink, sizeof(double))) != cudaSuccess)
        st = cuda_fail(e, "cudaMalloc");
    /* the fastest of the kernel's lane mappings and unroll depths */
    for (int v = 0; v < 4 && !st; ++v) {
        double m = 0;
        e = median_ms(
            [&] {
                return dA->type == BSRMV_DOUBLE
                           ? gather_pass<double>((const double *)dA->val, dA->col_idx, (const double *)d_x,
                                                 dA->nnzb, dA->bs, order, v, dA->sms, (double *)sink, 0)
                           : gather_pass<float>((const float *)dA->val, dA->col_idx, (const float *)d_x,
                                                dA->nnzb, dA->bs, order, v, dA->sms, (float *)sink, 0);
            },
            reps, t, &m);
        if (e != cudaSuccess)
            st = cuda_fail(e, "gather bound kernel");
        else if (v == 0 || m < *ms)
            *ms = m;
    }
    if (st)
        *ms = 0;
    cudaFree(sink);
    free(t);
    return st;
}
