/* The plane-structure container: nodes, members, supports and nodal loads. */
#include "bridge_model.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char last_error[256];

const char *bridge_last_error(void)
{
    return last_error;
}

int bridge_fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error, sizeof last_error, fmt, ap);
    va_end(ap);
    return -1;
}

/* p resized to cap elements of size sz; on failure p itself, and *fail set. */
static void *resize(void *p, int64_t cap, size_t sz, int *fail)
{
    void *q = realloc(p, (size_t)cap * sz);
    if (!q) {
        *fail = 1;
        return p;
    }
    return q;
}

static int reserve_nodes(struct bridge_model *m, int64_t cap)
{
    int fail = 0;
    if (cap <= m->cap_nodes)
        return 0;
    m->x = resize(m->x, cap, sizeof *m->x, &fail);
    m->y = resize(m->y, cap, sizeof *m->y, &fail);
    m->fixed = resize(m->fixed, cap, sizeof *m->fixed, &fail);
    m->role = resize(m->role, cap, sizeof *m->role, &fail);
    if (fail)
        return bridge_fail("out of memory for %lld nodes", (long long)cap);
    m->cap_nodes = cap;
    return 0;
}

static int reserve_members(struct bridge_model *m, int64_t cap)
{
    int fail = 0;
    if (cap <= m->cap_members)
        return 0;
    for (int e = 0; e < 2; e++)
        m->end[e] = resize(m->end[e], cap, sizeof *m->end[e], &fail);
    m->part = resize(m->part, cap, sizeof *m->part, &fail);
    m->tension = resize(m->tension, cap, sizeof *m->tension, &fail);
    if (fail)
        return bridge_fail("out of memory for %lld members", (long long)cap);
    m->cap_members = cap;
    return 0;
}

int bridge_model_init(struct bridge_model *m, int bs, int64_t nodes, int64_t members)
{
    memset(m, 0, sizeof *m);
    if (bs != 2 && bs != 3)
        return bridge_fail("block size %d: the models have 2 (truss) or 3 (frame) dofs per node",
                           bs);
    m->bs = bs;
    if (reserve_nodes(m, nodes > 0 ? nodes : 16) ||
        reserve_members(m, members > 0 ? members : 16)) {
        bridge_model_free(m);
        return -1;
    }
    return 0;
}

void bridge_model_free(struct bridge_model *m)
{
    free(m->x);
    free(m->y);
    free(m->fixed);
    free(m->role);
    free(m->end[0]);
    free(m->end[1]);
    free(m->part);
    free(m->tension);
    free(m->cons);
    memset(m, 0, sizeof *m);
}

int64_t bridge_add_node(struct bridge_model *m, double x, double y, unsigned fixed,
                        enum bridge_role role)
{
    /* Block-column indices are 32-bit in BSR. */
    if (m->n_nodes >= INT32_MAX)
        return bridge_fail("more than %d nodes", INT32_MAX);
    if (m->n_nodes == m->cap_nodes && reserve_nodes(m, 2 * m->cap_nodes))
        return -1;
    int64_t i = m->n_nodes++;
    m->x[i] = x;
    m->y[i] = y;
    m->fixed[i] = (uint8_t)fixed;
    m->role[i] = (uint8_t)role;
    return i;
}

int bridge_add_member(struct bridge_model *m, int64_t a, int64_t b, enum bridge_part part)
{
    if (a < 0 || b < 0 || a >= m->n_nodes || b >= m->n_nodes || a == b)
        return bridge_fail("member %lld-%lld: bad end nodes (%lld nodes)", (long long)a,
                           (long long)b, (long long)m->n_nodes);
    if (!(hypot(m->x[b] - m->x[a], m->y[b] - m->y[a]) > 0))
        return bridge_fail("member %lld-%lld has zero length", (long long)a, (long long)b);
    if (m->n_members == m->cap_members && reserve_members(m, 2 * m->cap_members))
        return -1;
    int64_t k = m->n_members++;
    m->end[0][k] = (int32_t)a;
    m->end[1][k] = (int32_t)b;
    m->part[k] = (uint8_t)part;
    m->tension[k] = 0;
    return 0;
}

