/* The device vector backend of the solvers (the methods themselves are the
 * C code of src/solve/), the uploaded block-Jacobi preconditioner and
 * bsrmv_gpu_solve.
 *
 * Every fused op is one kernel, k_fused<Op>: a thread per vector entry,
 * thread blocks over whole block rows (so the M-application of a block can
 * read the block just combined from shared memory), grid-stride over tiles
 * with a grid that just fills the device.  The inverse blocks are stored
 * interleaved, value (row e, column c of its block) at c*n + e, so that the
 * M-application reads them coalesced.  Dot products: per-thread double
 * sums, a block reduction to one partial per thread block, then k_finish
 * sums the partials in a fixed order (deterministic, no atomics), and the
 * few doubles come to the host with one copy and one stream sync.
 *
 * The value type T is float, double or cplx<float/double> (complex.cuh),
 * all from the same templates.  A complex dot a^H b takes two sums (its
 * real and imaginary parts, NP = 2 doubles), a norm or Re(r^H z) one, as
 * in the host backend (cpu_ops.h); complex scalars and the GMRES
 * coefficients reach the device as (re, im) pairs of doubles. */
#include <cuda_runtime.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern "C" {
#include "solve/solve_internal.h"
}
#include "errors.cuh"
#include "handle.cuh"

#define MAX_BS 1024
#define FUSED_ROWS_THREADS 256 /* target threads per block: rows = 256 / bs */
#define FINISH_THREADS 256
#define MDOT_THREADS 256
#define MAX_FUSED_DOTS SV_MAX_DOTS

struct bsrmv_gpu_precond {
    int device;
    int64_t mb;
    int bs;
    bsrmv_type type;
    void *inv; /* interleaved, see above */
};

