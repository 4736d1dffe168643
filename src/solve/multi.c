/* Several right-hand sides: A X = B for k columns, each its own recurrence
 * of the single-vector method, the products of all columns batched into
 * SpMMs.
 *
 * The methods are written as straight-line code around one product at a
 * time (cg.c, bicgstab.c, gmres.c).  Rather than a second, batched copy of
 * each, every column runs bsrmv_sv_solve itself, as a coroutine on the
 * caller's thread (ucontext).  Its backend is the caller's with three ops
 * replaced: spmv parks the column; alloc and release hand out its share of
 * pooled workspace.  When every unfinished column is parked, the scheduler
 * serves the products, as few SpMMs as the addresses allow (one when all
 * columns are at the same step), and resumes the columns in order.  A column
 * whose method returns (converged, or failed) has dropped out of the
 * products.  Only one column runs at a time, on the caller's thread, so each
 * column's vector passes are exactly those of a single solve (the same
 * OpenMP team, the same order of sums): a column's iterates differ from
 * bsrmv_solve's only by the rounding of the SpMM.
 *
 * Workspace: the j-th set of vectors a column allocates comes from pool j,
 * one allocation of k sets, set c for column c.  The same vector of every
 * column then lies at one stride, so the SpMM reads X and writes Y in
 * place.  Finished columns between active ones are masked rather than
 * compacted: the SpMM still spans them, writing into their own (dead)
 * workspace, which costs their share of vector traffic but no copies and no
 * second pass over A; compacting would copy x and y of every active column
 * around every product. */
#define _GNU_SOURCE /* ucontext, MAP_ANONYMOUS under -std=c11 */
#include "solve_internal.h"

#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

/* The sanitizers must be told about stack switches. */
#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define MULTI_TSAN 1
#endif
#if __has_feature(address_sanitizer)
#define MULTI_ASAN 1
#endif
#endif
#if defined(__SANITIZE_THREAD__)
#define MULTI_TSAN 1
#endif
#if defined(__SANITIZE_ADDRESS__)
#define MULTI_ASAN 1
#endif
#ifdef MULTI_TSAN
void *__tsan_get_current_fiber(void);
void *__tsan_create_fiber(unsigned flags);
void __tsan_destroy_fiber(void *fiber);
void __tsan_switch_to_fiber(void *fiber, unsigned flags);
#endif
#ifdef MULTI_ASAN
void __sanitizer_start_switch_fiber(void **fake_stack_save, const void *bottom, size_t size);
void __sanitizer_finish_switch_fiber(void *fake_stack_save, const void **bottom_old,
                                     size_t *size_old);
#endif

/* A column's stack: the methods, the ops, an OpenMP fork and the device
 * runtime's calls (mapped lazily, with a guard page below). */
#define STACK_BYTES ((size_t)1 << 20)
/* Vector sets a column holds at once (GMRES: the basis and z). */
#define MAX_POOLS 4

enum { COL_NEW, COL_READY, COL_PARKED, COL_DONE };

typedef struct mrun mrun;

typedef struct mcol {
    sv_backend be; /* first: the replaced ops find the column from it */
    mrun *m;
    int c, state;
    const void *b;
    void *x;
    const void *px; /* the parked product px -> py */
    void *py;
    bsrmv_status reply, st;
    bsrmv_solve_report rep;
    char msg[400];
    unsigned char inuse[MAX_POOLS], used[MAX_POOLS];
    ucontext_t uc;
    char *map;   /* guard page + stack */
    void *fiber; /* TSan */
    void *fake;  /* ASan */
} mcol;

typedef struct pool {
    char *v;
    int count; /* vectors per column */
} pool;

struct mrun {
    sv_backend *inner;
    bsrmv_solver method;
    const bsrmv_solve_options *opt;
    int k;
    size_t vs, vbytes; /* one value, one vector */
    char *X;
    int64_t ldx;
    pool pools[MAX_POOLS];
    int npools;
    mcol *cols;
    ucontext_t main;
    void *main_fiber, *main_fake;
    const void *main_lo;
    size_t main_size;
};

/* The column that starts next (makecontext passes only ints). */
static _Thread_local mcol *starting;

static void to_column(mrun *m, mcol *c)
{
#ifdef MULTI_TSAN
    __tsan_switch_to_fiber(c->fiber, 0);
#endif
#ifdef MULTI_ASAN
    __sanitizer_start_switch_fiber(&m->main_fake, c->uc.uc_stack.ss_sp, c->uc.uc_stack.ss_size);
#endif
    swapcontext(&m->main, &c->uc);
#ifdef MULTI_ASAN
    __sanitizer_finish_switch_fiber(m->main_fake, NULL, NULL);
#endif
}

