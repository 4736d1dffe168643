/* A small anti-aliased rasteriser for the bridge picture and a PNG writer
 * on zlib (already a dependency of the library).  There is no font: the
 * PNG is the drawing alone; titles and legend are in the SVG. */
#include "bridge_draw.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <zlib.h>

struct raster {
    struct canvas cv;
    int w, h;
    unsigned char *rgb; /* w*h*3 */
};

/* Blends colour rgb into pixel (x, y) with coverage a in [0, 1]. */
static void blend(struct raster *r, int x, int y, uint32_t rgb, double a)
{
    unsigned char *p = r->rgb + ((size_t)y * r->w + x) * 3;
    for (int c = 0; c < 3; c++) {
        double v = (rgb >> (16 - 8 * c)) & 0xffu;
        p[c] = (unsigned char)lround(p[c] + a * (v - p[c]));
    }
}

/* Coverage of a pixel by a shape whose edge is at signed distance d
 * (negative inside), with a one-pixel soft edge. */
static double coverage(double d)
{
    return d <= -0.5 ? 1 : d >= 0.5 ? 0 : 0.5 - d;
}

static void clip_box(const struct raster *r, double x0, double y0, double x1, double y1, int *ix0,
                     int *iy0, int *ix1, int *iy1)
{
    *ix0 = (int)fmax(0, floor(x0));
    *iy0 = (int)fmax(0, floor(y0));
    *ix1 = (int)fmin(r->w - 1, ceil(x1));
    *iy1 = (int)fmin(r->h - 1, ceil(y1));
}

static void raster_line(struct canvas *cv, double x0, double y0, double x1, double y1, double width,
                        uint32_t rgb)
{
    struct raster *r = (struct raster *)cv;
    double hw = 0.5 * fmax(width, 1.0), pad = hw + 1;
    int ax, ay, bx, by;
    clip_box(r, fmin(x0, x1) - pad, fmin(y0, y1) - pad, fmax(x0, x1) + pad, fmax(y0, y1) + pad, &ax,
             &ay, &bx, &by);
    double dx = x1 - x0, dy = y1 - y0, len2 = dx * dx + dy * dy;
    /* Thin lines are drawn fainter rather than thinner than a pixel. */
    double alpha = fmin(1.0, width);
    for (int y = ay; y <= by; y++)
        for (int x = ax; x <= bx; x++) {
            double qx = x + 0.5 - x0, qy = y + 0.5 - y0;
            double t = len2 > 0 ? fmax(0, fmin(1, (qx * dx + qy * dy) / len2)) : 0;
            double d = hypot(qx - t * dx, qy - t * dy) - hw;
            double a = alpha * coverage(d);
            if (a > 0)
                blend(r, x, y, rgb, a);
        }
}

static void raster_disc(struct canvas *cv, double cx, double cy, double rad, uint32_t rgb)
{
    struct raster *r = (struct raster *)cv;
    int ax, ay, bx, by;
    clip_box(r, cx - rad - 1, cy - rad - 1, cx + rad + 1, cy + rad + 1, &ax, &ay, &bx, &by);
    for (int y = ay; y <= by; y++)
        for (int x = ax; x <= bx; x++) {
            double a = coverage(hypot(x + 0.5 - cx, y + 0.5 - cy) - rad);
            if (a > 0)
                blend(r, x, y, rgb, a);
        }
}

static void raster_text(struct canvas *cv, double x, double y, double size, uint32_t rgb,
                        const char *s)
{
    (void)cv, (void)x, (void)y, (void)size, (void)rgb, (void)s;
}

static void put32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)(v >> 24);
    p[1] = (unsigned char)(v >> 16);
    p[2] = (unsigned char)(v >> 8);
    p[3] = (unsigned char)v;
}

/* One PNG chunk: length, type, data, CRC of type and data. */
static int write_chunk(FILE *f, const char *type, const unsigned char *data, uint32_t len)
{
    unsigned char head[8], tail[4];
    put32(head, len);
    for (int i = 0; i < 4; i++)
        head[4 + i] = (unsigned char)type[i];
    uLong crc = crc32(0L, head + 4, 4);
    if (len)
        crc = crc32(crc, data, len);
    put32(tail, (uint32_t)crc);
    return fwrite(head, 1, 8, f) != 8 || (len && fwrite(data, 1, len, f) != len) ||
           fwrite(tail, 1, 4, f) != 4;
}

/* 8-bit RGB, no interlace, filter "none" on every scanline. */
static int write_png(const struct raster *r, const char *path)
{
    size_t stride = (size_t)r->w * 3 + 1, raw_len = stride * r->h;
    unsigned char *raw = malloc(raw_len);
    uLongf z_len = compressBound((uLong)raw_len);
    unsigned char *z = malloc(z_len);
    int rc = -1;
    FILE *f = NULL;
    if (!raw || !z) {
        bridge_fail("out of memory for a %dx%d PNG", r->w, r->h);
        goto done;
    }
    for (int y = 0; y < r->h; y++) {
        raw[y * stride] = 0;
        for (size_t i = 0; i + 1 < stride; i++)
            raw[y * stride + 1 + i] = r->rgb[(size_t)y * r->w * 3 + i];
    }
    if (compress2(z, &z_len, raw, (uLong)raw_len, 9) != Z_OK) {
        bridge_fail("zlib could not compress the PNG data");
        goto done;
    }
    f = fopen(path, "wb");
    if (!f) {
        bridge_fail("cannot open %s for writing", path);
        goto done;
    }
    static const unsigned char sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    unsigned char ihdr[13] = {0};
    put32(ihdr, (uint32_t)r->w);
    put32(ihdr + 4, (uint32_t)r->h);
    ihdr[8] = 8; /* bit depth    */
    ihdr[9] = 2; /* truecolour   */
    int bad = fwrite(sig, 1, 8, f) != 8 || write_chunk(f, "IHDR", ihdr, 13) ||
              write_chunk(f, "IDAT", z, (uint32_t)z_len) || write_chunk(f, "IEND", NULL, 0);
    if (fclose(f) != 0 || bad) {
        bridge_fail("error writing %s", path);
        goto done;
    }
    rc = 0;
done:
    free(raw);
    free(z);
    return rc;
}

int bridge_write_png(const struct bridge_picture *pic, int width, const char *path)
{
    if (pic->m->n_members > BRIDGE_DRAW_MAX_MEMBERS)
        return bridge_fail("%lld members: too many to draw (the limit is %d)",
                           (long long)pic->m->n_members, BRIDGE_DRAW_MAX_MEMBERS);
    /* Without a font, no room for titles either. */
    struct bridge_picture bare = *pic;
    bare.title[0] = NULL;
    pic = &bare;
    int height;
    bridge_picture_size(pic, width, &height);
    if (height > 8 * width)
        return bridge_fail("picture of %dx%d pixels: too tall", width, height);
    struct raster r = {{raster_line, raster_disc, raster_text}, width, height, NULL};
    r.rgb = malloc((size_t)width * height * 3);
    if (!r.rgb)
        return bridge_fail("out of memory for a %dx%d picture", width, height);
    for (size_t i = 0; i < (size_t)width * height * 3; i++)
        r.rgb[i] = 0xff;
    bridge_draw(pic, &r.cv, width);
    int rc = write_png(&r, path);
    free(r.rgb);
    return rc;
}
