/* The C API of the device matrices: handles (upload, wrap, destroy), the
 * configuration and plan queries, SpMV, and device memory helpers.  Every
 * CUDA call is checked; failures become a bsrmv_status with a message
 * (bsrmv_fail), and whatever was allocated is freed. */
#include "launch.cuh"
#include "scalar.cuh"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

using namespace bsrmv_cuda;

static bsrmv_status check_shape(int64_t mb, int64_t nb, int bs, int64_t nnzb, bsrmv_type type,
                                bsrmv_order order)
{
    if (mb < 0 || nb < 0 || bs < 1 || nnzb < 0)
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "bad sizes mb=%lld nb=%lld bs=%d nnzb=%lld", (long long)mb,
                          (long long)nb, bs, (long long)nnzb);
    const int64_t ts = (int64_t)bsrmv_type_size(type);
    if (ts == 0)
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "unknown type %d", (int)type);
    if (order != BSRMV_COL_MAJOR && order != BSRMV_ROW_MAJOR)
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "unknown order %d", (int)order);
    if (bsrmv_type_is_complex(type) && bs > 32)
        return bsrmv_fail(BSRMV_ERR_UNSUPPORTED,
                          "the GPU kernels for %s values are built for bs <= 32, not %d",
                          bsrmv_type_name(type), bs);
    int64_t t;
    if (!bsrmv_mul64(mb, bs, &t) || !bsrmv_mul64(nb, bs, &t) || !bsrmv_mul64(bs, bs, &t) ||
        !bsrmv_mul64(nnzb, t, &t) || t > INT64_MAX / ts)
        return bsrmv_fail(BSRMV_ERR_OVERFLOW, "matrix size overflows 64-bit offsets");
    return BSRMV_SUCCESS;
}

/* A complex value is one 8- or 16-byte load on the device: its arrays must
 * be aligned to the value's size, as cuFloatComplex and cuDoubleComplex
 * arrays are (a misaligned load would be a sticky device error). */
static bsrmv_status check_value_alignment(const char *who, const void *p, bsrmv_type t, const char *name)
{
    const size_t ts = bsrmv_type_size(t);
    if (bsrmv_type_is_complex(t) && (uintptr_t)p % ts)
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "%s: %s is not aligned to %zu bytes (%s values)", who,
                          name, ts, bsrmv_type_name(t));
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
    free_matrix(m->full);
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
        plan_free(m);
    }
    if (m->mm_scratch) {
        DeviceScope ds;
        ds.enter(m->device);
        cudaFree(m->mm_scratch);
    }
    free(m->h_row_ptr);
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
    m->vtype = type;
    m->order = order;
    *out = m;
    return BSRMV_SUCCESS;
}

/* Symmetric storage on the GPU pays for its mirrored half with atomics:
 * it wins where the matrix streams from DRAM (1.45-1.57x the full storage
 * on SPD 27-point grids of ~560 MB, 1.48-1.53x on promoted bcsstk16,
 * bcsstk25 and s1rmq4m1 at bs 6, 75-85 MB full), and loses where the full
 * storage is read from L2: 0.66-0.92x on the same matrices and crystm01,
 * msc04515 at bs 3 and 4, 0.84-0.87x on crystm01 and msc04515 at bs 6,
 * 8-39 MB full (H100, L2 50 MB, calls back to back; docs/SYMMETRIC.md).
 * Where the full storage fits the L2, then, the handle also keeps it, and
 * the plan runs it.  Best effort: without the memory for it the symmetric
 * kernels run. */
