/* `bsrmv info`: what a matrix is made of.  For a file every figure comes
 * from the entries, sorted: the scratch grows with the entries, never with
 * the dimensions (a header may announce 2e9 rows for five entries). */
#include "cli.h"

#include "json.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SPLIT_MAX_BS 8

void info_help(FILE *f)
{
    fputs("usage: bsrmv info [--mtx] FILE.mtx[.gz] [--bs LIST] [--json]\n"
          "       bsrmv info --grid N|NX,NY,NZ [--bs LIST] [--stencil 7|27] [--json]\n"
          "       bsrmv info --powerlaw MB[,MEAN[,MAXLEN[,EXPONENT[,BAND]]]] [--bs LIST] [--json]\n"
          "       bsrmv info --arrow N[,DENSE] [--bs LIST] [--json]\n"
          "A file: dimensions, entries, symmetry, row lengths, and the blocks and\n"
          "fill ratio nnzb*bs*bs/nnz of an aligned split for bs 1..8 (or the --bs\n"
          "LIST).  A generated matrix (the sources of bsrmv bench): block rows,\n"
          "blocks and block-row lengths per block size (default as bench:\n"
          "1,2,3,4,6,8,16).  --json: one JSON object per line instead.\n",
          f);
}

struct entry {
    int64_t row, col;
    double val, imag; /* imag: 0 for a real file */
};

static int cmp_entry(const void *a, const void *b)
{
    const struct entry *x = a, *y = b;
    if (x->row != y->row)
        return (x->row > y->row) - (x->row < y->row);
    if (x->col != y->col)
        return (x->col > y->col) - (x->col < y->col);
    if (x->val != y->val)
        return (x->val > y->val) - (x->val < y->val);
    return (x->imag > y->imag) - (x->imag < y->imag);
}

