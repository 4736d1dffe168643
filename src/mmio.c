/* Matrix Market coordinate files: reading (plain or gzip) and writing. */
#define _POSIX_C_SOURCE 200809L
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

/* Whole lines are parsed in place inside one buffer, so the buffer bounds the
 * line length; real entry lines are under 100 bytes. */
#define READ_BUFFER ((size_t)4 << 20)
#define PROGRESS_MIN_BYTES ((int64_t)64 << 20)
#define PROGRESS_STEP 5

/* ------------------------------------------------------------------ */
/* Reading lines                                                       */
/* ------------------------------------------------------------------ */

/* Compressed input is read in pieces of this size; zlib's inflate writes
 * straight into the line buffer, so whatever decodes before damaged data
 * reaches the parser and the error names the damaged line. */
#define INPUT_BUFFER ((size_t)256 << 10)

typedef struct reader {
    const char *path;
    int fd;
    char *buf;          /* READ_BUFFER + 1 bytes: room for a final '\0' */
    size_t pos, len;    /* buf[pos..len) is not consumed yet            */
    bool eof;
    bsrmv_status failed; /* a read failed after delivering buf[0..len)  */
    char why[160];      /* and why                                      */
    int64_t line;       /* number of the line last returned             */
    /* Raw input: in[in_pos..in_len) not consumed yet; raw_off bytes of
     * the file read so far. */
    unsigned char *in;
    size_t in_pos, in_len;
    int64_t raw_off;
    bool raw_eof;
    bool gzip, z_ready;
    z_stream z;
    int64_t file_size; /* for progress */
    bool progress;
    int shown_pct;     /* last percentage printed, -1 before the first */
    int shown_width;   /* characters of the progress line              */
} reader;

static void show_progress(reader *r)
{
    int pct = (int)((double)r->raw_off * 100.0 / (double)r->file_size);
    if (pct > 100)
        pct = 100;
    if (r->shown_pct >= 0 && pct < r->shown_pct + PROGRESS_STEP)
        return;
    r->shown_pct = pct - pct % PROGRESS_STEP;
    int w = fprintf(stderr, "\rbsrmv: reading %s: %3d%%", r->path, r->shown_pct);
    if (w > r->shown_width)
        r->shown_width = w;
    fflush(stderr);
}

static void clear_progress(reader *r)
{
    if (r->shown_pct < 0)
        return;
    fprintf(stderr, "\r%*s\r", r->shown_width, "");
    fflush(stderr);
}

/* zlib's allocations go through the library's allocator too. */
static voidpf z_alloc(voidpf opaque, uInt items, uInt size)
{
    (void)opaque;
    return bsrmv_calloc(items, size);
}

static void z_free(voidpf opaque, voidpf p)
{
    (void)opaque;
    bsrmv_free(p);
}

/* Records a read failure, reported once the lines before it are used. */
BSRMV_PRINTF(3, 4)
static void read_failed(reader *r, bsrmv_status s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->why, sizeof r->why, fmt, ap);
    va_end(ap);
    r->failed = s;
}

/* More raw bytes into r->in once it is used up; false at the end of the
 * file or on a failure (then recorded). */
static bool read_raw(reader *r)
{
    if (r->in_pos < r->in_len)
        return true;
    if (r->raw_eof)
        return false;
    ssize_t got;
    do
        got = read(r->fd, r->in, INPUT_BUFFER);
    while (got < 0 && errno == EINTR);
    if (got < 0) {
        read_failed(r, BSRMV_ERR_IO, "read error: %s", strerror(errno));
        return false;
    }
    r->in_pos = 0;
    r->in_len = (size_t)got;
    r->raw_off += got;
    r->raw_eof = got == 0;
    return got > 0;
}

/* Up to `room` bytes of text into dst; 0 at the end or on a failure. */
static size_t read_text(reader *r, char *dst, size_t room)
{
    if (!r->gzip) {
        if (!read_raw(r))
            return 0;
        size_t n = r->in_len - r->in_pos < room ? r->in_len - r->in_pos : room;
        memcpy(dst, r->in + r->in_pos, n);
        r->in_pos += n;
        return n;
    }
    z_stream *z = &r->z;
    z->next_out = (Bytef *)dst;
    z->avail_out = (uInt)room;
    while (z->avail_out > 0) {
        if (!read_raw(r)) {
            if (!r->failed && r->z_ready)
                read_failed(r, BSRMV_ERR_IO,
                            "read error: unexpected end of file (the gzip stream is cut "
                            "short after %lld compressed bytes)",
                            (long long)r->raw_off);
            break;
        }
        if (!r->z_ready) {
            /* A new member: only another gzip stream may follow one. */
            size_t left = r->in_len - r->in_pos;
            if (left >= 1 && r->in[r->in_pos] != 0x1f) {
                read_failed(r, BSRMV_ERR_FORMAT,
                            "data after the end of the gzip stream, at byte %lld",
                            (long long)(r->raw_off - (int64_t)r->in_len + (int64_t)r->in_pos));
                break;
            }
            if (inflateReset2(z, 16 + MAX_WBITS) != Z_OK) {
                read_failed(r, BSRMV_ERR_IO, "read error: cannot restart the gzip stream");
                break;
            }
            r->z_ready = true;
        }
        z->next_in = r->in + r->in_pos;
        z->avail_in = (uInt)(r->in_len - r->in_pos);
        int ret = inflate(z, Z_NO_FLUSH);
        r->in_pos = r->in_len - z->avail_in;
        if (ret == Z_STREAM_END) {
            r->z_ready = false;
        } else if (ret == Z_MEM_ERROR) {
            read_failed(r, BSRMV_ERR_NOMEM, "out of memory decompressing");
            break;
        } else if (ret != Z_OK && ret != Z_BUF_ERROR) {
            int64_t at = r->raw_off - (int64_t)(r->in_len - r->in_pos);
            read_failed(r, BSRMV_ERR_IO, "read error: damaged gzip data (%s) near byte %lld",
                        z->msg ? z->msg : "inflate failed", (long long)at);
            break;
        }
    }
    return room - z->avail_out;
}

