// bsrmv._core: the thin layer between Python and the C API.  Array
// conversion policy (dtypes, contiguity, copies) lives in the Python package;
// this module only checks what the C library cannot see (array lengths,
// dtypes against the matrix type, overlap), calls the library with the GIL
// released and turns failures into the package's exception classes.
#include "core.h"

#include <bsrmv_gen.h>

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/complex.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>

#include <omp.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <complex>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

namespace bsrmv_py {

// Python exception class per status code, registered by the package at
// import time (bsrmv/_errors.py defines them).
constexpr int n_status = BSRMV_ERR_NOT_CONVERGED + 1;
std::array<PyObject *, n_status> error_class{};

// set_num_threads() sets this; each call applies it on the calling thread,
// because omp_set_num_threads only affects the thread that calls it and
// Python code may call from any thread.
std::atomic<int> thread_count{0};

void apply_threads()
{
    int n = thread_count.load(std::memory_order_relaxed);
    if (n > 0 && omp_get_max_threads() != n)
        omp_set_num_threads(n);
}

// RowPtr: Index64 or Index32, the width the caller's indptr has (read in
// place when wrapped).
// A matrix of the library (a new handle from a builder) with its vector
// type set: double on float values is mixed precision, float on double
// values is refused by the library.
Matrix *own(bsrmv_matrix *A, bsrmv_type vector_type, nb::object keep = nb::none())
{
    bsrmv_status s = bsrmv_matrix_set_vector_type(A, vector_type);
    if (s != BSRMV_SUCCESS) {
        std::string msg = bsrmv_last_error();
        bsrmv_matrix_destroy(A);
        raise(s, msg);
    }
    return new Matrix(A, std::move(keep));
}

// sym: a bsrmv_symmetry, the arrays are the diagonal and upper blocks of a
// symmetric or Hermitian matrix (the library has that form for a 64-bit
// row_ptr only).  vector_double: mixed precision for float values; a
// complex matrix's vectors are of its own type.
template <class RowPtr>
Matrix *make_matrix(RowPtr row_ptr, Index32 col_idx, Values val, int64_t mb, int64_t nb,
                    int bs, int row_major, bool copy, nb::object keep, int sym,
                    int vector_double)
{
    bsrmv_type t = type_of(val.dtype());
    int64_t nnzb = (int64_t)col_idx.shape(0);
    if ((int64_t)row_ptr.shape(0) != mb + 1)
        raise(BSRMV_ERR_DIMENSION, "indptr has " + std::to_string(row_ptr.shape(0)) +
                                       " entries, expected mb+1 = " + std::to_string(mb + 1));
    if (bs < 1)
        raise(BSRMV_ERR_ARGUMENT, "block size must be >= 1");
    if ((int64_t)val.size() != nnzb * bs * bs)
        raise(BSRMV_ERR_DIMENSION, "data has " + std::to_string(val.size()) +
                                       " values, expected nnzb*bs*bs = " +
                                       std::to_string(nnzb * bs * bs));
    bsrmv_matrix *A = nullptr;
    bsrmv_order order = row_major ? BSRMV_ROW_MAJOR : BSRMV_COL_MAJOR;
    if (sym && mb != nb)
        raise(BSRMV_ERR_DIMENSION, "symmetric storage needs a square matrix, got " +
                                       std::to_string(mb) + " x " + std::to_string(nb) +
                                       " blocks");
    if (sym && !std::is_same_v<RowPtr, Index64>)
        raise(BSRMV_ERR_ARGUMENT, "symmetric storage needs an int64 indptr");
    bsrmv_status s;
    {
        nb::gil_scoped_release nogil;
        if constexpr (std::is_same_v<RowPtr, Index64>) {
            if (sym == BSRMV_SYM_HERMITIAN)
                s = copy ? bsrmv_matrix_create_herm(&A, nb, bs, nnzb, row_ptr.data(),
                                                    col_idx.data(), val.data(), t, order)
                         : bsrmv_matrix_wrap_herm(&A, nb, bs, nnzb, row_ptr.data(),
                                                  col_idx.data(), val.data(), t, order);
            else if (sym)
                s = copy ? bsrmv_matrix_create_sym(&A, nb, bs, nnzb, row_ptr.data(),
                                                   col_idx.data(), val.data(), t, order)
                         : bsrmv_matrix_wrap_sym(&A, nb, bs, nnzb, row_ptr.data(),
                                                 col_idx.data(), val.data(), t, order);
            else
                s = copy ? bsrmv_matrix_create(&A, mb, nb, bs, nnzb, row_ptr.data(),
                                               col_idx.data(), val.data(), t, order)
                         : bsrmv_matrix_wrap(&A, mb, nb, bs, nnzb, row_ptr.data(),
                                             col_idx.data(), val.data(), t, order);
        } else {
            s = copy ? bsrmv_matrix_create_i32(&A, mb, nb, bs, nnzb, row_ptr.data(),
                                               col_idx.data(), val.data(), t, order)
                     : bsrmv_matrix_wrap_i32(&A, mb, nb, bs, nnzb, row_ptr.data(),
                                             col_idx.data(), val.data(), t, order);
        }
    }
    check(s);
    return own(A, is_complex(t) ? t : vector_double ? BSRMV_DOUBLE : BSRMV_FLOAT,
               copy ? nb::none() : std::move(keep));
}

// keep_sym: a "symmetric" file becomes a matrix in symmetric storage built
// from its one triangle (other files as without it).
Matrix *read_mtx(const std::string &path, int bs, int promote, uint64_t seed, int dbl,
                 bool keep_sym)
{
    bsrmv_matrix *A = nullptr;
    bsrmv_coo *coo = nullptr;
    bsrmv_status s;
    {
        nb::gil_scoped_release nogil;
        int sym = 0;
        s = keep_sym ? bsrmv_mm_read_sym(path.c_str(), &coo, &sym)
                     : bsrmv_mm_read(path.c_str(), &coo);
        bsrmv_blocking how = promote ? BSRMV_PROMOTE : BSRMV_SPLIT;
        bsrmv_type t = dbl ? BSRMV_DOUBLE : BSRMV_FLOAT;
        if (s == BSRMV_SUCCESS)
            s = sym == BSRMV_SYM_HERMITIAN
                    ? bsrmv_matrix_from_coo_herm(&A, coo, bs, how, t, BSRMV_ROW_MAJOR)
                : sym ? bsrmv_matrix_from_coo_sym(&A, coo, bs, how, t, BSRMV_ROW_MAJOR)
                      : bsrmv_matrix_from_coo(&A, coo, bs, how, t, BSRMV_ROW_MAJOR);
        if (s == BSRMV_SUCCESS && promote)
            s = bsrmv_matrix_perturb_promoted(A, seed);
    }
    std::string msg = bsrmv_last_error();
    bsrmv_coo_destroy(coo);
    if (s != BSRMV_SUCCESS)
        raise(s, msg);
    return new Matrix(A);
}

Matrix *generate_grid(int64_t nx, int64_t ny, int64_t nz, int bs, int points, uint64_t seed,
                      int dbl, int row_major)
{
    bsrmv_matrix *A = nullptr;
    bsrmv_status s;
    {
        nb::gil_scoped_release nogil;
        apply_threads();
        s = bsrmv_generate_grid(&A, nx, ny, nz, bs, points, seed,
                                dbl ? BSRMV_DOUBLE : BSRMV_FLOAT,
                                row_major ? BSRMV_ROW_MAJOR : BSRMV_COL_MAJOR);
    }
    check(s);
    return new Matrix(A);
}

// The symmetric (herm: Hermitian) storage of a full matrix (entries
// checked against their mirrors to tol), and back; new library-owned
// matrices of the same vector type.
Matrix *to_sym(const Matrix &M, double tol, bool herm)
{
    bsrmv_matrix *S = nullptr;
    bsrmv_status s;
    {
        nb::gil_scoped_release nogil;
        s = herm ? bsrmv_matrix_to_herm(&S, M.A, tol) : bsrmv_matrix_to_sym(&S, M.A, tol);
    }
    check(s);
    return own(S, M.info.vector_type);
}

Matrix *from_sym(const Matrix &M)
{
    bsrmv_matrix *F = nullptr;
    bsrmv_status s;
    {
        nb::gil_scoped_release nogil;
        s = bsrmv_matrix_from_sym(&F, M.A);
    }
    check(s);
    return own(F, M.info.vector_type);
}

// Views of the library's arrays, owned by the Matrix object (so they keep
// it, and through it the arrays, alive).  Structure is read-only.
nb::tuple matrix_arrays(nb::handle self_h)
{
    Matrix &M = nb::cast<Matrix &>(self_h);
    const int32_t *ci;
    const void *v;
    size_t np1 = (size_t)M.info.mb + 1, nnzb = (size_t)M.info.nnzb, bs = (size_t)M.info.bs;
    nb::object a_rp;
    if (M.info.index == BSRMV_INDEX_32) {
        const int32_t *rp;
        check(bsrmv_matrix_arrays_i32(M.A, &rp, &ci, &v));
        a_rp = nb::cast(nb::ndarray<nb::numpy, const int32_t, nb::ndim<1>>(rp, {np1}, self_h));
    } else {
        const int64_t *rp;
        check(bsrmv_matrix_arrays(M.A, &rp, &ci, &v));
        a_rp = nb::cast(nb::ndarray<nb::numpy, const int64_t, nb::ndim<1>>(rp, {np1}, self_h));
    }
    nb::ndarray<nb::numpy, const int32_t, nb::ndim<1>> a_ci(ci, {nnzb}, self_h);
    size_t shape[3] = {nnzb, bs, bs};
    nb::dlpack::dtype dt = dlpack_of(M.info.type);
    nb::ndarray<nb::numpy> a_v(const_cast<void *>(v), 3, shape, self_h, nullptr, dt);
    return nb::make_tuple(a_rp, a_ci, a_v);
}

void matrix_spmv(const Matrix &M, int op, double alpha, InVec x, double beta, OutVec y)
{
    M.check_vec(x.dtype(), "x");
    M.check_vec(y.dtype(), "y");
    size_t es = bsrmv_type_size(M.info.type);
    auto xb = (uintptr_t)x.data(), yb = (uintptr_t)y.data();
    if (x.shape(0) && y.shape(0) && xb < yb + y.shape(0) * es && yb < xb + x.shape(0) * es)
        raise(BSRMV_ERR_ARGUMENT, "x and y must not overlap");
    bsrmv_status s;
    {
        nb::gil_scoped_release nogil;
        apply_threads();
        s = bsrmv_spmv(op ? BSRMV_OP_T : BSRMV_OP_N, alpha, M.A, x.data(), (int64_t)x.shape(0),
                       beta, y.data(), (int64_t)y.shape(0));
    }
    check(s);
}

// y = alpha op(A) x + beta y with complex alpha and beta (op 0: A, 1: A^T,
// 2: A^H), through bsrmv_spmv_scalars.
void matrix_spmv_c(const Matrix &M, int op, std::complex<double> alpha, InVec x,
                   std::complex<double> beta, OutVec y)
{
    M.check_vec(x.dtype(), "x");
    M.check_vec(y.dtype(), "y");
    const bsrmv_type t = M.info.vector_type;
    size_t es = bsrmv_type_size(t);
    auto xb = (uintptr_t)x.data(), yb = (uintptr_t)y.data();
    if (x.shape(0) && y.shape(0) && xb < yb + y.shape(0) * es && yb < xb + x.shape(0) * es)
        raise(BSRMV_ERR_ARGUMENT, "x and y must not overlap");
    scalar_buf a, b;
    const bsrmv_op o = product_args(op, t, alpha, beta, a, b);
    bsrmv_status s;
    {
        nb::gil_scoped_release nogil;
        apply_threads();
        s = bsrmv_spmv_scalars(o, a.v, M.A, x.data(), (int64_t)x.shape(0), b.v, y.data(),
                               (int64_t)y.shape(0));
    }
    check(s);
}

// Y = alpha op(A) X + beta Y for the columns of X (op 0: A, 1: A^T, 2:
// A^H), through bsrmv_spmm_scalars.
void matrix_spmm(const Matrix &M, int op, std::complex<double> alpha,
                 nb::ndarray<nb::ro, nb::ndim<2>, nb::device::cpu> X, std::complex<double> beta,
                 nb::ndarray<nb::ndim<2>, nb::device::cpu> Y, int row_layout)
{
    M.check_vec(X.dtype(), "x");
    M.check_vec(Y.dtype(), "y");
    scalar_buf a, b;
    const bsrmv_op o = product_args(op, M.info.vector_type, alpha, beta, a, b);
    if (X.shape(1) != Y.shape(1))
        raise(BSRMV_ERR_DIMENSION, "x has " + std::to_string(X.shape(1)) + " columns, y " +
                                       std::to_string(Y.shape(1)));
    int64_t n_in = op ? M.info.rows : M.info.cols, n_out = op ? M.info.cols : M.info.rows;
    if ((int64_t)X.shape(0) != n_in || (int64_t)Y.shape(0) != n_out)
        raise(BSRMV_ERR_DIMENSION, "x has " + std::to_string(X.shape(0)) + " rows and y " +
                                       std::to_string(Y.shape(0)) + ", expected " +
                                       std::to_string(n_in) + " and " + std::to_string(n_out));
    if (X.shape(1) > (size_t)INT32_MAX)
        raise(BSRMV_ERR_OVERFLOW, "more than 2**31-1 vectors");
    int k = (int)X.shape(1);
    if (k == 0)
        return;
    bsrmv_layout layout = row_layout ? BSRMV_LAYOUT_ROW : BSRMV_LAYOUT_COL;
    int64_t ldx = leading_dim(X, layout, "x");
    int64_t ldy = leading_dim(Y, layout, "y");
    bsrmv_status s;
    {
        nb::gil_scoped_release nogil;
        apply_threads();
        s = bsrmv_spmm_scalars(o, a.v, M.A, k, X.data(), ldx, b.v, Y.data(), ldy, layout);
    }
    check(s);
}

// Median seconds of one bsrmv_spmv call, timed in C++ (the baseline the
// benchmark subtracts to get the Python call overhead).
double time_c_spmv(const Matrix &M, InVec x, OutVec y, int reps)
{
    M.check_vec(x.dtype(), "x");
    M.check_vec(y.dtype(), "y");
    std::vector<double> t((size_t)std::max(reps, 1));
    bsrmv_status s = BSRMV_SUCCESS;
    {
        nb::gil_scoped_release nogil;
        apply_threads();
        const int inner = 100;
        for (double &ti : t) {
            auto t0 = std::chrono::steady_clock::now();
            for (int k = 0; k < inner && s == BSRMV_SUCCESS; k++)
                s = bsrmv_spmv(BSRMV_OP_N, 1.0, M.A, x.data(), (int64_t)x.shape(0), 0.0,
                               y.data(), (int64_t)y.shape(0));
            ti = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() /
                 inner;
        }
    }
    check(s);
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
}

// Residual history from the solver's monitor (no Python involved, so the
// solve runs without the GIL).
int record_residual(int, double rel, void *ctx)
{
    static_cast<std::vector<double> *>(ctx)->push_back(rel);
    return 0;
}

nb::object history_array(std::vector<double> &&h)
{
    auto *store = new std::vector<double>(std::move(h));
    nb::capsule owner(store, [](void *p) noexcept { delete static_cast<std::vector<double> *>(p); });
    return nb::cast(nb::ndarray<nb::numpy, double, nb::ndim<1>>(store->data(), {store->size()},
                                                                 owner));
}

nb::tuple report_tuple(bsrmv_status s, const std::string &msg, const bsrmv_solve_report &r,
                       std::vector<double> &&hist)
{
    return nb::make_tuple((int)s, msg, r.iterations, r.converged != 0, r.rel_residual,
                          r.true_rel_residual, r.seconds, history_array(std::move(hist)));
}

bsrmv_solve_options solve_options(double rtol, int max_iter, int restart, bool x0_zero,
                                  std::vector<double> *hist)
{
    bsrmv_solve_options o{};
    o.rtol = rtol;
    o.max_iter = max_iter;
    o.restart = restart;
    o.x0_zero = x0_zero;
    o.monitor = record_residual;
    o.monitor_ctx = hist;
    return o;
}

nb::tuple matrix_solve(const Matrix &M, int method, bool precond, InVec b, OutVec x, double rtol,
                       int max_iter, int restart, bool x0_zero)
{
    auto [s, msg, r, hist] = host_solve(
        M, precond, [&](bsrmv_precond **P) { return bsrmv_precond_block_jacobi(P, M.A); }, b, x,
        rtol, max_iter, restart, x0_zero, 0.0,
        [&](bsrmv_precond *P, const bsrmv_solve_options *o, bsrmv_solve_report *rep) {
            return bsrmv_solve((bsrmv_solver)method, M.A, P, b.data(), x.data(),
                               (int64_t)b.shape(0), o, rep);
        });
    return report_tuple(s, msg, r, std::move(hist));
}

// Iterative refinement: the corrections solved on Af (float values, double
// vectors; the block-Jacobi preconditioner built from it), the residuals
// on the double matrix M.
nb::tuple matrix_solve_refined(const Matrix &M, const Matrix &Af, int method, bool precond,
                               InVec b, OutVec x, double rtol, int max_iter, int restart,
                               bool x0_zero, double inner_rtol)
{
    auto [s, msg, r, hist] = host_solve(
        M, precond, [&](bsrmv_precond **P) { return bsrmv_precond_block_jacobi(P, Af.A); }, b,
        x, rtol, max_iter, restart, x0_zero, inner_rtol,
        [&](bsrmv_precond *P, const bsrmv_solve_options *o, bsrmv_solve_report *rep) {
            return bsrmv_solve_refined((bsrmv_solver)method, M.A, Af.A, P, b.data(), x.data(),
                                       (int64_t)b.shape(0), o, rep);
        });
    return nb::make_tuple(report_tuple(s, msg, r, std::move(hist)), r.refinements);
}

// ---- GPU ---------------------------------------------------------------
// Device arrays arrive as raw pointers (the package reads them from
// __cuda_array_interface__ or DLPack and keeps the owners alive); streams
// as cudaStream_t values (0: the legacy default stream).

void *as_ptr(uintptr_t p) { return reinterpret_cast<void *>(p); }

// The library's device handles are not thread-safe: calls on one handle
// are serialised here, since they run without the GIL.
struct GpuMatrix {
    bsrmv_gpu_matrix *A = nullptr;
    bsrmv_gpu_plan_info plan{};
    std::mutex mu;
    GpuMatrix(const GpuMatrix &) = delete;
    GpuMatrix &operator=(const GpuMatrix &) = delete;
    explicit GpuMatrix(bsrmv_gpu_matrix *a) : A(a)
    {
        check(bsrmv_gpu_matrix_get_plan(A, &plan));
    }
    ~GpuMatrix() { bsrmv_gpu_matrix_destroy(A); }
};

// type: a bsrmv_type value (the package maps the array's dtype)
GpuMatrix *gpu_wrap(uintptr_t row_ptr, uintptr_t col_idx, uintptr_t val, int64_t mb, int64_t nb,
                    int bs, int64_t nnzb, int type, int row_major, int device)
{
    if (type < BSRMV_FLOAT || type > BSRMV_COMPLEX_DOUBLE)
        raise(BSRMV_ERR_ARGUMENT, "unknown value type " + std::to_string(type));
    bsrmv_gpu_matrix *A = nullptr;
    bsrmv_status s;
    {
        nb::gil_scoped_release nogil;
        s = bsrmv_gpu_matrix_wrap(&A, mb, nb, bs, nnzb, (const int64_t *)as_ptr(row_ptr),
                                  (const int32_t *)as_ptr(col_idx), as_ptr(val), (bsrmv_type)type,
                                  row_major ? BSRMV_ROW_MAJOR : BSRMV_COL_MAJOR, device);
    }
    check(s);
    return new GpuMatrix(A);
}

GpuMatrix *gpu_upload(const Matrix &M, int device, uintptr_t stream)
{
    bsrmv_gpu_matrix *A = nullptr;
    bsrmv_status s;
    {
        nb::gil_scoped_release nogil;
        s = bsrmv_gpu_matrix_upload(&A, M.A, device, as_ptr(stream));
    }
    check(s);
    return new GpuMatrix(A);
}

// op 0: A, 1: A^T, 2: A^H; alpha and beta as values of the vector type
// (bsrmv_gpu_spmv_scalars), complex ones refused for a real matrix.
void gpu_spmv(GpuMatrix &G, int op, std::complex<double> alpha, uintptr_t x, int64_t nx,
              std::complex<double> beta, uintptr_t y, int64_t ny, uintptr_t stream)
{
    scalar_buf a, b;
    const bsrmv_op o = product_args(op, G.plan.vector_type, alpha, beta, a, b);
    bsrmv_status s;
    {
        nb::gil_scoped_release nogil;
        std::lock_guard<std::mutex> lock(G.mu);
        s = bsrmv_gpu_spmv_scalars(o, a.v, G.A, as_ptr(x), nx, b.v, as_ptr(y), ny,
                                   as_ptr(stream));
    }
    check(s);
}

// X and Y: k vectors in `row_layout` with leading dimensions in elements
// (the package reads them from the arrays' strides).
void gpu_spmm(GpuMatrix &G, int op, std::complex<double> alpha, int k, uintptr_t X, int64_t ldx,
              std::complex<double> beta, uintptr_t Y, int64_t ldy, int row_layout,
              uintptr_t stream)
{
    scalar_buf a, b;
    const bsrmv_op o = product_args(op, G.plan.vector_type, alpha, beta, a, b);
    bsrmv_status s;
    {
        nb::gil_scoped_release nogil;
        std::lock_guard<std::mutex> lock(G.mu);
        s = bsrmv_gpu_spmm_scalars(o, a.v, G.A, k, as_ptr(X), ldx, b.v, as_ptr(Y), ldy,
                                   row_layout ? BSRMV_LAYOUT_ROW : BSRMV_LAYOUT_COL,
                                   as_ptr(stream));
    }
    check(s);
}

nb::tuple gpu_solve(GpuMatrix &G, int method, const Matrix *host_for_precond, uintptr_t b,
                    uintptr_t x, int64_t n, double rtol, int max_iter, int restart, bool x0_zero,
                    uintptr_t stream)
{
    std::vector<double> hist;
    bsrmv_solve_options o = solve_options(rtol, max_iter, restart, x0_zero, &hist);
    bsrmv_solve_report r{};
    bsrmv_status s = BSRMV_SUCCESS;
    std::string msg;
    {
        nb::gil_scoped_release nogil;
        std::lock_guard<std::mutex> lock(G.mu);
        bsrmv_precond *P = nullptr;
        bsrmv_gpu_precond *dP = nullptr;
        if (host_for_precond) {
            apply_threads();
            s = bsrmv_precond_block_jacobi(&P, host_for_precond->A);
            if (s == BSRMV_SUCCESS)
                s = bsrmv_gpu_precond_upload(&dP, P, G.plan.device);
        }
        if (s == BSRMV_SUCCESS)
            s = bsrmv_gpu_solve((bsrmv_solver)method, G.A, dP, as_ptr(b), as_ptr(x), n, &o, &r,
                                as_ptr(stream));
        msg = bsrmv_last_error();
        bsrmv_gpu_precond_destroy(dP);
        bsrmv_precond_destroy(P);
    }
    if (s != BSRMV_SUCCESS && s != BSRMV_ERR_NOT_CONVERGED)
        raise(s, msg);
    return report_tuple(s, s == BSRMV_SUCCESS ? std::string() : msg, r, std::move(hist));
}

// bsrmv_gpu_solve_refined: residuals on G (double), corrections on Gf
// (its mixed-precision copy), block Jacobi from the host matrix of Gf.
nb::tuple gpu_solve_refined(GpuMatrix &G, GpuMatrix &Gf, int method,
                            const Matrix *host_for_precond, uintptr_t b, uintptr_t x, int64_t n,
                            double rtol, int max_iter, int restart, bool x0_zero,
                            double inner_rtol, uintptr_t stream)
{
    if (&G == &Gf)
        raise(BSRMV_ERR_ARGUMENT, "the refined solve needs two matrices (A and its mixed copy)");
    std::vector<double> hist;
    bsrmv_solve_options o = solve_options(rtol, max_iter, restart, x0_zero, &hist);
    o.inner_rtol = inner_rtol;
    bsrmv_solve_report r{};
    bsrmv_status s = BSRMV_SUCCESS;
    std::string msg;
    {
        nb::gil_scoped_release nogil;
        std::scoped_lock lock(G.mu, Gf.mu);
        bsrmv_precond *P = nullptr;
        bsrmv_gpu_precond *dP = nullptr;
        if (host_for_precond) {
            apply_threads();
            s = bsrmv_precond_block_jacobi(&P, host_for_precond->A);
            if (s == BSRMV_SUCCESS)
                s = bsrmv_gpu_precond_upload(&dP, P, Gf.plan.device);
        }
        if (s == BSRMV_SUCCESS)
            s = bsrmv_gpu_solve_refined((bsrmv_solver)method, G.A, Gf.A, dP, as_ptr(b),
                                        as_ptr(x), n, &o, &r, as_ptr(stream));
        msg = bsrmv_last_error();
        bsrmv_gpu_precond_destroy(dP);
        bsrmv_precond_destroy(P);
    }
    if (s != BSRMV_SUCCESS && s != BSRMV_ERR_NOT_CONVERGED)
        raise(s, msg);
    return nb::make_tuple(report_tuple(s, s == BSRMV_SUCCESS ? std::string() : msg, r,
                                       std::move(hist)),
                          r.refinements);
}

int gpu_device_count()
{
    int n = 0;
    bsrmv_status s = bsrmv_gpu_device_count(&n);
    return s == BSRMV_SUCCESS ? n : 0;
}

// bsrmv_gpu_matrix_tune; the plan read again for `kernel`.  Returns the
// GPU time it took (ms).
double gpu_tune(GpuMatrix &G, int candidates, uintptr_t stream)
{
    bsrmv_status s;
    double ms = 0;
    {
        nb::gil_scoped_release nogil;
        std::lock_guard<std::mutex> lock(G.mu);
        s = bsrmv_gpu_matrix_tune(G.A, candidates, 0, as_ptr(stream), &ms);
        if (s == BSRMV_SUCCESS)
            s = bsrmv_gpu_matrix_get_plan(G.A, &G.plan);
    }
    check(s);
    return ms;
}

std::string gpu_kernel(const GpuMatrix &G)
{
    char buf[128];
    bsrmv_gpu_config_string(&G.plan.config, buf, sizeof buf);
    return buf;
}

} // namespace bsrmv_py

