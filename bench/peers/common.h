/* Shared pieces of the CPU peer programs (bench/suite.sh, bench/cpu_peers.sh):
 * the test matrix and vectors exactly as `bsrmv bench` builds them (same
 * library calls: grid generator, Matrix Market reader, split/promote
 * converter), a long-double reference, timing and the JSON line.
 *
 * Not part of the bsrmv build: these programs link bsrmv, never the
 * other way round. */
#ifndef BSRMV_PEERS_COMMON_H
#define BSRMV_PEERS_COMMON_H

#include "bsrmv.h"
#include "bsrmv_gen.h"

#include <stdint.h>
#include <stdio.h>

#define PEER_WARMUP 3
#define PEER_MAX_THREADS 16

enum peer_source { PEER_GRID, PEER_MTX, PEER_POWERLAW, PEER_ARROW };

struct peer_case {
    int bs;
    uint64_t seed;
    char matrix[256];      /* the CLI's name: "grid27_NxNxN", "stem:promote" */
    bsrmv_matrix *A;
    bsrmv_matrix_info info;
    const int64_t *row_ptr;
    const int32_t *col_idx;
    const double *val;     /* column-major blocks                  */
    double bytes;          /* bsrmv_matrix_spmv_bytes(A)           */
    double *x;             /* fill_random(seed + 1), as the CLI    */
    double *y_bsrmv;       /* bsrmv's y = A*x (the peers' reference) */
    double *y_ref;         /* long-double reference (for bsrmv)    */
};

struct peer_options {
    enum peer_source source;
    int64_t grid;
    const char *mtx;
    bsrmv_blocking blocking;
    double gen[4];         /* --powerlaw MB,MEAN,MAXLEN,EXPONENT / --arrow N,DENSE */
    int bs;
    int reps;
    int rounds;
    uint64_t seed;
    int threads[PEER_MAX_THREADS];
    int n_threads;
    const char *only;      /* comma list of backends, NULL = all  */
    const char *dump;      /* directory for the scipy dump, or NULL */
};

/* Parses a matrix source (--grid N | --mtx FILE [--promote|--split] |
 * --powerlaw MB,MEAN,MAXLEN,EXPONENT | --arrow N,DENSE) and --bs B --reps R
 * --rounds K --seed S --threads LIST --only LIST --dump DIR; exits with a
 * message on a bad argument. */
void peer_parse(int argc, char **argv, struct peer_options *o);
int peer_wants(const struct peer_options *o, const char *backend);

/* Builds the matrix (double, column-major) as the CLI does, x, bsrmv's y
 * (one call of bsrmv_spmv) and, if want_ref, the long-double reference.
 * Exits on failure. */
void peer_case_init(struct peer_case *c, const struct peer_options *o, int want_ref);
void peer_case_free(struct peer_case *c);

void *peer_alloc(size_t bytes);   /* 64-byte aligned, exits on failure */
double peer_now_ms(void);
double peer_median(double *v, int n);
/* ||y - ref||_2 / ||ref||_2 over n values. */
double peer_rel_err(const double *y, const double *ref, int64_t n);

struct peer_record {
    const char *backend, *kernel, *via, *ref;
    int threads, round;
    double time_ms, rel_err;
};

/* One JSON line on stdout, keys as `bsrmv bench --json` plus round, via
 * (how it ran) and ref (what rel_err compares against). */
void peer_emit(const struct peer_case *c, const struct peer_record *r);

#endif
