/* One configuration's launch: the flat switch from a bsrmv_gpu_config to
 * its kernel family's launcher.  dry: only ask whether the instantiation
 * exists.  Included by the files that launch (candidates.cu, matrix.cu). */
#ifndef BSRMV_CUDA_LAUNCH_CUH
#define BSRMV_CUDA_LAUNCH_CUH

#include "handle.cuh"

namespace bsrmv_cuda {

/* The launch parameters of c on m. */
static inline Launch launch_of(const bsrmv_gpu_matrix *m, const bsrmv_gpu_config &c, bool dry)
{
    Launch l = {};
    l.dry = dry;
    l.group = c.group;
    l.rows = c.rows;
    l.threads = c.threads;
    l.param = c.param;
    l.sched = is_balanced(c.kernel) && m->sched_mem && m->sched_for.kernel == c.kernel &&
                      m->sched_for.param == c.param
                  ? &m->sched
                  : nullptr;
    l.merge = c.kernel == BSRMV_GPU_MERGE_PATH;
    l.len_max = m->len_max;
    l.sms = m->sms;
    l.cc = m->cc;
    l.smem_optin = m->smem_optin;
    return l;
}

template <typename T>
int launch_cfg(const bsrmv_gpu_matrix *m, const bsrmv_gpu_config &c, const Args<T> &a, cudaStream_t s,
               cudaError_t *err, bool dry)
{
    const int order = m->order == BSRMV_COL_MAJOR ? COL : ROW;
    const Launch l = launch_of(m, c, dry);
    switch (c.kernel) {
    case BSRMV_GPU_BY_BLOCK:
    case BSRMV_GPU_K1_SMALL:
        return launch_byblock<T>(a, order, l, s, err);
    case BSRMV_GPU_BY_COLUMN:
        return launch_bycolumn<T>(a, order, l, s, err);
    case BSRMV_GPU_ROW_PER_THREAD:
        return launch_rowthread<T>(a, order, l, s, err);
    case BSRMV_GPU_LANE_BLOCK:
        return launch_laneblock<T>(a, order, l, s, err);
    case BSRMV_GPU_WIDE:
        return launch_wide<T>(a, order, l, s, err);
    case BSRMV_GPU_VEC_STREAM:
        return launch_vecstream<T>(a, order, l, s, err);
    case BSRMV_GPU_STAGED:
        return launch_staged<T>(a, order, l, s, err);
    case BSRMV_GPU_K2_MEDIUM:
        return launch_k2<T>(a, order, l, s, err);
    case BSRMV_GPU_K3_LARGE:
        return launch_k3<T>(a, order, l, s, err);
    case BSRMV_GPU_TRANSPOSE:
        return launch_transpose<T>(a, order, l, s, err);
    case BSRMV_GPU_SEGMENTED: { /* short rows: a plain kernel; long rows: segments */
        Args<T> shorts = a;
        shorts.long_len = c.param;
        const int r = launch_cfg<T>(m, m->short_cfg, shorts, s, err, dry);
        if (r != LAUNCH_OK)
            return r;
        return c.threads == 0 ? launch_k3units<T>(a, order, l, s, err)
                              : launch_balanced<T>(a, order, l, s, err);
    }
    case BSRMV_GPU_FRAGMENT: /* threads 0: K2 (rows 0) or K3 walk the units */
        if (c.threads == 0)
            return c.rows == 0 ? launch_k2units<T>(a, order, l, s, err)
                               : launch_k3units<T>(a, order, l, s, err);
        return launch_balanced<T>(a, order, l, s, err);
    case BSRMV_GPU_MERGE_PATH:
        return launch_balanced<T>(a, order, l, s, err);
    case BSRMV_GPU_SYM_ATOMIC:
        return launch_sym_atomic<T>(a, order, l, s, err);
    case BSRMV_GPU_SYM_WINDOW:
        return launch_sym_window<T>(a, order, l, s, err);
    default:
        return LAUNCH_NOT_BUILT;
    }
}

/* Float values with double vectors: built for the by-block (K1),
 * by-column, wide, vector-stream and staged families, the plain kernels of the
 * regular matrices, and the lane-sequential merge path (the plan takes the
 * float rows of its table whose kernel is built). */
static inline int launch_cfg(const bsrmv_gpu_matrix *m, const bsrmv_gpu_config &c,
                             const Args<float, double> &a, cudaStream_t s, cudaError_t *err, bool dry)
{
    const int order = m->order == BSRMV_COL_MAJOR ? COL : ROW;
    switch (c.kernel) {
    case BSRMV_GPU_BY_BLOCK:
    case BSRMV_GPU_K1_SMALL:
        return launch_byblock<float>(a, order, launch_of(m, c, dry), s, err);
    case BSRMV_GPU_BY_COLUMN:
        return launch_bycolumn<float>(a, order, launch_of(m, c, dry), s, err);
    case BSRMV_GPU_WIDE:
        return launch_wide<float>(a, order, launch_of(m, c, dry), s, err);
    case BSRMV_GPU_VEC_STREAM:
        return launch_vecstream<float>(a, order, launch_of(m, c, dry), s, err);
    case BSRMV_GPU_STAGED:
        return launch_staged<float>(a, order, launch_of(m, c, dry), s, err);
    case BSRMV_GPU_MERGE_PATH:
        return launch_balanced<float>(a, order, launch_of(m, c, dry), s, err);
    default:
        return LAUNCH_NOT_BUILT;
    }
}

/* Complex values: by-block (K1), by-column, wide, vector stream, staged,
 * K2, the transpose (param 1: conjugate) and the SYM kernels, the families
 * their X-macro lists build. */
template <typename R>
static inline int launch_cfg(const bsrmv_gpu_matrix *m, const bsrmv_gpu_config &c, const Args<cplx<R>> &a,
                             cudaStream_t s, cudaError_t *err, bool dry)
{
    const int order = m->order == BSRMV_COL_MAJOR ? COL : ROW;
    switch (c.kernel) {
    case BSRMV_GPU_BY_BLOCK:
    case BSRMV_GPU_K1_SMALL:
        return launch_byblock<cplx<R>>(a, order, launch_of(m, c, dry), s, err);
    case BSRMV_GPU_BY_COLUMN:
        return launch_bycolumn<cplx<R>>(a, order, launch_of(m, c, dry), s, err);
    case BSRMV_GPU_WIDE:
        return launch_wide<cplx<R>>(a, order, launch_of(m, c, dry), s, err);
    case BSRMV_GPU_VEC_STREAM:
        return launch_vecstream<cplx<R>>(a, order, launch_of(m, c, dry), s, err);
    case BSRMV_GPU_STAGED:
        return launch_staged<cplx<R>>(a, order, launch_of(m, c, dry), s, err);
    case BSRMV_GPU_K2_MEDIUM:
        return launch_k2<cplx<R>>(a, order, launch_of(m, c, dry), s, err);
    case BSRMV_GPU_TRANSPOSE:
        return launch_transpose<cplx<R>>(a, order, launch_of(m, c, dry), s, err);
    case BSRMV_GPU_SYM_ATOMIC:
        return launch_sym_atomic<cplx<R>>(a, order, launch_of(m, c, dry), s, err);
    case BSRMV_GPU_SYM_WINDOW:
        return launch_sym_window<cplx<R>>(a, order, launch_of(m, c, dry), s, err);
    default:
        return LAUNCH_NOT_BUILT;
    }
}

} // namespace bsrmv_cuda

#endif