/* everything below up to the public API is private to this file */
namespace {

using bsrmv_cuda::cplx;
using bsrmv_cuda::is_cplx;

/* doubles per dot product of values of type T: re, and im if complex */
template <typename T> constexpr int NP = is_cplx<T>::value ? 2 : 1;

template <typename T> struct real_of {
    using type = T;
};
template <typename R> struct real_of<cplx<R>> {
    using type = R;
};

/* acc[0] (and acc[1]) += conj(a) b in double */
template <typename T> __device__ __forceinline__ void dot_add(double *acc, T a, T b)
{
    if constexpr (is_cplx<T>::value) {
        const double ar = a.re, ai = a.im, br = b.re, bi = b.im;
        acc[0] += ar * br + ai * bi;
        acc[1] += ar * bi - ai * br;
    } else {
        acc[0] += (double)a * (double)b;
    }
}

/* Re(conj(a) b) in double: |a|^2 for b = a */
template <typename T> __device__ __forceinline__ double re_dot(T a, T b)
{
    if constexpr (is_cplx<T>::value)
        return (double)a.re * b.re + (double)a.im * b.im;
    else
        return (double)a * (double)b;
}

/* Coefficient l of a device array of NP<T> doubles per coefficient. */
template <typename T> __device__ __forceinline__ T coef_at(const double *c, int l)
{
    using R = typename real_of<T>::type;
    if constexpr (is_cplx<T>::value)
        return T((R)c[2 * l], (R)c[2 * l + 1]);
    else
        return (T)c[l];
}

/* A scalar of the methods as a value of T (a real T takes .re), rounded
 * part by part as the host backend's SCAL does. */
template <typename T> static T scal(sv_scalar s)
{
    using R = typename real_of<T>::type;
    if constexpr (is_cplx<T>::value)
        return T((R)s.re, (R)s.im);
    else
        return (T)s.re;
}

/* Dot d of an array of NP<T> doubles per dot as a scalar. */
template <typename T> static sv_scalar dot_at(const double *v, int d)
{
    return sv_sc(v[NP<T> * d], NP<T> == 2 ? v[NP<T> * d + 1] : 0);
}

/* ------------------------------------------------------------------ */
/* kernels                                                             */
/* ------------------------------------------------------------------ */

/* Sums acc[0..ND) over the thread block; thread 0 writes out[d*stride].
 * blockDim.x is a multiple of 32. */
template <int ND>
__device__ __forceinline__ void block_sum(double (&acc)[ND], double *out, int64_t stride)
{
    __shared__ double sh[ND][32];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nw = blockDim.x >> 5;
#pragma unroll
    for (int d = 0; d < ND; d++) {
        double v = acc[d];
        for (int o = 16; o > 0; o >>= 1)
            v += __shfl_down_sync(0xffffffffu, v, o);
        if (lane == 0)
            sh[d][warp] = v;
    }
    __syncthreads();
    if (warp == 0) {
#pragma unroll
        for (int d = 0; d < ND; d++) {
            double v = lane < nw ? sh[d][lane] : 0.0;
            for (int o = 16; o > 0; o >>= 1)
                v += __shfl_down_sync(0xffffffffu, v, o);
            if (lane == 0)
                out[d * stride] = v;
        }
    }
}

/* One pass: op.first(e, acc) updates entry e and returns the value M is
 * applied to; with inv, op.second(e, y, z, acc) gets z = (M y)_e. */
template <typename T, int ND, typename Op>
__global__ void k_fused(Op op, int64_t n, int bs, int tile, const T *__restrict__ inv,
                        double *part)
{
    extern __shared__ __align__(16) unsigned char smem_raw[];
    T *sy = reinterpret_cast<T *>(smem_raw);
    constexpr int NA = ND > 0 ? ND : 1;
    double acc[NA];
#pragma unroll
    for (int d = 0; d < NA; d++)
        acc[d] = 0;
    const int64_t ntiles = (n + tile - 1) / tile;
    const int t = threadIdx.x;
    const int base = t - t % bs; /* first entry of this thread's block in the tile */
    for (int64_t g = blockIdx.x; g < ntiles; g += gridDim.x) {
        const int64_t e = g * tile + t;
        const bool in = t < tile && e < n;
        T y = 0;
        if (in)
            y = op.first(e, acc);
        if (inv) {
            sy[t] = y;
            __syncthreads();
            if (in) {
                T z = 0;
                for (int c = 0; c < bs; c++)
                    z += inv[(int64_t)c * n + e] * sy[base + c];
                op.second(e, y, z, acc);
            }
            __syncthreads();
        }
    }
    if constexpr (ND > 0)
        block_sum<ND>(acc, part + blockIdx.x, gridDim.x);
}

/* out[(NP*l + d)*parts + p] = part d (re, im) of the sum over chunk p of
 * V_l . u; grid (k, parts), so the k blocks of one chunk run together and
 * share u in L2. */
template <typename T>
__global__ void k_mdot(const T *__restrict__ V, const T *__restrict__ u, int64_t n,
                       int64_t chunk, double *part)
{
    constexpr int D = NP<T>;
    const int64_t l = blockIdx.x, p = blockIdx.y;
    const T *v = V + l * n;
    const int64_t e1 = min(n, (p + 1) * chunk);
    double acc[D];
#pragma unroll
    for (int d = 0; d < D; d++)
        acc[d] = 0;
    for (int64_t e = p * chunk + threadIdx.x; e < e1; e += blockDim.x)
        dot_add(acc, v[e], u[e]);
    block_sum<D>(acc, part + D * l * gridDim.y + p, gridDim.y);
}

/* res[d] = sum of the `parts` partials of dot d, in a fixed order. */
__global__ void k_finish(const double *part, int parts, double *res)
{
    double acc[1] = {0};
    for (int i = threadIdx.x; i < parts; i += blockDim.x)
        acc[0] += part[(int64_t)blockIdx.x * parts + i];
    block_sum<1>(acc, res + blockIdx.x, 0);
}

/* ---- the ops --------------------------------------------------------- */

template <typename T> struct OpZero {
    T *x;
    __device__ T first(int64_t e, double *) const { return x[e] = 0; }
    __device__ void second(int64_t, T, T, double *) const {}
};
template <typename T> struct OpCopy {
    const T *x;
    T *y;
    __device__ T first(int64_t e, double *) const { return y[e] = x[e]; }
    __device__ void second(int64_t, T, T, double *) const {}
};
template <typename T> struct OpPrecond {
    const T *r;
    T *z;
    __device__ T first(int64_t e, double *) const { return r[e]; }
    __device__ void second(int64_t e, T, T v, double *) const { z[e] = v; }
};
/* acc[NP*i ..] = a_i . b_i */
template <typename T> struct OpDots {
    const T *a[MAX_FUSED_DOTS], *b[MAX_FUSED_DOTS];
    int k;
    __device__ T first(int64_t e, double *acc) const
    {
#pragma unroll
        for (int i = 0; i < MAX_FUSED_DOTS; i++)
            if (i < k)
                dot_add(acc + NP<T> * i, a[i][e], b[i][e]);
        return 0;
    }
    __device__ void second(int64_t, T, T, double *) const {}
};
template <typename T> struct OpAxpy {
    T a;
    const T *x;
    T *y;
    __device__ T first(int64_t e, double *) const { return y[e] += a * x[e]; }
    __device__ void second(int64_t, T, T, double *) const {}
};
template <typename T> struct OpXpby {
    const T *z;
    T b;
    T *p;
    __device__ T first(int64_t e, double *) const { return p[e] = z[e] + b * p[e]; }
    __device__ void second(int64_t, T, T, double *) const {}
};
template <typename T> struct OpResidual {
    const T *b;
    T *r;
    __device__ T first(int64_t e, double *acc) const
    {
        const T v = b[e] - r[e];
        r[e] = v;
        acc[0] += re_dot(v, v);
        return v;
    }
    __device__ void second(int64_t, T, T, double *) const {}
};
/* acc = {Re r.z, r.r}; without M only r.r (the host copies it) */
template <typename T> struct OpCgStep {
    T a;
    T *x, *r, *z;
    const T *p, *q;
    __device__ T first(int64_t e, double *acc) const
    {
        x[e] += a * p[e];
        const T v = r[e] - a * q[e];
        r[e] = v;
        acc[1] += re_dot(v, v);
        return v;
    }
    __device__ void second(int64_t e, T y, T v, double *acc) const
    {
        z[e] = v;
        acc[0] += re_dot(y, v);
    }
};
template <typename T> struct OpBicgP {
    T beta, omega;
    const T *r, *v;
    T *p, *phat;
    __device__ T first(int64_t e, double *) const
    {
        return p[e] = r[e] + beta * (p[e] - omega * v[e]);
    }
    __device__ void second(int64_t e, T, T z, double *) const { phat[e] = z; }
};
template <typename T> struct OpBicgS {
    T alpha;
    T *r, *shat;
    const T *v;
    __device__ T first(int64_t e, double *) const { return r[e] -= alpha * v[e]; }
    __device__ void second(int64_t e, T, T z, double *) const { shat[e] = z; }
};
/* acc = {r.r, r0.r (NP doubles)} */
template <typename T> struct OpBicgX {
    T alpha, omega;
    T *x, *r;
    const T *phat, *shat, *t, *r0;
    __device__ T first(int64_t e, double *acc) const
    {
        x[e] += alpha * phat[e] + omega * shat[e];
        const T v = r[e] - omega * t[e];
        r[e] = v;
        acc[0] += re_dot(v, v);
        dot_add(acc + 1, r0[e], v);
        return v;
    }
    __device__ void second(int64_t, T, T, double *) const {}
};
template <typename T> struct OpLincomb {
    const T *V;
    const double *c;
    int k;
    int64_t n;
    T *u;
    __device__ T first(int64_t e, double *acc) const
    {
        T s = u[e];
        for (int l = 0; l < k; l++)
            s -= coef_at<T>(c, l) * V[l * n + e];
        u[e] = s;
        acc[0] += re_dot(s, s);
        return s;
    }
    __device__ void second(int64_t, T, T, double *) const {}
};
/* x += M (sum c_l V_l): with M the add happens in second */
template <typename T> struct OpGmresX {
    const T *V;
    const double *c;
    int k, m;
    int64_t n;
    T *x;
    __device__ T first(int64_t e, double *) const
    {
        T s = 0;
        for (int l = 0; l < k; l++)
            s += coef_at<T>(c, l) * V[l * n + e];
        if (!m)
            x[e] += s;
        return s;
    }
    __device__ void second(int64_t e, T, T z, double *) const { x[e] += z; }
};

/* ------------------------------------------------------------------ */
/* the backend                                                         */
/* ------------------------------------------------------------------ */

struct GpuCtx {
    const bsrmv_gpu_matrix *A;
    const bsrmv_gpu_precond *P;
    cudaStream_t s;
    int sms;
    int grid;          /* most thread blocks of a fused kernel (= partials) */
    int threads, tile; /* threads per block (multiple of 32), entries per tile */
    int maxdots;       /* most dots (or coefficients) of one call           */
    int np;            /* doubles per dot and per coefficient: 2 if complex */
    double *part, *res, *coef; /* device; slots = maxdots * np              */
    double *host;              /* pinned, slots                             */
    double *sums, *stage;      /* pageable, slots: GMRES dots and coefficients */
};

static GpuCtx *ctx_of(sv_backend *be)
{
    return (GpuCtx *)be->ctx;
}

/* Copies nd finished dots to out (one copy, one sync). */
static bsrmv_status fetch(GpuCtx *c, int nd, int parts, double *out)
{
    k_finish<<<nd, FINISH_THREADS, 0, c->s>>>(c->part, parts, c->res);
    CU_RET(cudaGetLastError(), "launching the dot-product reduction");
    CU_RET(cudaMemcpyAsync(c->host, c->res, (size_t)nd * sizeof(double), cudaMemcpyDeviceToHost,
                       c->s),
       "copying dot products to the host");
    CU_RET(cudaStreamSynchronize(c->s), "solver kernels");
    for (int d = 0; d < nd; d++)
        out[d] = c->host[d];
    return BSRMV_SUCCESS;
}

/* Launches op over all entries (with M when use_m and a preconditioner is
 * there); with out, the ND sums come back. */
template <typename T, int ND, typename Op>
static bsrmv_status fused(sv_backend *be, const Op &op, bool use_m, double *out)
{
    GpuCtx *c = ctx_of(be);
    const T *inv = use_m && c->P ? (const T *)c->P->inv : nullptr;
    const size_t smem = inv ? (size_t)c->threads * sizeof(T) : 0;
    /* One wave of the blocks that can be resident: a grid of c->grid
     * blocks that do not all fit would run a second, mostly idle wave. */
    int per_sm = 0;
    CU_RET(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, k_fused<T, ND, Op>, c->threads,
                                                     smem),
       "querying the occupancy of a solver kernel");
    const int64_t tiles = (be->n + c->tile - 1) / c->tile;
    int grid = per_sm > 0 && c->sms * per_sm < c->grid ? c->sms * per_sm : c->grid;
    if (tiles < grid)
        grid = (int)(tiles > 0 ? tiles : 1);
    k_fused<T, ND, Op><<<grid, c->threads, smem, c->s>>>(op, be->n, be->bs, c->tile, inv,
                                                          c->part);
    CU_RET(cudaGetLastError(), "launching a solver kernel");
    return ND > 0 && out ? fetch(c, ND, grid, out) : BSRMV_SUCCESS;
}