/* Back to the scheduler; `last`: the column will not be resumed. */
static void to_scheduler(mcol *c, int last)
{
    mrun *m = c->m;
#ifdef MULTI_TSAN
    __tsan_switch_to_fiber(m->main_fiber, 0);
#endif
#ifdef MULTI_ASAN
    __sanitizer_start_switch_fiber(last ? NULL : &c->fake, m->main_lo, m->main_size);
#endif
    swapcontext(&c->uc, &m->main);
#ifdef MULTI_ASAN
    __sanitizer_finish_switch_fiber(c->fake, NULL, NULL);
#endif
    (void)last;
}

static void column_main(void)
{
    mcol *c = starting;
    mrun *m = c->m;
#ifdef MULTI_ASAN
    __sanitizer_finish_switch_fiber(NULL, &m->main_lo, &m->main_size);
#endif
    c->st = bsrmv_sv_solve(m->method, &c->be, c->b, c->x, m->opt, &c->rep);
    if (c->st)
        snprintf(c->msg, sizeof c->msg, "%s", bsrmv_last_error());
    c->state = COL_DONE;
    to_scheduler(c, 1);
}

/* ---- the ops a column's backend replaces ------------------------- */

static bsrmv_status col_spmv(sv_backend *be, const void *x, void *y)
{
    mcol *c = (mcol *)be;
    c->px = x;
    c->py = y;
    c->state = COL_PARKED;
    to_scheduler(c, 0);
    return c->reply;
}

static bsrmv_status col_alloc(sv_backend *be, int count, void **v)
{
    mcol *c = (mcol *)be;
    mrun *m = c->m;
    sv_backend *in = m->inner;
    int j = 0;
    while (j < m->npools && (c->inuse[j] || m->pools[j].count < count))
        j++;
    if (j == MAX_POOLS)
        return in->alloc(in, count, v);
    if (j == m->npools) {
        if ((int64_t)count * m->k > INT32_MAX)
            return bsrmv_fail(BSRMV_ERR_OVERFLOW, "%d solver vectors for %d columns", count,
                              m->k);
        void *p;
        bsrmv_status st = in->alloc(in, count * m->k, &p);
        if (st)
            return st;
        m->pools[j].v = p;
        m->pools[j].count = count;
        m->npools++;
    }
    const pool *pl = &m->pools[j];
    char *mine = pl->v + (size_t)c->c * (size_t)pl->count * m->vbytes;
    /* alloc's contract: zero-filled (the pool was, on its first use) */
    if (c->used[j])
        for (int i = 0; i < count; i++) {
            bsrmv_status st = in->zero(in, mine + (size_t)i * m->vbytes);
            if (st)
                return st;
        }
    c->inuse[j] = c->used[j] = 1;
    *v = mine;
    return BSRMV_SUCCESS;
}

static void col_release(sv_backend *be, void *v)
{
    mcol *c = (mcol *)be;
    mrun *m = c->m;
    for (int j = 0; j < m->npools; j++)
        if ((char *)v == m->pools[j].v + (size_t)c->c * (size_t)m->pools[j].count * m->vbytes) {
            c->inuse[j] = 0;
            return;
        }
    m->inner->release(m->inner, v);
}

/* ---- serving the parked products --------------------------------- */

/* Where a vector lies: region 0 is X, 1 + j pool j, -1 elsewhere; the
 * column whose share holds it and the offset in that share. */
typedef struct where {
    int region;
    int64_t col;
    size_t off;
} where;

static where locate(const mrun *m, const void *p)
{
    where w = {-1, 0, 0};
    const uintptr_t a = (uintptr_t)p;
    for (int r = 0; r <= m->npools; r++) {
        const uintptr_t base = (uintptr_t)(r ? m->pools[r - 1].v : m->X);
        const size_t stride = r ? (size_t)m->pools[r - 1].count * m->vbytes
                                : (size_t)m->ldx * m->vs;
        if (!base || a < base || (a - base) / stride >= (uintptr_t)m->k)
            continue;
        w.region = r;
        w.col = (int64_t)((a - base) / stride);
        w.off = (size_t)((a - base) % stride);
        return w;
    }
    return w;
}

