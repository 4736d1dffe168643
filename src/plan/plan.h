/* The GPU plan's host side: the features of a matrix and the table that
 * maps them to a kernel configuration.  Plain C, no CUDA: the CUDA backend
 * fills the device fields, and the tests run it without a GPU.
 *
 * A table is a decision list of rows
 *     type order bs config [condition ...]
 * e.g. "float col 6 staged/g4/r1/t128/p3 l2<1.24 maxmean<10.6": type double,
 * float, z (complex double), c (complex float) or *; order col, row or *; bs N or LO-HI; config
 * kernel/gG/rR/tT/pP (bsrmv_gpu_config_string's form) or, as `bsrmv tune`
 * writes, "kernel G R T P"; conditions NAME<V, NAME<=V, NAME>=V, NAME>V or
 * NAME=V on the features below.  The first row that matches, and whose
 * kernel the caller accepts (built for the matrix), is the plan.  '#' starts
 * a comment.
 *
 * A row whose config is "nearest/K" (e.g. "double col 6 nearest/2
 * l2<3.1") lets the points of its type, order and bs vote: lines
 *     point type order bs L2 MEAN CV MAXMEAN config=score ...
 * each a measured matrix, its features (finite, >= 0) and the scores
 * (at most 1e6 in magnitude) of the configurations it keeps, best first.  The K points nearest to the matrix
 * (Euclidean over log l2, log mean, cv and log maxmean; l2, mean and
 * maxmean floored at 1e-4, 0.1 and 1) vote: point i adds
 * score_i(config) / (distance_i + 0.5) to each configuration any of them
 * keeps, its lowest kept score for one it does not.  The configurations in
 * order of their votes (ties by name) are tried as the row's configs.
 *
 * The built-in table is src/plan/default.tbl, generated from measurements
 * by bench/plan_table.py. */
#ifndef BSRMV_PLAN_H
#define BSRMV_PLAN_H

#include "bsrmv.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Features of one matrix on one device (names as the table spells them). */
enum plan_feature {
    PF_MEAN,      /* mean      blocks per block row                          */
    PF_CV,        /* cv        their standard deviation / mean               */
    PF_MAXMEAN,   /* maxmean   longest block row / mean                      */
    PF_LENMAX,    /* lenmax    longest block row                             */
    PF_EMPTY,     /* empty     fraction of empty block rows                  */
    PF_MB,        /* mb        block rows                                    */
    PF_NNZB,      /* nnzb      blocks                                        */
    PF_L2,        /* l2        SpMV bytes / the device's L2 size             */
    PF_MEMSM,     /* memsm     peak DRAM GB/s per SM                         */
    PF_ROWSM,     /* rowsm     scalar rows per SM                            */
    PF_STAGED,    /* staged    1 where the bulk-copy kernels run (sm_90)     */
    PF_IRREGULAR, /* irregular 1: lenmax >= 256 and lenmax > 16 x mean       */
    PF_MIXED,     /* mixed     1: float values with double vectors           */
    PF_ROWSHARE,  /* rowshare  lenmax x SMs / nnzb: above 1 the longest block
                   *           row holds more than one SM's share of blocks */
    PF_SPREAD,    /* spread    how far the blocks lie from the diagonal, the
                   *           x reads' scatter: the mean of log2(1 + |j - i|)
                   *           over sampled blocks (i, j), / log2(1 + nb);
                   *           banded and mesh orders 0.15-0.5, uniformly
                   *           random columns ~0.9 */
    PF_COUNT
};

typedef struct plan_features {
    int bs;
    bsrmv_type type;
    bsrmv_order order;
    double v[PF_COUNT];
} plan_features;

/* The row-length features from a host row_ptr[mb + 1], and the size ones;
 * nb, the value type and the vector type (vtype: x and y) give the SpMV
 * bytes. */
void plan_features_rows(plan_features *f, const int64_t *row_ptr, int64_t mb, int64_t nb, int bs,
                        bsrmv_type type, bsrmv_type vtype, bsrmv_order order);
/* The spread: PLAN_SPREAD_RUNS runs of PLAN_SPREAD_RUN consecutive blocks,
 * evenly spaced over the nnzb blocks (all of them when there are no more
 * than the runs hold).  cols(ctx, first, n, out) gives col_idx[first ..
 * first + n) (the caller's copy from the host or the device), nonzero on
 * failure, which is returned; row_ptr is the host one. */