/* Next line, '\n' (and nothing else) removed and '\0'-terminated in place;
 * *line is NULL at the end of the file. */
static bsrmv_status next_line(reader *r, char **line)
{
    for (;;) {
        char *start = r->buf + r->pos;
        size_t avail = r->len - r->pos;
        char *nl = memchr(start, '\n', avail);
        if (nl || (r->eof && avail > 0)) {
            size_t n = nl ? (size_t)(nl - start) : avail;
            r->line++;
            /* A '\0' would silently cut the line short for the parser. */
            if (memchr(start, '\0', n))
                return bsrmv_fail(BSRMV_ERR_FORMAT, "%s:%lld: NUL byte in the line", r->path,
                                  (long long)r->line);
            start[n] = '\0';
            r->pos += n + (nl != NULL);
            *line = start;
            return BSRMV_SUCCESS;
        }
        if (r->eof) {
            *line = NULL;
            return BSRMV_SUCCESS;
        }
        /* Reported once the lines read before it are used up, so the
         * message names the line that was cut. */
        if (r->failed)
            return bsrmv_fail(r->failed, "%s:%lld: %s", r->path, (long long)r->line + 1,
                              r->why);
        memmove(r->buf, start, avail);
        r->pos = 0;
        r->len = avail;
        if (r->len == READ_BUFFER)
            return bsrmv_fail(BSRMV_ERR_FORMAT, "%s:%lld: line longer than %zu bytes", r->path,
                              (long long)r->line + 1, READ_BUFFER);
        size_t got = read_text(r, r->buf + r->len, READ_BUFFER - r->len);
        r->len += got;
        if (got == 0 && !r->failed)
            r->eof = true;
        if (r->progress)
            show_progress(r);
    }
}

/* ------------------------------------------------------------------ */
/* Tokens                                                              */
/* ------------------------------------------------------------------ */

static bool is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

/* Splits line in place into tokens; returns their count, or max + 1 when
 * there are more than max. */
static int split(char *line, char **tok, int max)
{
    int count = 0;
    char *p = line;
    for (;;) {
        while (is_space(*p))
            p++;
        if (!*p)
            return count;
        if (count == max)
            return max + 1;
        tok[count++] = p;
        while (*p && !is_space(*p))
            p++;
        if (*p)
            *p++ = '\0';
    }
}

static bool is_skippable(const char *line)
{
    while (is_space(*line))
        line++;
    return *line == '\0' || *line == '%';
}

/* The whole token as a decimal int64 with optional sign. */
bool bsrmv_parse_int(const char *s, int64_t *v)
{
    bool neg = *s == '-';
    if (*s == '+' || *s == '-')
        s++;
    if (!*s)
        return false;
    /* Accumulated as a negative number: INT64_MIN has no positive twin. */
    int64_t x = 0;
    for (; *s; s++) {
        if (*s < '0' || *s > '9')
            return false;
        int d = *s - '0';
        if (x < (INT64_MIN + d) / 10)
            return false;
        x = x * 10 - d;
    }
    if (!neg && x == INT64_MIN)
        return false;
    *v = neg ? x : -x;
    return true;
}

/* The decimal form: [+-] digits [. digits] [(e|E) [+-] digits], at least
 * one mantissa digit; no nan, inf or hexadecimal forms. */
static bool is_decimal(const char *s)
{
    if (*s == '+' || *s == '-')
        s++;
    int digits = 0;
    for (; *s >= '0' && *s <= '9'; s++)
        digits++;
    if (*s == '.')
        for (s++; *s >= '0' && *s <= '9'; s++)
            digits++;
    if (digits == 0)
        return false;
    if (*s == 'e' || *s == 'E') {
        s++;
        if (*s == '+' || *s == '-')
            s++;
        if (*s < '0' || *s > '9')
            return false;
        while (*s >= '0' && *s <= '9')
            s++;
    }
    return *s == '\0';
}

/* Clinger's fast path, about 3x faster than strtod on typical files: up to
 * 15 significant digits and powers of ten up to 1e22 are exact doubles, so
 * one multiplication or division gives the correctly rounded result that
 * strtod would.  Anything else is left to strtod. */