static char *region_at(const mrun *m, int region, int64_t col, size_t off, int64_t *ld)
{
    if (region == 0) {
        *ld = m->ldx;
        return m->X + (size_t)col * (size_t)m->ldx * m->vs + off;
    }
    const pool *pl = &m->pools[region - 1];
    *ld = (int64_t)pl->count * sv_slot(m->inner);
    return pl->v + (size_t)col * (size_t)pl->count * m->vbytes + off;
}

/* One product per run of parked columns whose x and y are the same vector
 * of their shares (y in a pool, so that masked columns write only their
 * own dead workspace); a lone column, or a backend without spmm, spmv. */
static void serve(mrun *m, const int *parked, int np)
{
    sv_backend *in = m->inner;
    for (int i = 0; i < np;) {
        mcol *c = &m->cols[parked[i]];
        const where wx = locate(m, c->px), wy = locate(m, c->py);
        int j = i + 1;
        if (in->spmm && wx.region >= 0 && wy.region >= 1 && wx.col == c->c && wy.col == c->c)
            while (j < np) {
                const mcol *d = &m->cols[parked[j]];
                const where dx = locate(m, d->px), dy = locate(m, d->py);
                if (dx.region != wx.region || dx.off != wx.off || dx.col != d->c ||
                    dy.region != wy.region || dy.off != wy.off || dy.col != d->c)
                    break;
                j++;
            }
        bsrmv_status st;
        if (j - i == 1) {
            st = in->spmv(in, c->px, c->py);
        } else {
            const int first = parked[i], width = parked[j - 1] - first + 1;
            int64_t ldx, ldy;
            const char *X = region_at(m, wx.region, first, wx.off, &ldx);
            char *Y = region_at(m, wy.region, first, wy.off, &ldy);
            st = in->spmm(in, width, X, ldx, Y, ldy);
        }
        for (int l = i; l < j; l++)
            m->cols[parked[l]].reply = st;
        i = j;
    }
}

/* ---- the driver --------------------------------------------------- */

bsrmv_status bsrmv_sv_check_multi(const char *who, int64_t n, int k, const void *B, int64_t ldb,
                                  const void *X, int64_t ldx, size_t vs)
{
    if (k < 1)
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "%s: k = %d right-hand sides, need k >= 1", who,
                          k);
    const int64_t min_ld = n > 1 ? n : 1;
    if (ldb < min_ld || ldx < min_ld)
        return bsrmv_fail(BSRMV_ERR_ARGUMENT,
                          "%s: leading dimensions ldb = %lld, ldx = %lld; columns of %lld "
                          "entries need both >= %lld",
                          who, (long long)ldb, (long long)ldx, (long long)n, (long long)min_ld);
    int64_t sb, sx;
    size_t bb, bx;
    if (!bsrmv_mul64(k - 1, ldb, &sb) || !bsrmv_add64(sb, n, &sb) ||
        !bsrmv_mul64(k - 1, ldx, &sx) || !bsrmv_add64(sx, n, &sx) || !bsrmv_bytes(sb, vs, &bb) ||
        !bsrmv_bytes(sx, vs, &bx) || bb > UINTPTR_MAX - (uintptr_t)B ||
        bx > UINTPTR_MAX - (uintptr_t)X)
        return bsrmv_fail(BSRMV_ERR_OVERFLOW,
                          "%s: B or X (leading dimensions %lld, %lld, k = %d) exceeds the "
                          "address space",
                          who, (long long)ldb, (long long)ldx, k);
    if (n == 0)
        return BSRMV_SUCCESS;
    return bsrmv_check_disjoint(who, B, sb, X, sx, vs);
}

static void release_all(mrun *m)
{
    for (int c = 0; c < m->k; c++) {
        mcol *col = &m->cols[c];
        if (col->map)
            munmap(col->map, STACK_BYTES + (size_t)sysconf(_SC_PAGESIZE));
#ifdef MULTI_TSAN
        if (col->fiber)
            __tsan_destroy_fiber(col->fiber);
#endif
    }
    for (int j = 0; j < m->npools; j++)
        m->inner->release(m->inner, m->pools[j].v);
    bsrmv_free(m->cols);
}

/* Column c's backend, stack and context.  A function of its own: GCC
 * counts a loop variable live across getcontext as clobbered. */