static void sym_full_copy(bsrmv_gpu_matrix *m, const bsrmv_matrix *A, void *stream)
{
    int l2 = 0;
    size_t full = 0;
    if (cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, m->device) != cudaSuccess ||
        !bsrmv_bytes(2 * A->nnzb * A->bs * A->bs, bsrmv_type_size(A->type), &full) ||
        full > (size_t)l2) {
        cudaGetLastError();
        return;
    }
    bsrmv_matrix *F = nullptr;
    if (bsrmv_matrix_from_sym(&F, A) == BSRMV_SUCCESS &&
        (A->vtype == A->type || bsrmv_matrix_set_vector_type(F, A->vtype) == BSRMV_SUCCESS) &&
        bsrmv_gpu_matrix_upload(&m->full, F, m->device, stream) == BSRMV_SUCCESS)
        m->dev_bytes += m->full->dev_bytes;
    else
        m->full = nullptr;
    bsrmv_matrix_destroy(F);
}

extern "C" bsrmv_status bsrmv_gpu_matrix_upload(bsrmv_gpu_matrix **dA, const bsrmv_matrix *A, int device,
                                                void *stream)
{
    if (!dA)
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "dA is NULL");
    *dA = nullptr;
    if (!A)
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "A is NULL");
    if (A->vtype != A->type && A->bs > 32)
        return bsrmv_fail(BSRMV_ERR_UNSUPPORTED,
                          "bsrmv_gpu_matrix_upload: float values with double vectors are built "
                          "for bs <= 32 on the GPU, not %d",
                          A->bs);
    DeviceScope ds;
    bsrmv_gpu_matrix *m;
    bsrmv_status st = new_handle(&m, A->mb, A->nb, A->bs, A->nnzb, A->type, A->order, device, ds);
    if (st)
        return st;
    m->vtype = A->vtype;
    m->owns = true;
    m->sym = A->sym;
    m->herm = A->sym && A->herm && bsrmv_type_is_complex(A->type);
    /* The device copy is the library's own, so a 32-bit row_ptr is widened
     * on the way (the device kernels and the plan read int64). */
    const int64_t *rp = A->row_ptr;
    int64_t *wide = nullptr;
    if (!rp) {
        wide = (int64_t *)malloc((size_t)(A->mb + 1) * sizeof *wide);
        if (!wide) {
            free_matrix(m);
            return bsrmv_fail(BSRMV_ERR_NOMEM, "out of host memory widening row_ptr (%lld rows)",
                              (long long)A->mb);
        }
        for (int64_t i = 0; i <= A->mb; i++)
            wide[i] = A->row_ptr32[i];
        rp = wide;
    }
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
        if ((e = cudaMemcpyAsync(m->row_ptr, rp, brp, cudaMemcpyHostToDevice, s)) == cudaSuccess &&
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
        free(wide);
        cudaGetLastError();
        return bsrmv_fail(st, "uploading a %lld-block matrix (%.3g MB): %s", (long long)A->nnzb,
                          (double)(brp + bci + bval) / 1e6, msg);
    }
    m->dev_bytes = brp + bci + bval;
    if (A->sym)
        sym_full_copy(m, A, stream);
    st = plan_analyse(m, rp, A->col_idx);
    free(wide);
    if (st) {
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
                      (st = check_device_ptr(d_val, device, "val")) ||
                      (st = check_value_alignment("bsrmv_gpu_matrix_wrap", d_val, type, "val"))))) {
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
    st = plan_analyse(m, h, nullptr);
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
        return plan_choose(dA);
    if (cfg->kernel == BSRMV_GPU_TRANSPOSE || !cfg_built(dA, *cfg)) {
        char b[96];
        bsrmv_gpu_config_string(cfg, b, sizeof b);
        return bsrmv_fail(BSRMV_ERR_UNSUPPORTED, "kernel %s is not built for bs=%d", b, dA->bs);
    }
    return plan_set(dA, *cfg);
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
    p->vector_type = m->vtype;
    p->order = m->order;
    p->row_len_min = m->len_min;
    p->row_len_max = m->len_max;
    p->empty_rows = m->empty;
    p->row_len_mean = m->len_mean;
    p->row_len_std = m->len_std;
    p->config = m->use_full ? m->full->cfg : m->cfg;
    p->from_tune_table = m->from_tune;
    p->owns_arrays = m->owns;
    p->device_bytes = (m->owns ? m->dev_bytes : 0) + m->sched_bytes + m->mm_scratch_bytes;
    return BSRMV_SUCCESS;
}