static bool parse_real_fast(const char *s, double *v)
{
#if FLT_EVAL_METHOD == 0
    static const double pow10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                   1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                   1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
    bool neg = *s == '-';
    if (*s == '+' || *s == '-')
        s++;
    uint64_t mant = 0;
    int digits = 0, exp10 = 0;
    bool any = false, point = false;
    for (;; s++) {
        if (*s >= '0' && *s <= '9') {
            any = true;
            if (mant == 0 && *s == '0') {
                exp10 -= point;
                continue;
            }
            if (++digits > 15)
                return false;
            mant = mant * 10 + (uint64_t)(*s - '0');
            exp10 -= point;
        } else if (*s == '.' && !point) {
            point = true;
        } else {
            break;
        }
    }
    if (!any)
        return false;
    if (*s == 'e' || *s == 'E') {
        s++;
        bool eneg = *s == '-';
        if (*s == '+' || *s == '-')
            s++;
        int e = 0, edigits = 0;
        for (; *s >= '0' && *s <= '9'; s++)
            if (++edigits > 4)
                return false;
            else
                e = e * 10 + (*s - '0');
        if (edigits == 0)
            return false;
        exp10 += eneg ? -e : e;
    }
    if (*s != '\0')
        return false;
    double x = (double)mant;
    if (mant != 0 && exp10 > 0) {
        if (exp10 > 22)
            return false;
        x *= pow10[exp10];
    } else if (mant != 0 && exp10 < 0) {
        if (exp10 < -22)
            return false;
        x /= pow10[-exp10];
    }
    *v = neg ? -x : x;
    return true;
#else
    (void)s;
    (void)v;
    return false;
#endif
}

/* The whole token as a finite double in decimal form; underflow to a
 * subnormal or zero is fine, overflow is not. */
bool bsrmv_parse_real(const char *s, double *v)
{
    if (parse_real_fast(s, v))
        return true;
    if (!is_decimal(s))
        return false;
    char *end;
    errno = 0;
    double x = strtod(s, &end);
    if (end == s || *end != '\0' || !isfinite(x))
        return false;
    *v = x;
    return true;
}

/* ------------------------------------------------------------------ */
/* Header                                                              */
/* ------------------------------------------------------------------ */

typedef enum field { FIELD_REAL, FIELD_INTEGER, FIELD_PATTERN, FIELD_COMPLEX } field;
typedef enum symmetry { SYM_GENERAL, SYM_SYMMETRIC, SYM_SKEW, SYM_HERMITIAN } symmetry;

static const char *symmetry_name(symmetry s)
{
    return s == SYM_SYMMETRIC ? "symmetric" : s == SYM_SKEW ? "skew-symmetric" : "hermitian";
}

typedef struct header {
    field field;
    symmetry sym;
    int64_t m, n, stored;
    /* Symmetric files: first line with an entry below and above the
     * diagonal (0: none yet); one file may use only one triangle. */
    int64_t lower_line, upper_line;
    /* bsrmv_mm_read_sym: a symmetric or hermitian file's triangle is kept,
     * as the upper. */
    bool keep_triangle;
} header;

#define BANNER_FORM "%%%%MatrixMarket matrix coordinate <real|integer|pattern|complex> " \
                    "<general|symmetric|skew-symmetric|hermitian>"

static bsrmv_status parse_banner(reader *r, char *line, header *h)
{
    char *tok[5];
    if (strncasecmp(line, "%%MatrixMarket", 14) != 0)
        return bsrmv_fail(BSRMV_ERR_FORMAT, "%s:1: missing banner, expected " BANNER_FORM,
                          r->path);
    if (split(line, tok, 5) != 5 || strcasecmp(tok[0], "%%MatrixMarket") != 0)
        return bsrmv_fail(BSRMV_ERR_FORMAT, "%s:1: malformed banner, expected " BANNER_FORM,
                          r->path);
    if (strcasecmp(tok[1], "matrix") != 0)
        return bsrmv_fail(BSRMV_ERR_FORMAT, "%s:1: unknown object '%s' (expected 'matrix')",
                          r->path, tok[1]);
    if (strcasecmp(tok[2], "array") == 0)
        return bsrmv_fail(BSRMV_ERR_UNSUPPORTED,
                          "%s:1: dense 'array' files are not supported, only 'coordinate'",
                          r->path);
    if (strcasecmp(tok[2], "coordinate") != 0)
        return bsrmv_fail(BSRMV_ERR_FORMAT, "%s:1: unknown format '%s' (expected 'coordinate')",
                          r->path, tok[2]);
    if (strcasecmp(tok[3], "real") == 0)
        h->field = FIELD_REAL;
    else if (strcasecmp(tok[3], "integer") == 0)
        h->field = FIELD_INTEGER;
    else if (strcasecmp(tok[3], "pattern") == 0)
        h->field = FIELD_PATTERN;
    else if (strcasecmp(tok[3], "complex") == 0)
        h->field = FIELD_COMPLEX;
    else
        return bsrmv_fail(BSRMV_ERR_FORMAT, "%s:1: unknown field '%s'", r->path, tok[3]);
    if (strcasecmp(tok[4], "general") == 0)
        h->sym = SYM_GENERAL;
    else if (strcasecmp(tok[4], "symmetric") == 0)
        h->sym = SYM_SYMMETRIC;
    else if (strcasecmp(tok[4], "skew-symmetric") == 0)
        h->sym = SYM_SKEW;
    else if (strcasecmp(tok[4], "hermitian") == 0)
        h->sym = SYM_HERMITIAN;
    else
        return bsrmv_fail(BSRMV_ERR_FORMAT, "%s:1: unknown symmetry '%s'", r->path, tok[4]);
    /* The specification defines no pattern skew-symmetric files. */
    if (h->field == FIELD_PATTERN && h->sym == SYM_SKEW)
        return bsrmv_fail(BSRMV_ERR_FORMAT, "%s:1: a pattern matrix cannot be skew-symmetric",
                          r->path);
    /* Hermitian is a property of complex matrices (the specification's). */
    if (h->sym == SYM_HERMITIAN && h->field != FIELD_COMPLEX)
        return bsrmv_fail(BSRMV_ERR_FORMAT,
                          "%s:1: a hermitian matrix must have the 'complex' field", r->path);
    return BSRMV_SUCCESS;
}