/* Coefficients of a GMRES combination to the device (np doubles each: the
 * real parts, or (re, im) pairs), in stream order (the pageable staging
 * array is copied before the call returns). */
static bsrmv_status put_coef(GpuCtx *c, int k, const sv_scalar *h)
{
    for (int i = 0; i < k; i++) {
        c->stage[c->np * i] = h[i].re;
        if (c->np == 2)
            c->stage[2 * i + 1] = h[i].im;
    }
    CU_RET(cudaMemcpyAsync(c->coef, c->stage, (size_t)k * c->np * sizeof(double),
                           cudaMemcpyHostToDevice, c->s),
       "copying GMRES coefficients");
    return BSRMV_SUCCESS;
}

template <typename T> static T *P_(void *p) { return (T *)p; }
template <typename T> static const T *C_(const void *p) { return (const T *)p; }

static bsrmv_status g_alloc(sv_backend *be, int count, void **v)
{
    size_t bytes = (size_t)count * (size_t)sv_slot(be) * bsrmv_type_size(be->type);
    *v = nullptr;
    CU_RET(cudaMalloc(v, bytes ? bytes : 16), "allocating solver vectors");
    /* finished here, so that it stays out of the timed iterations */
    cudaError_t e = cudaMemsetAsync(*v, 0, bytes, ctx_of(be)->s);
    if (e == cudaSuccess)
        e = cudaStreamSynchronize(ctx_of(be)->s);
    if (e != cudaSuccess) {
        cudaFree(*v);
        *v = nullptr;
        return cuda_fail(e, "clearing solver vectors");
    }
    return BSRMV_SUCCESS;
}

