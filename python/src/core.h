// What the modules of bsrmv._core share (core.cpp: the host and device
// matrices; mpi.cpp: the distributed ones): failures as exceptions, the
// dtype of an array against the library's types, the host matrix handle,
// scalars and multivector strides, the solvers' options and report.
#ifndef BSRMV_PY_CORE_H
#define BSRMV_PY_CORE_H

#include <bsrmv.h>

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include <algorithm>
#include <complex>
#include <cstdint>
#include <cstring>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace nb = nanobind;

namespace bsrmv_py {

// A failed library call: the status and bsrmv_last_error()'s message, read
// on the thread that made the call (the message is per thread).
struct Failure {
    bsrmv_status status;
    std::string message;
};

[[noreturn]] inline void raise(bsrmv_status s, std::string msg)
{
    throw Failure{s, std::move(msg)};
}

inline void check(bsrmv_status s)
{
    if (s != BSRMV_SUCCESS)
        raise(s, bsrmv_last_error());
}

inline bsrmv_type type_of(nb::dlpack::dtype dt)
{
    if (dt == nb::dtype<double>())
        return BSRMV_DOUBLE;
    if (dt == nb::dtype<float>())
        return BSRMV_FLOAT;
    if (dt == nb::dtype<std::complex<double>>())
        return BSRMV_COMPLEX_DOUBLE;
    if (dt == nb::dtype<std::complex<float>>())
        return BSRMV_COMPLEX_FLOAT;
    raise(BSRMV_ERR_ARGUMENT, "values must be float32, float64, complex64 or complex128");
}

inline bool is_complex(bsrmv_type t)
{
    return t == BSRMV_COMPLEX_FLOAT || t == BSRMV_COMPLEX_DOUBLE;
}

// The NumPy name of a library type.
inline const char *type_name(bsrmv_type t)
{
    switch (t) {
    case BSRMV_FLOAT: return "float32";
    case BSRMV_DOUBLE: return "float64";
    case BSRMV_COMPLEX_FLOAT: return "complex64";
    case BSRMV_COMPLEX_DOUBLE: return "complex128";
    }
    return "?";
}

inline nb::dlpack::dtype dlpack_of(bsrmv_type t)
{
    switch (t) {
    case BSRMV_FLOAT: return nb::dtype<float>();
    case BSRMV_DOUBLE: return nb::dtype<double>();
    case BSRMV_COMPLEX_FLOAT: return nb::dtype<std::complex<float>>();
    case BSRMV_COMPLEX_DOUBLE: return nb::dtype<std::complex<double>>();
    }
    return nb::dtype<double>();
}

using Index64 = nb::ndarray<const int64_t, nb::ndim<1>, nb::c_contig, nb::device::cpu>;
using Index32 = nb::ndarray<const int32_t, nb::ndim<1>, nb::c_contig, nb::device::cpu>;
using Values = nb::ndarray<nb::ro, nb::c_contig, nb::device::cpu>;
using InVec = nb::ndarray<nb::ro, nb::ndim<1>, nb::c_contig, nb::device::cpu>;
using OutVec = nb::ndarray<nb::ndim<1>, nb::c_contig, nb::device::cpu>;

// A host matrix.  Wrapped arrays stay alive through `keep`, which holds the
// Python arrays the library reads; library-owned arrays die with `A`.
struct Matrix {
    bsrmv_matrix *A = nullptr;
    bsrmv_matrix_info info{};
    nb::object keep;

    explicit Matrix(bsrmv_matrix *a, nb::object k = nb::none()) : A(a), keep(std::move(k))
    {
        check(bsrmv_matrix_get_info(A, &info));
    }
    Matrix(const Matrix &) = delete;
    Matrix &operator=(const Matrix &) = delete;
    ~Matrix() { bsrmv_matrix_destroy(A); }

