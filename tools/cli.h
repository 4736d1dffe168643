/* What the `bsrmv` subcommands share: the matrix sources and their options
 * (options.c), building those matrices and checking the memory they need
 * (matrices.c), and the commands' entry points (cmd_*.c, solve.c,
 * bridge.c, tune.c). */
#ifndef BSRMV_TOOLS_CLI_H
#define BSRMV_TOOLS_CLI_H

#include "args.h"
#include "bench.h"

#include <stddef.h>
#include <stdio.h>

/* --example: matrix values at least this many times the last-level cache,
 * so every SpMV streams the matrix from memory. */
#define EXAMPLE_LLC_FACTOR 10

/* "bsrmv: <what>: <the library's message>" on stderr; returns 1. */
int cli_lib_failed(const char *fmt, ...) ARGS_PRINTF(1, 2);
int cli_is_help(const char *arg);

/* Parses the matrix source (--mtx, --grid, --powerlaw, --arrow and, for
 * bench, --example), --bs, --stencil and --json; with bench also the
 * benchmark's options, and fills in their defaults.  Bad arguments exit
 * through args_fail. */
void cli_parse_options(int argc, char **argv, struct bench_options *o, int bench);

/* The generated matrix of o's source for one bs and type (--grid,
 * --powerlaw, --arrow) and its report name; 0, or 1 after a message. */
int cli_generate_matrix(const struct bench_options *o, int bs, bsrmv_type t, bsrmv_matrix **A,
                        char *name, size_t size);
/* The same for any source: coo for --mtx, llc for --example. */
int cli_build_matrix(const struct bench_options *o, const bsrmv_coo *coo, double llc, int bs,
                     bsrmv_type t, bsrmv_matrix **A, char *name, size_t size);
/* Stored blocks of an nx*ny*nz grid with the stencil. */
double cli_grid_blocks(const int64_t g[3], int stencil);
/* The last-level cache, all instances together (bytes). */
double cli_llc_bytes(void);

/* Bytes a BSR matrix of mb block rows, nnzb blocks of bs x bs values of
 * type t takes, with the vectors a benchmark or solve keeps beside it. */
double cli_bsr_bytes(double mb, double nb, double nnzb, int bs, bsrmv_type t);
/* An upper bound of cli_bsr_bytes for o's matrix at (bs, t), before it is
 * built (coo: the file's entries for --mtx). */
double cli_source_bytes(const struct bench_options *o, const bsrmv_coo *coo, double llc, int bs,
                        bsrmv_type t);
/* 0 if `bytes` fit in the memory this process may use (physical memory,
 * or a lower address-space limit); else "CMD: WHAT needs X GB of memory,
 * this machine has Y GB" on stderr and 1, before anything is allocated. */
int cli_memory_check(const char *cmd, const char *what, double bytes);

/* The subcommands: argv holds the arguments after the command's name;
 * each returns the exit status (0 ok, 1 failure, ARGS_EXIT_USAGE). */
int info_command(int argc, char **argv);
int bench_command(int argc, char **argv);
void info_help(FILE *f);
void bench_help(FILE *f);

/* bench's printer (o->emit): a table row or a JSON line per o->json;
 * counts the records whose rel_err is above the type's tolerance. */
void bench_print_record(const struct bench_options *o, const struct bench_record *r);

#endif
