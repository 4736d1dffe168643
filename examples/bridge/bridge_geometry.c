/* The parametric suspension bridge (one cable plane, side elevation).
 *
 * Deck: a truss of `segments` panels (chords, verticals, diagonals sloping
 * down towards mid-bridge, so the structure is mirror-symmetric), on
 * rollers at both ends.  Towers: two legs one panel apart with struts and
 * diagonals, fixed at the base; the deck passes through them (shared
 * nodes) and a saddle node on top carries the cable.  Cable: parabolas
 * through the saddles, sag span/9 in the main span, from anchorages pinned
 * one panel beyond the deck ends; a hanger joins every cable node to the
 * deck top chord below it.  Cables and hangers carry their dead-load
 * tension in the stiffness (dead_load_tension).  Proportions and sections
 * follow the Golden Gate Bridge; its default 130 panels of 15.24 m give
 * its 1280 m main span.
 */
#include "bridge_model.h"

#include <math.h>
#include <stdlib.h>

/* Side span / (main + 2 side spans) of the Golden Gate (343 / 1966 m). */
#define SIDE_FRACTION 0.1745
#define SAG_RATIO (1.0 / 9.0)
/* Lowest point of the main cable above the deck top chord, m. */
#define CABLE_CLEARANCE 2.0
#define STEEL_E 200e9
#define STEEL_RHO 7850.0

void bridge_default_params(struct bridge_params *p, int bs)
{
    *p = (struct bridge_params){.bs = bs,
                                .segments = 130,
                                .panel = 15.24,
                                .depth = 7.62,
                                .deck_height = 60.0,
                                .roadway = 90e3};
}

/* Per cable plane: the Golden Gate's cable (27572 wires of 4.88 mm), a pair
 * of 2-11/16" suspender ropes, built-up truss members, cellular towers. */
static void set_sections(struct bridge_model *m)
{
    m->sec[BRIDGE_CABLE] = (struct bridge_section){195e9, 0.52, 0, STEEL_RHO, 0};
    m->sec[BRIDGE_HANGER] = (struct bridge_section){160e9, 0.0058, 0, STEEL_RHO, 0};
    m->sec[BRIDGE_CHORD] = (struct bridge_section){STEEL_E, 0.06, 0.012, STEEL_RHO, 1};
    m->sec[BRIDGE_WEB] = (struct bridge_section){STEEL_E, 0.02, 0.0015, STEEL_RHO, 1};
    m->sec[BRIDGE_TOWER] = (struct bridge_section){STEEL_E, 4.0, 6.0, STEEL_RHO, 1};
    m->sec[BRIDGE_BRACE] = (struct bridge_section){STEEL_E, 0.3, 0.4, STEEL_RHO, 1};
}

struct layout {
    int64_t n, side, main; /* panels: all, per side span, main span */
    double p, deck_bot, deck_top;
    double saddle_y, sag;       /* saddle height, main cable sag         */
    double side_span, side_sag; /* anchorage to saddle, side cable sag   */
    int64_t *bot, *top;         /* deck node per column 0..n             */
};

static int build_deck(struct bridge_model *m, const struct layout *L, unsigned roller)
{
    for (int64_t c = 0; c <= L->n; c++) {
        unsigned fix = (c == 0 || c == L->n) ? roller : 0;
        L->bot[c] = bridge_add_node(m, c * L->p, L->deck_bot, fix, BRIDGE_DECK_BOTTOM);
        L->top[c] = bridge_add_node(m, c * L->p, L->deck_top, 0, BRIDGE_DECK_TOP);
        if (L->bot[c] < 0 || L->top[c] < 0)
            return -1;
    }
    int64_t legs[4] = {L->side, L->side + 1, L->n - L->side - 1, L->n - L->side};
    double mid = 0.5 * L->n;
    for (int64_t c = 0; c <= L->n; c++) {
        int tower = c == legs[0] || c == legs[1] || c == legs[2] || c == legs[3];
        if (bridge_add_member(m, L->bot[c], L->top[c], tower ? BRIDGE_TOWER : BRIDGE_WEB))
            return -1;
        if (c == L->n)
            break;
        if (bridge_add_member(m, L->bot[c], L->bot[c + 1], BRIDGE_CHORD) ||
            bridge_add_member(m, L->top[c], L->top[c + 1], BRIDGE_CHORD))
            return -1;
        /* Diagonals slope down towards mid-bridge; the middle panel of an
         * odd count gets both. */
        double centre = c + 0.5;
        if (centre <= mid && bridge_add_member(m, L->top[c], L->bot[c + 1], BRIDGE_WEB))
            return -1;
        if (centre >= mid && bridge_add_member(m, L->bot[c], L->top[c + 1], BRIDGE_WEB))
            return -1;
    }
    return 0;
}

/* Leg nodes of one leg at column c, bottom to top, into ids[]; returns the
 * count.  The two deck nodes of the column are part of the leg. */