static bsrmv_status start_column(mrun *m, int c, const char *B, int64_t ldb, size_t page)
{
    const size_t vs = m->vs;
    mcol *col = &m->cols[c];
    col->be = *m->inner;
    col->be.alloc = col_alloc;
    col->be.release = col_release;
    col->be.spmv = col_spmv;
    col->m = m;
    col->c = c;
    col->b = B + (size_t)c * (size_t)ldb * vs;
    col->x = m->X + (size_t)c * (size_t)m->ldx * vs;
    col->state = COL_NEW;
    void *map = mmap(NULL, STACK_BYTES + page, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (map == MAP_FAILED)
        return bsrmv_fail(BSRMV_ERR_NOMEM, "out of memory for the stacks of %d columns", m->k);
    col->map = map;
    if (mprotect(map, page, PROT_NONE) || getcontext(&col->uc))
        return bsrmv_fail(BSRMV_ERR_NOMEM, "cannot set up the stack of column %d", c);
    col->uc.uc_stack.ss_sp = col->map + page;
    col->uc.uc_stack.ss_size = STACK_BYTES;
    col->uc.uc_link = NULL;
    makecontext(&col->uc, column_main, 0);
#ifdef MULTI_TSAN
    col->fiber = __tsan_create_fiber(0);
#endif
    return BSRMV_SUCCESS;
}

static bsrmv_status start_columns(mrun *m, const char *B, int64_t ldb)
{
    const size_t page = (size_t)sysconf(_SC_PAGESIZE);
    for (int c = 0; c < m->k; c++) {
        const bsrmv_status st = start_column(m, c, B, ldb, page);
        if (st)
            return st;
    }
    return BSRMV_SUCCESS;
}

bsrmv_status bsrmv_sv_solve_multi(bsrmv_solver method, sv_backend *be, int k, const void *B,
                                  int64_t ldb, void *X, int64_t ldx,
                                  const bsrmv_solve_options *opt, bsrmv_solve_report *reports)
{
    if (be->n == 0 && !be->collective) {
        /* nothing to park on: the single solve of each empty column (a
         * process without rows of a distributed solve takes part in the
         * others' products, so it runs the scheduler on its empty vectors) */
        for (int c = 0; c < k; c++) {
            bsrmv_status st =
                bsrmv_sv_solve(method, be, B, X, opt, reports ? &reports[c] : NULL);
            if (st)
                return st;
        }
        return BSRMV_SUCCESS;
    }
    mrun m = {0};
    m.inner = be;
    m.method = method;
    m.opt = opt;
    m.k = k;
    m.vs = bsrmv_type_size(be->type);
    m.vbytes = (size_t)sv_slot(be) * m.vs;
    m.X = X;
    m.ldx = ldx;
    m.cols = bsrmv_calloc((size_t)k, sizeof *m.cols);
    if (!m.cols)
        return bsrmv_fail(BSRMV_ERR_NOMEM, "out of memory for %d columns", k);
#ifdef MULTI_TSAN
    m.main_fiber = __tsan_get_current_fiber();
#endif
    bsrmv_status st = start_columns(&m, B, ldb);
    if (st) {
        release_all(&m);
        return st;
    }
    int *parked = bsrmv_malloc((size_t)k * sizeof *parked);
    if (!parked) {
        release_all(&m);
        return bsrmv_fail(BSRMV_ERR_NOMEM, "out of memory for %d columns", k);
    }
    /* A hard error (not a column's non-convergence) stops every column:
     * the parked ones get it as their product's status and unwind. */
    int abort_col = -1;
    for (;;) {
        int np = 0;
        for (int c = 0; c < k; c++) {
            mcol *col = &m.cols[c];
            if (col->state == COL_NEW)
                starting = col;
            if (col->state == COL_NEW || col->state == COL_READY)
                to_column(&m, col);
            if (col->state == COL_PARKED)
                parked[np++] = c;
            else if (col->state == COL_DONE && abort_col < 0 && col->st &&
                     col->st != BSRMV_ERR_NOT_CONVERGED)
                abort_col = c;
        }
        if (np == 0)
            break;
        if (abort_col >= 0)
            for (int i = 0; i < np; i++)
                m.cols[parked[i]].reply = m.cols[abort_col].st;
        else
            serve(&m, parked, np);
        for (int i = 0; i < np; i++)
            m.cols[parked[i]].state = COL_READY;
    }
    bsrmv_free(parked);

    int failed = -1;
    for (int c = 0; c < k; c++) {
        if (reports)
            reports[c] = m.cols[c].rep;
        if (failed < 0 && m.cols[c].st)
            failed = c;
    }
    if (abort_col >= 0)
        failed = abort_col;
    st = failed >= 0 ? m.cols[failed].st : BSRMV_SUCCESS;
    if (st)
        bsrmv_fail(st, "column %d of %d: %s", failed, k, m.cols[failed].msg);
    release_all(&m);
    return st;
}