int bridge_model_finish(struct bridge_model *m)
{
    free(m->cons);
    m->cons = malloc((size_t)(m->n_nodes > 0 ? m->n_nodes : 1));
    if (!m->cons)
        return bridge_fail("out of memory for %lld nodes", (long long)m->n_nodes);
    memcpy(m->cons, m->fixed, (size_t)m->n_nodes);
    if (m->bs == 3) {
        /* Where only bars meet, nothing resists a rotation: hold it;
         * a frame member's ends get their own supports back. */
        for (int64_t i = 0; i < m->n_nodes; i++)
            m->cons[i] |= BRIDGE_FIX_R;
        for (int64_t k = 0; k < m->n_members; k++)
            if (m->sec[m->part[k]].frame)
                for (int e = 0; e < 2; e++)
                    m->cons[m->end[e][k]] = m->fixed[m->end[e][k]];
    }
    return 0;
}

int64_t bridge_unknowns(const struct bridge_model *m)
{
    return m->n_nodes * m->bs;
}

double bridge_member_length(const struct bridge_model *m, int64_t k, double *c, double *s)
{
    int32_t a = m->end[0][k], b = m->end[1][k];
    double dx = m->x[b] - m->x[a], dy = m->y[b] - m->y[a];
    double len = hypot(dx, dy);
    *c = dx / len;
    *s = dy / len;
    return len;
}

void bridge_add_gravity(const struct bridge_model *m, double g, double *f)
{
    for (int64_t k = 0; k < m->n_members; k++) {
        const struct bridge_section *sc = &m->sec[m->part[k]];
        double c, s;
        double w = sc->rho * sc->A * bridge_member_length(m, k, &c, &s) * g;
        for (int e = 0; e < 2; e++)
            f[(int64_t)m->end[e][k] * m->bs + 1] -= 0.5 * w;
    }
}

static int is_top_chord(const struct bridge_model *m, int64_t k)
{
    return m->part[k] == BRIDGE_CHORD && m->role[m->end[0][k]] == BRIDGE_DECK_TOP &&
           m->role[m->end[1][k]] == BRIDGE_DECK_TOP;
}

void bridge_add_deck_load(const struct bridge_model *m, double q, double x0, double x1, double *f)
{
    for (int64_t k = 0; k < m->n_members; k++) {
        if (!is_top_chord(m, k))
            continue;
        int32_t a = m->end[0][k], b = m->end[1][k];
        if (m->x[a] > m->x[b]) {
            int32_t t = a;
            a = b;
            b = t;
        }
        double lo = fmax(x0, m->x[a]), hi = fmin(x1, m->x[b]);
        if (!(hi > lo))
            continue;
        /* Nodal forces with the resultant q*(hi-lo) and its moment. */
        double total = q * (hi - lo);
        double to_b = total * (0.5 * (lo + hi) - m->x[a]) / (m->x[b] - m->x[a]);
        f[(int64_t)a * m->bs + 1] -= total - to_b;
        f[(int64_t)b * m->bs + 1] -= to_b;
    }
}

void bridge_zero_constrained(const struct bridge_model *m, double *f)
{
    for (int64_t i = 0; i < m->n_nodes; i++)
        for (int d = 0; d < m->bs; d++)
            if (m->cons[i] & (1u << d))
                f[i * m->bs + d] = 0;
}

void bridge_case_extent(const struct bridge_model *m, double width, int j, int cases,
                        double ext[2])
{
    const double room = m->deck_x1 - m->deck_x0 - width;
    ext[0] = m->deck_x0 + (cases > 1 ? room * j / (cases - 1) : 0.5 * room);
    ext[1] = ext[0] + width;
}

void bridge_load_cases(const struct bridge_model *m, double q, double width, int cases, double *F,
                       int64_t ld)
{
    const int64_t n = bridge_unknowns(m);
    for (int j = 0; j < cases; j++) {
        double *f = F + (size_t)j * (size_t)ld, ext[2];
        for (int64_t i = 0; i < n; i++)
            f[i] = 0;
        bridge_add_gravity(m, BRIDGE_GRAVITY, f);
        bridge_add_deck_load(m, m->roadway, m->deck_x0, m->deck_x1, f);
        bridge_case_extent(m, width, j, cases, ext);
        bridge_add_deck_load(m, q, ext[0], ext[1], f);
        bridge_zero_constrained(m, f);
    }
}