static void g_release(sv_backend *be, void *v)
{
    if (v)
        cudaFree(v);
}

static bsrmv_status g_sync(sv_backend *be)
{
    CU_RET(cudaStreamSynchronize(ctx_of(be)->s), "solver kernels");
    return BSRMV_SUCCESS;
}

static bsrmv_status g_spmv(sv_backend *be, const void *x, void *y)
{
    return bsrmv_gpu_spmv(BSRMV_OP_N, 1.0, ctx_of(be)->A, x, be->n, 0.0, y, be->n,
                          ctx_of(be)->s);
}

static bsrmv_status g_spmm(sv_backend *be, int k, const void *X, int64_t ldx, void *Y,
                           int64_t ldy)
{
    return bsrmv_gpu_spmm_cols(ctx_of(be)->A, k, X, ldx, Y, ldy, ctx_of(be)->s);
}

template <typename T> static bsrmv_status g_zero(sv_backend *be, void *x)
{
    return fused<T, 0>(be, OpZero<T>{P_<T>(x)}, false, nullptr);
}

template <typename T> static bsrmv_status g_copy(sv_backend *be, const void *x, void *y)
{
    return fused<T, 0>(be, OpCopy<T>{C_<T>(x), P_<T>(y)}, false, nullptr);
}

template <typename T> static bsrmv_status g_precond(sv_backend *be, const void *r, void *z)
{
    if (!be->has_p)
        return g_copy<T>(be, r, z);
    return fused<T, 0>(be, OpPrecond<T>{C_<T>(r), P_<T>(z)}, true, nullptr);
}