static bsrmv_status parse_size(reader *r, char *line, header *h)
{
    char *tok[3];
    long long ln = (long long)r->line;
    if (split(line, tok, 3) != 3 || !bsrmv_parse_int(tok[0], &h->m) ||
        !bsrmv_parse_int(tok[1], &h->n) || !bsrmv_parse_int(tok[2], &h->stored))
        return bsrmv_fail(BSRMV_ERR_FORMAT,
                          "%s:%lld: malformed size line, expected 'rows columns entries'",
                          r->path, ln);
    if (h->m < 0 || h->n < 0 || h->stored < 0)
        return bsrmv_fail(BSRMV_ERR_FORMAT, "%s:%lld: negative size %lld x %lld, %lld entries",
                          r->path, ln, (long long)h->m, (long long)h->n, (long long)h->stored);
    if (h->sym != SYM_GENERAL && h->m != h->n)
        return bsrmv_fail(BSRMV_ERR_FORMAT, "%s:%lld: a %s matrix must be square, not %lld x %lld",
                          r->path, ln, symmetry_name(h->sym),
                          (long long)h->m, (long long)h->n);
    return BSRMV_SUCCESS;
}

/* ------------------------------------------------------------------ */
/* Entries                                                             */
/* ------------------------------------------------------------------ */

/* Entries are appended to coo's own arrays, which grow geometrically up to
 * the bound the header implies: a header that promises a billion entries in
 * a short file costs nothing before the entries are there. */
typedef struct sink {
    bsrmv_coo *coo;
    int64_t cap, bound;
} sink;

static bsrmv_status grow(reader *r, sink *s)
{
    /* Only called while cap < bound, so the new cap is larger. */
    int64_t cap = s->cap < 1024 ? 1024 : s->cap <= s->bound / 2 ? s->cap * 2 : s->bound;
    if (cap > s->bound)
        cap = s->bound;
    /* bound * 8 was checked to fit in size_t, and cap <= bound. */
    size_t ib = (size_t)cap * sizeof(int64_t);
    size_t vb = (size_t)cap * sizeof(double);
    int64_t *row = bsrmv_realloc(s->coo->row, ib);
    if (row)
        s->coo->row = row;
    int64_t *col = row ? bsrmv_realloc(s->coo->col, ib) : NULL;
    if (col)
        s->coo->col = col;
    double *val = col ? bsrmv_realloc(s->coo->val, vb) : NULL;
    if (val)
        s->coo->val = val;
    double *imag = val && s->coo->imag ? bsrmv_realloc(s->coo->imag, vb) : NULL;
    if (imag)
        s->coo->imag = imag;
    if (!val || (s->coo->imag && !imag))
        return bsrmv_fail(BSRMV_ERR_NOMEM, "%s:%lld: out of memory for %lld entries", r->path,
                          (long long)r->line, (long long)cap);
    s->cap = cap;
    return BSRMV_SUCCESS;
}

/* Entry (i, j) = v + i*vi (vi is dropped for a real file). */
static bsrmv_status add(reader *r, sink *s, int64_t i, int64_t j, double v, double vi)
{
    if (s->coo->nnz == s->cap) {
        bsrmv_status st = grow(r, s);
        if (st != BSRMV_SUCCESS)
            return st;
    }
    int64_t k = s->coo->nnz++;
    s->coo->row[k] = i;
    s->coo->col[k] = j;
    s->coo->val[k] = v;
    if (s->coo->imag)
        s->coo->imag[k] = vi;
    return BSRMV_SUCCESS;
}

static bsrmv_status parse_index(reader *r, const char *tok, const char *what, int64_t max,
                                int64_t *v)
{
    if (!bsrmv_parse_int(tok, v))
        return bsrmv_fail(BSRMV_ERR_FORMAT, "%s:%lld: %s index '%s' is not an integer",
                          r->path, (long long)r->line, what, tok);
    if (*v < 1 || *v > max)
        return bsrmv_fail(BSRMV_ERR_FORMAT, "%s:%lld: %s index %lld out of range 1..%lld",
                          r->path, (long long)r->line, what, (long long)*v, (long long)max);
    (*v)--;
    return BSRMV_SUCCESS;
}

