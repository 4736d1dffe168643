/* Allocation-failure injection (builds with BSRMV_FAULT_INJECTION): every
 * operation is run with its 1st, 2nd, ... allocation failing until it no
 * longer reaches the failing one.  Each failure must be BSRMV_ERR_NOMEM
 * with a message and NULL outputs; the caller's objects must still work
 * afterwards; LeakSanitizer (the sanitizer build) checks nothing leaks.
 * Prints the number of failure points per operation. */
#define _POSIX_C_SOURCE 200809L
#include "internal.h"
#include "testutil.h"

#include <math.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

typedef struct ctx {
    const char *mtx, *mtx_gz;
    bsrmv_coo *coo, *coo_wide;
    bsrmv_matrix *A;  /* square, for SpMV and the solvers */
    bsrmv_precond *P;
    void *x, *y, *b;
    int64_t n;
} ctx;

/* One attempt of an operation: its status; the operation frees what it
 * made on success (so leaks are only the library's). */
typedef bsrmv_status (*op_fn)(ctx *c);

static void healthy(ctx *c);

/* Runs op with allocation k failing for k = 1, 2, ... until the op no
 * longer reaches allocation k; returns the number of failure points. */
static int sweep(const char *name, op_fn op, ctx *c)
{
    int points = 0, absorbed = 0;
    for (int64_t k = 1;; k++) {
        bsrmv_fault_fail_at(k);
        bsrmv_status s = op(c);
        int64_t reached = bsrmv_fault_count();
        bsrmv_fault_fail_at(0);
        if (reached < k) {
            TU_CHECK(s == BSRMV_SUCCESS, "%s: no allocation failed, yet %s: %s", name,
                     bsrmv_status_string(s), bsrmv_last_error());
            break;
        }
        points++;
        /* Some allocations are optional (giving back over-reserved room):
         * their failure is absorbed and the call succeeds. */
        if (s == BSRMV_SUCCESS) {
            absorbed++;
            healthy(c);
            continue;
        }
        TU_CHECK(s == BSRMV_ERR_NOMEM, "%s: allocation %lld failed, the call returned %s (%s)",
                 name, (long long)k, bsrmv_status_string(s), bsrmv_last_error());
        TU_CHECK(strstr(bsrmv_last_error(), "out of memory") ||
                     strstr(bsrmv_last_error(), "memory"),
                 "%s: allocation %lld: message '%s'", name, (long long)k, bsrmv_last_error());
        healthy(c);
    }
    TU_CHECK(points > 0, "%s reached no allocation", name);
    printf("  %-28s %3d failure points (%d absorbed)\n", name, points, absorbed);
    return points;
}

/* The caller's objects still work after a failure. */
static void healthy(ctx *c)
{
    void *y0 = tu_copy_vector(c->y, c->n, BSRMV_DOUBLE);
    TU_OK(bsrmv_spmv(BSRMV_OP_N, 1.0, c->A, c->x, c->n, 0.5, c->y, c->n));
    tu_check_result("after a failure", c->A, BSRMV_OP_N, 1.0, c->x, 0.5, y0, c->y);
    free(y0);
    TU_CHECK(c->coo->nnz > 0 && c->coo->row && c->coo->val, "COO intact");
}

static bsrmv_status op_read_plain(ctx *c)
{
    bsrmv_coo *a = (bsrmv_coo *)c;
    bsrmv_status s = bsrmv_mm_read(c->mtx, &a);
    TU_CHECK(s == BSRMV_SUCCESS || a == NULL, "output set on failure");
    if (!s)
        TU_CHECK(a->nnz == c->coo->nnz, "read %lld entries", (long long)a->nnz);
    bsrmv_coo_destroy(a);
    return s;
}

static bsrmv_status op_read_gz(ctx *c)
{
    bsrmv_coo *a = NULL;
    bsrmv_status s = bsrmv_mm_read(c->mtx_gz, &a);
    TU_CHECK(s == BSRMV_SUCCESS || a == NULL, "output set on failure");
    bsrmv_coo_destroy(a);
    return s;
}

static bsrmv_status convert(const bsrmv_coo *coo, int bs, bsrmv_blocking how)
{
    bsrmv_matrix *M = (bsrmv_matrix *)&M;
    bsrmv_status s = bsrmv_matrix_from_coo(&M, coo, bs, how, BSRMV_DOUBLE, BSRMV_COL_MAJOR);
    TU_CHECK(s == BSRMV_SUCCESS || M == NULL, "output set on failure");
    bsrmv_matrix_destroy(M);
    return s;
}

static bsrmv_status op_split(ctx *c)
{
    return convert(c->coo, 3, BSRMV_SPLIT);
}

static bsrmv_status op_promote(ctx *c)
{
    return convert(c->coo, 2, BSRMV_PROMOTE);
}

