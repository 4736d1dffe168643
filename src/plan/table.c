/* The plan's table: parsing, matching, and the built-in one. */
#include "plan.h"
#include "internal.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int kernel_by_name(const char *s, size_t n)
{
    for (int i = 1;; ++i) {
        const char *k = bsrmv_gpu_kernel_name((bsrmv_gpu_kernel)i);
        if (!strcmp(k, "unknown"))
            return -1;
        if (strlen(k) == n && !strncmp(k, s, n))
            return i;
    }
}

/* "kernel/gG/rR/tT/pP" */
static int parse_config(const char *s, bsrmv_gpu_config *c)
{
    const char *slash = strchr(s, '/');
    if (!slash)
        return 0;
    const int k = kernel_by_name(s, (size_t)(slash - s));
    int g, r, t, p, end = 0;
    if (k <= 0 || sscanf(slash, "/g%d/r%d/t%d/p%d%n", &g, &r, &t, &p, &end) != 4 || slash[end])
        return 0;
    *c = (bsrmv_gpu_config){(bsrmv_gpu_kernel)k, g, r, t, p};
    return 1;
}

static int parse_cond(const char *s, plan_cond *c)
{
    const size_t n = strcspn(s, "<>=");
    if (!s[n])
        return 0;
    int f = -1;
    for (int i = 0; i < PF_COUNT; ++i)
        if (strlen(plan_feature_name(i)) == n && !strncmp(plan_feature_name(i), s, n))
            f = i;
    const char *op = s + n;
    int o = op[0];
    if (op[1] == '=' && (o == '<' || o == '>')) {
        o = o == '<' ? 'l' : 'g';
        ++op;
    }
    char *end;
    const double v = strtod(op + 1, &end);
    if (f < 0 || end == op + 1 || *end)
        return 0;
    *c = (plan_cond){f, o, v};
    return 1;
}

static int is_balanced(bsrmv_gpu_kernel k)
{
    return k == BSRMV_GPU_SEGMENTED || k == BSRMV_GPU_MERGE_PATH || k == BSRMV_GPU_FRAGMENT;
}

/* One line's tokens into r; 0 on a malformed row. */
static int parse_row(char **tok, int n, plan_row *r)
{
    memset(r, 0, sizeof *r);
    if (n < 4)
        return 0;
    r->type = !strcmp(tok[0], "double") ? BSRMV_DOUBLE : !strcmp(tok[0], "float") ? BSRMV_FLOAT
              : !strcmp(tok[0], "z")    ? BSRMV_COMPLEX_DOUBLE
              : !strcmp(tok[0], "c")    ? BSRMV_COMPLEX_FLOAT
              : !strcmp(tok[0], "*")    ? -1 : -2;
    r->order = !strcmp(tok[1], "col") ? BSRMV_COL_MAJOR : !strcmp(tok[1], "row") ? BSRMV_ROW_MAJOR
               : !strcmp(tok[1], "*") ? -1 : -2;
    int end = 0;
    if (r->type == -2 || r->order == -2)
        return 0;
    if (sscanf(tok[2], "%d-%d%n", &r->bs_lo, &r->bs_hi, &end) == 2 && !tok[2][end]) {
    } else if (sscanf(tok[2], "%d%n", &r->bs_lo, &end) == 1 && !tok[2][end]) {
        r->bs_hi = r->bs_lo;
    } else {
        return 0;
    }
    if (r->bs_lo < 1 || r->bs_hi < r->bs_lo)
        return 0;
    int next;
    if (parse_config(tok[3], &r->cfg)) {
        next = 4;
    } else { /* bsrmv tune's "kernel G R T P", measured on regular or irregular rows */
        const int k = kernel_by_name(tok[3], strlen(tok[3]));
        int v[4];
        if (k <= 0 || n < 8)
            return 0;
        for (int i = 0; i < 4; ++i)
            if (sscanf(tok[4 + i], "%d%n", &v[i], &end) != 1 || tok[4 + i][end])
                return 0;
        r->cfg = (bsrmv_gpu_config){(bsrmv_gpu_kernel)k, v[0], v[1], v[2], v[3]};
        r->cond[r->ncond++] = (plan_cond){PF_IRREGULAR, '=', is_balanced(r->cfg.kernel)};
        next = 8;
    }
    for (int i = next; i < n; ++i)
        if (r->ncond == PLAN_MAX_CONDS || !parse_cond(tok[i], &r->cond[r->ncond++]))
            return 0;
    return 1;
}

