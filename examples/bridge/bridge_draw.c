/* The picture of the deformed bridge over the undeformed one, and its SVG
 * canvas.  The scene is drawn once through struct canvas, so the SVG and
 * the PNG (bridge_png.c) show the same thing. */
#include "bridge_draw.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define MARGIN 24.0
#define TITLE_SIZE 15.0
#define LINE_GAP 21.0
#define UNDEFORMED 0xc4c4c4u
#define LOAD_COLOUR 0x2e8b57u
#define MARK_COLOUR 0xd62728u

static const struct {
    uint32_t rgb;
    double width;
    const char *name;
} part_style[BRIDGE_N_PARTS] = {
    [BRIDGE_CABLE] = {0xc0392bu, 2.4, "cable"},
    [BRIDGE_HANGER] = {0xe69f00u, 0.8, "hangers"},
    [BRIDGE_CHORD] = {0x1f4e9cu, 1.6, "deck chords"},
    [BRIDGE_WEB] = {0x5b8bd6u, 0.8, "deck web"},
    [BRIDGE_TOWER] = {0x303030u, 2.4, "tower legs"},
    [BRIDGE_BRACE] = {0x808080u, 1.0, "tower bracing"},
};
/* Thin members first so the main lines stay on top. */
static const enum bridge_part draw_order[BRIDGE_N_PARTS] = {
    BRIDGE_HANGER, BRIDGE_WEB, BRIDGE_BRACE, BRIDGE_CHORD, BRIDGE_TOWER, BRIDGE_CABLE};

static double ux(const struct bridge_picture *pic, int64_t i)
{
    return pic->m->x[i] + pic->scale * pic->u[i * pic->m->bs];
}

static double uy(const struct bridge_picture *pic, int64_t i)
{
    return pic->m->y[i] + pic->scale * pic->u[i * pic->m->bs + 1];
}

double bridge_auto_scale(const struct bridge_model *m, const double *u)
{
    double umax = 0, lo[2] = {INFINITY, INFINITY}, hi[2] = {-INFINITY, -INFINITY};
    for (int64_t i = 0; i < m->n_nodes; i++) {
        umax = fmax(umax, hypot(u[i * m->bs], u[i * m->bs + 1]));
        lo[0] = fmin(lo[0], m->x[i]);
        hi[0] = fmax(hi[0], m->x[i]);
        lo[1] = fmin(lo[1], m->y[i]);
        hi[1] = fmax(hi[1], m->y[i]);
    }
    if (!(umax > 0) || !isfinite(umax))
        return 1;
    double want = 0.06 * fmax(hi[0] - lo[0], hi[1] - lo[1]) / umax;
    double p = pow(10, floor(log10(want))), f = want / p;
    return p * (f >= 5 ? 5 : f >= 2 ? 2 : 1);
}

/* World box of both shapes and its mapping to pixels. */
struct view {
    double x0, y1, s, top;
};

static void world_box(const struct bridge_picture *pic, double lo[2], double hi[2])
{
    lo[0] = lo[1] = INFINITY;
    hi[0] = hi[1] = -INFINITY;
    for (int64_t i = 0; i < pic->m->n_nodes; i++) {
        double xs[2] = {pic->m->x[i], ux(pic, i)}, ys[2] = {pic->m->y[i], uy(pic, i)};
        for (int k = 0; k < 2; k++) {
            lo[0] = fmin(lo[0], xs[k]);
            hi[0] = fmax(hi[0], xs[k]);
            lo[1] = fmin(lo[1], ys[k]);
            hi[1] = fmax(hi[1], ys[k]);
        }
    }
}

static int title_lines(const struct bridge_picture *pic)
{
    int n = 0;
    while (n < 3 && pic->title[n])
        n++;
    return n;
}