static bsrmv_status op_split_sorted(ctx *c)
{
    return convert(c->coo_wide, 2, BSRMV_SPLIT);
}

static bsrmv_status op_from_csr(ctx *c)
{
    /* CSR of the COO's first rows (the entries are sorted by row below). */
    const bsrmv_coo *a = c->coo;
    int64_t *rp = calloc((size_t)a->m + 1, sizeof *rp);
    TU_CHECK(rp, "out of memory");
    for (int64_t k = 0; k < a->nnz; k++)
        rp[a->row[k] + 1]++;
    for (int64_t i = 0; i < a->m; i++)
        rp[i + 1] += rp[i];
    bsrmv_matrix *M = NULL;
    bsrmv_status s = bsrmv_matrix_from_csr(&M, a->m, a->n, rp, a->col, a->val, 2, BSRMV_SPLIT, BSRMV_FLOAT, BSRMV_ROW_MAJOR);
    TU_CHECK(s == BSRMV_SUCCESS || M == NULL, "output set on failure");
    bsrmv_matrix_destroy(M);
    free(rp);
    return s;
}

static bsrmv_status op_count_blocks(ctx *c)
{
    int64_t n1, n2;
    bsrmv_status s = bsrmv_coo_count_blocks(c->coo, 3, &n1);
    if (!s)
        s = bsrmv_coo_count_blocks(c->coo_wide, 2, &n2);
    return s;
}

static bsrmv_status op_create_wrap(ctx *c)
{
    const int64_t *rp;
    const int32_t *ci;
    const void *v;
    bsrmv_matrix_info in;
    TU_OK(bsrmv_matrix_arrays(c->A, &rp, &ci, &v));
    TU_OK(bsrmv_matrix_get_info(c->A, &in));
    bsrmv_matrix *M = NULL, *W = NULL;
    bsrmv_status s = bsrmv_matrix_create(&M, in.mb, in.nb, in.bs, in.nnzb, rp, ci, v,
                                         in.type, in.order);
    TU_CHECK(s == BSRMV_SUCCESS || M == NULL, "output set on failure");
    if (!s)
        s = bsrmv_matrix_wrap(&W, in.mb, in.nb, in.bs, in.nnzb, rp, ci, v, in.type, in.order);
    TU_CHECK(s == BSRMV_SUCCESS || W == NULL, "output set on failure");
    bsrmv_matrix_destroy(M);
    bsrmv_matrix_destroy(W);
    return s;
}

static bsrmv_status op_to_coo(ctx *c)
{
    bsrmv_coo *a = NULL;
    bsrmv_status s = bsrmv_matrix_to_coo(c->A, &a);
    TU_CHECK(s == BSRMV_SUCCESS || a == NULL, "output set on failure");
    bsrmv_coo_destroy(a);
    return s;
}

static bsrmv_status op_spmv(ctx *c)
{
    void *y = tu_copy_vector(c->y, c->n, BSRMV_DOUBLE);
    bsrmv_status s = bsrmv_spmv(BSRMV_OP_N, 2.0, c->A, c->x, c->n, 1.0, y, c->n);
    if (!s)
        s = bsrmv_spmv(BSRMV_OP_T, 2.0, c->A, c->x, c->n, 1.0, y, c->n);
    free(y);
    return s;
}

static bsrmv_status op_precond(ctx *c)
{
    bsrmv_precond *P = (bsrmv_precond *)c;
    bsrmv_status s = bsrmv_precond_block_jacobi(&P, c->A);
    TU_CHECK(s == BSRMV_SUCCESS || P == NULL, "output set on failure");
    bsrmv_precond_destroy(P);
    return s;
}

static bsrmv_status solve(ctx *c, bsrmv_solver method)
{
    void *x = calloc((size_t)c->n, sizeof(double));
    TU_CHECK(x, "out of memory");
    bsrmv_solve_options opt = {.rtol = 1e-6, .max_iter = 200, .restart = 10, .x0_zero = 1};
    bsrmv_solve_report rep;
    bsrmv_status s = bsrmv_solve(method, c->A, c->P, c->b, x, c->n, &opt, &rep);
    free(x);
    return s == BSRMV_ERR_NOT_CONVERGED ? BSRMV_SUCCESS : s;
}

static bsrmv_status op_solve_cg(ctx *c)
{
    return solve(c, BSRMV_SOLVER_CG);
}

static bsrmv_status op_solve_bicgstab(ctx *c)
{
    return solve(c, BSRMV_SOLVER_BICGSTAB);
}

static bsrmv_status op_solve_gmres(ctx *c)
{
    return solve(c, BSRMV_SOLVER_GMRES);
}

