/* The plan's table: parsing, matching, and the built-in one. */
#include "plan.h"
#include "internal.h"

#include <math.h>
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

/* "type order bs" (bs N or LO-HI, type and order may be *) into r; 0 if
 * malformed. */
static int parse_key(char **tok, plan_row *r)
{
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
    return r->bs_lo >= 1 && r->bs_hi >= r->bs_lo;
}

/* One line's tokens into r; 0 on a malformed row. */
static int parse_row(char **tok, int n, plan_row *r)
{
    memset(r, 0, sizeof *r);
    if (n < 4 || !parse_key(tok, r))
        return 0;
    int end = 0, next;
    if (!strncmp(tok[3], "nearest/", 8)) {
        if (sscanf(tok[3] + 8, "%d%n", &r->nearest, &end) != 1 || tok[3][8 + end] || r->nearest < 1 ||
            r->nearest > PLAN_NEAREST_MAX)
            return 0;
        next = 4;
    } else if (parse_config(tok[3], &r->cfg)) {
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

/* The distance's coordinates of the features l2, mean, cv and maxmean. */
static void coords(double l2, double mean, double cv, double maxmean, double x[4])
{
    x[0] = log(fmax(l2, 1e-4));
    x[1] = log(fmax(mean, 0.1));
    x[2] = cv;
    x[3] = log(fmax(maxmean, 1.0));
}

static int parse_number(const char *s, double *v)
{
    char *end;
    *v = strtod(s, &end);
    return end != s && !*end && isfinite(*v);
}

/* "point type order bs l2 mean cv maxmean config=score ..." into p; 0 on a
 * malformed line. */
static int parse_point(char **tok, int n, plan_point *p)
{
    memset(p, 0, sizeof *p);
    if (n < 9 || n > 8 + PLAN_POINT_KEEP)
        return 0;
    plan_row r;
    double f[4];
    if (!parse_key(tok + 1, &r) || r.type < 0 || r.order < 0 || r.bs_lo != r.bs_hi)
        return 0;
    for (int i = 0; i < 4; ++i)
        if (!parse_number(tok[4 + i], &f[i]) || f[i] < 0)
            return 0;
    p->type = r.type;
    p->order = r.order;
    p->bs = r.bs_lo;
    coords(f[0], f[1], f[2], f[3], p->x);
    for (int i = 8; i < n; ++i) {
        char *eq = strchr(tok[i], '=');
        if (!eq)
            return 0;
        *eq = 0;
        if (!parse_config(tok[i], &p->cfg[p->n]) || !parse_number(eq + 1, &p->score[p->n]) ||
            fabs(p->score[p->n]) > 1e6) /* bounded, so that no vote overflows */
            return 0;
        ++p->n;
    }
    return 1;
}

void plan_table_free(plan_table *t)
{
    free(t->rows);
    free(t->points);
    t->rows = NULL;
    t->points = NULL;
    t->n = t->npoints = 0;
}

/* a (n of *cap elements of size sz) with room for one more: a itself, a
 * larger copy (*cap updated), or NULL when out of memory (a kept). */
static void *grow(void *a, int n, int *cap, size_t sz)
{
    if (n < *cap)
        return a;
    const int nc = *cap ? 2 * *cap : 64;
    void *na = realloc(a, (size_t)nc * sz);
    if (na)
        *cap = nc;
    return na;
}

bsrmv_status plan_table_parse(const char *text, const char *origin, plan_table *t)
{
    t->rows = NULL;
    t->points = NULL;
    t->n = t->npoints = 0;
    int cap = 0, pcap = 0, lineno = 0;
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
        /* tokens split in place (no strtok: its state is shared between
         * threads); more than tok holds makes the line malformed */
        char *tok[8 + PLAN_POINT_KEEP + PLAN_MAX_CONDS + 1];
        int n = 0, over = 0;
        for (char *s = line + strspn(line, " \t\r"); *s; s += strspn(s, " \t\r")) {
            if (n < (int)(sizeof tok / sizeof *tok))
                tok[n++] = s;
            else
                over = 1;
            s += strcspn(s, " \t\r");
            if (*s)
                *s++ = 0;
        }
        if (n == 0)
            continue;
        if (!strcmp(tok[0], "point")) {
            plan_point pt;
            if (over || !parse_point(tok, n, &pt)) {
                plan_table_free(t);
                return bsrmv_fail(BSRMV_ERR_FORMAT,
                                  "%s:%d: expected 'point type order bs l2 mean cv maxmean config=score ...' "
                                  "(1 to %d configurations)",
                                  origin, lineno, PLAN_POINT_KEEP);
            }
            plan_point *np = grow(t->points, t->npoints, &pcap, sizeof pt);
            if (!np)
                goto nomem;
            t->points = np;
            t->points[t->npoints++] = pt;
            continue;
        }
        plan_row r;
        if (over || !parse_row(tok, n, &r)) {
            plan_table_free(t);
            return bsrmv_fail(BSRMV_ERR_FORMAT,
                              "%s:%d: expected 'type order bs kernel/gG/rR/tT/pP [feature<value ...]', "
                              "'type order bs nearest/K [feature<value ...]' "
                              "or 'type order bs kernel group rows threads param'",
                              origin, lineno);
        }
        plan_row *nr = grow(t->rows, t->n, &cap, sizeof r);
        if (!nr)
            goto nomem;
        t->rows = nr;
        t->rows[t->n++] = r;
    }
    return BSRMV_SUCCESS;
nomem:
    plan_table_free(t);
    return bsrmv_fail(BSRMV_ERR_NOMEM, "out of memory reading the plan table %s", origin);
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
        /* thread arrays of bs x group threads, ~256 threads a block (in
         * 64 bits: a tune file may name any group) */
        const int64_t nta = 256 / ((int64_t)bs * c.group);
        c.param = nta < 1 ? 1 : (int)nta;
    } else if (c.param == 0 && c.kernel == BSRMV_GPU_K3_LARGE) {
        /* row slices: row-major whole rows up to bs 32, else 8 rows;
         * column-major 40 rows (double below bs 128), else 64 */
        const int rows = row ? (bs <= 32 ? bs : 8) : dbl && bs < 128 ? 40 : 64;
        c.param = (bs + rows - 1) / rows;
    }
    return c;
}

