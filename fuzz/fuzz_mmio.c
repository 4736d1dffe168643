/* The Matrix Market reader on arbitrary bytes, plain and gzip-compressed.
 * Whatever it accepts must agree with a separate, plain parser of the same
 * text (the same entries in the same order), the .gz copy must read the
 * same, what it read must come back the same through bsrmv_mm_write, and
 * y = A*x through the BSR split must match the product of the plain
 * parser's entries.  Mode byte 1: the bytes are fed as a (probably
 * damaged) gzip file instead. */
#define _GNU_SOURCE
#include "fuzz_common.h"
#include "internal.h"

#include <ctype.h>
#include <stdio.h>
#include <strings.h>
#include <unistd.h>
#include <zlib.h>

static char plain_path[64], gz_path[64], out_path[2][64];

static void write_bytes(const char *path, const uint8_t *d, size_t n, int compress)
{
    if (compress) {
        gzFile g = gzopen(path, "wb");
        if (!g || (n && gzwrite(g, d, (unsigned)n) != (int)n) || gzclose(g) != Z_OK)
            abort();
        return;
    }
    FILE *f = fopen(path, "wb");
    if (!f || (n && fwrite(d, 1, n, f) != n) || fclose(f))
        abort();
}

static int space(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

/* Up to max tokens of line; the count, or max + 1 when there are more. */
static int tokens(char *line, char **t, int max)
{
    int k = 0;
    for (char *p = line;;) {
        while (space(*p))
            p++;
        if (!*p)
            return k;
        if (k == max)
            return max + 1;
        t[k++] = p;
        while (*p && !space(*p))
            p++;
        if (*p)
            *p++ = 0;
    }
}

typedef struct ref {
    int64_t m, n, nnz;
    int64_t row[4096], col[4096];
    double val[4096];
} ref;

/* The plain parser: 1 and the entries, or 0 where it cannot follow. */
static int parse_plain(char *text, ref *r)
{
    char *save = NULL, *line = strtok_r(text, "\n", &save);
    (void)save;
    /* strtok_r skips empty lines, which the format allows anyway; line 1
     * must be the banner, so the text may not start with '\n'. */
    if (!line || text[0] == '\n')
        return 0;
    char *t[6];
    if (tokens(line, t, 5) != 5 || strcasecmp(t[0], "%%MatrixMarket"))
        return 0;
    int field = !strcasecmp(t[3], "real") ? 0 : !strcasecmp(t[3], "integer") ? 1 : 2;
    int sym = !strcasecmp(t[4], "general") ? 0 : !strcasecmp(t[4], "symmetric") ? 1 : 2;
    int64_t stored = -1;
    r->nnz = 0;
    while ((line = strtok_r(NULL, "\n", &save))) {
        char *p = line;
        while (space(*p))
            p++;
        if (!*p || *p == '%')
            continue;
        int want = stored < 0 ? 3 : field == 2 ? 2 : 3;
        if (tokens(line, t, want) != want)
            return 0;
        if (stored < 0) {
            r->m = strtoll(t[0], NULL, 10);
            r->n = strtoll(t[1], NULL, 10);
            stored = strtoll(t[2], NULL, 10);
            continue;
        }
        int64_t i = strtoll(t[0], NULL, 10) - 1, j = strtoll(t[1], NULL, 10) - 1;
        double v = field == 2 ? 1.0 : field == 1 ? (double)strtoll(t[2], NULL, 10)
                                                 : strtod(t[2], NULL);
        if (r->nnz + 2 > 4096)
            return 0;
        r->row[r->nnz] = i, r->col[r->nnz] = j, r->val[r->nnz++] = v;
        if (sym && i != j)
            r->row[r->nnz] = j, r->col[r->nnz] = i, r->val[r->nnz++] = sym == 2 ? -v : v;
    }
    return stored >= 0;
}

static void same_coo(const bsrmv_coo *a, const bsrmv_coo *b)
{
    if (a->m != b->m || a->n != b->n || a->nnz != b->nnz ||
        memcmp(a->row, b->row, (size_t)a->nnz * 8) || memcmp(a->col, b->col, (size_t)a->nnz * 8) ||
        memcmp(a->val, b->val, (size_t)a->nnz * 8) || !a->imag != !b->imag ||
        (a->imag && memcmp(a->imag, b->imag, (size_t)a->nnz * 8)))
        abort();
}

/* y = A*x of the entries of c (both triangles), A built from c or, for a
 * symmetric file, in symmetric storage from its triangle tri. */
static void check_product(const bsrmv_coo *c, const bsrmv_coo *tri, int bs, bsrmv_type type)
{
    if (c->m > 4096 || c->n > 4096)
        return;
    bsrmv_matrix *A = NULL;
    bsrmv_status s = tri ? bsrmv_matrix_from_coo_sym(&A, tri, bs, BSRMV_SPLIT, type, BSRMV_COL_MAJOR)
                         : bsrmv_matrix_from_coo(&A, c, bs, BSRMV_SPLIT, type, BSRMV_COL_MAJOR);
    if (s == BSRMV_ERR_OVERFLOW)
        return; /* values or sums beyond the type's range: refused, as documented */
    if (s)
        abort();
    bsrmv_matrix_info in;
    bsrmv_matrix_get_info(A, &in);
    const size_t vs = bsrmv_type_size(type);
    void *x = calloc((size_t)in.cols + 1, vs), *y = calloc((size_t)in.rows + 1, vs);
    long double *want = calloc((size_t)in.rows + 1, sizeof *want);
    long double *mag = calloc((size_t)in.rows + 1, sizeof *mag);
    for (int64_t j = 0; j < in.cols; j++)
        if (type == BSRMV_DOUBLE)
            ((double *)x)[j] = 1 + j % 7;
        else
            ((float *)x)[j] = (float)(1 + j % 7);
    int finite = 1;
    for (int64_t k = 0; k < c->nnz; k++) {
        double a = type == BSRMV_FLOAT ? (double)(float)c->val[k] : c->val[k];
        want[c->row[k]] += (long double)a * (1 + c->col[k] % 7);
        mag[c->row[k]] += fabsl((long double)a * (1 + c->col[k] % 7));
        finite &= isfinite(a);
    }
    if (bsrmv_spmv(BSRMV_OP_N, 1.0, A, x, in.cols, 0.0, y, in.rows))
        abort();
    for (int64_t i = 0; finite && i < c->m; i++) {
        double got = type == BSRMV_DOUBLE ? ((double *)y)[i] : ((float *)y)[i];
        if (isfinite(got) && isfinite((double)mag[i]))
            fz_close(got, want[i], mag[i], c->nnz + 1, type == BSRMV_FLOAT);
    }
    free(x);
    free(y);
    free(want);
    free(mag);
    bsrmv_matrix_destroy(A);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!plain_path[0]) {
        snprintf(plain_path, sizeof plain_path, "/tmp/bsrmv_fuzz_%d.mtx", (int)getpid());
        snprintf(gz_path, sizeof gz_path, "/tmp/bsrmv_fuzz_%d.mtx.gz", (int)getpid());
        snprintf(out_path[0], sizeof out_path[0], "/tmp/bsrmv_fuzz_%d_out.mtx", (int)getpid());
        snprintf(out_path[1], sizeof out_path[1], "/tmp/bsrmv_fuzz_%d_out.mtx.gz", (int)getpid());
    }
    if (size < 1 || size > 65536)
        return 0;
    const unsigned mode = data[0];
    data++, size--;
    bsrmv_coo *a = NULL, *b = NULL;
    /* Text that starts with gzip's magic number is read as gzip. */
    if (mode == 1 || (size >= 2 && data[0] == 0x1f && data[1] == 0x8b)) {
        write_bytes(gz_path, data, size, 0);
        bsrmv_status s = bsrmv_mm_read(gz_path, &a);
        if ((s == BSRMV_SUCCESS) != (a != NULL) || (s && !*bsrmv_last_error()))
            abort();
        bsrmv_coo_destroy(a);
        return 0;
    }
    write_bytes(plain_path, data, size, 0);
    write_bytes(gz_path, data, size, 1);
    bsrmv_status sa = bsrmv_mm_read(plain_path, &a);
    char msg[600];
    snprintf(msg, sizeof msg, "%s", bsrmv_last_error());
    bsrmv_status sb = bsrmv_mm_read(gz_path, &b);
    if (sa != sb || (sa == BSRMV_SUCCESS) != (a != NULL) || (sb == BSRMV_SUCCESS) != (b != NULL))
        abort();
    if (sa) {
        /* The same complaint, at the same line: only the file name differs. */
        const char *pa = strchr(msg, ':'), *pb = strchr(bsrmv_last_error(), ':');
        if (!pa || !pb || (strstr(msg, plain_path) && strcmp(pa, pb)))
            abort();
        return 0;
    }
    same_coo(a, b);
    bsrmv_coo_destroy(b);
    /* What was read, written and read again: the same entries, bit for bit. */
    const char *out = out_path[mode >> 6 & 1];
    if (bsrmv_mm_write(out, a) || bsrmv_mm_read(out, &b))
        abort();
    same_coo(a, b);
    bsrmv_coo_destroy(b);
    char *text = malloc(size + 1);
    memcpy(text, data, size);
    text[size] = 0;
    static ref r;
    if (a->nnz <= 4000 && parse_plain(text, &r)) {
        if (r.m != a->m || r.n != a->n || r.nnz != a->nnz ||
            memcmp(r.row, a->row, (size_t)a->nnz * 8) || memcmp(r.col, a->col, (size_t)a->nnz * 8) ||
            memcmp(r.val, a->val, (size_t)a->nnz * 8))
            abort();
    } else if (a->nnz <= 4000) {
        abort(); /* accepted by the library, not followed by the plain parser */
    }
    free(text);
    const bsrmv_type type = (mode & 128) ? BSRMV_FLOAT : BSRMV_DOUBLE;
    check_product(a, NULL, 1 + mode % 7, type);
    /* A symmetric file read without expansion multiplies the same. */
    bsrmv_coo *tri = NULL;
    int symmetric = 0;
    if (bsrmv_mm_read_sym(plain_path, &tri, &symmetric))
        abort();
    if (symmetric)
        check_product(a, tri, 1 + mode % 7, type);
    bsrmv_coo_destroy(tri);
    bsrmv_coo_destroy(a);
    return 0;
}