static bsrmv_status parse_entry(reader *r, header *h, char *line, sink *s)
{
    char *tok[4];
    int want = h->field == FIELD_PATTERN ? 2 : h->field == FIELD_COMPLEX ? 4 : 3;
    int got = split(line, tok, want);
    const char *form = want == 2   ? "row column"
                       : want == 3 ? "row column value"
                                   : "row column real imaginary";
    if (got > want)
        return bsrmv_fail(BSRMV_ERR_FORMAT, "%s:%lld: more than %d fields, expected '%s'",
                          r->path, (long long)r->line, want, form);
    if (got < want)
        return bsrmv_fail(BSRMV_ERR_FORMAT, "%s:%lld: %d fields, expected '%s'", r->path,
                          (long long)r->line, got, form);
    int64_t i = 0, j = 0;
    bsrmv_status st = parse_index(r, tok[0], "row", h->m, &i);
    if (st == BSRMV_SUCCESS)
        st = parse_index(r, tok[1], "column", h->n, &j);
    if (st != BSRMV_SUCCESS)
        return st;
    double v = 1.0, vi = 0.0;
    for (int t = 2; t < want && (h->field == FIELD_REAL || h->field == FIELD_COMPLEX); t++)
        if (!bsrmv_parse_real(tok[t], t == 2 ? &v : &vi))
            return bsrmv_fail(BSRMV_ERR_FORMAT,
                              "%s:%lld: value '%s' is not a finite decimal number in double range",
                              r->path, (long long)r->line, tok[t]);
    if (h->sym == SYM_HERMITIAN && i == j && vi != 0)
        return bsrmv_fail(BSRMV_ERR_FORMAT,
                          "%s:%lld: diagonal entry (%lld, %lld) of a hermitian matrix has the "
                          "imaginary part %s; it must be real",
                          r->path, (long long)r->line, (long long)i + 1, (long long)j + 1, tok[3]);
    if (h->field == FIELD_INTEGER) {
        int64_t x;
        if (!bsrmv_parse_int(tok[2], &x))
            return bsrmv_fail(BSRMV_ERR_FORMAT, "%s:%lld: value '%s' is not an integer",
                              r->path, (long long)r->line, tok[2]);
        /* Values are stored as doubles, exact up to 2^53. */
        if (x > ((int64_t)1 << 53) || x < -((int64_t)1 << 53))
            return bsrmv_fail(BSRMV_ERR_FORMAT,
                              "%s:%lld: integer value %s is beyond 2^53 and would be rounded",
                              r->path, (long long)r->line, tok[2]);
        v = (double)x;
    }
    if (h->sym == SYM_SKEW && i == j)
        return bsrmv_fail(BSRMV_ERR_FORMAT,
                          "%s:%lld: diagonal entry (%lld, %lld) in a skew-symmetric matrix",
                          r->path, (long long)r->line, (long long)i + 1, (long long)j + 1);
    if (h->sym != SYM_GENERAL && i != j) {
        int64_t *mine = i > j ? &h->lower_line : &h->upper_line;
        int64_t other = i > j ? h->upper_line : h->lower_line;
        if (!*mine)
            *mine = r->line;
        /* Mirroring both triangles would sum the pairs silently. */
        if (other)
            return bsrmv_fail(BSRMV_ERR_FORMAT,
                              "%s:%lld: entry (%lld, %lld) is %s the diagonal but line %lld "
                              "is %s; a symmetric file stores one triangle",
                              r->path, (long long)r->line, (long long)i + 1, (long long)j + 1,
                              i > j ? "below" : "above", (long long)other,
                              i > j ? "above" : "below");
    }
    if (h->keep_triangle && (h->sym == SYM_SYMMETRIC || h->sym == SYM_HERMITIAN))
        return i <= j ? add(r, s, i, j, v, vi)
                      : add(r, s, j, i, v, h->sym == SYM_HERMITIAN ? -vi : vi);
    st = add(r, s, i, j, v, vi);
    /* The mirror: a_ji = a_ij, -a_ij or conj(a_ij). */
    if (st == BSRMV_SUCCESS && h->sym != SYM_GENERAL && i != j)
        st = add(r, s, j, i, h->sym == SYM_SKEW ? -v : v,
                 h->sym == SYM_SYMMETRIC ? vi : -vi);
    return st;
}

/* ------------------------------------------------------------------ */
/* The file                                                            */
/* ------------------------------------------------------------------ */

/* Next line that is neither blank nor a comment (NULL at the end). */
static bsrmv_status next_content(reader *r, char **line)
{
    bsrmv_status st;
    while ((st = next_line(r, line)) == BSRMV_SUCCESS && *line && is_skippable(*line))
        ;
    return st;
}