using namespace bsrmv_py;

NB_MODULE(_core, m)
{
    m.doc() = "bsrmv C library bindings (use the bsrmv package, not this module)";

    nb::register_exception_translator([](const std::exception_ptr &p, void *) {
        try {
            std::rethrow_exception(p);
        } catch (const Failure &f) {
            PyObject *cls = (f.status > 0 && f.status < n_status) ? error_class[f.status]
                                                                   : nullptr;
            std::string msg = f.message.empty() ? bsrmv_status_string(f.status) : f.message;
            PyErr_SetString(cls ? cls : PyExc_RuntimeError, msg.c_str());
        }
    });

    m.def("_register_errors", [](nb::dict classes) {
        for (auto [k, v] : classes) {
            int s = nb::cast<int>(k);
            if (s > 0 && s < n_status) {
                Py_XDECREF(error_class[s]);
                error_class[s] = nb::object(v, nb::detail::borrow_t{}).release().ptr();
            }
        }
    });
    m.def("status_string", [](int s) { return std::string(bsrmv_status_string((bsrmv_status)s)); });
    m.attr("n_status") = n_status;

    m.def("set_num_threads", [](int n) {
        if (n < 1)
            raise(BSRMV_ERR_ARGUMENT, "set_num_threads: n must be >= 1");
        thread_count.store(n);
        omp_set_num_threads(n);
    });
    m.def("get_num_threads", []() {
        apply_threads();
        return bsrmv_num_threads();
    });
    m.def("has_kernel", [](int bs) { return bsrmv_cpu_has_kernel(bs) != 0; });
#ifdef BSRMV_PY_MPI
    bind_mpi(m);
    m.attr("has_mpi") = true;
#else
    m.attr("has_mpi") = false;
#endif

    nb::class_<Matrix>(m, "Matrix")
        .def_static("make", &make_matrix<Index64>, nb::arg("row_ptr").noconvert(),
                    nb::arg("col_idx").noconvert(), nb::arg("val").noconvert(), nb::arg("mb"),
                    nb::arg("nb"), nb::arg("bs"), nb::arg("row_major"), nb::arg("copy"),
                    nb::arg("keep"), nb::arg("sym"), nb::arg("vector_double"),
                    nb::rv_policy::take_ownership)
        .def_static("make_i32", &make_matrix<Index32>, nb::arg("row_ptr").noconvert(),
                    nb::arg("col_idx").noconvert(), nb::arg("val").noconvert(), nb::arg("mb"),
                    nb::arg("nb"), nb::arg("bs"), nb::arg("row_major"), nb::arg("copy"),
                    nb::arg("keep"), nb::arg("sym"), nb::arg("vector_double"),
                    nb::rv_policy::take_ownership)
        .def_static("read_mtx", &read_mtx, nb::rv_policy::take_ownership)
        .def_static("generate_grid", &generate_grid, nb::rv_policy::take_ownership)
        .def("to_sym", &to_sym, nb::arg("tol"), nb::arg("herm") = false,
             nb::rv_policy::take_ownership)
        .def("from_sym", &from_sym, nb::rv_policy::take_ownership)
        .def("arrays", [](nb::handle self) { return matrix_arrays(self); })
        .def("spmv", &matrix_spmv, nb::arg("op"), nb::arg("alpha"), nb::arg("x").noconvert(),
             nb::arg("beta"), nb::arg("y").noconvert())
        .def("spmv_c", &matrix_spmv_c, nb::arg("op"), nb::arg("alpha"),
             nb::arg("x").noconvert(), nb::arg("beta"), nb::arg("y").noconvert())
        .def("spmm", &matrix_spmm, nb::arg("op"), nb::arg("alpha"), nb::arg("x").noconvert(),
             nb::arg("beta"), nb::arg("y").noconvert(), nb::arg("row_layout"))
        .def("time_c_spmv", &time_c_spmv, nb::arg("x").noconvert(), nb::arg("y").noconvert(),
             nb::arg("reps"))
        .def("solve", &matrix_solve, nb::arg("method"), nb::arg("precond"),
             nb::arg("b").noconvert(), nb::arg("x").noconvert(), nb::arg("rtol"),
             nb::arg("max_iter"), nb::arg("restart"), nb::arg("x0_zero"))
        .def("solve_refined", &matrix_solve_refined, nb::arg("af"), nb::arg("method"),
             nb::arg("precond"), nb::arg("b").noconvert(), nb::arg("x").noconvert(),
             nb::arg("rtol"), nb::arg("max_iter"), nb::arg("restart"), nb::arg("x0_zero"),
             nb::arg("inner_rtol"))
        .def_prop_ro("mb", [](const Matrix &M) { return M.info.mb; })
        .def_prop_ro("nb", [](const Matrix &M) { return M.info.nb; })
        .def_prop_ro("bs", [](const Matrix &M) { return M.info.bs; })
        .def_prop_ro("nnzb", [](const Matrix &M) { return M.info.nnzb; })
        .def_prop_ro("is_double", [](const Matrix &M) { return M.info.type == BSRMV_DOUBLE; })
        .def_prop_ro("vector_double",
                     [](const Matrix &M) { return M.info.vector_type == BSRMV_DOUBLE; })
        .def_prop_ro("symmetric", [](const Matrix &M) { return M.info.symmetric != 0; })
        .def_prop_ro("hermitian",
                     [](const Matrix &M) { return M.info.symmetric == BSRMV_SYM_HERMITIAN; })
        .def_prop_ro("dtype_name", [](const Matrix &M) { return type_name(M.info.type); })
        .def_prop_ro("vector_dtype_name",
                     [](const Matrix &M) { return type_name(M.info.vector_type); })
        .def_prop_ro("row_major", [](const Matrix &M) { return M.info.order == BSRMV_ROW_MAJOR; })
        .def_prop_ro("owns_arrays", [](const Matrix &M) { return M.info.owns_arrays != 0; })
        .def_prop_ro("spmv_bytes", [](const Matrix &M) { return bsrmv_matrix_spmv_bytes(M.A); });

    m.def("gpu_device_count", &gpu_device_count);
    nb::class_<GpuMatrix>(m, "GpuMatrix")
        .def_static("wrap", &gpu_wrap, nb::rv_policy::take_ownership)
        .def_static("upload", &gpu_upload, nb::rv_policy::take_ownership)
        .def("spmv", &gpu_spmv)
        .def("spmm", &gpu_spmm)
        .def("solve", &gpu_solve, nb::arg("method"), nb::arg("host_for_precond").none(),
             nb::arg("b"), nb::arg("x"), nb::arg("n"), nb::arg("rtol"), nb::arg("max_iter"),
             nb::arg("restart"), nb::arg("x0_zero"), nb::arg("stream"))
        .def("solve_refined", &gpu_solve_refined, nb::arg("af"), nb::arg("method"),
             nb::arg("host_for_precond").none(), nb::arg("b"), nb::arg("x"), nb::arg("n"),
             nb::arg("rtol"), nb::arg("max_iter"), nb::arg("restart"), nb::arg("x0_zero"),
             nb::arg("inner_rtol"), nb::arg("stream"))
        .def("tune", &gpu_tune, nb::arg("candidates"), nb::arg("stream"))
        .def_prop_ro("kernel", &gpu_kernel)
        .def_prop_ro("device", [](const GpuMatrix &G) { return G.plan.device; })
        .def_prop_ro("vector_dtype_name",
                     [](const GpuMatrix &G) { return type_name(G.plan.vector_type); })
        .def_prop_ro("owns_arrays", [](const GpuMatrix &G) { return G.plan.owns_arrays != 0; });
}
