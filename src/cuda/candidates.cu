/* The configurations that apply to a matrix, in the plan's order first:
 * what the measured choice (bsrmv_gpu_matrix_tune) and the benchmark time. */
#include "launch.cuh"

namespace bsrmv_cuda {

bool cfg_built(const bsrmv_gpu_matrix *m, const bsrmv_gpu_config &c)
{
    /* Symmetric storage and the SYM kernels go together only; their param
     * is the op's (SYM_CONJ_*), set by each product. */
    const bool symk = c.kernel == BSRMV_GPU_SYM_ATOMIC || c.kernel == BSRMV_GPU_SYM_WINDOW;
    if (symk != m->sym || (symk && c.param != 0))
        return false;
    cudaError_t err = cudaSuccess;
    int r = m->type == BSRMV_COMPLEX_DOUBLE ? launch_cfg(m, c, Args<cplx<double>>{0, m->nb, m->bs}, 0, &err, true)
            : m->type == BSRMV_COMPLEX_FLOAT ? launch_cfg(m, c, Args<cplx<float>>{0, m->nb, m->bs}, 0, &err, true)
            : m->type == BSRMV_DOUBLE        ? launch_cfg(m, c, Args<double>{0, m->nb, m->bs}, 0, &err, true)
            : m->vtype == BSRMV_DOUBLE ? launch_cfg(m, c, Args<float, double>{0, m->nb, m->bs}, 0, &err, true)
                                       : launch_cfg(m, c, Args<float>{0, m->nb, m->bs}, 0, &err, true);
    return r == LAUNCH_OK;
}

/* Work-unit scale of the balanced kernels: 8192 values of val (256 per
 * lane of a warp), at least 8 blocks.  Units of ~1000 values lost 2-3x to
 * their per-unit overhead on an H200 power-law matrix. */
static int balanced_unit(int bs)
{
    const int v = 8192 / (bs * bs);
    return v < 8 ? 8 : v;
}

int build_candidates(const bsrmv_gpu_matrix *m, bsrmv_gpu_config *out, int max)
{
    /* The plan's order first, so that the measured choice's first few
     * candidates are those the table expects to win. */
    bsrmv_gpu_config ranked[16];
    const int nr = plan_rank(m, ranked, 16);
    int n = 0;
    for (; n < nr; ++n)
        if (n < max && out)
            out[n] = ranked[n];
    auto add = [&](bsrmv_gpu_kernel k, int g, int r, int t, int p) {
        bsrmv_gpu_config c = {k, g, r, t, p};
        for (int i = 0; i < nr; ++i)
            if (plan_same_config(&ranked[i], &c))
                return;
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
    /* lane-block: a lane per block, 4 to 16 lanes per block row */
    for (int g : {4, 8, 16})
        for (int t : {128, 256})
            add(BSRMV_GPU_LANE_BLOCK, g, 1, t, 0);
    /* staged: lanes per scalar row x threads, 3 stage buffers; one
     * geometry with a fourth buffer for the copies and one with it for the
     * gather (rows 2), level or slower on the 27-point grids (the
     * launcher refuses what does not fit shared memory) */
    add(BSRMV_GPU_STAGED, 2, 1, 128, 3);
    for (int g : {4, 8})
        for (int t : {128, 256})
            add(BSRMV_GPU_STAGED, g, 1, t, 3);
    add(BSRMV_GPU_STAGED, 4, 1, 128, 4);
    add(BSRMV_GPU_STAGED, 8, 2, 256, 4);
    /* complex blocks of bs 7-8 (0.8-1 KB): stages of one or two block rows
     * with 16 lanes per scalar row (of the geometries above, only 8 lanes
     * at 128 threads fits shared memory on 27-block rows, one thread block
     * of 4 warps per SM) */
    if (bsrmv_type_is_complex(m->type) && bs >= 7)
        for (int t : {128, 256})
            add(BSRMV_GPU_STAGED, 16, 1, t, 3);
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
    /* and the plan's units for a matrix of one wave, where smaller */
    auto add_fit = [&](bsrmv_gpu_config c, int least) {
        c = plan_fit_units(m, c);
        if (c.param < least)
            add(c.kernel, c.group, c.rows, c.threads, c.param);
    };
    add_fit({BSRMV_GPU_MERGE_PATH, 1, 1, 256, seq_unit}, seq_unit / 4);
    /* the same with 2-4 unit buffers per warp filled by the copy engine
     * (sm_90, bs 2 and 4), a warp per thread block (shared memory per
     * warp is large: whole warps fill an SM without a remainder) */
    for (int r : {2, 3, 4})
        for (int f : {1, 2, 4})
            add(BSRMV_GPU_MERGE_PATH, 1, r, 32, seq_unit * f / 4);
    for (int f : {1, 2, 4})
        add(BSRMV_GPU_FRAGMENT, 32, 1, 256, unit * f / 4);
    add_fit({BSRMV_GPU_FRAGMENT, 32, 1, 256, unit}, unit / 4);
    for (int g : {8, 32})
        for (int f : {1, 4})
            add(BSRMV_GPU_SEGMENTED, g, 1, 256, unit * f);
    /* the same units walked by K3 thread blocks (threads 0; group NTG
     * column phases, rows = slices per block row): 16384 values of val per
     * unit, halved and doubled; segments of 4 such units */
    if (bs >= 9) {
        const int k3u = 16384 / (bs * bs) < 4 ? 4 : 16384 / (bs * bs);
        for (int ntg : {8, 32})
            for (int f : {1, 2, 4})
                add(BSRMV_GPU_FRAGMENT, ntg, 1, 0, k3u * f / 2);
        /* and by K2 thread arrays (rows 0) where K2 is built */
        for (int ntg : {4, 8})
            for (int f : {1, 2, 4})
                add(BSRMV_GPU_FRAGMENT, ntg, 0, 0, k3u * f / 2);
        add(BSRMV_GPU_SEGMENTED, 32, 1, 0, k3u * 4);
    }
    /* Symmetric storage (the only ones that apply there): windows of 8 to
     * 512 block rows with 8 warps, of 4 to 16 with 4, and the all-atomic
     * version with 1 and 16 rows a warp. */
    for (int r : {1, 2, 4, 16, 64})
        add(BSRMV_GPU_SYM_WINDOW, 32, r, 256, 0);
    for (int r : {1, 2, 4})
        add(BSRMV_GPU_SYM_WINDOW, 32, r, 128, 0);
    add(BSRMV_GPU_SYM_ATOMIC, 32, 1, 256, 0);
    add(BSRMV_GPU_SYM_ATOMIC, 32, 16, 256, 0);
    return n;
}

} // namespace bsrmv_cuda
