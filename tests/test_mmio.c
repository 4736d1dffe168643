/* Matrix Market reader/writer and the COO block count. */
#define _POSIX_C_SOURCE 200809L
#include "bsrmv.h"

#include <dirent.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#define CHECK(cond, ...)                                                  \
    do {                                                                  \
        if (!(cond)) {                                                    \
            fprintf(stderr, "test_mmio.c:%d: FAILED: ", __LINE__);        \
            fprintf(stderr, __VA_ARGS__);                                 \
            fprintf(stderr, "\n  last error: %s\n", bsrmv_last_error());  \
            exit(1);                                                      \
        }                                                                 \
    } while (0)

static char tmpdir[256];

static uint64_t rng_state;

static uint64_t rng(void)
{
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static int64_t rng_below(int64_t n)
{
    return (int64_t)(rng() % (uint64_t)n);
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void tmp_path(char *buf, size_t size, const char *name)
{
    snprintf(buf, size, "%s/%s", tmpdir, name);
}

/* Writes text (len bytes, so it may hold '\0') to tmpdir/name, gzipped if
 * name ends in ".gz". */
static void write_file(char *path, size_t size, const char *name, const char *text, size_t len)
{
    tmp_path(path, size, name);
    size_t n = strlen(name);
    if (n > 3 && strcmp(name + n - 3, ".gz") == 0) {
        gzFile gz = gzopen(path, "wb");
        CHECK(gz, "gzopen %s", path);
        CHECK(len == 0 || gzwrite(gz, text, (unsigned)len) == (int)len, "gzwrite %s", path);
        CHECK(gzclose(gz) == Z_OK, "gzclose %s", path);
    } else {
        FILE *f = fopen(path, "wb");
        CHECK(f, "fopen %s", path);
        CHECK(fwrite(text, 1, len, f) == len, "fwrite %s", path);
        CHECK(fclose(f) == 0, "fclose %s", path);
    }
}

/* ------------------------------------------------------------------ */
/* Entry lists                                                         */
/* ------------------------------------------------------------------ */

typedef struct entry {
    int64_t r, c;
    double v;
} entry;

static int cmp_entry(const void *a, const void *b)
{
    const entry *x = a, *y = b;
    if (x->r != y->r)
        return x->r < y->r ? -1 : 1;
    if (x->c != y->c)
        return x->c < y->c ? -1 : 1;
    return memcmp(&x->v, &y->v, sizeof x->v);
}

/* A is symmetric iff its sorted entry list equals that of its transpose. */
static void check_symmetric(const bsrmv_coo *a, const char *name)
{
    entry *e = malloc((size_t)a->nnz * sizeof *e + 1);
    entry *t = malloc((size_t)a->nnz * sizeof *t + 1);
    CHECK(e && t, "out of memory");
    for (int64_t k = 0; k < a->nnz; k++) {
        e[k] = (entry){a->row[k], a->col[k], a->val[k]};
        t[k] = (entry){a->col[k], a->row[k], a->val[k]};
    }
    qsort(e, (size_t)a->nnz, sizeof *e, cmp_entry);
    qsort(t, (size_t)a->nnz, sizeof *t, cmp_entry);
    for (int64_t k = 0; k < a->nnz; k++)
        CHECK(cmp_entry(&e[k], &t[k]) == 0, "%s: not symmetric at sorted entry %lld", name,
              (long long)k);
    free(e);
    free(t);
}

/* ------------------------------------------------------------------ */
/* The shared SuiteSparse matrices                                     */
/* ------------------------------------------------------------------ */

/* Header, entry count and diagonal count, found with zlib and sscanf
 * independently of the reader under test. */
typedef struct mm_facts {
    int pattern, symmetric;
    long long m, n, stored, found, diag;
} mm_facts;

static mm_facts scan_facts(const char *path)
{
    mm_facts f = {0};
    char line[1024];
    gzFile gz = gzopen(path, "rb");
    CHECK(gz, "gzopen %s", path);
    CHECK(gzgets(gz, line, sizeof line), "%s: no banner", path);
    f.pattern = strstr(line, "pattern") != NULL;
    f.symmetric = strstr(line, "symmetric") != NULL;
    while (gzgets(gz, line, sizeof line) && line[0] == '%')
        ;
    CHECK(sscanf(line, "%lld %lld %lld", &f.m, &f.n, &f.stored) == 3, "%s: size line", path);
    while (gzgets(gz, line, sizeof line)) {
        long long i, j;
        if (sscanf(line, "%lld %lld", &i, &j) == 2) {
            f.found++;
            f.diag += i == j;
        }
    }
    gzclose(gz);
    return f;
}

/* Returns 77 (ctest: skipped) when the matrices are not there. */
static int test_shared_matrices(void)
{
    const char *dir = getenv("BSRMV_MATRICES");
    DIR *d = dir ? opendir(dir) : NULL;
    if (!d) {
        printf("BSRMV_MATRICES (%s) is not a readable directory: skipped (README, \"Test "
               "matrices\")\n", dir ? dir : "unset");
        return 77;
    }
    int count = 0;
    double worst = 0;
    char worst_name[256] = "";
    long long worst_nnz = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        size_t n = strlen(de->d_name);
        if (!(n > 7 && strcmp(de->d_name + n - 7, ".mtx.gz") == 0) &&
            !(n > 4 && strcmp(de->d_name + n - 4, ".mtx") == 0))
            continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
        mm_facts f = scan_facts(path);
        CHECK(f.found == f.stored, "%s: scan found %lld of %lld entries", path, f.found, f.stored);

        bsrmv_coo *a = NULL;
        double t0 = now();
        bsrmv_status s = bsrmv_mm_read(path, &a);
        double t = now() - t0;
        CHECK(s == BSRMV_SUCCESS, "%s: read failed: %s", path, bsrmv_status_string(s));
        CHECK(a->m == f.m && a->n == f.n, "%s: size %lld x %lld, file says %lld x %lld", path,
              (long long)a->m, (long long)a->n, f.m, f.n);
        long long expect = f.symmetric ? 2 * f.stored - f.diag : f.stored;
        CHECK(a->nnz == expect, "%s: nnz %lld, expected %lld", path, (long long)a->nnz, expect);
        if (f.symmetric) {
            CHECK(a->nnz > f.stored, "%s: symmetric file not expanded", path);
            check_symmetric(a, path);
        }
        for (int64_t k = 0; k < a->nnz; k++) {
            CHECK(a->row[k] >= 0 && a->row[k] < a->m && a->col[k] >= 0 && a->col[k] < a->n,
                  "%s: entry %lld out of range", path, (long long)k);
            CHECK(!f.pattern || a->val[k] == 1.0, "%s: pattern value %g", path, a->val[k]);
        }
        printf("  %-20s %6lld x %-6lld %8lld stored %8lld expanded  %.3f s\n", de->d_name, f.m,
               f.n, f.stored, (long long)a->nnz, t);
        if (a->nnz > worst_nnz) {
            worst_nnz = a->nnz;
            worst = t;
            snprintf(worst_name, sizeof worst_name, "%s", de->d_name);
        }
        bsrmv_coo_destroy(a);
        count++;
    }
    closedir(d);
    CHECK(count > 0, "no .mtx/.mtx.gz files in %s", dir);
    printf("shared matrices: %d loaded; largest %s (%lld entries) in %.3f s\n", count,
           worst_name, worst_nnz, worst);
    return 0;
}

/* ------------------------------------------------------------------ */
/* Round trips                                                         */
/* ------------------------------------------------------------------ */

static double random_value(void)
{
    switch (rng_below(8)) {
    case 0: return (double)rng_below(2001) - 1000.0;
    case 1: return -0.0;
    case 2: return 4.9e-324 * (double)(1 + rng_below(1000)); /* subnormal */
    case 3: return rng_below(2) ? DBL_MIN : -DBL_MAX;
    case 4: return 1.7976931348623157e308;
    default: {
        /* Any finite bit pattern. */
        double v;
        do {
            uint64_t bits = rng();
            memcpy(&v, &bits, sizeof v);
        } while (!isfinite(v));
        return v;
    }
    }
}

static void round_trip(const char *name, int64_t m, int64_t n, int64_t nnz)
{
    bsrmv_coo *a, *b = NULL;
    CHECK(bsrmv_coo_create(&a, m, n, nnz) == BSRMV_SUCCESS, "coo_create");
    for (int64_t k = 0; k < nnz; k++) {
        a->row[k] = rng_below(m);
        a->col[k] = rng_below(n);
        a->val[k] = random_value();
    }
    char path[512];
    tmp_path(path, sizeof path, name);
    bsrmv_status s = bsrmv_mm_write(path, a);
    CHECK(s == BSRMV_SUCCESS, "write %s: %s", path, bsrmv_status_string(s));
    s = bsrmv_mm_read(path, &b);
    CHECK(s == BSRMV_SUCCESS, "read back %s: %s", path, bsrmv_status_string(s));
    CHECK(b->m == m && b->n == n && b->nnz == nnz, "%s: shape changed", path);
    for (int64_t k = 0; k < nnz; k++)
        CHECK(a->row[k] == b->row[k] && a->col[k] == b->col[k] &&
                  memcmp(&a->val[k], &b->val[k], sizeof(double)) == 0,
              "%s: entry %lld differs: (%lld,%lld,%.17g) vs (%lld,%lld,%.17g)", path,
              (long long)k, (long long)a->row[k], (long long)a->col[k], a->val[k],
              (long long)b->row[k], (long long)b->col[k], b->val[k]);
    bsrmv_coo_destroy(a);
    bsrmv_coo_destroy(b);
    unlink(path);
}

static void test_round_trips(void)
{
    rng_state = 12345;
    round_trip("rt.mtx", 37, 91, 2000);
    round_trip("rt.mtx.gz", 91, 37, 2000);
    round_trip("big.mtx.gz", 100000, 3, 50000);
    round_trip("empty.mtx", 5, 7, 0);
    round_trip("zero.mtx.gz", 0, 0, 0);

    /* The writer refuses what it could not read back, and reports I/O. */
    bsrmv_coo *a;
    char path[512];
    CHECK(bsrmv_coo_create(&a, 2, 2, 1) == BSRMV_SUCCESS, "coo_create");
    a->row[0] = 2;
    a->col[0] = 0;
    a->val[0] = 1;
    tmp_path(path, sizeof path, "bad.mtx");
    CHECK(bsrmv_mm_write(path, a) == BSRMV_ERR_STRUCTURE, "out-of-range entry written");
    CHECK(access(path, F_OK) != 0, "a rejected matrix left a file");
    a->row[0] = 1;
    tmp_path(path, sizeof path, "no/such/dir.mtx");
    CHECK(bsrmv_mm_write(path, a) == BSRMV_ERR_IO, "write into a missing directory");
    CHECK(strstr(bsrmv_last_error(), path), "IO message lacks the path");
    if (access("/dev/full", W_OK) == 0)
        CHECK(bsrmv_mm_write("/dev/full", a) == BSRMV_ERR_IO, "write to a full device");
    CHECK(bsrmv_mm_write(NULL, a) == BSRMV_ERR_ARGUMENT, "NULL path");
    bsrmv_coo_destroy(a);
    printf("round trips: ok\n");
}

/* ------------------------------------------------------------------ */
/* Broken files                                                        */
/* ------------------------------------------------------------------ */

#define BANNER "%%MatrixMarket matrix coordinate real general\n"
#define SYM_BANNER "%%MatrixMarket matrix coordinate real symmetric\n"

typedef struct bad_case {
    const char *name;
    const char *text;
    bsrmv_status status;
    int line;            /* expected "file:LINE:" in the message */
    const char *phrase;  /* and this, if not NULL */
} bad_case;

static const bad_case bad_cases[] = {
    {"empty.mtx", "", BSRMV_ERR_FORMAT, 1, "empty"},
    {"nobanner.mtx", "3 3 1\n1 1 1\n", BSRMV_ERR_FORMAT, 1, "banner"},
    {"shortbanner.mtx", "%%MatrixMarket matrix coordinate real\n3 3 1\n1 1 1\n",
     BSRMV_ERR_FORMAT, 1, "banner"},
    {"badfield.mtx", "%%MatrixMarket matrix coordinate float general\n1 1 1\n1 1 1\n",
     BSRMV_ERR_FORMAT, 1, "float"},
    {"badsym.mtx", "%%MatrixMarket matrix coordinate real diagonal\n1 1 1\n1 1 1\n",
     BSRMV_ERR_FORMAT, 1, "diagonal"},
    {"array.mtx", "%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n4\n",
     BSRMV_ERR_UNSUPPORTED, 1, "array"},
    {"complex3.mtx", "%%MatrixMarket matrix coordinate complex general\n1 1 1\n1 1 1\n",
     BSRMV_ERR_FORMAT, 3, "row column real imaginary"},
    {"hermitian.mtx", "%%MatrixMarket matrix coordinate real hermitian\n1 1 1\n1 1 1\n",
     BSRMV_ERR_FORMAT, 1, "hermitian"},
    {"hermdiag.mtx", "%%MatrixMarket matrix coordinate complex hermitian\n2 2 1\n2 2 1 -1\n",
     BSRMV_ERR_FORMAT, 3, "imaginary part"},
    {"complexnan.mtx", "%%MatrixMarket matrix coordinate complex general\n1 1 1\n1 1 1 nan\n",
     BSRMV_ERR_FORMAT, 3, "nan"},
    {"nosize.mtx", BANNER "% only a comment\n\n", BSRMV_ERR_FORMAT, 4, "size"},
    {"shortsize.mtx", BANNER "3 3\n1 1 1\n", BSRMV_ERR_FORMAT, 2, "size"},
    {"textsize.mtx", BANNER "3 three 1\n1 1 1\n", BSRMV_ERR_FORMAT, 2, "size"},
    {"negsize.mtx", BANNER "-3 3 1\n1 1 1\n", BSRMV_ERR_FORMAT, 2, "negative"},
    {"negnnz.mtx", BANNER "3 3 -1\n", BSRMV_ERR_FORMAT, 2, "negative"},
    {"hugesize.mtx", BANNER "99999999999999999999 3 1\n1 1 1\n", BSRMV_ERR_FORMAT, 2, "size"},
    {"fewer.mtx", BANNER "3 3 3\n1 1 1\n2 2 2\n", BSRMV_ERR_FORMAT, 5, "2 of the 3"},
    {"fewer_comment.mtx", BANNER "3 3 3\n1 1 1\n% c\n\n", BSRMV_ERR_FORMAT, 6, "1 of the 3"},
    {"more.mtx", BANNER "3 3 1\n1 1 1\n% c\n2 2 2\n", BSRMV_ERR_FORMAT, 5, "more entries"},
    {"row0.mtx", BANNER "3 4 2\n1 1 1\n0 1 1\n", BSRMV_ERR_FORMAT, 4,
     "row index 0 out of range 1..3"},
    {"col0.mtx", BANNER "3 4 1\n1 0 1\n", BSRMV_ERR_FORMAT, 3, "column index 0 out of range 1..4"},
    {"rowbig.mtx", BANNER "3 4 1\n4 1 1\n", BSRMV_ERR_FORMAT, 3, "row index 4 out of range"},
    {"colbig.mtx", BANNER "3 4 1\n1 5 1\n", BSRMV_ERR_FORMAT, 3, "column index 5 out of range"},
    {"rowneg.mtx", BANNER "3 4 1\n-1 1 1\n", BSRMV_ERR_FORMAT, 3, "row index -1"},
    {"rowfrac.mtx", BANNER "3 4 1\n1.0 1 1\n", BSRMV_ERR_FORMAT, 3, "not an integer"},
    {"text.mtx", BANNER "3 3 1\n1 1 abc\n", BSRMV_ERR_FORMAT, 3, "abc"},
    {"trailing.mtx", BANNER "3 3 1\n1 1 1.5x\n", BSRMV_ERR_FORMAT, 3, "1.5x"},
    {"overflow.mtx", BANNER "3 3 1\n1 1 1e999\n", BSRMV_ERR_FORMAT, 3, "1e999"},
    /* One value policy: finite decimal numbers only, integers exact. */
    {"nan.mtx", BANNER "3 3 2\n1 1 1\n2 2 nan\n", BSRMV_ERR_FORMAT, 4, "'nan' is not a finite"},
    {"inf.mtx", BANNER "3 3 1\n1 1 -Infinity\n", BSRMV_ERR_FORMAT, 3, "not a finite decimal"},
    {"inf_short.mtx", BANNER "3 3 1\n1 1 inf\n", BSRMV_ERR_FORMAT, 3, "'inf'"},
    {"hex.mtx", BANNER "3 3 1\n1 1 0x1.8p1\n", BSRMV_ERR_FORMAT, 3, "'0x1.8p1'"},
    {"hexint.mtx", BANNER "3 3 1\n1 1 0x10\n", BSRMV_ERR_FORMAT, 3, "'0x10'"},
    {"bigint.mtx", "%%MatrixMarket matrix coordinate integer general\n3 3 1\n1 1 9007199254740993\n",
     BSRMV_ERR_FORMAT, 3, "beyond 2^53"},
    {"bignegint.mtx", "%%MatrixMarket matrix coordinate integer general\n3 3 1\n1 1 -9223372036854775808\n",
     BSRMV_ERR_FORMAT, 3, "beyond 2^53"},
    {"bothtri.mtx", SYM_BANNER "3 3 3\n2 1 1\n3 3 1\n1 2 5\n", BSRMV_ERR_FORMAT, 5,
     "line 3 is below"},
    {"bothtri_skew.mtx", "%%MatrixMarket matrix coordinate real skew-symmetric\n3 3 2\n1 3 1\n2 1 1\n",
     BSRMV_ERR_FORMAT, 4, "one triangle"},
    {"gz_bothtri.mtx.gz", SYM_BANNER "3 3 2\n1 2 1\n3 1 1\n", BSRMV_ERR_FORMAT, 4, "one triangle"},
    {"tokens.mtx", BANNER "3 3 2\n1 1 1\n2 2 2 7\n", BSRMV_ERR_FORMAT, 4, "fields"},
    {"fewtokens.mtx", BANNER "3 3 1\n1 1\n", BSRMV_ERR_FORMAT, 3, "fields"},
    {"patterntokens.mtx", "%%MatrixMarket matrix coordinate pattern general\n3 3 1\n1 1 1\n",
     BSRMV_ERR_FORMAT, 3, "fields"},
    {"intfrac.mtx", "%%MatrixMarket matrix coordinate integer general\n3 3 1\n1 1 1.5\n",
     BSRMV_ERR_FORMAT, 3, "1.5"},
    {"nonsquare.mtx", SYM_BANNER "3 4 1\n1 1 1\n", BSRMV_ERR_FORMAT, 2, "square"},
    {"skewdiag.mtx", "%%MatrixMarket matrix coordinate real skew-symmetric\n3 3 2\n2 1 5\n2 2 1\n",
     BSRMV_ERR_FORMAT, 4, "diagonal"},
    {"skewpattern.mtx", "%%MatrixMarket matrix coordinate pattern skew-symmetric\n3 3 1\n2 1\n",
     BSRMV_ERR_FORMAT, 1, "skew"},
    {"gz_more.mtx.gz", SYM_BANNER "% c\n3 3 1\n1 1 1\n3 2 2\n", BSRMV_ERR_FORMAT, 5, "more"},
    {"gz_col0.mtx.gz", SYM_BANNER "3 3 2\n1 1 1\n\n2 0 1\n", BSRMV_ERR_FORMAT, 5, "column index 0"},
};

static void expect_failure(const char *path, bsrmv_status want, int line, const char *phrase)
{
    bsrmv_coo *a = (bsrmv_coo *)&a; /* any non-NULL value: must come back NULL */
    /* The options form with progress on (quiet: stderr is not a terminal). */
    const bsrmv_mm_options opt = {.progress = 1};
    bsrmv_status s = bsrmv_mm_read_opts(path, &a, &opt);
    CHECK(s == want, "%s: got %s, expected %s", path, bsrmv_status_string(s),
          bsrmv_status_string(want));
    CHECK(a == NULL, "%s: output not NULL after a failure", path);
    const char *msg = bsrmv_last_error();
    CHECK(strstr(msg, path), "%s: message does not name the file: %s", path, msg);
    if (line > 0) {
        char where[600];
        snprintf(where, sizeof where, "%s:%d:", path, line);
        CHECK(strstr(msg, where), "%s: message lacks '%s': %s", path, where, msg);
    }
    CHECK(!phrase || strstr(msg, phrase), "%s: message lacks '%s': %s", path, phrase, msg);
}

/* Complete lines zlib delivers from a damaged gzip file before its error. */
static int lines_before_gz_error(const char *path)
{
    gzFile gz = gzopen(path, "rb");
    CHECK(gz, "gzopen %s", path);
    char buf[4096];
    int lines = 0, got, err = Z_OK;
    /* zlib keeps handing out what it decoded after "unexpected end of file". */
    while ((got = gzread(gz, buf, sizeof buf)) > 0)
        for (int i = 0; i < got; i++)
            lines += buf[i] == '\n';
    gzerror(gz, &err);
    CHECK(err != Z_OK, "%s: zlib sees no damage", path);
    gzclose(gz);
    return lines;
}

static void test_bad_files(void)
{
    char path[512];
    for (size_t i = 0; i < sizeof bad_cases / sizeof bad_cases[0]; i++) {
        const bad_case *c = &bad_cases[i];
        write_file(path, sizeof path, c->name, c->text, strlen(c->text));
        expect_failure(path, c->status, c->line, c->phrase);
        unlink(path);
    }

    static const char nul[] = BANNER "3 3 1\n1 1 1\0junk\n";
    write_file(path, sizeof path, "nul.mtx", nul, sizeof nul - 1);
    expect_failure(path, BSRMV_ERR_FORMAT, 3, "NUL");
    unlink(path);

    /* Lines are parsed inside a 4 MiB buffer; a longer one is refused. */
    size_t huge = (size_t)5 << 20;
    char *longline = malloc(huge);
    CHECK(longline, "out of memory");
    int head = snprintf(longline, huge, "%s%%", BANNER);
    memset(longline + head, 'x', huge - (size_t)head - 1);
    longline[huge - 1] = '\n';
    write_file(path, sizeof path, "long.mtx", longline, huge);
    free(longline);
    expect_failure(path, BSRMV_ERR_FORMAT, 2, "longer");
    unlink(path);

    tmp_path(path, sizeof path, "does-not-exist.mtx");
    expect_failure(path, BSRMV_ERR_IO, 0, NULL);
    expect_failure(tmpdir, BSRMV_ERR_IO, 0, NULL);

    /* A valid gzip file cut short: zlib reports it only through gzerror. */
    size_t cap = 1 << 20, len = 0;
    char *text = malloc(cap);
    CHECK(text, "out of memory");
    len += (size_t)snprintf(text, cap, "%s1000 1000 20000\n", BANNER);
    rng_state = 99;
    for (int k = 0; k < 20000; k++)
        len += (size_t)snprintf(text + len, cap - len, "%lld %lld %.17g\n",
                                (long long)rng_below(1000) + 1, (long long)rng_below(1000) + 1,
                                (double)rng() / 3.0);
    write_file(path, sizeof path, "trunc.mtx.gz", text, len);
    free(text);
    bsrmv_coo *a = NULL;
    CHECK(bsrmv_mm_read(path, &a) == BSRMV_SUCCESS, "the untruncated file must read");
    bsrmv_coo_destroy(a);
    struct stat sb;
    CHECK(stat(path, &sb) == 0, "stat %s", path);
    /* Cut inside the 8-byte trailer, then in the middle of the deflate data
     * (in that order: truncate() to a larger size would append zeros). */
    off_t cuts[] = {sb.st_size - 4, sb.st_size / 2};
    for (int i = 0; i < 2; i++) {
        CHECK(truncate(path, cuts[i]) == 0, "truncate %s", path);
        expect_failure(path, BSRMV_ERR_IO, lines_before_gz_error(path) + 1, "end of file");
    }
    unlink(path);

    /* Damaged (not cut) compressed data: an I/O error on the damaged line. */
    static const char gzip_damaged[] = "\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03"
                                       "\xff\xff\xff\xff\xff\xff\xff\xff";
    tmp_path(path, sizeof path, "damaged.mtx.gz");
    FILE *f = fopen(path, "wb");
    CHECK(f && fwrite(gzip_damaged, 1, sizeof gzip_damaged - 1, f) == sizeof gzip_damaged - 1 &&
              fclose(f) == 0,
          "write %s", path);
    expect_failure(path, BSRMV_ERR_IO, 1, "read error");
    unlink(path);

    /* Damage inside a long stream: the lines before it are read and the
     * error names a line near the damage, not line 1. */
    text = malloc(cap);
    CHECK(text, "out of memory");
    len = (size_t)snprintf(text, cap, "%s1000 1000 40000\n", BANNER);
    for (int k = 0; k < 40000 && len + 64 < cap; k++)
        len += (size_t)snprintf(text + len, cap - len, "%d %d %d\n", k % 1000 + 1,
                                k / 40 + 1, k);
    write_file(path, sizeof path, "midamage.mtx.gz", text, len);
    CHECK(stat(path, &sb) == 0, "stat %s", path);
    f = fopen(path, "r+b");
    CHECK(f && fseek(f, sb.st_size * 3 / 4, SEEK_SET) == 0, "open %s", path);
    for (int i = 0; i < 64; i++)
        fputc(0xff, f);
    CHECK(fclose(f) == 0, "close %s", path);
    expect_failure(path, BSRMV_ERR_IO, 0, "near byte");
    long bad_line = atol(strstr(bsrmv_last_error(), ".gz:") + 4);
    CHECK(bad_line > 1000 && bad_line <= 40002, "damage reported at line %ld", bad_line);
    unlink(path);

    /* Bytes after the gzip stream are an error; a second gzip member is
     * the rest of the file (as gzip -d reads it). */
    write_file(path, sizeof path, "garbage.mtx.gz", BANNER "2 2 1\n1 1 1\n", sizeof BANNER + 11);
    f = fopen(path, "ab");
    CHECK(f && fputs("trailing garbage\n", f) >= 0 && fclose(f) == 0, "append %s", path);
    expect_failure(path, BSRMV_ERR_FORMAT, 4, "after the end of the gzip stream");
    unlink(path);
    char member2[512];
    write_file(path, sizeof path, "members.mtx.gz", BANNER "2 2 2\n1 1 1\n", sizeof BANNER + 11);
    write_file(member2, sizeof member2, "member2.gz", "2 2 5\n", 6);
    {
        FILE *dst = fopen(path, "ab"), *src = fopen(member2, "rb");
        CHECK(dst && src, "open members");
        int c;
        while ((c = fgetc(src)) != EOF)
            fputc(c, dst);
        CHECK(fclose(dst) == 0 && fclose(src) == 0, "close members");
    }
    CHECK(bsrmv_mm_read(path, &a) == BSRMV_SUCCESS && a->nnz == 2 && a->val[1] == 5,
          "two gzip members");
    bsrmv_coo_destroy(a);
    unlink(path);
    unlink(member2);
    free(text);

    /* The writer refuses what the reader would refuse. */
    CHECK(bsrmv_coo_create(&a, 2, 2, 1) == BSRMV_SUCCESS, "coo_create");
    a->row[0] = a->col[0] = 1;
    a->val[0] = NAN;
    tmp_path(path, sizeof path, "nan_out.mtx");
    CHECK(bsrmv_mm_write(path, a) == BSRMV_ERR_ARGUMENT && strstr(bsrmv_last_error(), "finite"),
          "writing NaN");
    CHECK(access(path, F_OK) != 0, "a refused matrix leaves no file");
    bsrmv_coo_destroy(a);
    a = NULL;

    CHECK(bsrmv_mm_read(NULL, &a) == BSRMV_ERR_ARGUMENT, "NULL path");
    CHECK(bsrmv_mm_read(path, NULL) == BSRMV_ERR_ARGUMENT, "NULL output");
    printf("broken files: %zu cases ok\n", sizeof bad_cases / sizeof bad_cases[0] + 11);
}

/* ------------------------------------------------------------------ */
/* Valid but unusual files                                             */
/* ------------------------------------------------------------------ */

static bsrmv_coo *read_text(const char *name, const char *text)
{
    char path[512];
    bsrmv_coo *a = NULL;
    write_file(path, sizeof path, name, text, strlen(text));
    bsrmv_status s = bsrmv_mm_read(path, &a);
    CHECK(s == BSRMV_SUCCESS, "%s: %s", name, bsrmv_status_string(s));
    unlink(path);
    return a;
}

static void expect_entries(const bsrmv_coo *a, const char *name, int64_t m, int64_t n,
                           const entry *want, int64_t count)
{
    CHECK(a->m == m && a->n == n, "%s: shape %lld x %lld", name, (long long)a->m,
          (long long)a->n);
    CHECK(a->nnz == count, "%s: nnz %lld, expected %lld", name, (long long)a->nnz,
          (long long)count);
    for (int64_t k = 0; k < count; k++)
        CHECK(a->row[k] == want[k].r && a->col[k] == want[k].c && a->val[k] == want[k].v,
              "%s: entry %lld is (%lld,%lld,%g), expected (%lld,%lld,%g)", name, (long long)k,
              (long long)a->row[k], (long long)a->col[k], a->val[k], (long long)want[k].r,
              (long long)want[k].c, want[k].v);
}

static void test_valid_files(void)
{
    bsrmv_coo *a = read_text("pattern.mtx", "%%MatrixMarket matrix coordinate pattern general\n"
                                             "2 3 2\n1 3\n2 1\n");
    expect_entries(a, "pattern", 2, 3, (entry[]){{0, 2, 1}, {1, 0, 1}}, 2);
    bsrmv_coo_destroy(a);

    a = read_text("integer.mtx.gz", "%%MatrixMarket matrix coordinate integer general\n"
                                    "2 2 2\n1 1 -7\n2 2 +12\n");
    expect_entries(a, "integer", 2, 2, (entry[]){{0, 0, -7}, {1, 1, 12}}, 2);
    bsrmv_coo_destroy(a);

    a = read_text("skew.mtx", "%%MatrixMarket matrix coordinate real skew-symmetric\n"
                              "3 3 2\n2 1 5\n3 1 -2.5\n");
    expect_entries(a, "skew", 3, 3, (entry[]){{1, 0, 5}, {0, 1, -5}, {2, 0, -2.5}, {0, 2, 2.5}},
                   4);
    bsrmv_coo_destroy(a);

    /* A file of upper-triangle entries is mirrored too; the diagonal is
     * stored once. */
    a = read_text("sym.mtx", SYM_BANNER "3 3 3\n1 1 4\n1 2 3\n2 3 -1e-3\n");
    expect_entries(a, "symmetric", 3, 3,
                   (entry[]){{0, 0, 4}, {0, 1, 3}, {1, 0, 3}, {1, 2, -1e-3}, {2, 1, -1e-3}}, 5);
    bsrmv_coo_destroy(a);

    a = read_text("sympattern.mtx", "%%MatrixMarket matrix coordinate pattern symmetric\n"
                                    "2 2 2\n1 1\n2 1\n");
    expect_entries(a, "symmetric pattern", 2, 2, (entry[]){{0, 0, 1}, {1, 0, 1}, {0, 1, 1}}, 3);
    bsrmv_coo_destroy(a);

    /* Mixed case, comments and blank lines anywhere after the banner, CRLF,
     * tabs, leading blanks, and no newline at the end. */
    a = read_text("loose.mtx", "%%matrixmarket MATRIX Coordinate REAL General\r\n"
                               "% comment\r\n\r\n"
                               "   2 2\t3  \r\n"
                               "%between\n\n   \t\n"
                               "1\t2 0.5\r\n"
                               "% again\n"
                               "2 1 -1E+2\n\n"
                               "2 2 .25");
    expect_entries(a, "loose", 2, 2, (entry[]){{0, 1, 0.5}, {1, 0, -100}, {1, 1, 0.25}}, 3);
    bsrmv_coo_destroy(a);

    /* Values in many spellings read exactly as strtod reads them. */
    static const char *const fixed[] = {"0", "-0", "0.000", ".5", "5.", "-.25", "+3.25",
                                        "1e22", "1e23", "1E-5", "9007199254740993",
                                        "123456789012345e-22", "123456789012345e22",
                                        "0.1", "1e-400", "4.9e-324", "1.7976931348623157e308",
                                        "000000000000000000001.5", "1.000000000000000000000",
                                        "-1.5E+0", "7e-0"};
    enum { NFIXED = sizeof fixed / sizeof fixed[0], NVALUES = 20000 };
    size_t cap = (size_t)NVALUES * 64, len = 0;
    char *text = malloc(cap);
    double *want = malloc(NVALUES * sizeof *want);
    CHECK(text && want, "out of memory");
    len += (size_t)snprintf(text, cap, "%s1 %d %d\n", BANNER, NVALUES, NVALUES);
    rng_state = 2024;
    for (int k = 0; k < NVALUES; k++) {
        char num[64];
        double x = (double)(rng() >> 11) * 0x1p-53 * pow(10.0, (double)rng_below(61) - 30);
        int prec = 1 + (int)rng_below(17);
        if (k < NFIXED)
            snprintf(num, sizeof num, "%s", fixed[k]);
        else if (k % 3 == 0)
            snprintf(num, sizeof num, "%.*g", prec, -x);
        else if (k % 3 == 1)
            snprintf(num, sizeof num, "%.*e", prec, x);
        else
            snprintf(num, sizeof num, "%.*f", prec, x * 1e6);
        want[k] = strtod(num, NULL);
        len += (size_t)snprintf(text + len, cap - len, "1 %d %s\n", k + 1, num);
    }
    char path[512];
    write_file(path, sizeof path, "values.mtx", text, len);
    a = NULL;
    CHECK(bsrmv_mm_read(path, &a) == BSRMV_SUCCESS, "values.mtx");
    for (int k = 0; k < NVALUES; k++)
        CHECK(memcmp(&a->val[k], &want[k], sizeof(double)) == 0,
              "value on line %d read as %.17g, strtod gives %.17g", k + 3, a->val[k], want[k]);
    bsrmv_coo_destroy(a);
    unlink(path);
    free(text);
    free(want);

    a = read_text("none.mtx", BANNER "4 0 0\n");
    expect_entries(a, "no entries", 4, 0, NULL, 0);
    bsrmv_coo_destroy(a);
    printf("valid files: ok\n");
}

/* ------------------------------------------------------------------ */
/* Block counts                                                        */
/* ------------------------------------------------------------------ */

static int64_t brute_blocks(const bsrmv_coo *a, int bs)
{
    int64_t count = 0;
    for (int64_t k = 0; k < a->nnz; k++) {
        int64_t br = a->row[k] / bs, bc = a->col[k] / bs;
        int64_t j = 0;
        while (j < k && !(a->row[j] / bs == br && a->col[j] / bs == bc))
            j++;
        count += j == k;
    }
    return count;
}

static void test_count_blocks(void)
{
    rng_state = 7;
    for (int trial = 0; trial < 200; trial++) {
        /* The last trials are huge and sparse, to take the sorting path. */
        int64_t scale = trial < 180 ? 1 : (int64_t)1 << 40;
        int64_t m = (1 + rng_below(60)) * scale, n = (1 + rng_below(60)) * scale;
        int64_t nnz = rng_below(400);
        bsrmv_coo *a;
        CHECK(bsrmv_coo_create(&a, m, n, nnz) == BSRMV_SUCCESS, "coo_create");
        for (int64_t k = 0; k < nnz; k++) {
            /* Clustered rows make duplicates and shared blocks likely. */
            a->row[k] = rng_below(2) ? rng_below(m) : rng_below(m < 8 ? m : 8);
            a->col[k] = rng_below(n);
            a->val[k] = 1;
        }
        for (int bs = 1; bs <= 9; bs++) {
            int64_t got = -1;
            CHECK(bsrmv_coo_count_blocks(a, bs, &got) == BSRMV_SUCCESS, "count_blocks");
            int64_t want = brute_blocks(a, bs);
            CHECK(got == want, "trial %d (%lld x %lld, %lld entries) bs %d: %lld blocks, brute "
                  "force %lld", trial, (long long)m, (long long)n, (long long)nnz, bs,
                  (long long)got, (long long)want);
        }
        bsrmv_coo_destroy(a);
    }

    bsrmv_coo *a;
    int64_t nnzb = -1;
    CHECK(bsrmv_coo_create(&a, 3, 3, 1) == BSRMV_SUCCESS, "coo_create");
    a->row[0] = 0;
    a->col[0] = 3;
    a->val[0] = 1;
    CHECK(bsrmv_coo_count_blocks(a, 0, &nnzb) == BSRMV_ERR_ARGUMENT, "bs 0 accepted");
    CHECK(bsrmv_coo_count_blocks(a, 2, &nnzb) == BSRMV_ERR_STRUCTURE, "column 3 of 3 accepted");
    CHECK(nnzb == -1, "output written on failure");
    bsrmv_coo_destroy(a);
    CHECK(bsrmv_coo_create(&a, -1, 3, 0) == BSRMV_ERR_ARGUMENT && a == NULL, "negative m");
    CHECK(bsrmv_coo_create(&a, 1, 1, INT64_MAX) == BSRMV_ERR_OVERFLOW, "huge nnz");
    CHECK(bsrmv_coo_create(&a, 0, 0, 0) == BSRMV_SUCCESS && a->nnz == 0, "empty coo");
    CHECK(bsrmv_coo_count_blocks(a, 4, &nnzb) == BSRMV_SUCCESS && nnzb == 0, "empty count");
    bsrmv_coo_destroy(a);
    bsrmv_coo_destroy(NULL);
    printf("block counts: ok\n");
}

/* `test_mmio shared`: the real matrices of $BSRMV_MATRICES only (skipped
 * without them); `test_mmio`: everything else. */
int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "shared") == 0)
        return test_shared_matrices();
    const char *base = getenv("TMPDIR");
    snprintf(tmpdir, sizeof tmpdir, "%s/bsrmv_mmio_XXXXXX", base && *base ? base : "/tmp");
    CHECK(mkdtemp(tmpdir), "mkdtemp %s", tmpdir);

    test_round_trips();
    test_bad_files();
    test_valid_files();
    test_count_blocks();

    CHECK(rmdir(tmpdir) == 0, "rmdir %s (files left behind?)", tmpdir);
    printf("test_mmio: all passed\n");
    return 0;
}