static int64_t leg_nodes(struct bridge_model *m, const struct layout *L, int64_t c, int64_t below,
                         int64_t above, double leg_top, unsigned base_fix, int64_t *ids)
{
    int64_t k = 0;
    double x = c * L->p;
    for (int64_t i = 0; i < below; i++)
        ids[k++] = bridge_add_node(m, x, L->deck_bot * i / below, i == 0 ? base_fix : 0,
                                   BRIDGE_TOWER_NODE);
    ids[k++] = L->bot[c];
    ids[k++] = L->top[c];
    for (int64_t i = 1; i <= above; i++)
        ids[k++] = bridge_add_node(m, x, L->deck_top + (leg_top - L->deck_top) * i / above, 0,
                                   BRIDGE_TOWER_NODE);
    for (int64_t i = 0; i < k; i++)
        if (ids[i] < 0)
            return -1;
    return k;
}

/* One tower between the outer and inner leg columns; returns its saddle
 * node, or -1. */
static int64_t build_tower(struct bridge_model *m, const struct layout *L, int64_t outer,
                           int64_t inner, unsigned base_fix)
{
    double leg_top = L->saddle_y - 0.5 * L->p;
    int64_t below = lround(fmax(1, L->deck_bot / L->p));
    int64_t above = lround(fmax(1, (leg_top - L->deck_top) / L->p));
    int64_t levels = below + 2 + above, rc = -1;
    int64_t *o = malloc((size_t)levels * sizeof *o), *in = malloc((size_t)levels * sizeof *in);
    if (!o || !in) {
        bridge_fail("out of memory for a tower of %lld levels", (long long)levels);
        goto done;
    }
    if (leg_nodes(m, L, outer, below, above, leg_top, base_fix, o) < 0 ||
        leg_nodes(m, L, inner, below, above, leg_top, base_fix, in) < 0)
        goto done;
    for (int64_t i = 0; i + 1 < levels; i++) {
        int deck_panel = i == below; /* deck chords and diagonals are there */
        if (!deck_panel && (bridge_add_member(m, o[i], o[i + 1], BRIDGE_TOWER) ||
                            bridge_add_member(m, in[i], in[i + 1], BRIDGE_TOWER)))
            goto done;
        if (!deck_panel && bridge_add_member(m, o[i], in[i + 1], BRIDGE_BRACE))
            goto done;
        /* Struts at every level but the fixed base and the deck chords. */
        int chord = i + 1 == below || i + 1 == below + 1;
        if (!chord && bridge_add_member(m, o[i + 1], in[i + 1], BRIDGE_BRACE))
            goto done;
    }
    double xs = 0.5 * (outer + inner) * L->p;
    int64_t s = bridge_add_node(m, xs, L->saddle_y, 0, BRIDGE_TOWER_NODE);
    if (s < 0 || bridge_add_member(m, s, o[levels - 1], BRIDGE_BRACE) ||
        bridge_add_member(m, s, in[levels - 1], BRIDGE_BRACE))
        goto done;
    rc = s;
done:
    free(o);
    free(in);
    return rc;
}

/* A cable node above column c at height y, with its hanger; chained to
 * *prev.  Returns 0 or -1. */
static int cable_node(struct bridge_model *m, const struct layout *L, int64_t c, double y,
                      int64_t *prev)
{
    int64_t k = bridge_add_node(m, c * L->p, y, 0, BRIDGE_CABLE_NODE);
    if (k < 0 || bridge_add_member(m, *prev, k, BRIDGE_CABLE) ||
        bridge_add_member(m, L->top[c], k, BRIDGE_HANGER))
        return -1;
    *prev = k;
    return 0;
}

/* Side-span cable from the anchorage to the saddle over columns
 * first, first+step, ... (side count). */
static int side_cable(struct bridge_model *m, const struct layout *L, int64_t anchor,
                      int64_t saddle, int64_t first, int step)
{
    double xa = m->x[anchor], ya = m->y[anchor], rise = L->saddle_y - ya;
    int64_t prev = anchor;
    for (int64_t i = 0; i < L->side; i++) {
        int64_t c = first + step * i;
        double t = fabs(c * L->p - xa) / L->side_span;
        if (cable_node(m, L, c, ya + rise * t - 4 * L->side_sag * t * (1 - t), &prev))
            return -1;
    }
    return bridge_add_member(m, prev, saddle, BRIDGE_CABLE);
}

static int build_cables(struct bridge_model *m, const struct layout *L, int64_t saddle_l,
                        int64_t saddle_r)
{
    double half = 0.5 * (L->main + 1) * L->p, mid = 0.5 * L->n * L->p;
    int64_t prev = saddle_l;
    for (int64_t c = L->side + 2; c <= L->side + L->main; c++) {
        double r = (c * L->p - mid) / half;
        if (cable_node(m, L, c, L->saddle_y - L->sag * (1 - r * r), &prev))
            return -1;
    }
    if (bridge_add_member(m, prev, saddle_r, BRIDGE_CABLE))
        return -1;
    int64_t al = bridge_add_node(m, -L->p, L->deck_top, BRIDGE_FIX_U | BRIDGE_FIX_V, BRIDGE_ANCHOR);
    int64_t ar = bridge_add_node(m, (L->n + 1) * L->p, L->deck_top, BRIDGE_FIX_U | BRIDGE_FIX_V,
                                 BRIDGE_ANCHOR);
    if (al < 0 || ar < 0)
        return -1;
    if (side_cable(m, L, al, saddle_l, 0, 1) || side_cable(m, L, ar, saddle_r, L->n, -1))
        return -1;
    return 0;
}