/* ------------------------------------------------------------------ */
/* SpMV                                                                */
/* ------------------------------------------------------------------ */

/* T: the values, V: x, y and the sums.  op is OP_N, OP_T or (complex
 * values) OP_C. */
template <typename T, typename V = T>
static bsrmv_status spmv_t(bsrmv_op op, Scalar alpha, const bsrmv_gpu_matrix *m, const void *x,
                           Scalar beta, void *y, int64_t ny, cudaStream_t s)
{
    cudaError_t e;
    const V ta = to_vector_type<V>(alpha), tb = to_vector_type<V>(beta);
    if (ny == 0)
        return BSRMV_SUCCESS;
    if (ta == V(0) || (op != BSRMV_OP_N && m->nnzb == 0)) {
        if ((e = launch_scale<V>((V *)y, ny, tb, s)) != cudaSuccess)
            return cuda_fail(e, "launching the y = beta*y kernel");
        return BSRMV_SUCCESS;
    }
    Args<T, V> a;
    a.mb = m->mb;
    a.nb = m->nb;
    a.bs = m->bs;
    a.row_ptr = m->row_ptr;
    a.col_idx = m->col_idx;
    a.val = (const T *)m->val;
    a.x = (const V *)x;
    a.y = (V *)y;
    a.alpha = ta;
    a.beta = tb;
    a.long_len = 0;
    bsrmv_gpu_config c = m->cfg;
    if (m->sym || op != BSRMV_OP_N) {
        if (!std::is_same<T, V>::value)
            return bsrmv_fail(BSRMV_ERR_UNSUPPORTED, "bsrmv_gpu_spmv: %s is not built for float "
                              "values with double vectors", m->sym ? "symmetric storage" : "A^T x");
        if ((e = launch_scale<V>((V *)y, ny, tb, s)) != cudaSuccess)
            return cuda_fail(e, "launching the y = beta*y kernel");
        if (!m->sym)
            c = {BSRMV_GPU_TRANSPOSE, 0, 0, 0, op == BSRMV_OP_C ? 1 : 0};
        else if (sym_conj_a(m, op))
            c.param = SYM_CONJ_ROW | (m->herm ? 0 : SYM_CONJ_MIRROR);
        else
            c.param = m->herm ? SYM_CONJ_MIRROR : 0;
    }
    e = cudaSuccess;
    int r = launch_cfg(m, c, a, s, &e, false);
    if (r == LAUNCH_NOT_BUILT) {
        char b[96];
        bsrmv_gpu_config_string(&c, b, sizeof b);
        return bsrmv_fail(BSRMV_ERR_UNSUPPORTED, "kernel %s is not built for bs=%d%s", b, m->bs,
                          is_cplx<T>::value                ? " with complex values"
                          : std::is_same<T, V>::value ? ""
                                                      : " with float values and double vectors");
    }
    if (r != LAUNCH_OK || e != cudaSuccess) {
        char b[96], what[160];
        bsrmv_gpu_config_string(&c, b, sizeof b);
        snprintf(what, sizeof what, "launching %s (bs=%d)", b, m->bs);
        return cuda_fail(e, what);
    }
    return BSRMV_SUCCESS;
}