static bsrmv_status read_all(reader *r, bsrmv_coo **out, int *symmetric)
{
    header h = {.keep_triangle = symmetric != NULL};
    char *line;
    bsrmv_status st = next_line(r, &line);
    if (st != BSRMV_SUCCESS)
        return st;
    if (!line)
        return bsrmv_fail(BSRMV_ERR_FORMAT, "%s:1: empty file, expected " BANNER_FORM, r->path);
    if ((st = parse_banner(r, line, &h)) != BSRMV_SUCCESS)
        return st;
    if ((st = next_content(r, &line)) != BSRMV_SUCCESS)
        return st;
    if (!line)
        return bsrmv_fail(BSRMV_ERR_FORMAT, "%s:%lld: missing size line 'rows columns entries'",
                          r->path, (long long)r->line + 1);
    if ((st = parse_size(r, line, &h)) != BSRMV_SUCCESS)
        return st;

    sink s = {NULL, 0, h.stored};
    size_t bytes;
    if ((h.sym != SYM_GENERAL && !bsrmv_mul64(h.stored, 2, &s.bound)) ||
        !bsrmv_bytes(s.bound, sizeof(int64_t), &bytes))
        return bsrmv_fail(BSRMV_ERR_OVERFLOW, "%s:%lld: %lld entries do not fit in memory sizes",
                          r->path, (long long)r->line, (long long)h.stored);
    if ((st = h.field == FIELD_COMPLEX ? bsrmv_coo_create_complex(&s.coo, h.m, h.n, 0)
                                       : bsrmv_coo_create(&s.coo, h.m, h.n, 0)) != BSRMV_SUCCESS)
        return st;
    for (int64_t k = 0; k < h.stored; k++) {
        if ((st = next_content(r, &line)) != BSRMV_SUCCESS)
            goto fail;
        if (!line) {
            st = bsrmv_fail(BSRMV_ERR_FORMAT,
                            "%s:%lld: end of file after %lld of the %lld entries declared",
                            r->path, (long long)r->line + 1, (long long)k, (long long)h.stored);
            goto fail;
        }
        if ((st = parse_entry(r, &h, line, &s)) != BSRMV_SUCCESS)
            goto fail;
    }
    if ((st = next_content(r, &line)) != BSRMV_SUCCESS)
        goto fail;
    if (line) {
        st = bsrmv_fail(BSRMV_ERR_FORMAT, "%s:%lld: more entries than the %lld declared",
                        r->path, (long long)r->line, (long long)h.stored);
        goto fail;
    }
    /* Symmetric files over-reserve by the diagonal; give that back. */
    if (s.cap > s.coo->nnz && s.coo->nnz > 0) {
        size_t ib = (size_t)s.coo->nnz * sizeof(int64_t);
        size_t vb = (size_t)s.coo->nnz * sizeof(double);
        int64_t *p = bsrmv_realloc(s.coo->row, ib);
        if (p)
            s.coo->row = p;
        p = bsrmv_realloc(s.coo->col, ib);
        if (p)
            s.coo->col = p;
        double *q = bsrmv_realloc(s.coo->val, vb);
        if (q)
            s.coo->val = q;
        q = s.coo->imag ? bsrmv_realloc(s.coo->imag, vb) : NULL;
        if (q)
            s.coo->imag = q;
    }
    *out = s.coo;
    if (symmetric)
        *symmetric = !h.keep_triangle          ? BSRMV_SYM_NONE
                     : h.sym == SYM_SYMMETRIC ? BSRMV_SYM_SYMMETRIC
                     : h.sym == SYM_HERMITIAN ? BSRMV_SYM_HERMITIAN
                                              : BSRMV_SYM_NONE;
    return BSRMV_SUCCESS;
fail:
    bsrmv_coo_destroy(s.coo);
    return st;
}

/* symmetric: NULL expands symmetric files, else keeps their triangle and
 * says whether the file was one. */
static bsrmv_status read_file(const char *path, bsrmv_coo **coo, int progress, int *symmetric)
{
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return bsrmv_fail(BSRMV_ERR_IO, "cannot open %s: %s", path, strerror(errno));
    struct stat sb;
    int e = fstat(fd, &sb) != 0 ? errno : S_ISDIR(sb.st_mode) ? EISDIR : 0;
    if (e) {
        close(fd);
        return bsrmv_fail(BSRMV_ERR_IO, "cannot read %s: %s", path, strerror(e));
    }
    reader r = {.path = path, .fd = fd, .file_size = (int64_t)sb.st_size, .shown_pct = -1};
    r.progress = progress && isatty(STDERR_FILENO) && r.file_size > PROGRESS_MIN_BYTES;
    r.z.zalloc = z_alloc;
    r.z.zfree = z_free;
    r.buf = bsrmv_malloc(READ_BUFFER + 1);
    r.in = bsrmv_malloc(INPUT_BUFFER);
    bsrmv_status st = BSRMV_SUCCESS;
    if (!r.buf || !r.in) {
        st = bsrmv_fail(BSRMV_ERR_NOMEM, "cannot read %s: out of memory", path);
        goto done;
    }
    /* gzip's magic number, else plain text (the bytes stay in r.in). */
    if (read_raw(&r) && r.in_len >= 2 && r.in[0] == 0x1f && r.in[1] == 0x8b) {
        r.gzip = true;
        int zs = inflateInit2(&r.z, 16 + MAX_WBITS);
        if (zs != Z_OK) {
            st = zs == Z_MEM_ERROR
                     ? bsrmv_fail(BSRMV_ERR_NOMEM, "cannot read %s: out of memory", path)
                     : bsrmv_fail(BSRMV_ERR_IO, "cannot read %s: zlib error %d", path, zs);
            r.gzip = false;
            goto done;
        }
        r.z_ready = true;
    }
    st = read_all(&r, coo, symmetric);
    if (r.progress)
        clear_progress(&r);
done:
    if (r.gzip)
        inflateEnd(&r.z);
    close(fd);
    bsrmv_free(r.in);
    bsrmv_free(r.buf);
    return st;
}