static struct view make_view(const struct bridge_picture *pic, int width)
{
    double lo[2], hi[2];
    world_box(pic, lo, hi);
    struct view v = {.x0 = lo[0], .y1 = hi[1]};
    v.s = (width - 2 * MARGIN) / fmax(hi[0] - lo[0], 1e-9);
    int lines = title_lines(pic);
    v.top = MARGIN + (lines ? LINE_GAP * (lines + 1) : 0); /* titles and legend */
    return v;
}

void bridge_picture_size(const struct bridge_picture *pic, int width, int *height)
{
    double lo[2], hi[2];
    world_box(pic, lo, hi);
    struct view v = make_view(pic, width);
    *height = (int)ceil(v.top + (hi[1] - lo[1]) * v.s + 2 * MARGIN);
}

static double px(const struct view *v, double x)
{
    return (x - v->x0) * v->s + MARGIN;
}

static double py(const struct view *v, double y)
{
    return (v->y1 - y) * v->s + v->top;
}

static void draw_supports(const struct bridge_picture *pic, const struct view *v, struct canvas *cv)
{
    const double h = 7;
    for (int64_t i = 0; i < pic->m->n_nodes; i++) {
        unsigned fix = pic->m->fixed[i];
        if (!(fix & BRIDGE_FIX_V))
            continue;
        double x = px(v, pic->m->x[i]), y = py(v, pic->m->y[i]);
        cv->line(cv, x, y, x - h, y + h, 1.2, 0x000000u);
        cv->line(cv, x, y, x + h, y + h, 1.2, 0x000000u);
        cv->line(cv, x - h - 3, y + h, x + h + 3, y + h, 1.2, 0x000000u);
        if (!(fix & BRIDGE_FIX_U)) /* roller */
            cv->line(cv, x - h - 3, y + h + 3, x + h + 3, y + h + 3, 1.2, 0x000000u);
    }
}

/* Arrows down onto the undeformed top chord where the traffic load acts. */
static void draw_load(const struct bridge_picture *pic, const struct view *v, struct canvas *cv)
{
    const struct bridge_model *m = pic->m;
    if (!(pic->load_x1 > pic->load_x0))
        return;
    double deck = -INFINITY;
    for (int64_t i = 0; i < m->n_nodes; i++)
        if (m->role[i] == BRIDGE_DECK_TOP)
            deck = fmax(deck, m->y[i]);
    double x0 = px(v, pic->load_x0), x1 = px(v, pic->load_x1), y = py(v, deck) - 3;
    double len = 16, step = fmax(8, (x1 - x0) / floor(fmax(1, (x1 - x0) / 12)));
    cv->line(cv, x0, y - len, x1, y - len, 1.2, LOAD_COLOUR);
    for (double x = x0; x <= x1 + 0.5; x += step) {
        cv->line(cv, x, y - len, x, y, 1.0, LOAD_COLOUR);
        cv->line(cv, x - 2.5, y - 4, x, y, 1.0, LOAD_COLOUR);
        cv->line(cv, x + 2.5, y - 4, x, y, 1.0, LOAD_COLOUR);
    }
}

