// bsrmv._core's distributed matrices (bsrmv_mpi.h), built when the C
// library has its MPI part: the package passes an mpi4py communicator as
// its Fortran handle (Comm.py2f), so this module needs MPI's C library only
// and mpi4py must run on the same MPI.  Every call is collective, as the
// library's: the package makes each rank call in the same order.
#include "core.h"

#include <bsrmv_mpi.h>

#include <nanobind/stl/complex.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>

namespace bsrmv_py {

namespace {

MPI_Comm comm_of(int64_t fortran_handle)
{
    int up = 0;
    MPI_Initialized(&up);
    if (!up)
        raise(BSRMV_ERR_ARGUMENT, "MPI is not initialised (import mpi4py.MPI first)");
    MPI_Comm c = MPI_Comm_f2c((MPI_Fint)fortran_handle);
    if (c == MPI_COMM_NULL)
        raise(BSRMV_ERR_ARGUMENT, "the communicator is MPI_COMM_NULL");
    return c;
}

// A distributed matrix.  The library copies the caller's arrays, so
// nothing Python-side is kept alive.  Destroying it frees persistent
// requests and a duplicated communicator: after MPI_Finalize that is
// skipped (the memory goes with the process).
struct DistMatrix {
    bsrmv_dist_matrix *A = nullptr;
    bsrmv_dist_info info{};