bsrmv_status bsrmv_mm_read(const char *path, bsrmv_coo **coo)
{
    return bsrmv_mm_read_opts(path, coo, NULL);
}

bsrmv_status bsrmv_mm_read_opts(const char *path, bsrmv_coo **coo, const bsrmv_mm_options *opt)
{
    if (!coo)
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "bsrmv_mm_read: coo is NULL");
    *coo = NULL;
    if (!path)
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "bsrmv_mm_read: path is NULL");
    return read_file(path, coo, opt ? opt->progress : 0, NULL);
}

bsrmv_status bsrmv_mm_read_sym(const char *path, bsrmv_coo **coo, int *symmetric)
{
    if (!coo || !symmetric)
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "bsrmv_mm_read_sym: NULL argument");
    *coo = NULL;
    *symmetric = 0;
    if (!path)
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "bsrmv_mm_read_sym: path is NULL");
    return read_file(path, coo, 0, symmetric);
}

/* ------------------------------------------------------------------ */
/* Writing                                                             */
/* ------------------------------------------------------------------ */

#define WRITE_BUFFER ((size_t)1 << 20)
#define MAX_LINE 128 /* two int64 and two %.17g doubles fit with room to spare */

typedef struct writer {
    const char *path;
    FILE *f;
    gzFile gz;
    char *buf;
    size_t len;
} writer;

static bsrmv_status write_error(const writer *w)
{
    const char *msg = strerror(errno);
    if (w->gz) {
        int err;
        const char *zmsg = gzerror(w->gz, &err);
        if (err != Z_ERRNO && err != Z_OK)
            msg = zmsg;
    }
    return bsrmv_fail(BSRMV_ERR_IO, "cannot write %s: %s", w->path, msg);
}

static bsrmv_status flush(writer *w)
{
    if (w->len == 0)
        return BSRMV_SUCCESS;
    errno = 0;
    bool ok = w->gz ? gzwrite(w->gz, w->buf, (unsigned)w->len) == (int)w->len
                    : fwrite(w->buf, 1, w->len, w->f) == w->len;
    w->len = 0;
    return ok ? BSRMV_SUCCESS : write_error(w);
}

/* Room for one more line, flushing when the buffer is nearly full. */
static bsrmv_status reserve(writer *w)
{
    return WRITE_BUFFER - w->len < MAX_LINE ? flush(w) : BSRMV_SUCCESS;
}

static bsrmv_status write_all(writer *w, const bsrmv_coo *coo, const char *sym_name)
{
    w->len += (size_t)snprintf(w->buf, WRITE_BUFFER,
                               "%%%%MatrixMarket matrix coordinate %s %s\n"
                               "%% written by bsrmv\n"
                               "%lld %lld %lld\n",
                               coo->imag ? "complex" : "real", sym_name, (long long)coo->m,
                               (long long)coo->n, (long long)coo->nnz);
    for (int64_t k = 0; k < coo->nnz; k++) {
        bsrmv_status st = reserve(w);
        if (st != BSRMV_SUCCESS)
            return st;
        const long long i = (long long)coo->row[k] + 1, j = (long long)coo->col[k] + 1;
        w->len += (size_t)(coo->imag ? snprintf(w->buf + w->len, MAX_LINE, "%lld %lld %.17g %.17g\n",
                                                i, j, coo->val[k], coo->imag[k])
                                     : snprintf(w->buf + w->len, MAX_LINE, "%lld %lld %.17g\n", i,
                                                j, coo->val[k]));
    }
    return flush(w);
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

static bsrmv_status write_coo(const char *path, const bsrmv_coo *coo, const char *sym_name);

bsrmv_status bsrmv_mm_write(const char *path, const bsrmv_coo *coo)
{
    if (!path || !coo)
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "bsrmv_mm_write: NULL argument");
    return write_coo(path, coo, "general");
}

/* The lower triangle of symmetric storage S as COO entries: every stored
 * entry on or above the diagonal, mirrored (conjugated when Hermitian). */