void bridge_draw(const struct bridge_picture *pic, struct canvas *cv, int width)
{
    const struct bridge_model *m = pic->m;
    struct view v = make_view(pic, width);
    int lines = title_lines(pic);
    for (int t = 0; t < lines; t++)
        cv->text(cv, MARGIN, MARGIN + LINE_GAP * t + TITLE_SIZE, TITLE_SIZE, 0x000000u,
                 pic->title[t]);
    /* Legend under the titles: the part names in their colours. */
    double lx = MARGIN, ly = MARGIN + LINE_GAP * lines + TITLE_SIZE - 2;
    for (int p = -1; p < BRIDGE_N_PARTS && lines; p++) {
        const char *name = p < 0 ? "undeformed" : part_style[p].name;
        cv->text(cv, lx, ly, TITLE_SIZE - 2, p < 0 ? UNDEFORMED : part_style[p].rgb, name);
        lx += 0.62 * (TITLE_SIZE - 2) * (strlen(name) + 2);
    }

    for (int64_t k = 0; k < m->n_members; k++) {
        int32_t a = m->end[0][k], b = m->end[1][k];
        cv->line(cv, px(&v, m->x[a]), py(&v, m->y[a]), px(&v, m->x[b]), py(&v, m->y[b]), 0.8,
                 UNDEFORMED);
    }
    draw_load(pic, &v, cv);
    for (int o = 0; o < BRIDGE_N_PARTS; o++)
        for (int64_t k = 0; k < m->n_members; k++) {
            if (m->part[k] != draw_order[o])
                continue;
            int32_t a = m->end[0][k], b = m->end[1][k];
            cv->line(cv, px(&v, ux(pic, a)), py(&v, uy(pic, a)), px(&v, ux(pic, b)),
                     py(&v, uy(pic, b)), part_style[m->part[k]].width, part_style[m->part[k]].rgb);
        }
    draw_supports(pic, &v, cv);
    if (pic->mark >= 0) {
        double x = px(&v, ux(pic, pic->mark)), y = py(&v, uy(pic, pic->mark));
        cv->disc(cv, x, y, 4.5, MARK_COLOUR);
        cv->text(cv, x + 8, y + 18, TITLE_SIZE - 2, MARK_COLOUR, "max deflection");
    }
}

/* ---- SVG canvas ---------------------------------------------------------- */

struct svg_canvas {
    struct canvas cv;
    FILE *f;
};

static void svg_line(struct canvas *cv, double x0, double y0, double x1, double y1, double width,
                     uint32_t rgb)
{
    FILE *f = ((struct svg_canvas *)cv)->f;
    fprintf(f,
            "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"#%06x\" "
            "stroke-width=\"%.2f\"/>\n",
            x0, y0, x1, y1, (unsigned)rgb, width);
}

static void svg_disc(struct canvas *cv, double x, double y, double r, uint32_t rgb)
{
    fprintf(((struct svg_canvas *)cv)->f,
            "<circle cx=\"%.2f\" cy=\"%.2f\" r=\"%.2f\" fill=\"#%06x\"/>\n", x, y, r,
            (unsigned)rgb);
}

static void svg_text(struct canvas *cv, double x, double y, double size, uint32_t rgb,
                     const char *s)
{
    FILE *f = ((struct svg_canvas *)cv)->f;
    fprintf(f, "<text x=\"%.2f\" y=\"%.2f\" font-size=\"%.1f\" fill=\"#%06x\">", x, y, size,
            (unsigned)rgb);
    for (; *s; s++) {
        if (*s == '<')
            fputs("&lt;", f);
        else if (*s == '>')
            fputs("&gt;", f);
        else if (*s == '&')
            fputs("&amp;", f);
        else
            fputc(*s, f);
    }
    fputs("</text>\n", f);
}

int bridge_write_svg(const struct bridge_picture *pic, int width, const char *path)
{
    if (pic->m->n_members > BRIDGE_DRAW_MAX_MEMBERS)
        return bridge_fail("%lld members: too many to draw (the limit is %d)",
                           (long long)pic->m->n_members, BRIDGE_DRAW_MAX_MEMBERS);
    int height;
    bridge_picture_size(pic, width, &height);
    struct svg_canvas c = {{svg_line, svg_disc, svg_text}, fopen(path, "w")};
    if (!c.f)
        return bridge_fail("cannot open %s for writing", path);
    fprintf(c.f,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
            "viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" stroke-linecap=\"round\">\n"
            "<rect width=\"100%%\" height=\"100%%\" fill=\"#ffffff\"/>\n",
            width, height, width, height);
    bridge_draw(pic, &c.cv, width);
    fputs("</svg>\n", c.f);
    int bad = ferror(c.f);
    if (fclose(c.f) != 0 || bad)
        return bridge_fail("error writing %s", path);
    return 0;
}