template <typename T>
static bsrmv_status g_dots(sv_backend *be, int k, const void *const *a, const void *const *b,
                           sv_scalar *out)
{
    OpDots<T> op = {};
    op.k = k;
    for (int i = 0; i < k; i++) {
        op.a[i] = C_<T>(a[i]);
        op.b[i] = C_<T>(b[i]);
    }
    double all[MAX_FUSED_DOTS * NP<T>];
    bsrmv_status st = fused<T, MAX_FUSED_DOTS * NP<T>>(be, op, false, all);
    for (int i = 0; i < k && !st; i++)
        out[i] = dot_at<T>(all, i);
    return st;
}

template <typename T>
static bsrmv_status g_mdot(sv_backend *be, int k, const void *V, const void *u, sv_scalar *out)
{
    GpuCtx *c = ctx_of(be);
    if (k > c->maxdots)
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "%d GMRES dots, room for %d", k, c->maxdots);
    const int parts = (int)(be->n < c->grid ? (be->n > 0 ? be->n : 1) : c->grid);
    const int64_t chunk = (be->n + parts - 1) / parts;
    k_mdot<T><<<dim3(k, parts), MDOT_THREADS, 0, c->s>>>(C_<T>(V), C_<T>(u), be->n, chunk,
                                                           c->part);
    CU_RET(cudaGetLastError(), "launching the GMRES dot products");
    bsrmv_status st = fetch(c, NP<T> * k, parts, c->sums);
    for (int i = 0; i < k && !st; i++)
        out[i] = dot_at<T>(c->sums, i);
    return st;
}

template <typename T>
static bsrmv_status g_axpy(sv_backend *be, sv_scalar alpha, const void *x, void *y)
{
    return fused<T, 0>(be, OpAxpy<T>{scal<T>(alpha), C_<T>(x), P_<T>(y)}, false, nullptr);
}

template <typename T>
static bsrmv_status g_xpby(sv_backend *be, const void *z, sv_scalar beta, void *p)
{
    return fused<T, 0>(be, OpXpby<T>{C_<T>(z), scal<T>(beta), P_<T>(p)}, false, nullptr);
}

template <typename T>
static bsrmv_status g_residual(sv_backend *be, const void *b, void *r, double *rr)
{
    return fused<T, 1>(be, OpResidual<T>{C_<T>(b), P_<T>(r)}, false, rr);
}

template <typename T>
static bsrmv_status g_cg_step(sv_backend *be, sv_scalar alpha, void *x, const void *p, void *r,
                              const void *q, void *z, double out[2])
{
    OpCgStep<T> op = {scal<T>(alpha), P_<T>(x), P_<T>(r), P_<T>(z), C_<T>(p), C_<T>(q)};
    bsrmv_status st = fused<T, 2>(be, op, true, out);
    if (!st && !be->has_p)
        out[0] = out[1];
    return st;
}

template <typename T>
static bsrmv_status g_bicg_p(sv_backend *be, sv_scalar beta, sv_scalar omega, const void *r,
                             void *p, const void *v, void *phat)
{
    OpBicgP<T> op = {scal<T>(beta), scal<T>(omega), C_<T>(r), C_<T>(v), P_<T>(p), P_<T>(phat)};
    return fused<T, 0>(be, op, true, nullptr);
}

template <typename T>
static bsrmv_status g_bicg_s(sv_backend *be, sv_scalar alpha, void *r, const void *v,
                             void *shat)
{
    OpBicgS<T> op = {scal<T>(alpha), P_<T>(r), P_<T>(shat), C_<T>(v)};
    return fused<T, 0>(be, op, true, nullptr);
}

template <typename T>
static bsrmv_status g_bicg_x(sv_backend *be, sv_scalar alpha, sv_scalar omega, void *x,
                             const void *phat, const void *shat, void *r, const void *t,
                             const void *r0, sv_scalar out[2])
{
    OpBicgX<T> op = {scal<T>(alpha), scal<T>(omega), P_<T>(x),     P_<T>(r),
                     C_<T>(phat),    C_<T>(shat),    C_<T>(t),     C_<T>(r0)};
    double d[1 + NP<T>];
    bsrmv_status st = fused<T, 1 + NP<T>>(be, op, false, d);
    out[0] = sv_sc(d[0], 0);
    out[1] = dot_at<T>(d + 1, 0);
    return st;
}

template <typename T>
static bsrmv_status g_lincomb(sv_backend *be, int k, const sv_scalar *c, const void *V,
                              void *u, double *uu)
{
    bsrmv_status st = put_coef(ctx_of(be), k, c);
    if (st)
        return st;
    OpLincomb<T> op = {C_<T>(V), ctx_of(be)->coef, k, be->n, P_<T>(u)};
    return fused<T, 1>(be, op, false, uu);
}