static bsrmv_status lower_triangle(const bsrmv_matrix *S, bsrmv_coo **out)
{
    const int64_t bs = S->bs, bs2 = bs * bs;
    const int p = bsrmv_type_parts(S->type);
    int64_t n = 0;
    for (int64_t i = 0; i < S->mb; i++)
        for (int64_t k = bsrmv_row_start(S, i); k < bsrmv_row_start(S, i + 1); k++)
            n += S->col_idx[k] == i ? bs * (bs + 1) / 2 : bs2;
    bsrmv_status st = p == 2 ? bsrmv_coo_create_complex(out, S->mb * bs, S->nb * bs, n)
                             : bsrmv_coo_create(out, S->mb * bs, S->nb * bs, n);
    if (st)
        return st;
    bsrmv_coo *c = *out;
    int64_t e = 0;
    for (int64_t i = 0; i < S->mb; i++)
        for (int64_t k = bsrmv_row_start(S, i); k < bsrmv_row_start(S, i + 1); k++) {
            const int64_t j = S->col_idx[k];
            for (int64_t r = 0; r < bs; r++)
                for (int64_t cc = j == i ? r : 0; cc < bs; cc++) {
                    const int64_t at = k * bs2 + (S->order == BSRMV_COL_MAJOR ? cc * bs + r
                                                                              : r * bs + cc);
                    c->row[e] = j * bs + cc;
                    c->col[e] = i * bs + r;
                    c->val[e] = bsrmv_part_get(S->val, S->type, at * p);
                    if (p == 2) {
                        const double im = bsrmv_part_get(S->val, S->type, at * p + 1);
                        if (S->herm && j == i && r == cc && im != 0) {
                            bsrmv_coo_destroy(c);
                            *out = NULL;
                            return bsrmv_fail(BSRMV_ERR_ARGUMENT,
                                              "bsrmv_mm_write_sym: diagonal entry (%lld, %lld) "
                                              "of a Hermitian matrix has the imaginary part %g; "
                                              "a hermitian file holds real diagonals",
                                              (long long)(i * bs + r), (long long)(i * bs + r),
                                              im);
                        }
                        c->imag[e] = S->herm ? -im : im;
                    }
                    e++;
                }
        }
    return BSRMV_SUCCESS;
}

bsrmv_status bsrmv_mm_write_sym(const char *path, const bsrmv_matrix *S)
{
    if (!path || !S)
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "bsrmv_mm_write_sym: NULL argument");
    if (!S->sym)
        return bsrmv_fail(BSRMV_ERR_ARGUMENT,
                          "bsrmv_mm_write_sym: the matrix is not in symmetric storage "
                          "(bsrmv_matrix_to_coo and bsrmv_mm_write write a full one)");
    bsrmv_coo *c;
    bsrmv_status st = lower_triangle(S, &c);
    if (st)
        return st;
    st = write_coo(path, c, S->herm ? "hermitian" : "symmetric");
    bsrmv_coo_destroy(c);
    return st;
}

static bsrmv_status write_coo(const char *path, const bsrmv_coo *coo, const char *sym_name)
{
    if (coo->m < 0 || coo->n < 0 || coo->nnz < 0 ||
        (coo->nnz > 0 && (!coo->row || !coo->col || !coo->val)))
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "bsrmv_mm_write: negative size or NULL array");
    /* Checked before the file is created, so a bad matrix leaves no file. */
    for (int64_t k = 0; k < coo->nnz; k++)
        if (coo->row[k] < 0 || coo->row[k] >= coo->m || coo->col[k] < 0 || coo->col[k] >= coo->n)
            return bsrmv_fail(BSRMV_ERR_STRUCTURE,
                              "bsrmv_mm_write: entry %lld at (%lld, %lld) is outside the "
                              "%lld x %lld matrix",
                              (long long)k, (long long)coo->row[k], (long long)coo->col[k],
                              (long long)coo->m, (long long)coo->n);
    /* The reader refuses them (docs/ERRORS.md), so they are not written. */
    for (int64_t k = 0; k < coo->nnz; k++)
        if (!isfinite(coo->val[k]) || (coo->imag && !isfinite(coo->imag[k])))
            return bsrmv_fail(BSRMV_ERR_ARGUMENT,
                              "bsrmv_mm_write: entry %lld at (%lld, %lld) is %g%+gi; Matrix "
                              "Market files hold finite values only",
                              (long long)k, (long long)coo->row[k], (long long)coo->col[k],
                              coo->val[k], coo->imag ? coo->imag[k] : 0.0);
    writer w = {.path = path};
    w.buf = bsrmv_malloc(WRITE_BUFFER);
    if (!w.buf)
        return bsrmv_fail(BSRMV_ERR_NOMEM, "bsrmv_mm_write: out of memory");
    errno = 0;
    if (ends_with(path, ".gz"))
        w.gz = gzopen(path, "wb");
    else
        w.f = fopen(path, "w");
    if (!w.gz && !w.f) {
        int e = errno;
        bsrmv_free(w.buf);
        if (e == 0)
            return bsrmv_fail(BSRMV_ERR_NOMEM, "cannot open %s: out of memory", path);
        return bsrmv_fail(BSRMV_ERR_IO, "cannot open %s: %s", path, strerror(e));
    }
    bsrmv_status st = write_all(&w, coo, sym_name);
    errno = 0;
    /* Closing flushes: a full disk often shows only here. */
    if (w.gz) {
        int zs = gzclose_w(w.gz);
        if (st == BSRMV_SUCCESS && zs != Z_OK)
            st = bsrmv_fail(BSRMV_ERR_IO, "cannot write %s: %s", path,
                            zs == Z_ERRNO ? strerror(errno) : "zlib error on close");
    } else if (fclose(w.f) != 0 && st == BSRMV_SUCCESS) {
        st = bsrmv_fail(BSRMV_ERR_IO, "cannot write %s: %s", path, strerror(errno));
    }
    bsrmv_free(w.buf);
    return st;
}