    // x, y, b and the multivectors are of the vector type (the value type
    // unless mixed precision).
    void check_vec(nb::dlpack::dtype dt, const char *what) const
    {
        if (type_of(dt) != info.vector_type)
            raise(BSRMV_ERR_ARGUMENT, std::string(what) + " is " + type_name(type_of(dt)) +
                                          ", the matrix's vectors are " +
                                          type_name(info.vector_type));
    }
};

// set_num_threads()'s count applied on the calling thread.
void apply_threads();

// A scalar as a value of the vector type t (what bsrmv_spmv_scalars and
// bsrmv_spmm_scalars read); a real type refuses a non-zero imaginary part.
struct scalar_buf {
    alignas(std::complex<double>) unsigned char v[sizeof(std::complex<double>)];
};
inline void put_scalar(bsrmv_type t, scalar_buf &buf, std::complex<double> v)
{
    if (!is_complex(t) && v.imag() != 0)
        raise(BSRMV_ERR_ARGUMENT, std::string("complex alpha or beta for a ") + type_name(t) +
                                      " matrix");
    switch (t) {
    case BSRMV_FLOAT: {
        float f = (float)v.real();
        std::memcpy(buf.v, &f, sizeof f);
        break;
    }
    case BSRMV_DOUBLE: {
        double d = v.real();
        std::memcpy(buf.v, &d, sizeof d);
        break;
    }
    case BSRMV_COMPLEX_FLOAT: {
        std::complex<float> c(v);
        std::memcpy(buf.v, &c, sizeof c);
        break;
    }
    case BSRMV_COMPLEX_DOUBLE: std::memcpy(buf.v, &v, sizeof v); break;
    }
}

// The op (0: A, 1: A^T, 2: A^H) as the library's, with alpha and beta
// stored in a and b as values of t: what each product call checks first.
inline bsrmv_op product_args(int op, bsrmv_type t, std::complex<double> alpha,
                             std::complex<double> beta, scalar_buf &a, scalar_buf &b)
{
    if (op < 0 || op > 2)
        raise(BSRMV_ERR_ARGUMENT, "op must be 0, 1 or 2");
    put_scalar(t, a, alpha);
    put_scalar(t, b, beta);
    const bsrmv_op ops[3] = {BSRMV_OP_N, BSRMV_OP_T, BSRMV_OP_C};
    return ops[op];
}

// A multivector as bsrmv_spmm reads it: the leading dimension of a 2-D
// array in `layout` (row: unit stride along a row, col: down a column),
// in elements.  The package picks the layout from the strides; an array
// that does not have it is refused here, never copied.
template <class Array>
int64_t leading_dim(const Array &a, bsrmv_layout layout, const char *what)
{
    int64_t n = (int64_t)a.shape(0), k = (int64_t)a.shape(1);
    bool row = layout == BSRMV_LAYOUT_ROW;
    // unit: the stride that must be 1; ld: the other one.  A dimension of
    // one entry has no meaningful stride.
    int64_t unit = row ? a.stride(1) : a.stride(0), ld = row ? a.stride(0) : a.stride(1);
    int64_t inner = row ? k : n, outer = row ? n : k;
    if (outer <= 1 || a.size() == 0)
        return std::max<int64_t>(inner, 1);
    if (inner > 1 && unit != 1)
        raise(BSRMV_ERR_ARGUMENT, std::string(what) + " is not " +
                                      (row ? "row-major (unit stride along rows)"
                                           : "column-major (unit stride down columns)"));
    if (ld < std::max<int64_t>(inner, 1))
        raise(BSRMV_ERR_ARGUMENT, std::string(what) + ": strides overlap or are negative");
    return ld;
}

// The solvers' options: the residual of each iteration goes to *hist.
bsrmv_solve_options solve_options(double rtol, int max_iter, int restart, bool x0_zero,
                                  std::vector<double> *hist);
// (status, message, iterations, converged, rel_residual, true_rel_residual,
// seconds, residual history): what the package's SolveReport is made of.
nb::tuple report_tuple(bsrmv_status s, const std::string &msg, const bsrmv_solve_report &r,
                       std::vector<double> &&hist);

// One host solve: the preconditioner make_p makes (if asked), then run(P,
// options, report) without the GIL.  Status, message, report and residual
// history; a solve that ran but did not converge returns normally (the
// caller decides), every other failure raises.  M: a matrix class with
// check_vec (the host one, the distributed one).
template <typename Mat, typename MakeP, typename Run>
std::tuple<bsrmv_status, std::string, bsrmv_solve_report, std::vector<double>>
host_solve(const Mat &M, bool precond, MakeP make_p, InVec b, OutVec x, double rtol,
           int max_iter, int restart, bool x0_zero, double inner_rtol, Run run)
{
    M.check_vec(b.dtype(), "b");
    M.check_vec(x.dtype(), "x");
    if (b.shape(0) != x.shape(0))
        raise(BSRMV_ERR_DIMENSION, "b and x differ in length");
    std::vector<double> hist;
    bsrmv_solve_options o = solve_options(rtol, max_iter, restart, x0_zero, &hist);
    o.inner_rtol = inner_rtol;
    bsrmv_solve_report r{};
    bsrmv_status s;
    std::string msg;
    {
        nb::gil_scoped_release nogil;
        apply_threads();
        bsrmv_precond *P = nullptr;
        s = precond ? make_p(&P) : BSRMV_SUCCESS;
        if (s == BSRMV_SUCCESS)
            s = run(P, &o, &r);
        msg = bsrmv_last_error();
        bsrmv_precond_destroy(P);
    }
    if (s != BSRMV_SUCCESS && s != BSRMV_ERR_NOT_CONVERGED)
        raise(s, msg);
    return {s, s == BSRMV_SUCCESS ? std::string() : msg, r, std::move(hist)};
}

#ifdef BSRMV_PY_MPI
// mpi.cpp: the distributed matrix class and functions.
void bind_mpi(nb::module_ &m);
#endif

} // namespace bsrmv_py

#endif