template <typename T>
static bsrmv_status g_gmres_x(sv_backend *be, int k, const sv_scalar *c, const void *V,
                              void *x)
{
    bsrmv_status st = put_coef(ctx_of(be), k, c);
    if (st)
        return st;
    OpGmresX<T> op = {C_<T>(V), ctx_of(be)->coef, k, be->has_p, be->n, P_<T>(x)};
    return fused<T, 0>(be, op, true, nullptr);
}

template <typename T> static void set_ops(sv_backend *be)
{
    be->zero = g_zero<T>;
    be->copy = g_copy<T>;
    be->precond = g_precond<T>;
    be->dots = g_dots<T>;
    be->mdot = g_mdot<T>;
    be->axpy = g_axpy<T>;
    be->xpby = g_xpby<T>;
    be->residual = g_residual<T>;
    be->cg_step = g_cg_step<T>;
    be->bicg_p = g_bicg_p<T>;
    be->bicg_s = g_bicg_s<T>;
    be->bicg_x = g_bicg_x<T>;
    be->lincomb = g_lincomb<T>;
    be->gmres_x = g_gmres_x<T>;
}

static void free_ctx(GpuCtx *c)
{
    cudaFree(c->part);
    cudaFree(c->res);
    cudaFree(c->coef);
    cudaFreeHost(c->host);
    free(c->sums);
    free(c->stage);
}

/* Buffers for up to maxdots dots of up to grid partials each, np doubles
 * per dot. */
static bsrmv_status init_ctx(GpuCtx *c, int maxdots, int np, int bs)
{
    int dev, sms;
    CU_RET(cudaGetDevice(&dev), "cudaGetDevice");
    CU_RET(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev), "querying the SMs");
    const int rows = bs < FUSED_ROWS_THREADS ? FUSED_ROWS_THREADS / bs : 1;
    c->tile = rows * bs;
    c->threads = (c->tile + 31) / 32 * 32;
    /* one resident wave of full-occupancy blocks: enough to stream at
     * full bandwidth, few partials to sum */
    c->sms = sms;
    c->grid = sms * (2048 / c->threads > 0 ? 2048 / c->threads : 1);
    c->maxdots = maxdots;
    c->np = np;
    const size_t slots = (size_t)maxdots * (size_t)np;
    const size_t pbytes = slots * (size_t)c->grid * sizeof(double);
    CU_RET(cudaMalloc((void **)&c->part, pbytes), "allocating reduction partials");
    CU_RET(cudaMalloc((void **)&c->res, slots * sizeof(double)), "allocating results");
    CU_RET(cudaMalloc((void **)&c->coef, slots * sizeof(double)),
       "allocating GMRES coefficients");
    CU_RET(cudaMallocHost((void **)&c->host, slots * sizeof(double)),
       "allocating pinned host memory");
    c->sums = (double *)malloc(slots * sizeof(double));
    c->stage = (double *)malloc(slots * sizeof(double));
    if (!c->sums || !c->stage)
        return bsrmv_fail(BSRMV_ERR_NOMEM, "out of memory for %d GMRES scalars", maxdots);
    return BSRMV_SUCCESS;
}

} // namespace

/* ------------------------------------------------------------------ */
/* public API                                                          */
/* ------------------------------------------------------------------ */

extern "C" bsrmv_status bsrmv_gpu_precond_upload(bsrmv_gpu_precond **dP, const bsrmv_precond *P,
                                                 int device)
{
    if (!dP)
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "device preconditioner handle pointer is NULL");
    *dP = nullptr;
    if (!P)
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "P is NULL");
    if (P->bs > MAX_BS)
        return bsrmv_fail(BSRMV_ERR_UNSUPPORTED, "GPU block Jacobi supports bs <= %d, not %d",
                          MAX_BS, P->bs);
    DeviceScope sc;
    CU_RET(sc.enter(device), "selecting the device");
    const int bs = P->bs;
    const int64_t n = P->mb * bs;
    const size_t ts = bsrmv_type_size(P->type), bytes = (size_t)n * bs * ts;
    char *h = (char *)malloc(bytes ? bytes : 1);
    bsrmv_gpu_precond *G = (bsrmv_gpu_precond *)calloc(1, sizeof *G);
    if (!h || !G) {
        free(h);
        free(G);
        return bsrmv_fail(BSRMV_ERR_NOMEM, "out of memory for %.3g GB of inverse blocks",
                          (double)bytes * 1e-9);
    }
    /* column-major blocks to the interleaved layout */
    const char *src = (const char *)P->inv;
    for (int64_t i = 0; i < P->mb; i++)
        for (int c = 0; c < bs; c++)
            for (int r = 0; r < bs; r++)
                memcpy(h + ((size_t)c * n + i * bs + r) * ts,
                       src + (((size_t)i * bs + c) * bs + r) * ts, ts);
    G->device = device;
    G->mb = P->mb;
    G->bs = bs;
    G->type = P->type;
    cudaError_t e = cudaMalloc(&G->inv, bytes ? bytes : 16);
    if (e == cudaSuccess)
        e = cudaMemcpy(G->inv, h, bytes, cudaMemcpyHostToDevice);
    free(h);
    if (e != cudaSuccess) {
        bsrmv_gpu_precond_destroy(G);
        return cuda_fail(e, "uploading the inverse blocks");
    }
    *dP = G;
    return BSRMV_SUCCESS;
}