/* What bsrmv_gpu_spmv and _scalars share: the checks, then the product. */
static bsrmv_status gpu_spmv(const char *who, bsrmv_op op, Scalar alpha, const bsrmv_gpu_matrix *dA,
                             const void *d_x, int64_t nx, Scalar beta, void *d_y, int64_t ny,
                             void *stream)
{
    const bool cx = bsrmv_type_is_complex(dA->type);
    /* The conjugate transpose of a real matrix is its transpose. */
    if (op == BSRMV_OP_C && !cx)
        op = BSRMV_OP_T;
    if (op != BSRMV_OP_N && op != BSRMV_OP_T && op != BSRMV_OP_C)
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "%s: unknown op %d", who, (int)op);
    const int64_t rows = dA->mb * dA->bs, cols = dA->nb * dA->bs;
    const int64_t want_x = op == BSRMV_OP_N ? cols : rows, want_y = op == BSRMV_OP_N ? rows : cols;
    if (nx != want_x || ny != want_y)
        return bsrmv_fail(BSRMV_ERR_DIMENSION,
                          "%s: x has %lld entries and y %lld; op(A) needs %lld and %lld", who,
                          (long long)nx, (long long)ny, (long long)want_x, (long long)want_y);
    bsrmv_status st;
    if (!alpha.zero() && (st = bsrmv_check_disjoint(who, d_x, nx, d_y, ny, bsrmv_type_size(dA->vtype))))
        return st;
    DeviceScope ds;
    cudaError_t e = ds.enter(dA->device);
    if (e != cudaSuccess)
        return cuda_fail(e, "cudaSetDevice");
    if (ny > 0 && ((st = check_device_ptr(d_y, dA->device, "y")) ||
                   (st = check_value_alignment(who, d_y, dA->vtype, "y"))))
        return st;
    if (!alpha.zero() && nx > 0 &&
        ((st = check_device_ptr(d_x, dA->device, "x")) || (st = check_value_alignment(who, d_x, dA->vtype, "x"))))
        return st;
    cudaGetLastError(); /* a non-sticky error left by someone else is not ours */
    /* the full storage of a small symmetric matrix: op(A) is A, or conj(A),
     * which is the full storage's op C (complex symmetric) or op T
     * (Hermitian) */
    if (dA->use_full)
        return gpu_spmv(who, sym_conj_a(dA, op) ? op : BSRMV_OP_N, alpha, dA->full, d_x, nx, beta,
                        d_y, ny, stream);
    cudaStream_t s = (cudaStream_t)stream;
    switch (dA->type) {
    case BSRMV_COMPLEX_DOUBLE: return spmv_t<cplx<double>>(op, alpha, dA, d_x, beta, d_y, ny, s);
    case BSRMV_COMPLEX_FLOAT: return spmv_t<cplx<float>>(op, alpha, dA, d_x, beta, d_y, ny, s);
    case BSRMV_DOUBLE: return spmv_t<double>(op, alpha, dA, d_x, beta, d_y, ny, s);
    default:
        return dA->vtype == BSRMV_DOUBLE ? spmv_t<float, double>(op, alpha, dA, d_x, beta, d_y, ny, s)
                                         : spmv_t<float>(op, alpha, dA, d_x, beta, d_y, ny, s);
    }
}

extern "C" bsrmv_status bsrmv_gpu_spmv(bsrmv_op op, double alpha, const bsrmv_gpu_matrix *dA, const void *d_x,
                                       int64_t nx, double beta, void *d_y, int64_t ny, void *stream)
{
    if (!dA)
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "bsrmv_gpu_spmv: dA is NULL");
    return gpu_spmv("bsrmv_gpu_spmv", op, Scalar{alpha, 0.0}, dA, d_x, nx, Scalar{beta, 0.0}, d_y, ny,
                    stream);
}

extern "C" bsrmv_status bsrmv_gpu_spmv_scalars(bsrmv_op op, const void *alpha, const bsrmv_gpu_matrix *dA,
                                               const void *d_x, int64_t nx, const void *beta, void *d_y,
                                               int64_t ny, void *stream)
{
    if (!dA || !alpha || !beta)
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "bsrmv_gpu_spmv_scalars: NULL matrix or scalar");
    return gpu_spmv("bsrmv_gpu_spmv_scalars", op, load_scalar(dA->vtype, alpha), dA, d_x, nx,
                    load_scalar(dA->vtype, beta), d_y, ny, stream);
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
