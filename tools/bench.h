/* The SpMV benchmark: options, the matrix under test, measurement records.
 *
 * The driver (`bsrmv bench`, cmd_bench.c; `bsrmv tune`, tune.c) builds one
 * bench_case per matrix and hands it to each backend; a backend times bsrmv
 * on its device, fills one bench_record per measurement and passes it to
 * the options' emitter, which prints it.  Backends:
 *   bench_cpu  (bench_cpu.c)  host SpMV, per thread count and CPU kernel
 *   bench_gpu  (bench_gpu.c)  built when BSRMV_HAVE_GPU_BENCH is defined
 */
#ifndef BSRMV_TOOLS_BENCH_H
#define BSRMV_TOOLS_BENCH_H

#include "bsrmv.h"
#include "bsrmv_bench.h"
#include "bsrmv_gen.h"

#include <stddef.h>
#include <stdint.h>

#define BENCH_MAX_LIST 64
#define BENCH_TRAFFIC_CG (-1.0)

enum bench_source {
    BENCH_NONE = 0,
    BENCH_MTX,     /* --mtx FILE                                     */
    BENCH_GRID,    /* --grid N | NX,NY,NZ                            */
    BENCH_EXAMPLE, /* --example: a grid sized ~10x the last-level cache */
    BENCH_POWERLAW,/* --powerlaw MB[,MEAN[,MAXLEN[,EXPONENT[,BAND]]]]  */
    BENCH_ARROW    /* --arrow N[,DENSE]                               */
};

/* Which bsrmv GPU kernels --gpu times (zero: all, as the tuner wants). */
enum bench_gpu_kernels {
    BENCH_GPU_ALL = 0, /* every applicable kernel and the dispatcher's pick */
    BENCH_GPU_AUTO     /* the dispatcher's pick only                        */
};

struct bench_options;
struct bench_record;
/* Receives every measurement (prints it, counts wrong results). */
typedef void (*bench_emit_fn)(const struct bench_options *o, const struct bench_record *r);

struct bench_options {
    bench_emit_fn emit;             /* where the backends' records go      */
    enum bench_source source;
    const char *mtx;
    bsrmv_blocking blocking;        /* for --mtx                          */
    int64_t grid[3];
    int stencil;                    /* 7 or 27                            */
    struct {                        /* --powerlaw: square, mb = nb        */
        int64_t mb, max_len, band;
        double mean_len, exponent;
    } powerlaw;
    int64_t arrow_n, arrow_dense;   /* --arrow                            */
    int bs[BENCH_MAX_LIST];
    int n_bs;
    bsrmv_type types[5];            /* value types                        */
    bsrmv_type vtypes[5];           /* their vector types (mixed: double) */
    int n_types;
    int types_given;                /* --type: else a complex file benchmarks as z */
    bsrmv_order order;
    int reps;                       /* timed calls per measurement        */
    int threads[BENCH_MAX_LIST];
    int n_threads;
    bsrmv_cpu_kernel kernels[2];
    int n_kernels;
    uint64_t seed;
    double alpha, beta;
    int json;                       /* JSON lines only on stdout          */
    int stream;                     /* measure the read bandwidth         */
    double stream_gib;
    int gpu;
    enum bench_gpu_kernels gpu_kernels;
    const char *gpu_kernel_prefixes; /* ALL only: names starting so (a,b,...) */
    int no_cpu;                     /* --no-cpu: GPU run without CPU timing */
    int cold_launch;                /* GPU calls timed from an idle GPU    */
    int gpu_reps;                   /* GPU timed calls (0: max(reps, 50))  */
    int gpu_tune;                   /* the pick is bsrmv_gpu_matrix_tune's */
    int gpu_tune_max;               /* its max_candidates (0: all) */
    /* Other memory traffic before each timed GPU call, as a solver's vector
     * operations make between its SpMVs: bytes (0: calls back to back), or
     * BENCH_TRAFFIC_CG for the vectors of one CG iteration; each case is
     * timed once per entry. */
    double gpu_traffic[2];
    int n_gpu_traffic;
    int verbose;                    /* per-phase wall times on stderr      */
    int k[BENCH_MAX_LIST];          /* --k: SpMM vector counts             */
    int n_k;
    bsrmv_layout layouts[2];        /* --layout of the SpMM multivectors   */
    int n_layouts;
    /* --sym: the symmetric storage of the matrix against its full storage.
     * A symmetric --mtx file keeps its triangle (coo_triangle set by the
     * driver); other sources are made symmetric positive definite. */
    int sym;
    int coo_triangle;
};

/* Wall time (ms) of each phase of one case, for the per-phase line that
 * shows where a run's time goes.  0 where a phase did not run. */