static int cmp_i64(const void *a, const void *b)
{
    const int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* The entries of coo (or of its transpose) sorted by row, column, value. */
static struct entry *sorted_entries(const bsrmv_coo *coo, int transpose)
{
    struct entry *e = malloc((size_t)(coo->nnz > 0 ? coo->nnz : 1) * sizeof *e);
    if (!e)
        return NULL;
    for (int64_t k = 0; k < coo->nnz; k++) {
        const double im = coo->imag ? coo->imag[k] : 0.0;
        e[k] = transpose ? (struct entry){coo->col[k], coo->row[k], coo->val[k], im}
                         : (struct entry){coo->row[k], coo->col[k], coo->val[k], im};
    }
    qsort(e, (size_t)coo->nnz, sizeof *e, cmp_entry);
    return e;
}

/* Symmetry of the entries as read (the reader expands symmetric files, so
 * this is what the stored matrix is, whatever the file header said). */
static const char *symmetry(const bsrmv_coo *coo, const struct entry *e)
{
    if (coo->m != coo->n)
        return "unsymmetric (not square)";
    struct entry *et = sorted_entries(coo, 1);
    if (!et)
        return "unknown (out of memory)";
    int pattern = 1, sym = 1, skew = 1, herm = coo->imag != NULL;
    for (int64_t k = 0; k < coo->nnz && pattern; k++) {
        pattern = e[k].row == et[k].row && e[k].col == et[k].col;
        sym &= e[k].val == et[k].val && e[k].imag == et[k].imag;
        skew &= e[k].val == -et[k].val && e[k].imag == -et[k].imag;
        herm &= e[k].val == et[k].val && e[k].imag == -et[k].imag;
    }
    free(et);
    if (!pattern)
        return "unsymmetric";
    return sym    ? "symmetric"
           : skew ? "skew-symmetric"
           : herm ? "hermitian"
                  : "structurally symmetric";
}

struct row_stats {
    int64_t min, max, empty;
    double mean;
};

/* Row lengths counting each (row, column) once, as a bs = 1 BSR stores it. */
static struct row_stats row_stats(const bsrmv_coo *coo, const struct entry *e)
{
    struct row_stats s = {INT64_MAX, 0, coo->m, 0};
    int64_t stored = 0;
    for (int64_t k = 0; k < coo->nnz;) {
        int64_t len = 0, j = k;
        for (; j < coo->nnz && e[j].row == e[k].row; j++)
            len += j == k || e[j].col != e[j - 1].col;
        s.min = len < s.min ? len : s.min;
        s.max = len > s.max ? len : s.max;
        s.empty--;
        stored += len;
        k = j;
    }
    if (s.empty > 0 || coo->nnz == 0)
        s.min = 0;
    s.mean = coo->m > 0 ? (double)stored / (double)coo->m : 0;
    return s;
}

/* Blocks of the aligned bs x bs split: per block row (its entries are
 * contiguous in e), the distinct block columns.  scratch holds nnz values. */
static int64_t split_blocks(const bsrmv_coo *coo, const struct entry *e, int bs, int64_t *scratch)
{
    int64_t nnzb = 0;
    for (int64_t k = 0; k < coo->nnz;) {
        const int64_t brow = e[k].row / bs;
        int64_t n = 0, j = k;
        for (; j < coo->nnz && e[j].row / bs == brow; j++)
            scratch[n++] = e[j].col / bs;
        qsort(scratch, (size_t)n, sizeof *scratch, cmp_i64);
        for (int64_t i = 0; i < n; i++)
            nnzb += i == 0 || scratch[i] != scratch[i - 1];
        k = j;
    }
    return nnzb;
}

/* nbs block sizes bss of the split table (0: 1..SPLIT_MAX_BS). */
static int info_file(const char *path, int json, const int *bss, int nbs)
{
    int dflt[SPLIT_MAX_BS];
    if (nbs == 0) {
        for (int b = 0; b < SPLIT_MAX_BS; b++)
            dflt[b] = b + 1;
        bss = dflt;
        nbs = SPLIT_MAX_BS;
    }
    bsrmv_coo *coo;
    if (bsrmv_mm_read_opts(path, &coo, &(bsrmv_mm_options){.progress = !json}) != BSRMV_SUCCESS)
        return cli_lib_failed("reading %s", path);
    /* two sorted copies of the entries and the split's scratch */
    if (cli_memory_check("bsrmv info", "sorting the entries",
                         (double)coo->nnz * (2 * sizeof(struct entry) + sizeof(int64_t)))) {
        bsrmv_coo_destroy(coo);
        return 1;
    }
    struct entry *e = sorted_entries(coo, 0);
    int64_t *scratch = malloc((size_t)(coo->nnz > 0 ? coo->nnz : 1) * sizeof *scratch);
    if (!e || !scratch) {
        fprintf(stderr, "bsrmv info: out of memory sorting the %" PRId64 " entries of %s\n",
                coo->nnz, path);
        free(e);
        free(scratch);
        bsrmv_coo_destroy(coo);
        return 1;
    }
    const char *sym = symmetry(coo, e);
    const struct row_stats rs = row_stats(coo, e);
    int64_t nnzb[BENCH_MAX_LIST];
    for (int b = 0; b < nbs; b++)
        nnzb[b] = split_blocks(coo, e, bss[b], scratch);
    free(e);
    free(scratch);

    if (json) {
        struct json_line j;
        json_begin(&j, stdout);
        json_str(&j, "file", path);
        json_int(&j, "rows", coo->m);
        json_int(&j, "cols", coo->n);
        json_int(&j, "nnz", coo->nnz);
        json_str(&j, "symmetry", sym);
        json_int(&j, "row_len_min", rs.min);
        json_num(&j, "row_len_mean", rs.mean);
        json_int(&j, "row_len_max", rs.max);
        json_int(&j, "empty_rows", rs.empty);
        for (int b = 0; b < nbs; b++) {
            char key[32];
            const int bs = bss[b];
            snprintf(key, sizeof key, "split_nnzb_bs%d", bs);
            json_int(&j, key, nnzb[b]);
            snprintf(key, sizeof key, "split_fill_bs%d", bs);
            json_num(&j, key, coo->nnz > 0 ? (double)nnzb[b] * bs * bs / (double)coo->nnz : 0);
        }
        json_end(&j);
    } else {
        printf("file        %s\n", path);
        printf("size        %" PRId64 " x %" PRId64 "\n", coo->m, coo->n);
        printf("nnz         %" PRId64 "\n", coo->nnz);
        printf("symmetry    %s\n", sym);
        printf("row length  min %" PRId64 ", mean %.2f, max %" PRId64 " (as bs=1 BSR, %" PRId64
               " empty rows)\n",
               rs.min, rs.mean, rs.max, rs.empty);
        printf("aligned split:\n  bs %12s %8s\n", "nnzb", "fill");
        for (int b = 0; b < nbs; b++) {
            const int bs = bss[b];
            if (coo->nnz > 0)
                printf("  %2d %12" PRId64 " %8.3f\n", bs, nnzb[b],
                       (double)nnzb[b] * bs * bs / (double)coo->nnz);
            else
                printf("  %2d %12" PRId64 " %8s\n", bs, nnzb[b], "-");
        }
    }
    bsrmv_coo_destroy(coo);
    return 0;
}

static int info_generated(const struct bench_options *o)
{
    if (!o->json)
        printf("%-32s %4s %12s %12s %14s %8s %8s %8s %10s\n", "matrix", "bs", "rows", "nnzb",
               "nnz", "len min", "mean", "max", "val MB");
    for (int b = 0; b < o->n_bs; b++) {
        char name[96];
        bsrmv_matrix *A;
        bsrmv_matrix_info in;
        if (cli_memory_check("bsrmv info", "the matrix",
                             cli_source_bytes(o, NULL, 0, o->bs[b], BSRMV_DOUBLE)))
            return 1;
        if (cli_generate_matrix(o, o->bs[b], BSRMV_DOUBLE, &A, name, sizeof name) != 0)
            return 1;
        bsrmv_status st = bsrmv_matrix_get_info(A, &in);
        bsrmv_matrix_destroy(A);
        if (st != BSRMV_SUCCESS)
            return cli_lib_failed("reading the info of %s", name);
        double nnz = (double)in.nnzb * in.bs * in.bs;
        if (o->json) {
            struct json_line j;
            json_begin(&j, stdout);
            json_str(&j, "matrix", name);
            json_int(&j, "bs", in.bs);
            json_int(&j, "rows", in.rows);
            json_int(&j, "nnzb", in.nnzb);
            json_num(&j, "nnz", nnz);
            json_int(&j, "row_len_min", in.row_len_min);
            json_num(&j, "row_len_mean", in.row_len_mean);
            json_int(&j, "row_len_max", in.row_len_max);
            json_num(&j, "val_bytes", nnz * sizeof(double));
            json_end(&j);
        } else {
            printf("%-32s %4d %12" PRId64 " %12" PRId64 " %14.0f %8" PRId64 " %8.2f %8" PRId64
                   " %10.1f\n",
                   name, in.bs, in.rows, in.nnzb, nnz, in.row_len_min, in.row_len_mean,
                   in.row_len_max, nnz * sizeof(double) * 1e-6);
        }
    }
    return 0;
}

int info_command(int argc, char **argv)
{
    args_init("bsrmv info", "bsrmv info [--mtx] FILE.mtx[.gz] | --grid N | --powerlaw MB | "
                            "--arrow N [--bs LIST] [--json]");
    struct bench_options o;
    cli_parse_options(argc, argv, &o, 0);
    if (o.source == BENCH_MTX)
        return info_file(o.mtx, o.json, o.bs, o.n_bs);
    if (o.source == BENCH_NONE)
        args_fail("give a matrix: FILE.mtx[.gz], --grid N, --powerlaw MB or --arrow N");
    return info_generated(&o);
}