typedef struct vote {
    bsrmv_gpu_config cfg;
    char name[64];
    double total;
} vote;

static int vote_order(const void *a, const void *b)
{
    const vote *x = a, *y = b;
    if (x->total != y->total)
        return x->total > y->total ? -1 : 1;
    return strcmp(x->name, y->name);
}

int plan_same_config(const bsrmv_gpu_config *a, const bsrmv_gpu_config *b)
{
    return a->kernel == b->kernel && a->group == b->group && a->rows == b->rows && a->threads == b->threads &&
           a->param == b->param;
}

/* A point's score of c: its kept one, else its lowest. */
static double point_score(const plan_point *p, const bsrmv_gpu_config *c)
{
    double lo = p->score[0];
    for (int i = 0; i < p->n; ++i) {
        if (plan_same_config(&p->cfg[i], c))
            return p->score[i];
        lo = fmin(lo, p->score[i]);
    }
    return lo;
}

int plan_rank_add(bsrmv_gpu_config c, plan_accept_fn accept, void *ctx, bsrmv_gpu_config *out, int max, int *n)
{
    if (*n >= max)
        return 1;
    for (int i = 0; i < *n; ++i)
        if (plan_same_config(&out[i], &c))
            return 0;
    if (accept && !accept(&c, ctx))
        return 0;
    out[(*n)++] = c;
    return *n >= max;
}

/* A nearest/K row: the K points nearest to f vote (plan.h); the
 * configurations in vote order go to out as plan_rank_add takes them.  Returns
 * whether out is full. */
static int nearest_rank(const plan_table *t, int k, const plan_features *f, plan_accept_fn accept, void *ctx,
                        bsrmv_gpu_config *out, int max, int *n)
{
    double x[4], dist[PLAN_NEAREST_MAX];
    const plan_point *near[PLAN_NEAREST_MAX];
    int nn = 0;
    coords(f->v[PF_L2], f->v[PF_MEAN], f->v[PF_CV], f->v[PF_MAXMEAN], x);
    for (int i = 0; i < t->npoints; ++i) {
        const plan_point *p = &t->points[i];
        if (p->type != (int)f->type || p->order != (int)f->order || p->bs != f->bs)
            continue;
        double s = 0;
        for (int j = 0; j < 4; ++j)
            s += (x[j] - p->x[j]) * (x[j] - p->x[j]);
        const double d = sqrt(s);
        int pos;
        if (nn < k)
            pos = nn++;
        else if (d < dist[k - 1])
            pos = k - 1;
        else
            continue;
        for (; pos > 0 && dist[pos - 1] > d; --pos) { /* an equal distance keeps the earlier point first */
            dist[pos] = dist[pos - 1];
            near[pos] = near[pos - 1];
        }
        dist[pos] = d;
        near[pos] = p;
    }
    vote v[PLAN_NEAREST_MAX * PLAN_POINT_KEEP];
    int nv = 0;
    for (int i = 0; i < nn; ++i)
        for (int j = 0; j < near[i]->n; ++j) {
            int seen = 0;
            for (int q = 0; q < nv && !seen; ++q)
                seen = plan_same_config(&v[q].cfg, &near[i]->cfg[j]);
            if (!seen) {
                v[nv].cfg = near[i]->cfg[j];
                bsrmv_gpu_config_string(&v[nv].cfg, v[nv].name, sizeof v[nv].name);
                v[nv++].total = 0;
            }
        }
    for (int i = 0; i < nn; ++i) {
        const double w = 1.0 / (dist[i] + 0.5);
        for (int q = 0; q < nv; ++q)
            v[q].total += w * point_score(near[i], &v[q].cfg);
    }
    qsort(v, (size_t)nv, sizeof *v, vote_order);
    for (int q = 0; q < nv; ++q)
        if (plan_rank_add(plan_complete(v[q].cfg, f), accept, ctx, out, max, n))
            return 1;
    return 0;
}

int plan_table_rank(const plan_table *t, const plan_features *f, plan_accept_fn accept, void *ctx,
                    bsrmv_gpu_config *out, int max, int *row)
{
    int n = 0;
    if (row)
        *row = -1;
    for (int i = 0; t && i < t->n && n < max; ++i) {
        const plan_row *r = &t->rows[i];
        if ((r->type >= 0 && r->type != (int)f->type) || (r->order >= 0 && r->order != (int)f->order) ||
            f->bs < r->bs_lo || f->bs > r->bs_hi)
            continue;
        int ok = 1;
        for (int j = 0; j < r->ncond && ok; ++j)
            ok = holds(&r->cond[j], f);
        if (!ok)
            continue;
        const int before = n;
        if (r->nearest)
            nearest_rank(t, r->nearest, f, accept, ctx, out, max, &n);
        else
            plan_rank_add(plan_complete(r->cfg, f), accept, ctx, out, max, &n);
        if (row && before == 0 && n > 0)
            *row = i;
    }
    return n;
}

int plan_table_lookup(const plan_table *t, const plan_features *f, plan_accept_fn accept, void *ctx,
                      bsrmv_gpu_config *out, int *row)
{
    return plan_table_rank(t, f, accept, ctx, out, 1, row);
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