static bsrmv_status op_generate(ctx *c)
{
    (void)c;
    bsrmv_matrix *M = NULL;
    bsrmv_status s = bsrmv_generate_block_laplacian(&M, 4, 3, 2, 3, 1, BSRMV_DOUBLE,
                                                    BSRMV_COL_MAJOR);
    bsrmv_matrix_destroy(M);
    M = NULL;
    if (!s)
        s = bsrmv_generate_reservoir(&M, 4, 3, 2, 2, 1, BSRMV_FLOAT, BSRMV_ROW_MAJOR);
    bsrmv_matrix_destroy(M);
    return s;
}

/* A symmetric file of n x n with enough entries to grow the arrays a few
 * times (lower triangle only, as the format wants). */
static void write_mtx(const char *path, int gz, int64_t n)
{
    char line[96];
    gzFile g = gz ? gzopen(path, "wb") : NULL;
    FILE *f = gz ? NULL : fopen(path, "w");
    TU_CHECK(g || f, "open %s", path);
    int64_t count = 0;
    for (int64_t i = 0; i < n; i++)
        count += i < 3 ? i + 1 : 3;
    int len = snprintf(line, sizeof line,
                       "%%%%MatrixMarket matrix coordinate real symmetric\n%lld %lld %lld\n",
                       (long long)n, (long long)n, (long long)count);
    gz ? (void)gzwrite(g, line, (unsigned)len) : (void)fputs(line, f);
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = i < 3 ? 0 : i - 2; j <= i; j++) {
            len = snprintf(line, sizeof line, "%lld %lld %.17g\n", (long long)i + 1,
                           (long long)j + 1, i == j ? 8.0 : -1.0 / (double)(1 + i - j));
            gz ? (void)gzwrite(g, line, (unsigned)len) : (void)fputs(line, f);
        }
    TU_CHECK(gz ? gzclose(g) == Z_OK : fclose(f) == 0, "close %s", path);
}

int main(void)
{
    char mtx[] = "/tmp/bsrmv_nomem_XXXXXX";
    int fd = mkstemp(mtx);
    TU_CHECK(fd >= 0, "mkstemp");
    close(fd);
    char mtx_gz[64];
    snprintf(mtx_gz, sizeof mtx_gz, "%s.gz", mtx);
    const int64_t order = 1500;
    write_mtx(mtx, 0, order);
    write_mtx(mtx_gz, 1, order);

    ctx c = {.mtx = mtx, .mtx_gz = mtx_gz};
    TU_OK(bsrmv_mm_read(mtx, &c.coo));
    /* The same entries in a matrix far wider than they are: the sorting path. */
    TU_OK(bsrmv_coo_create(&c.coo_wide, order, (int64_t)1 << 26, c.coo->nnz));
    memcpy(c.coo_wide->row, c.coo->row, (size_t)c.coo->nnz * sizeof(int64_t));
    for (int64_t k = 0; k < c.coo->nnz; k++)
        c.coo_wide->col[k] = c.coo->col[k] * 40000;
    memcpy(c.coo_wide->val, c.coo->val, (size_t)c.coo->nnz * sizeof(double));
    TU_OK(bsrmv_matrix_from_coo(&c.A, c.coo, 3, BSRMV_SPLIT, BSRMV_DOUBLE, BSRMV_COL_MAJOR));
    TU_OK(bsrmv_precond_block_jacobi(&c.P, c.A));
    c.n = order;
    c.x = tu_random_vector(c.n, BSRMV_DOUBLE, 1);
    c.y = tu_random_vector(c.n, BSRMV_DOUBLE, 2);
    c.b = tu_random_vector(c.n, BSRMV_DOUBLE, 3);

    static const struct {
        const char *name;
        op_fn fn;
    } ops[] = {
        {"mm_read (plain)", op_read_plain},
        {"mm_read (.gz)", op_read_gz},
        {"from_coo split", op_split},
        {"from_coo split (sorting)", op_split_sorted},
        {"from_coo promote", op_promote},
        {"from_csr", op_from_csr},
        {"coo_count_blocks", op_count_blocks},
        {"matrix_create + wrap", op_create_wrap},
        {"matrix_to_coo", op_to_coo},
        {"spmv (N and T)", op_spmv},
        {"precond_block_jacobi", op_precond},
        {"solve CG", op_solve_cg},
        {"solve BiCGSTAB", op_solve_bicgstab},
        {"solve GMRES", op_solve_gmres},
        {"generate", op_generate},
    };
    int total = 0;
    printf("allocation failure points per operation:\n");
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        total += sweep(ops[i].name, ops[i].fn, &c);
    printf("test_nomem: %d failure points, all BSRMV_ERR_NOMEM\n", total);

    bsrmv_precond_destroy(c.P);
    bsrmv_matrix_destroy(c.A);
    bsrmv_coo_destroy(c.coo);
    bsrmv_coo_destroy(c.coo_wide);
    free(c.x);
    free(c.y);
    free(c.b);
    unlink(mtx);
    unlink(mtx_gz);
    return 0;
}
