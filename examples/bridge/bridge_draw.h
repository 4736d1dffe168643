/* The deformed-bridge picture: one scene (bridge_draw.c) drawn on a canvas
 * that writes SVG text (bridge_draw.c) or rasterises to PNG (bridge_png.c). */
#ifndef BSRMV_TOOLS_BRIDGE_DRAW_H
#define BSRMV_TOOLS_BRIDGE_DRAW_H

#include "bridge_model.h"

#include <stdint.h>

/* Models with more members than this are not drawn: at picture resolution
 * they are a blur and the SVG would run to hundreds of MB. */
#define BRIDGE_DRAW_MAX_MEMBERS 400000

/* Drawing primitives in pixels (y down); colours 0xRRGGBB. */
struct canvas {
    void (*line)(struct canvas *cv, double x0, double y0, double x1, double y1, double width,
                 uint32_t rgb);
    void (*disc)(struct canvas *cv, double x, double y, double r, uint32_t rgb);
    /* May draw nothing (the PNG canvas has no font). */
    void (*text)(struct canvas *cv, double x, double y, double size, uint32_t rgb, const char *s);
};

struct bridge_picture {
    const struct bridge_model *m;
    const double *u;         /* displacements, bs per node              */
    double scale;            /* displacement magnification              */
    double load_x0, load_x1; /* traffic load extent (x0 >= x1: none)    */
    int64_t mark;            /* node to mark (max deflection), -1: none */
    const char *title[3];    /* lines of text on top (NULL: fewer; none:
                              * no titles and no legend)                */
};

/* A magnification that draws the largest displacement at about 6% of the
 * structure's larger extent, rounded down to 1, 2 or 5 x 10^k. */
double bridge_auto_scale(const struct bridge_model *m, const double *u);

/* Picture size in pixels for a given width. */
void bridge_picture_size(const struct bridge_picture *pic, int width, int *height);

/* Draws the scene on cv, `width` pixels wide. */
void bridge_draw(const struct bridge_picture *pic, struct canvas *cv, int width);

/* Writes the picture as SVG / PNG `width` pixels wide.  0, or -1 with
 * bridge_last_error() set. */
int bridge_write_svg(const struct bridge_picture *pic, int width, const char *path);
int bridge_write_png(const struct bridge_picture *pic, int width, const char *path);

#endif
