/* The plan table's parser and matcher (src/plan/table.c) on any text, as a
 * tune file ($BSRMV_TUNE_FILE) may hold.  A failed parse leaves the table
 * empty and names the origin and line; a parsed table answers lookups as a
 * plain reading of the rules in plan.h does: the first row whose type,
 * order, bs and conditions hold and that yields a configuration the caller
 * accepts, a nearest/K row through a full sort of its key's points and of
 * their votes. */
#include "fuzz_common.h"
#include "plan/plan.h"

static uint32_t refuse_mask;

/* The caller's acceptance: a fixed function of the configuration and the
 * input, so that both lookups see the same answers. */
static int accept_cfg(const bsrmv_gpu_config *c, void *ctx)
{
    (void)ctx;
    const uint32_t h = (uint32_t)c->kernel * 2654435761u ^ (uint32_t)c->group * 40503u ^ (uint32_t)c->rows * 31u ^
                       (uint32_t)c->threads * 7u ^ (uint32_t)c->param;
    return !(refuse_mask >> (h % 32) & 1);
}

static int cond_holds(const plan_cond *c, const plan_features *f)
{
    const double x = f->v[c->feature], v = c->value;
    return c->op == '<' ? x < v : c->op == 'l' ? x <= v : c->op == '>' ? x > v : c->op == 'g' ? x >= v : x == v;
}

static int row_matches(const plan_row *r, const plan_features *f)
{
    if ((r->type >= 0 && r->type != (int)f->type) || (r->order >= 0 && r->order != (int)f->order) ||
        f->bs < r->bs_lo || f->bs > r->bs_hi)
        return 0;
    for (int j = 0; j < r->ncond; ++j)
        if (!cond_holds(&r->cond[j], f))
            return 0;
    return 1;
}

static int same(const bsrmv_gpu_config *a, const bsrmv_gpu_config *b)
{
    return !memcmp(a, b, sizeof *a);
}

typedef struct cand {
    bsrmv_gpu_config cfg;
    char name[64];
    double total;
} cand;

/* plan.h's vote, read plainly: every point of the key with its distance,
 * stably sorted; the first k vote. */
static int ref_nearest(const plan_table *t, int k, const plan_features *f, bsrmv_gpu_config *out)
{
    const double fx[4] = {log(fmax(f->v[PF_L2], 1e-4)), log(fmax(f->v[PF_MEAN], 0.1)), f->v[PF_CV],
                          log(fmax(f->v[PF_MAXMEAN], 1.0))};
    int *idx = malloc(sizeof *idx * (size_t)(t->npoints + 1));
    double *dist = malloc(sizeof *dist * (size_t)(t->npoints + 1));
    if (!idx || !dist)
        abort();
    int n = 0;
    for (int i = 0; i < t->npoints; ++i) {
        const plan_point *p = &t->points[i];
        if (p->type != (int)f->type || p->order != (int)f->order || p->bs != f->bs)
            continue;
        double s = 0;
        for (int j = 0; j < 4; ++j)
            s += (fx[j] - p->x[j]) * (fx[j] - p->x[j]);
        idx[n] = i;
        dist[n++] = sqrt(s);
    }
    for (int i = 1; i < n; ++i) /* insertion sort: stable */
        for (int j = i; j > 0 && dist[j - 1] > dist[j]; --j) {
            const double d = dist[j];
            const int x = idx[j];
            dist[j] = dist[j - 1], idx[j] = idx[j - 1];
            dist[j - 1] = d, idx[j - 1] = x;
        }
    if (n > k)
        n = k;
    cand c[PLAN_NEAREST_MAX * PLAN_POINT_KEEP];
    int nc = 0;
    for (int i = 0; i < n; ++i) {
        const plan_point *p = &t->points[idx[i]];
        for (int j = 0; j < p->n; ++j) {
            int q = 0;
            while (q < nc && !same(&c[q].cfg, &p->cfg[j]))
                ++q;
            if (q == nc) {
                c[nc].cfg = p->cfg[j];
                bsrmv_gpu_config_string(&c[nc].cfg, c[nc].name, sizeof c[nc].name);
                c[nc++].total = 0;
            }
        }
    }
    for (int i = 0; i < n; ++i) {
        const plan_point *p = &t->points[idx[i]];
        double lo = p->score[0];
        for (int j = 1; j < p->n; ++j)
            lo = p->score[j] < lo ? p->score[j] : lo;
        const double w = 1.0 / (dist[i] + 0.5);
        for (int q = 0; q < nc; ++q) {
            double s = lo;
            for (int j = 0; j < p->n; ++j)
                if (same(&p->cfg[j], &c[q].cfg)) {
                    s = p->score[j];
                    break;
                }
            c[q].total += w * s;
        }
    }
    free(idx);
    free(dist);
    for (int done = 0; done < nc; ++done) { /* selection by (total desc, name) */
        int b = done;
        for (int q = done + 1; q < nc; ++q)
            if (c[q].total > c[b].total || (c[q].total == c[b].total && strcmp(c[q].name, c[b].name) < 0))
                b = q;
        const cand tmp = c[done];
        c[done] = c[b];
        c[b] = tmp;
        const bsrmv_gpu_config cc = plan_complete(c[done].cfg, f);
        if (accept_cfg(&cc, NULL)) {
            *out = cc;
            return 1;
        }
    }
    return 0;
}