/* Dead-load tensions (linearized deflection theory): the weight w per
 * metre of deck, hangers and cable hangs from the cable, so each parabola
 * carries the horizontal force H = w l^2 / 8f (l, f: its span and sag), a
 * cable segment H over its horizontal cosine, a hanger one panel of deck. */
static void dead_load_tension(struct bridge_model *m, const struct layout *L)
{
    double cable = 0, deck = 0, c, s;
    for (int64_t k = 0; k < m->n_members; k++) {
        const struct bridge_section *sc = &m->sec[m->part[k]];
        double w = sc->rho * sc->A * bridge_member_length(m, k, &c, &s) * BRIDGE_GRAVITY;
        if (m->part[k] == BRIDGE_CABLE)
            cable += w;
        else if (m->part[k] != BRIDGE_TOWER && m->part[k] != BRIDGE_BRACE)
            deck += w;
    }
    double length = L->n * L->p, main_span = (L->main + 1) * L->p;
    deck += m->roadway * length;
    double w = (cable + deck) / length;
    double h_main = w * main_span * main_span / (8 * L->sag);
    double h_side = w * L->side_span * L->side_span / (8 * L->side_sag);
    double x0 = (L->side + 0.5) * L->p, x1 = length - x0;
    for (int64_t k = 0; k < m->n_members; k++) {
        if (m->part[k] == BRIDGE_HANGER) {
            m->tension[k] = deck / length * L->p;
        } else if (m->part[k] == BRIDGE_CABLE) {
            double xm = 0.5 * (m->x[m->end[0][k]] + m->x[m->end[1][k]]);
            bridge_member_length(m, k, &c, &s);
            m->tension[k] = (xm > x0 && xm < x1 ? h_main : h_side) / fabs(c);
        }
    }
}

int bridge_generate(struct bridge_model *m, const struct bridge_params *p)
{
    if (p->segments < 6 || p->segments > INT32_MAX / 4)
        return bridge_fail("segments %lld: expected 6 to %d", (long long)p->segments,
                           INT32_MAX / 4);
    if (!(p->panel > 0 && p->depth > 0 && p->deck_height > 0 && p->roadway >= 0))
        return bridge_fail("panel, depth and deck height must be positive, the roadway load "
                           "not negative");
    struct layout L = {.n = p->segments, .p = p->panel};
    L.side = lround(fmax(1, (L.n - 2) * SIDE_FRACTION));
    L.main = L.n - 2 - 2 * L.side;
    L.deck_bot = p->deck_height;
    L.deck_top = p->deck_height + p->depth;
    L.sag = SAG_RATIO * (L.main + 1) * L.p;
    /* Tall enough for the sag and for a one-panel saddle above the legs. */
    L.saddle_y = L.deck_top + fmax(L.sag + CABLE_CLEARANCE, L.p);
    /* Side cables: the main span's horizontal force under the same load
     * per metre, unless that sags them too close to the deck. */
    double main_span = (L.main + 1) * L.p, rise = L.saddle_y - L.deck_top;
    L.side_span = (L.side + 1.5) * L.p;
    L.side_sag = fmin(L.sag * (L.side_span / main_span) * (L.side_span / main_span), 0.125 * rise);

    /* Deck 2 nodes per column, cable ~1, towers ~4 per panel of height. */
    int64_t est = 3 * (L.n + 1) + 4 * (int64_t)((L.saddle_y + L.p) / L.p) + 8;
    if (bridge_model_init(m, p->bs, est, 3 * est))
        return -1;
    set_sections(m);
    m->roadway = p->roadway;
    L.bot = malloc((size_t)(L.n + 1) * sizeof *L.bot);
    L.top = malloc((size_t)(L.n + 1) * sizeof *L.top);
    int rc = -1;
    if (!L.bot || !L.top) {
        bridge_fail("out of memory for %lld deck columns", (long long)L.n + 1);
        goto done;
    }
    unsigned base = BRIDGE_FIX_U | BRIDGE_FIX_V | (p->bs == 3 ? BRIDGE_FIX_R : 0);
    if (build_deck(m, &L, BRIDGE_FIX_V))
        goto done;
    int64_t sl = build_tower(m, &L, L.side, L.side + 1, base);
    int64_t sr = sl < 0 ? -1 : build_tower(m, &L, L.n - L.side, L.n - L.side - 1, base);
    if (sr < 0 || build_cables(m, &L, sl, sr) || bridge_model_finish(m))
        goto done;
    dead_load_tension(m, &L);
    m->deck_x0 = 0;
    m->deck_x1 = L.n * L.p;
    m->main_x0 = m->x[sl];
    m->main_x1 = m->x[sr];
    rc = 0;
done:
    free(L.bot);
    free(L.top);
    if (rc)
        bridge_model_free(m);
    return rc;
}