    explicit DistMatrix(bsrmv_dist_matrix *a) : A(a) { check(bsrmv_dist_matrix_get_info(A, &info)); }
    DistMatrix(const DistMatrix &) = delete;
    DistMatrix &operator=(const DistMatrix &) = delete;
    ~DistMatrix() { release(); }
    void release()
    {
        int done = 0;
        MPI_Finalized(&done);
        if (A && !done)
            bsrmv_dist_matrix_destroy(A);
        A = nullptr;
    }
    bsrmv_dist_matrix *get() const
    {
        if (!A)
            raise(BSRMV_ERR_ARGUMENT, "the distributed matrix has been freed");
        return A;
    }
    void check_vec(nb::dlpack::dtype dt, const char *what) const
    {
        if (type_of(dt) != info.type)
            raise(BSRMV_ERR_ARGUMENT, std::string(what) + " is " + type_name(type_of(dt)) +
                                          ", the matrix is " + type_name(info.type));
    }
};

// This rank's block rows as BSR arrays with global block columns; sym: a
// bsrmv_symmetry (the diagonal and upper blocks of a square matrix).
DistMatrix *dist_create(int64_t comm, int64_t mb_global, int64_t nb_global, int bs,
                        int64_t row_begin, int64_t col_begin, int64_t nb, Index64 row_ptr,
                        Index64 col_idx, Values val, int row_major, int sym)
{
    MPI_Comm c = comm_of(comm);
    const bsrmv_type t = type_of(val.dtype());
    const int64_t mb = (int64_t)row_ptr.shape(0) - 1, nnzb = (int64_t)col_idx.shape(0);
    if (mb < 0)
        raise(BSRMV_ERR_DIMENSION, "indptr is empty");
    if (bs < 1 || (int64_t)val.size() != nnzb * bs * bs)
        raise(BSRMV_ERR_DIMENSION, "data has " + std::to_string(val.size()) +
                                       " values, expected nnzb*bs*bs = " +
                                       std::to_string(nnzb * (int64_t)bs * bs));
    const bsrmv_order order = row_major ? BSRMV_ROW_MAJOR : BSRMV_COL_MAJOR;
    bsrmv_dist_matrix *A = nullptr;
    bsrmv_status s;
    {
        nb::gil_scoped_release nogil;
        s = sym ? bsrmv_dist_matrix_create_sym(&A, c, nb_global, bs, row_begin, mb, nnzb,
                                               row_ptr.data(), col_idx.data(), val.data(), t,
                                               order, (bsrmv_symmetry)sym)
                : bsrmv_dist_matrix_create(&A, c, mb_global, nb_global, bs, row_begin, mb,
                                           col_begin, nb, nnzb, row_ptr.data(), col_idx.data(),
                                           val.data(), t, order);
    }
    check(s);
    return new DistMatrix(A);
}

// G on root (None elsewhere) distributed by rows; starts: root's row
// partition (size + 1 entries) or empty for the balanced one.
DistMatrix *dist_scatter(int64_t comm, int root, const Matrix *G, Index64 starts)
{
    MPI_Comm c = comm_of(comm);
    int rank = 0;
    MPI_Comm_rank(c, &rank);
    bsrmv_dist_matrix *A = nullptr;
    bsrmv_status s;
    {
        nb::gil_scoped_release nogil;
        s = bsrmv_dist_matrix_scatter(&A, c, root, rank == root && G ? G->A : nullptr,
                                      starts.shape(0) ? starts.data() : nullptr);
    }
    check(s);
    return new DistMatrix(A);
}

// y = alpha op(A) x + beta y on this rank's parts (op 0: A, 1: A^T, 2: A^H).
void dist_spmv(DistMatrix &D, int op, std::complex<double> alpha, InVec x,
               std::complex<double> beta, OutVec y)
{
    bsrmv_dist_matrix *A = D.get();
    D.check_vec(x.dtype(), "x");
    D.check_vec(y.dtype(), "y");
    scalar_buf a, b;
    const bsrmv_op o = product_args(op, D.info.type, alpha, beta, a, b);
    bsrmv_status s;
    {
        nb::gil_scoped_release nogil;
        apply_threads();
        s = bsrmv_dist_spmv_scalars(o, a.v, A, x.data(), (int64_t)x.shape(0), b.v, y.data(),
                                    (int64_t)y.shape(0));
    }
    check(s);
}

// Y = alpha op(A) X + beta Y for the columns of this rank's part of X.
void dist_spmm(DistMatrix &D, int op, std::complex<double> alpha,
               nb::ndarray<nb::ro, nb::ndim<2>, nb::device::cpu> X, std::complex<double> beta,
               nb::ndarray<nb::ndim<2>, nb::device::cpu> Y, int row_layout)
{
    bsrmv_dist_matrix *A = D.get();
    D.check_vec(X.dtype(), "x");
    D.check_vec(Y.dtype(), "y");
    if (X.shape(1) != Y.shape(1) || X.shape(1) > (size_t)INT32_MAX)
        raise(BSRMV_ERR_DIMENSION, "x has " + std::to_string(X.shape(1)) + " columns, y " +
                                       std::to_string(Y.shape(1)));
    scalar_buf a, b;
    const bsrmv_op o = product_args(op, D.info.type, alpha, beta, a, b);
    const bsrmv_layout layout = row_layout ? BSRMV_LAYOUT_ROW : BSRMV_LAYOUT_COL;
    const int64_t ldx = leading_dim(X, layout, "x"), ldy = leading_dim(Y, layout, "y");
    bsrmv_status s;
    {
        nb::gil_scoped_release nogil;
        apply_threads();
        s = bsrmv_dist_spmm_scalars(o, a.v, A, (int)X.shape(1), X.data(), ldx, b.v, Y.data(),
                                    ldy, layout);
    }
    check(s);
}

// Solves A x = b on this rank's rows, with the block-Jacobi
// preconditioner of the ranks' diagonal blocks where asked.  A solve that
// ran but did not converge returns its report (the same on every rank).
nb::tuple dist_solve(DistMatrix &D, int method, bool precond, InVec b, OutVec x, double rtol,
                     int max_iter, int restart, bool x0_zero)
{
    bsrmv_dist_matrix *A = D.get();
    auto [s, msg, r, hist] = host_solve(
        D, precond, [&](bsrmv_precond **P) { return bsrmv_dist_precond_block_jacobi(P, A); }, b,
        x, rtol, max_iter, restart, x0_zero, 0.0,
        [&](bsrmv_precond *P, const bsrmv_solve_options *o, bsrmv_solve_report *rep) {
            return bsrmv_dist_solve((bsrmv_solver)method, A, P, b.data(), x.data(),
                                    (int64_t)b.shape(0), o, rep);
        });
    return report_tuple(s, msg, r, std::move(hist));
}

} // namespace

void bind_mpi(nb::module_ &m)
{
    nb::class_<DistMatrix>(m, "DistMatrix")
        .def_static("create", &dist_create, nb::arg("comm"), nb::arg("mb_global"),
                    nb::arg("nb_global"), nb::arg("bs"), nb::arg("row_begin"),
                    nb::arg("col_begin"), nb::arg("nb"), nb::arg("row_ptr").noconvert(),
                    nb::arg("col_idx").noconvert(), nb::arg("val").noconvert(),
                    nb::arg("row_major"), nb::arg("sym"), nb::rv_policy::take_ownership)
        .def_static("scatter", &dist_scatter, nb::arg("comm"), nb::arg("root"),
                    nb::arg("g").none(), nb::arg("starts").noconvert(),
                    nb::rv_policy::take_ownership)
        .def("spmv", &dist_spmv, nb::arg("op"), nb::arg("alpha"), nb::arg("x").noconvert(),
             nb::arg("beta"), nb::arg("y").noconvert())
        .def("spmm", &dist_spmm, nb::arg("op"), nb::arg("alpha"), nb::arg("x").noconvert(),
             nb::arg("beta"), nb::arg("y").noconvert(), nb::arg("row_layout"))
        .def("solve", &dist_solve, nb::arg("method"), nb::arg("precond"),
             nb::arg("b").noconvert(), nb::arg("x").noconvert(), nb::arg("rtol"),
             nb::arg("max_iter"), nb::arg("restart"), nb::arg("x0_zero"))
        .def("free", &DistMatrix::release)
        .def_prop_ro("info", [](const DistMatrix &D) {
            const bsrmv_dist_info &i = D.info;
            nb::dict d;
            d["rank"] = i.rank;
            d["size"] = i.size;
            d["mb_global"] = i.mb_global;
            d["nb_global"] = i.nb_global;
            d["bs"] = i.bs;
            d["row_begin"] = i.row_begin;
            d["mb"] = i.mb;
            d["col_begin"] = i.col_begin;
            d["nb"] = i.nb;
            d["nnzb_local"] = i.nnzb_local;
            d["nnzb_offrank"] = i.nnzb_offrank;
            d["ghosts"] = i.ghosts;
            d["recv_neighbors"] = i.recv_neighbors;
            d["send_neighbors"] = i.send_neighbors;
            d["halo_send_bytes"] = i.halo_send_bytes;
            d["halo_recv_bytes"] = i.halo_recv_bytes;
            d["symmetric"] = i.symmetric;
            d["row_major"] = i.order == BSRMV_ROW_MAJOR;
            d["dtype_name"] = type_name(i.type);
            return d;
        });
}

} // namespace bsrmv_py