extern "C" void bsrmv_gpu_precond_destroy(bsrmv_gpu_precond *dP)
{
    if (!dP)
        return;
    DeviceScope sc;
    if (dP->inv && sc.enter(dP->device) == cudaSuccess)
        cudaFree(dP->inv);
    free(dP);
}

/* The device backend: everything bsrmv_gpu_solve checks, then a context
 * (freed by bsrmv_sv_gpu_free) whose reduction buffers take the dots of
 * `method`.  The caller has made dA's device current.  The distributed
 * solvers (src/mpi/) wrap it. */
extern "C" bsrmv_status bsrmv_sv_gpu_init(sv_backend *be, bsrmv_solver method,
                                          const bsrmv_gpu_matrix *dA, const bsrmv_gpu_precond *dP,
                                          const void *d_b, void *d_x, int64_t n,
                                          const bsrmv_solve_options *opt, void *stream)
{
    memset(be, 0, sizeof *be);
    bsrmv_gpu_plan_info pl;
    if (!dA)
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "dA is NULL");
    bsrmv_status st = bsrmv_gpu_matrix_get_plan(dA, &pl);
    if (st || (st = bsrmv_sv_check(method, pl.mb, pl.nb, pl.bs, pl.vector_type, n, d_b, d_x, opt)))
        return st;
    if (dP && (st = bsrmv_sv_check_precond(dP->mb, dP->bs, dP->type, pl.mb, pl.bs, pl.vector_type)))
        return st;
    if (dP && dP->device != pl.device)
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "P is on device %d, A on device %d", dP->device,
                          pl.device);
    if (pl.bs > MAX_BS)
        return bsrmv_fail(BSRMV_ERR_UNSUPPORTED, "GPU solvers support bs <= %d, not %d", MAX_BS,
                          pl.bs);
    if (n > 0 && ((st = check_device_ptr(d_b, pl.device, "b")) ||
                  (st = check_device_ptr(d_x, pl.device, "x"))))
        return st;

    GpuCtx *c = (GpuCtx *)calloc(1, sizeof *c);
    if (!c)
        return bsrmv_fail(BSRMV_ERR_NOMEM, "out of memory for the solver context");
    c->A = dA;
    c->P = dP;
    c->s = (cudaStream_t)stream;
    const int maxdots = method == BSRMV_SOLVER_GMRES ? bsrmv_sv_restart(opt) + 2 : SV_MAX_DOTS;
    if ((st = init_ctx(c, maxdots > SV_MAX_DOTS ? maxdots : SV_MAX_DOTS,
                       bsrmv_type_parts(pl.vector_type), pl.bs))) {
        free_ctx(c);
        free(c);
        return st;
    }
    be->ctx = c;
    be->n = n;
    be->mb = pl.mb;
    be->bs = pl.bs;
    be->type = pl.vector_type; /* the vectors': double for a mixed-precision matrix */
    be->has_p = dP != nullptr;
    const double ts = (double)bsrmv_type_size(pl.type), vs = (double)bsrmv_type_size(pl.vector_type);
    be->spmv_bytes = (double)pl.nnzb * pl.bs * pl.bs * ts + (double)pl.nnzb * sizeof(int32_t) +
                     (double)(pl.mb + 1) * sizeof(int64_t) + 2.0 * (double)n * vs;
    be->alloc = g_alloc;
    be->release = g_release;
    be->sync = g_sync;
    be->spmv = g_spmv;
    /* bsrmv_gpu_spmm takes every storage and type (mixed precision too:
     * the columns are in the vector type, as g_spmv's; symmetric storage
     * on its own arrays as bsrmv_gpu_spmm_cols says) */
    be->spmm = g_spmm;
    switch (pl.vector_type) {
    case BSRMV_DOUBLE: set_ops<double>(be); break;
    case BSRMV_FLOAT: set_ops<float>(be); break;
    case BSRMV_COMPLEX_DOUBLE: set_ops<cplx<double>>(be); break;
    case BSRMV_COMPLEX_FLOAT: set_ops<cplx<float>>(be); break;
    }
    return BSRMV_SUCCESS;
}

