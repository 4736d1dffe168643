/* Thread safety as the header states it (ThreadSanitizer build: make
 * test-tsan): several threads run SpMV and SpMM on one shared const
 * matrix, each with its own vectors, OpenMP team and scratch buffer, and
 * failing calls in different threads keep their own messages in
 * bsrmv_last_error(). */
#define _POSIX_C_SOURCE 200809L
#include "internal.h"
#include "testutil.h"

#include <pthread.h>
#include <string.h>

enum { THREADS = 4, ROUNDS = 6 };

typedef struct job {
    const bsrmv_matrix *A;
    int id;
    int64_t n;
} job;

/* SpMV, op N and T in turn, and SpMM of two column-major vectors: op T
 * and the SpMM's packing use the thread's scratch buffer (src/scratch.c),
 * which each thread gives back half way and frees when it exits. */
static void *spmv_worker(void *arg)
{
    const job *j = arg;
    const int64_t n = j->n;
    for (int r = 0; r < ROUNDS; r++) {
        if (r == ROUNDS / 2)
            bsrmv_release_scratch();
        bsrmv_op op = (bsrmv_op)((j->id + r) & 1);
        double *x = tu_random_vector(2 * n, BSRMV_DOUBLE, (uint64_t)(j->id * 100 + r));
        double *y = tu_random_vector(2 * n, BSRMV_DOUBLE, (uint64_t)(j->id * 100 + r + 50));
        double *y0 = tu_copy_vector(y, 2 * n, BSRMV_DOUBLE);
        TU_OK(bsrmv_spmv(op, 1.5, j->A, x, n, -0.5, y, n));
        tu_check_result("concurrent spmv", j->A, op, 1.5, x, -0.5, y0, y);
        memcpy(y, y0, (size_t)(2 * n) * sizeof *y);
        TU_OK(bsrmv_spmm(op, 1.5, j->A, 2, x, n, -0.5, y, n, BSRMV_LAYOUT_COL));
        for (int c = 0; c < 2; c++)
            tu_check_result("concurrent spmm", j->A, op, 1.5, x + c * n, -0.5, y0 + c * n, y + c * n);
        free(x);
        free(y);
        free(y0);
    }
    return NULL;
}

/* Every thread fails in its own way, over and over: the message it reads
 * back must always be its own. */
static void *failing_worker(void *arg)
{
    const job *j = arg;
    char want[64], path[64];
    double x[4] = {0}, y[4] = {0};
    for (int r = 0; r < 200; r++) {
        switch ((j->id + r) % 3) {
        case 0: /* a dimension error naming this thread's lengths */
            TU_CHECK(bsrmv_spmv(BSRMV_OP_N, 1.0, j->A, x, 1000 + j->id, 0.0, y, 1) ==
                         BSRMV_ERR_DIMENSION,
                     "dimension error");
            snprintf(want, sizeof want, "x has %d", 1000 + j->id);
            break;
        case 1: /* a file that does not exist, named after the thread */
            snprintf(path, sizeof path, "/nonexistent/bsrmv_thread_%d_%d.mtx", j->id, r);
            TU_CHECK(bsrmv_mm_read(path, &(bsrmv_coo *){NULL}) == BSRMV_ERR_IO, "I/O error");
            snprintf(want, sizeof want, "%s", path);
            break;
        default: /* a block size error */
            TU_CHECK(bsrmv_coo_count_blocks(&(bsrmv_coo){0}, -j->id, &(int64_t){0}) ==
                         BSRMV_ERR_ARGUMENT,
                     "argument error");
            snprintf(want, sizeof want, "block size %d < 1", -j->id);
        }
        TU_CHECK(strstr(bsrmv_last_error(), want), "thread %d wanted '%s', read '%s'", j->id,
                 want, bsrmv_last_error());
    }
    return NULL;
}

static void run(void *(*fn)(void *), const bsrmv_matrix *A, int64_t n)
{
    pthread_t t[THREADS];
    job jobs[THREADS];
    for (int i = 0; i < THREADS; i++) {
        jobs[i] = (job){A, i, n};
        TU_CHECK(pthread_create(&t[i], NULL, fn, &jobs[i]) == 0, "pthread_create");
    }
    for (int i = 0; i < THREADS; i++)
        TU_CHECK(pthread_join(t[i], NULL) == 0, "pthread_join");
}

/* The scratch helper's contract (src/scratch.c): a buffer for 0 bytes too,
 * the same one while it is large enough, a new one after a release. */
static void scratch_contract(void)
{
    bsrmv_release_scratch();
    TU_CHECK(bsrmv_scratch(0) != NULL, "no scratch for 0 bytes: %s", bsrmv_last_error());
    char *a = bsrmv_scratch(1000);
    TU_CHECK(a && bsrmv_scratch(10) == a && bsrmv_scratch(1000) == a, "scratch not kept");
    memset(a, 1, 1000);
    TU_CHECK(bsrmv_scratch(1 << 22) != NULL, "scratch does not grow");
    bsrmv_release_scratch();
    bsrmv_release_scratch();
}

int main(void)
{
    scratch_contract();
    for (int bs = 1; bs <= 5; bs += 2) {
        tu_shape sh = {300, 300, bs, 6.0, 0.1, 7, 120};
        bsrmv_matrix *A = tu_random_bsr(&sh, BSRMV_DOUBLE, BSRMV_COL_MAJOR, (uint64_t)bs);
        const bsrmv_matrix *shared = A;
        run(spmv_worker, shared, 300 * bs);
        TU_OK(bsrmv_matrix_set_cpu_kernel(A, BSRMV_CPU_GENERIC));
        run(spmv_worker, shared, 300 * bs);
        run(failing_worker, shared, 300 * bs);
        bsrmv_matrix_destroy(A);
    }
    printf("test_threads: %d threads, shared matrix SpMV and SpMM, per-thread scratch and errors ok\n", THREADS);
    return 0;
}