struct bench_phases {
    double build;                   /* generate, or split/promote the file */
    double reference;               /* vectors and the long-double y_ref   */
    double cpu;                     /* bench_cpu                           */
    double gpu_setup;               /* device bandwidth (first case), upload */
    double cusparse_host;           /* host-side conversions for cuSPARSE  */
    double cusparse;                /* cuSPARSE: copies, checks, timing    */
    double gpu_kernels;             /* bsrmv kernels: checks and timing    */
};

/* One matrix and its vectors, shared by all backends. */
struct bench_case {
    const char *matrix;             /* name in the reports                */
    bsrmv_matrix *A;                /* backends may switch its CPU kernel */
    bsrmv_matrix *S;                /* --sym: A in symmetric storage, else NULL */
    bsrmv_matrix_info info;
    double bytes;                   /* bsrmv_matrix_spmv_bytes(A)         */
    double alpha, beta;
    void *x;                        /* info.cols values of info.type      */
    void *y0;                       /* info.rows values: y before a call  */
    double *y_ref;                  /* alpha*A*x + beta*y0, long-double loop */
    /* Stream GB/s for options.threads[i], 0 where not measured. */
    const double *stream_gbps;
    struct bench_phases ms;         /* filled by bench_case_init, backends */
};

/* One measurement: a row of the table, a line of the JSON output. */
struct bench_record {
    const char *matrix;
    int bs;
    bsrmv_type type, vtype;         /* values, vectors                    */
    bsrmv_order order;
    int64_t rows, cols, nnzb;
    double bytes;
    const char *backend;            /* "cpu", "gpu"                       */
    const char *kernel;             /* "specialised", "generic", ...      */
    int threads;                    /* host threads; 0 where meaningless  */
    double time_ms;                 /* median of the timed calls          */
    double gbps, gflops;
    double rel_err;                 /* ||y - y_ref||_2 / ||y_ref||_2      */
    double stream_gbps;             /* same-thread-count stream, 0 if none */
    int k;                          /* vectors per call; 0: plain SpMV     */
    const char *layout;             /* SpMM: "row" or "col" (the spmvxK
                                     * peer: the layout it is compared in) */
    double speedup;                 /* SpMM: vectors/s over k SpMVs'; sym:
                                     * the full storage's time over its; else 0 */
};

/* ---- bench_cpu.c: the case, the reference, timing ------------------- */

/* Random x and y0 from o->seed, and y_ref from a long-double loop over the
 * BSR arrays (not the library's kernels; OpenMP over block rows).  Returns
 * 0, or 1 after printing what failed.  bench_case_free releases the
 * vectors, not A. */
int bench_case_init(struct bench_case *c, bsrmv_matrix *A, const char *matrix,
                    const struct bench_options *o);
void bench_case_free(struct bench_case *c);

/* Fills the matrix fields of r from c; the backend sets the rest. */
void bench_record_init(struct bench_record *r, const struct bench_case *c,
                       const char *backend, const char *kernel, int threads);
/* Sets time_ms and the rates derived from it (r->k vectors per call). */
void bench_record_set_time(struct bench_record *r, double time_ms);

/* rel_err of y (info.rows values of info.type, on the host) against y_ref;
 * ||y|| where y_ref is zero. */
double bench_rel_err(const struct bench_case *c, const void *y);
/* "float", "double", "complex-float", "complex-double", or "mixed" for
 * float values with double vectors. */
const char *bench_type_name(bsrmv_type t, bsrmv_type vt);
/* Real components per value: 2 for the complex types, else 1. */
int bench_parts(bsrmv_type t);

/* "bsrmv: phases NAME bs B TYPE: build .. ms, ..." on stderr: c->ms. */
void bench_phases_print(const struct bench_case *c);

/* Median of n values (reorders v). */
double bench_median(double *v, int n);
double bench_now_ms(void);

/* SpMM benchmarks: M (n x k, of type t) gets column j = (j+1) * v, entry
 * (i, j) at M[i + j*n] (col) or M[i*k + j]; bench_spmm_rel_err is the
 * worst rel_err over the k columns of such a Y against (j+1) * y_ref. */
void bench_fill_scaled(void *M, const void *v, int64_t n, int k, int col, bsrmv_type t);
double bench_spmm_rel_err(const struct bench_case *c, const void *Y, int k, int col);

/* Every thread count x CPU kernel of o on c.  Returns 0, or 1 after
 * printing what failed. */
int bench_cpu(const struct bench_options *o, struct bench_case *c);

/* ---- bench_gpu.c ---------------------------------------------------- */
#ifdef BSRMV_HAVE_GPU_BENCH
/* Non-zero if a GPU can run the benchmark; otherwise the reason is in
 * bsrmv_last_error().  Called once, before any matrix is built. */
int bench_gpu_available(void);
/* Measures c on the GPU, passing each record to o->emit.  Returns 0, or
 * 1 after printing what failed. */
int bench_gpu(const struct bench_options *o, struct bench_case *c);
#endif

#endif