void plan_table_free(plan_table *t)
{
    free(t->rows);
    t->rows = NULL;
    t->n = 0;
}

bsrmv_status plan_table_parse(const char *text, const char *origin, plan_table *t)
{
    t->rows = NULL;
    t->n = 0;
    int cap = 0, lineno = 0;
    for (const char *p = text; *p;) {
        const size_t len = strcspn(p, "\n");
        char line[1024];
        ++lineno;
        if (len >= sizeof line) {
            plan_table_free(t);
            return bsrmv_fail(BSRMV_ERR_FORMAT, "%s:%d: line longer than %zu characters", origin, lineno,
                              sizeof line - 1);
        }
        memcpy(line, p, len);
        line[len] = 0;
        p += len + (p[len] == '\n');
        char *h = strchr(line, '#');
        if (h)
            *h = 0;
        char *tok[4 + 4 + PLAN_MAX_CONDS + 1];
        int n = 0;
        for (char *s = strtok(line, " \t\r"); s; s = strtok(NULL, " \t\r"))
            if (n < (int)(sizeof tok / sizeof *tok))
                tok[n++] = s;
            else
                n = -1000;
        if (n == 0)
            continue;
        plan_row r;
        if (n < 0 || !parse_row(tok, n, &r)) {
            plan_table_free(t);
            return bsrmv_fail(BSRMV_ERR_FORMAT,
                              "%s:%d: expected 'type order bs kernel/gG/rR/tT/pP [feature<value ...]' "
                              "or 'type order bs kernel group rows threads param'",
                              origin, lineno);
        }
        if (t->n == cap) {
            cap = cap ? 2 * cap : 64;
            plan_row *nr = realloc(t->rows, (size_t)cap * sizeof *nr);
            if (!nr) {
                plan_table_free(t);
                return bsrmv_fail(BSRMV_ERR_NOMEM, "out of memory reading the plan table %s", origin);
            }
            t->rows = nr;
        }
        t->rows[t->n++] = r;
    }
    return BSRMV_SUCCESS;
}

static int holds(const plan_cond *c, const plan_features *f)
{
    const double x = f->v[c->feature];
    switch (c->op) {
    case '<': return x < c->value;
    case 'l': return x <= c->value;
    case '>': return x > c->value;
    case 'g': return x >= c->value;
    default: return x == c->value;
    }
}

bsrmv_gpu_config plan_complete(bsrmv_gpu_config c, const plan_features *f)
{
    const int bs = f->bs;
    const int dbl = f->type == BSRMV_DOUBLE, row = f->order == BSRMV_ROW_MAJOR;
    if (c.param == 0 && c.kernel == BSRMV_GPU_K2_MEDIUM && c.group > 0) {
        /* thread arrays of bs x group threads, ~256 threads a block */
        const int nta = 256 / (bs * c.group);
        c.param = nta < 1 ? 1 : nta;
    } else if (c.param == 0 && c.kernel == BSRMV_GPU_K3_LARGE) {
        /* row slices: row-major whole rows up to bs 32, else 8 rows;
         * column-major 40 rows (double below bs 128), else 64 */
        const int rows = row ? (bs <= 32 ? bs : 8) : dbl && bs < 128 ? 40 : 64;
        c.param = (bs + rows - 1) / rows;
    }
    return c;
}

int plan_table_lookup(const plan_table *t, const plan_features *f, plan_accept_fn accept, void *ctx,
                      bsrmv_gpu_config *out, int *row)
{
    for (int i = 0; t && i < t->n; ++i) {
        const plan_row *r = &t->rows[i];
        if ((r->type >= 0 && r->type != (int)f->type) || (r->order >= 0 && r->order != (int)f->order) ||
            f->bs < r->bs_lo || f->bs > r->bs_hi)
            continue;
        int ok = 1;
        for (int j = 0; j < r->ncond && ok; ++j)
            ok = holds(&r->cond[j], f);
        if (!ok)
            continue;
        const bsrmv_gpu_config c = plan_complete(r->cfg, f);
        if (accept && !accept(&c, ctx))
            continue;
        *out = c;
        if (row)
            *row = i;
        return 1;
    }
    return 0;
}

static plan_table default_table;
static int default_ok;
static pthread_once_t default_once = PTHREAD_ONCE_INIT;

static void parse_default(void)
{
    default_ok = plan_table_parse(bsrmv_plan_default_text, "default.tbl", &default_table) == BSRMV_SUCCESS;
}

const plan_table *plan_default_table(void)
{
    pthread_once(&default_once, parse_default);
    return default_ok ? &default_table : NULL;
}