#define PLAN_SPREAD_RUNS 64
#define PLAN_SPREAD_RUN 64
typedef int (*plan_cols_fn)(void *ctx, int64_t first, int n, int32_t *out);
int plan_features_spread(plan_features *f, const int64_t *row_ptr, int64_t mb, int64_t nb, plan_cols_fn cols,
                         void *ctx);
/* The device ones: L2 bytes, peak DRAM GB/s, SMs, compute capability x10. */
void plan_features_device(plan_features *f, double l2_bytes, double dram_gbps, int sms, int cc);
const char *plan_feature_name(int i);

typedef struct plan_cond {
    int feature;
    int op; /* '<', 'l' (<=), '>', 'g' (>=), '=' */
    double value;
} plan_cond;

#define PLAN_MAX_CONDS 8
typedef struct plan_row {
    int type;  /* a bsrmv_type (double, float, z, c), or -1: any */
    int order; /* BSRMV_COL_MAJOR, BSRMV_ROW_MAJOR, or -1 */
    int bs_lo, bs_hi;
    bsrmv_gpu_config cfg;
    int nearest; /* K of a "nearest/K" row (cfg unused), else 0 */
    int ncond;
    plan_cond cond[PLAN_MAX_CONDS];
} plan_row;

#define PLAN_POINT_KEEP 16 /* configurations a point keeps, at most */
#define PLAN_NEAREST_MAX 8 /* K of a nearest row, at most */
typedef struct plan_point {
    int type, order, bs;
    double x[4]; /* the distance's coordinates of its features */
    int n;
    bsrmv_gpu_config cfg[PLAN_POINT_KEEP];
    double score[PLAN_POINT_KEEP];
} plan_point;

typedef struct plan_table {
    plan_row *rows;
    int n;
    plan_point *points;
    int npoints;
} plan_table;

/* Parses text (origin names it in messages: "origin:line: ...").  A row in
 * the 8-token form of `bsrmv tune` applies to regular matrices, or to
 * irregular ones if its kernel is a balanced one, as measured there.
 * Returns BSRMV_SUCCESS, BSRMV_ERR_FORMAT or BSRMV_ERR_NOMEM; *t is empty
 * on failure.  plan_table_free releases it. */
bsrmv_status plan_table_parse(const char *text, const char *origin, plan_table *t);
void plan_table_free(plan_table *t);

/* Whether the caller can launch c (built for the matrix, allowed here). */
typedef int (*plan_accept_fn)(const bsrmv_gpu_config *c, void *ctx);

/* The first row of t that matches f and that accept takes, its parameters
 * completed for f (plan_complete) into *out; *row gets its index.
 * Returns 1, or 0 when none matches. */
int plan_table_lookup(const plan_table *t, const plan_features *f, plan_accept_fn accept, void *ctx,
                      bsrmv_gpu_config *out, int *row);

/* The configurations t would try for f, in its order: of every row that
 * matches, its config (a nearest row: its configs in vote order), completed
 * for f, that accept takes and that is not there already; at most max of
 * them into out.  *row (may be NULL) gets the index of the row of the first
 * one, -1 if none.  Returns the count; out[0] is plan_table_lookup's. */
int plan_table_rank(const plan_table *t, const plan_features *f, plan_accept_fn accept, void *ctx,
                    bsrmv_gpu_config *out, int max, int *row);

/* Appends c to out[0..*n) unless out is full, c is there already or
 * accept (may be NULL) refuses it; returns whether out is full. */
int plan_rank_add(bsrmv_gpu_config c, plan_accept_fn accept, void *ctx, bsrmv_gpu_config *out, int max, int *n);

/* Whether two configurations are the same (every field). */
int plan_same_config(const bsrmv_gpu_config *a, const bsrmv_gpu_config *b);

/* Parameters a row may leave to the block size (p0): K2's thread arrays
 * per group and K3's row slices. */
bsrmv_gpu_config plan_complete(bsrmv_gpu_config c, const plan_features *f);

/* The built-in table (default.tbl), parsed once; NULL if that failed
 * (it is tested, so only out of memory). */
const plan_table *plan_default_table(void);
extern const char bsrmv_plan_default_text[];

#ifdef __cplusplus
}
#endif

#endif