extern "C" void bsrmv_sv_gpu_free(sv_backend *be)
{
    GpuCtx *c = (GpuCtx *)be->ctx;
    if (c) {
        free_ctx(c);
        free(c);
    }
    be->ctx = nullptr;
}

extern "C" bsrmv_status bsrmv_gpu_solve(bsrmv_solver method, const bsrmv_gpu_matrix *dA,
                                        const bsrmv_gpu_precond *dP, const void *d_b, void *d_x,
                                        int64_t n, const bsrmv_solve_options *opt,
                                        bsrmv_solve_report *report, void *stream)
{
    DeviceScope sc;
    bsrmv_gpu_plan_info pl;
    if (dA && !bsrmv_gpu_matrix_get_plan(dA, &pl))
        CU_RET(sc.enter(pl.device), "selecting the device");
    sv_backend be;
    bsrmv_status st = bsrmv_sv_gpu_init(&be, method, dA, dP, d_b, d_x, n, opt, stream);
    if (st)
        return st;
    st = bsrmv_sv_solve(method, &be, d_b, d_x, opt, report);
    bsrmv_sv_gpu_free(&be);
    return st;
}

extern "C" bsrmv_status bsrmv_gpu_solve_multi(bsrmv_solver method, const bsrmv_gpu_matrix *dA,
                                              const bsrmv_gpu_precond *dP, int64_t n, int k,
                                              const void *d_B, int64_t ldb, void *d_X,
                                              int64_t ldx, const bsrmv_solve_options *opt,
                                              bsrmv_solve_report *reports, void *stream)
{
    DeviceScope sc;
    bsrmv_gpu_plan_info pl;
    if (dA && !bsrmv_gpu_matrix_get_plan(dA, &pl))
        CU_RET(sc.enter(pl.device), "selecting the device");
    sv_backend be;
    bsrmv_status st = bsrmv_sv_gpu_init(&be, method, dA, dP, d_B, d_X, n, opt, stream);
    if (st)
        return st;
    if (!(st = bsrmv_sv_check_multi("bsrmv_gpu_solve_multi", n, k, d_B, ldb, d_X, ldx,
                                    bsrmv_type_size(be.type))))
        st = bsrmv_sv_solve_multi(method, &be, k, d_B, ldb, d_X, ldx, opt, reports);
    bsrmv_sv_gpu_free(&be);
    return st;
}

extern "C" bsrmv_status bsrmv_gpu_solve_refined(bsrmv_solver method, const bsrmv_gpu_matrix *dA,
                                                const bsrmv_gpu_matrix *dAf,
                                                const bsrmv_gpu_precond *dP, const void *d_b,
                                                void *d_x, int64_t n,
                                                const bsrmv_solve_options *opt,
                                                bsrmv_solve_report *report, void *stream)
{
    bsrmv_gpu_plan_info pa, pf;
    if (!dA || !dAf)
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "%s is NULL", dA ? "dAf" : "dA");
    bsrmv_status st;
    if ((st = bsrmv_gpu_matrix_get_plan(dA, &pa)) || (st = bsrmv_gpu_matrix_get_plan(dAf, &pf)) ||
        (st = bsrmv_sv_check_refine("bsrmv_gpu_solve_refined", pa.mb, pa.nb, pa.bs, pa.type,
                                    pa.vector_type, pf.mb, pf.nb, pf.bs, pf.vector_type)))
        return st;
    if (pa.device != pf.device)
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "dA is on device %d, dAf on device %d", pa.device,
                          pf.device);
    if (opt && !(opt->inner_rtol >= 0 && opt->inner_rtol < 1))
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "bad options: inner_rtol %g (0 <= inner_rtol < 1)",
                          opt->inner_rtol);
    DeviceScope sc;
    CU_RET(sc.enter(pa.device), "selecting the device");
    sv_backend hi, lo;
    if ((st = bsrmv_sv_gpu_init(&hi, BSRMV_SOLVER_CG, dA, nullptr, d_b, d_x, n, opt, stream)))
        return st;
    if ((st = bsrmv_sv_gpu_init(&lo, method, dAf, dP, d_b, d_x, n, opt, stream))) {
        bsrmv_sv_gpu_free(&hi);
        return st;
    }
    st = bsrmv_sv_refine(method, &hi, &lo, d_b, d_x, opt, report);
    bsrmv_sv_gpu_free(&lo);
    bsrmv_sv_gpu_free(&hi);
    return st;
}