static int ref_lookup(const plan_table *t, const plan_features *f, bsrmv_gpu_config *out, int *row)
{
    for (int i = 0; i < t->n; ++i) {
        const plan_row *r = &t->rows[i];
        if (!row_matches(r, f))
            continue;
        bsrmv_gpu_config c = plan_complete(r->cfg, f);
        if (r->nearest ? ref_nearest(t, r->nearest, f, &c) : accept_cfg(&c, NULL)) {
            *out = c;
            *row = i;
            return 1;
        }
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* HEAD bytes: the refusal mask, then three feature vectors; the
     * rest is the table's text */
    enum { HEAD = 4 + 3 * (1 + 2 * PF_COUNT) };
    if (size < HEAD || size > 65536)
        return 0;
    fz in = {data, HEAD};
    refuse_mask = fz_u32(&in);
    char *text = malloc(size - HEAD + 1);
    if (!text)
        return 0;
    memcpy(text, data + HEAD, size - HEAD);
    text[size - HEAD] = '\0';

    plan_table t;
    const bsrmv_status st = plan_table_parse(text, "fuzz.tbl", &t);
    free(text);
    if (st != BSRMV_SUCCESS) {
        if (st != BSRMV_ERR_FORMAT || t.n || t.rows || t.npoints || t.points ||
            strncmp(bsrmv_last_error(), "fuzz.tbl:", 9))
            abort();
        return 0;
    }
    for (int i = 0; i < t.n; ++i)
        if (t.rows[i].nearest < 0 || t.rows[i].nearest > PLAN_NEAREST_MAX || t.rows[i].ncond > PLAN_MAX_CONDS)
            abort();
    for (int i = 0; i < t.npoints; ++i)
        if (t.points[i].n < 1 || t.points[i].n > PLAN_POINT_KEEP)
            abort();
    /* features: the table's own bs and types where it has rows, values
     * from the input (small multiples of 1/16, a few powers of two) */
    for (int q = 0; q < 3; ++q) {
        plan_features f;
        memset(&f, 0, sizeof f);
        const unsigned pick = fz_u8(&in);
        const plan_row *r = t.n ? &t.rows[pick % t.n] : NULL;
        const plan_point *p = t.npoints ? &t.points[pick % t.npoints] : NULL;
        f.bs = p && q == 1 ? p->bs : r ? r->bs_lo : 1 + (int)(pick % 64);
        f.type = p && q == 1 ? (bsrmv_type)p->type : r && r->type >= 0 ? (bsrmv_type)r->type : BSRMV_DOUBLE;
        f.order = p && q == 1 ? (bsrmv_order)p->order : r && r->order >= 0 ? (bsrmv_order)r->order
                                                                               : BSRMV_COL_MAJOR;
        for (int i = 0; i < PF_COUNT; ++i)
            f.v[i] = ldexp(fabs(fz_small(&in)), (int)(fz_u8(&in) % 8) - 4);
        bsrmv_gpu_config got, want;
        int grow = -1, wrow = -1;
        const int g = plan_table_lookup(&t, &f, accept_cfg, NULL, &got, &grow);
        const int w = ref_lookup(&t, &f, &want, &wrow);
        if (g != w || (g && (grow != wrow || !same(&got, &want))))
            abort();
    }
    plan_table_free(&t);
    return 0;
}
