/* The GPU plan's host side without a GPU: features from row_ptr, table
 * parsing (and its errors), matching, parameter completion, and the
 * built-in table's choices on shapes whose tuning is known. */
#include "plan/plan.h"
#include "testutil.h"

#include <math.h>
#include <string.h>

static void cfg_is(const bsrmv_gpu_config *c, const char *want)
{
    char b[96];
    bsrmv_gpu_config_string(c, b, sizeof b);
    TU_CHECK(!strcmp(b, want), "chose %s, wanted %s", b, want);
}

/* The table's choice for f is want. */
static void picks(const plan_table *t, const plan_features *f, const char *want)
{
    bsrmv_gpu_config c;
    TU_CHECK(plan_table_lookup(t, f, NULL, NULL, &c, NULL), "no choice, wanted %s", want);
    cfg_is(&c, want);
}

/* A matrix of mb block rows of length len, one of them long. */
static void features_of(plan_features *f, int64_t mb, int64_t len, int64_t longest, int bs, bsrmv_type t,
                        bsrmv_order o, double l2_bytes)
{
    int64_t *rp = malloc(sizeof *rp * (size_t)(mb + 1));
    TU_CHECK(rp, "malloc");
    rp[0] = 0;
    for (int64_t i = 0; i < mb; ++i)
        rp[i + 1] = rp[i] + (i == mb / 2 ? longest : len);
    plan_features_rows(f, rp, mb, mb, bs, t, t, o);
    plan_features_device(f, l2_bytes, 3350, 132, 90);
    free(rp);
}

/* col_idx from a host array; ctx NULL: a failed copy */
static const int32_t *spread_cols;
static int64_t spread_asked;
static int cols_of(void *ctx, int64_t first, int n, int32_t *out)
{
    if (!ctx)
        return 7;
    spread_asked += n;
    memcpy(out, spread_cols + first, sizeof *out * (size_t)n);
    return 0;
}

static int no_wide(const bsrmv_gpu_config *c, void *ctx)
{
    ++*(int *)ctx;
    return c->kernel != BSRMV_GPU_WIDE;
}

int main(void)
{
    /* features: rows 2, 0, 4, 6 */
    const int64_t rp[5] = {0, 2, 2, 6, 12};
    plan_features f;
    plan_features_rows(&f, rp, 4, 5, 3, BSRMV_DOUBLE, BSRMV_DOUBLE, BSRMV_COL_MAJOR);
    TU_CHECK(f.v[PF_MEAN] == 3.0 && f.v[PF_LENMAX] == 6 && f.v[PF_EMPTY] == 0.25, "row features");
    TU_CHECK(fabs(f.v[PF_CV] - sqrt(5.0) / 3.0) < 1e-12, "cv %g", f.v[PF_CV]);
    TU_CHECK(f.v[PF_MAXMEAN] == 2.0 && f.v[PF_IRREGULAR] == 0 && f.v[PF_MIXED] == 0,
             "maxmean / irregular / mixed");
    const double bytes = 12.0 * 9 * 8 + 12 * 4 + 5 * 8 + 5 * 3 * 8 + 4 * 3 * 8;
    TU_CHECK(f.v[PF_L2] == bytes, "bytes %g, wanted %g", f.v[PF_L2], bytes);
    plan_features_device(&f, 1000.0, 2640, 132, 90);
    TU_CHECK(f.v[PF_L2] == bytes / 1000 && f.v[PF_MEMSM] == 20 && f.v[PF_ROWSM] == 12.0 / 132 &&
                 f.v[PF_STAGED] == 1 && f.v[PF_ROWSHARE] == 6.0 * 132 / 12,
             "device features");
    /* float values, double vectors: the values' bytes halve, x's and y's not */
    plan_features_rows(&f, rp, 4, 5, 3, BSRMV_FLOAT, BSRMV_DOUBLE, BSRMV_COL_MAJOR);
    const double mixed_bytes = bytes - 12.0 * 9 * 4;
    TU_CHECK(f.v[PF_MIXED] == 1 && f.v[PF_L2] == mixed_bytes, "mixed: %g, bytes %g, wanted %g",
             f.v[PF_MIXED], f.v[PF_L2], mixed_bytes);

    /* spread: every block of a small matrix (rows 2, 0, 4, 6 of rp above),
     * a sample of a large one; the copy's failure comes back */
    {
        const int32_t small[12] = {0, 4, 0, 1, 2, 3, 0, 1, 2, 3, 4, 3};
        spread_cols = small;
        spread_asked = 0;
        TU_CHECK(plan_features_spread(&f, rp, 4, 5, cols_of, &f) == 0 && spread_asked == 12, "spread: all");
        double want = 0; /* row of each block: 0 0 2 2 2 2 3 3 3 3 3 3 */
        const int rows[12] = {0, 0, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3};
        for (int k = 0; k < 12; ++k)
            want += log2(1.0 + fabs((double)small[k] - rows[k]));
        want /= 12 * log2(6.0);
        TU_CHECK(fabs(f.v[PF_SPREAD] - want) < 1e-12, "spread %g, wanted %g", f.v[PF_SPREAD], want);
        TU_CHECK(plan_features_spread(&f, rp, 4, 5, cols_of, NULL) == 7, "spread: the copy's error");
        /* tridiagonal rows (an empty one among them) and random columns */
        enum { MB = 100000 };
        int64_t *trp = malloc(sizeof *trp * (MB + 1));
        int32_t *tc = malloc(sizeof *tc * 3 * MB), *rc = malloc(sizeof *rc * 3 * MB);
        TU_CHECK(trp && tc && rc, "malloc");
        int64_t n = 0;
        uint64_t x = 88172645463325252ull;
        trp[0] = 0;
        for (int64_t i = 0; i < MB; ++i) {
            for (int64_t j = i - 1; j <= i + 1 && i != MB / 2; ++j)
                if (j >= 0 && j < MB) {
                    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
                    rc[n] = (int32_t)(x % MB);
                    tc[n++] = (int32_t)j;
                }
            trp[i + 1] = n;
        }
        spread_cols = tc;
        spread_asked = 0;
        TU_CHECK(plan_features_spread(&f, trp, MB, MB, cols_of, &f) == 0 &&
                     spread_asked == (int64_t)PLAN_SPREAD_RUNS * PLAN_SPREAD_RUN,
                 "spread: sampled (%lld)", (long long)spread_asked);
        TU_CHECK(f.v[PF_SPREAD] > 0.6 / log2(1.0 + MB) && f.v[PF_SPREAD] < 0.7 / log2(1.0 + MB),
                 "tridiagonal spread %g", f.v[PF_SPREAD]); /* 2 of 3 blocks at distance 1 */
        spread_cols = rc;
        TU_CHECK(plan_features_spread(&f, trp, MB, MB, cols_of, &f) == 0 && f.v[PF_SPREAD] > 0.85 &&
                     f.v[PF_SPREAD] < 0.95,
                 "random spread %g", f.v[PF_SPREAD]);
        free(trp);
        free(tc);
        free(rc);
    }

    /* parsing: both row forms, ranges, wildcards, conditions, comments */
    plan_table t;
    TU_OK(plan_table_parse("# a comment\n"
                           "double col 3 by_column/g16/r4/t256/p0 mean<12 cv>=0.5\n"
                           "\n"
                           "*  row 2-8 wide/g32/r1/t128/p0   # trailing comment\n"
                           "float col 4 merge_path 1 3 32 128\n"
                           "* * 1-64 k2_medium/g4/r1/t0/p0 l2<=2\n",
                           "t1", &t));
    TU_CHECK(t.n == 4, "rows %d", t.n);
    TU_CHECK(t.rows[0].ncond == 2 && t.rows[0].cond[0].feature == PF_MEAN && t.rows[0].cond[1].op == 'g',
             "conditions");
    TU_CHECK(t.rows[1].type == -1 && t.rows[1].bs_lo == 2 && t.rows[1].bs_hi == 8, "wildcard and range");
    /* a `bsrmv tune` row was measured on irregular rows if its kernel is a balanced one */
    TU_CHECK(t.rows[2].ncond == 1 && t.rows[2].cond[0].feature == PF_IRREGULAR && t.rows[2].cond[0].value == 1,
             "tune row");
    bsrmv_gpu_config c;
    int row = -1;
    features_of(&f, 1000, 8, 8, 3, BSRMV_DOUBLE, BSRMV_COL_MAJOR, 50e6);
    TU_CHECK(plan_table_lookup(&t, &f, NULL, NULL, &c, &row) && row == 3, "row %d", row);
    cfg_is(&c, "k2_medium/g4/r1/t0/p21"); /* p0: 256 / (bs x 4) */
    f.v[PF_CV] = 0.5;
    TU_CHECK(plan_table_lookup(&t, &f, NULL, NULL, &c, &row) && row == 0, "row %d", row);
    features_of(&f, 1000, 8, 8, 4, BSRMV_FLOAT, BSRMV_ROW_MAJOR, 50e6);
    int asked = 0;
    TU_CHECK(plan_table_lookup(&t, &f, no_wide, &asked, &c, &row) && row == 3 && asked == 2,
             "a refused row is passed over (row %d, asked %d)", row, asked);
    f.v[PF_L2] = 3;
    TU_CHECK(!plan_table_lookup(&t, &f, no_wide, &asked, &c, &row), "no row matches");
    plan_table_free(&t);

    /* rows for the complex types: z (complex double) and c (complex float) */
    TU_OK(plan_table_parse("z col 3 by_column/g16/r4/t256/p0\n"
                           "c * 3 k1_small/g16/r4/t256/p0\n"
                           "double col 3 by_block/g32/r1/t128/p0\n",
                           "t2", &t));
    TU_CHECK(t.n == 3 && t.rows[0].type == BSRMV_COMPLEX_DOUBLE && t.rows[1].type == BSRMV_COMPLEX_FLOAT,
             "complex row types");
    const bsrmv_type kinds[3] = {BSRMV_COMPLEX_DOUBLE, BSRMV_COMPLEX_FLOAT, BSRMV_DOUBLE};
    for (int k = 0; k < 3; ++k) {
        features_of(&f, 1000, 27, 27, 3, kinds[k], BSRMV_COL_MAJOR, 50e6);
        TU_CHECK(plan_table_lookup(&t, &f, NULL, NULL, &c, &row) && row == k, "type %d: row %d", (int)kinds[k],
                 row);
    }
    plan_table_free(&t);

    /* nearest rows: the K nearest points of the key vote, each weighing
     * 1 / (distance + 0.5); a configuration a point does not keep counts
     * as its lowest score; the first accepted configuration by votes */
    TU_OK(plan_table_parse("* * 4 nearest/2 l2<1\n"
                           "double col 4 by_block/g32/r1/t128/p0\n"
                           "point double col 4 0.1 8 0 1 wide/g16/r1/t128/p0=1 by_block/g32/r1/t128/p0=0.5\n"
                           "point double col 4 0.1 16 0 1 k2_medium/g2/r1/t0/p0=1 wide/g16/r1/t128/p0=0.9\n"
                           "point double col 4 0.1 3 0 1 by_column/g8/r1/t256/p0=1 by_block/g32/r1/t128/p0=0\n"
                           "point float col 4 0.1 8 0 1 vec_stream/g32/r4/t128/p0=1\n",
                           "t3", &t));
    TU_CHECK(t.n == 2 && t.npoints == 4 && t.rows[0].nearest == 2 && t.points[1].n == 2, "nearest rows");
    features_of(&f, 1000, 8, 8, 4, BSRMV_DOUBLE, BSRMV_COL_MAJOR, 1e9);
    /* at mean 8: the points at 8 (distance 0) and 16 (log 2): wide gets
     * 1/0.5 + 0.9/(log 2 + 0.5), K2 1/(log 2 + 0.5) + 0.5/0.5 */
    TU_CHECK(plan_table_lookup(&t, &f, NULL, NULL, &c, &row) && row == 0, "row %d", row);
    cfg_is(&c, "wide/g16/r1/t128/p0");
    asked = 0;
    TU_CHECK(plan_table_lookup(&t, &f, no_wide, &asked, &c, &row) && row == 0 && asked == 2,
             "refused: the next by votes (asked %d)", asked);
    cfg_is(&c, "k2_medium/g2/r1/t0/p32"); /* completed: 256 / (bs x 2) */
    /* the ranking: by votes (by-block 1/0.5 + 0.9/(log 2 + 0.5), behind K2),
     * then the next row's by-block, there already */
    bsrmv_gpu_config rk[4];
    TU_CHECK(plan_table_rank(&t, &f, NULL, NULL, rk, 4, &row) == 3 && row == 0, "rank: 3 from row 0");
    cfg_is(&rk[0], "wide/g16/r1/t128/p0");
    cfg_is(&rk[1], "k2_medium/g2/r1/t0/p32");
    cfg_is(&rk[2], "by_block/g32/r1/t128/p0");
    TU_CHECK(plan_table_rank(&t, &f, NULL, NULL, rk, 2, NULL) == 2 && rk[1].kernel == BSRMV_GPU_K2_MEDIUM,
             "rank: at most max");
    TU_CHECK(plan_table_rank(&t, &f, no_wide, &asked, rk, 4, &row) == 2 && row == 0 &&
                 rk[0].kernel == BSRMV_GPU_K2_MEDIUM && rk[1].kernel == BSRMV_GPU_BY_BLOCK,
             "rank: the refused one left out");
    TU_CHECK(plan_table_rank(&t, &f, NULL, NULL, rk, 0, &row) == 0 && row == -1, "rank: max 0");
    features_of(&f, 1000, 3, 3, 4, BSRMV_DOUBLE, BSRMV_COL_MAJOR, 1e9);
    picks(&t, &f, "by_column/g8/r1/t256/p0"); /* the points at 3 and 8 */
    features_of(&f, 1000, 8, 8, 4, BSRMV_FLOAT, BSRMV_COL_MAJOR, 1e9);
    picks(&t, &f, "vec_stream/g32/r4/t128/p0"); /* a point of its own type */
    features_of(&f, 1000, 8, 8, 4, BSRMV_DOUBLE, BSRMV_ROW_MAJOR, 1e9);
    TU_CHECK(!plan_table_lookup(&t, &f, NULL, NULL, &c, &row), "no point of that order, no row");
    features_of(&f, 1000, 8, 8, 4, BSRMV_DOUBLE, BSRMV_COL_MAJOR, 1e9);
    f.v[PF_L2] = 2;
    TU_CHECK(plan_table_lookup(&t, &f, NULL, NULL, &c, &row) && row == 1, "out of bounds: row %d", row);
    TU_CHECK(plan_table_rank(&t, &f, NULL, NULL, rk, 4, &row) == 1 && row == 1, "out of bounds: rank");
    plan_table_free(&t);

    /* errors name the origin and the line */
    const char *bad[] = {"double col 3 nonsense/g1/r1/t1/p1\n", "double col 0 by_block/g32/r1/t128/p0\n",
                         "double diag 3 by_block/g32/r1/t128/p0\n", "double col 3 by_block/g32/r1/t128/p0 mean~3\n",
                         "double col 3 by_block/g32/r1/t128/p0 speed<3\n", "float row 5 by_block 32 1 128\n",
                         "double col 9-3 by_block/g32/r1/t128/p0\n", "double col 3 nearest/0\n",
                         "double col 3 nearest/x\n", "point double col 3 1 2 0 1\n",
                         "point * col 3 1 2 0 1 by_block/g32/r1/t128/p0=1\n",
                         "point double col 2-3 1 2 0 1 by_block/g32/r1/t128/p0=1\n",
                         "point double col 3 1 2 nan 1 by_block/g32/r1/t128/p0=1\n",
                         "point double col 3 1 2 0 1 by_block/g32/r1/t128/p0\n",
                         "point double col 3 1 2 0 1 by_block/g32/r1/t128/p0=x\n",
                         "point double col 3 1 2 0 1 by_block/g32/r1/t128/p0=2e6\n",
                         "point double col 3 1 -2 0 1 by_block/g32/r1/t128/p0=1\n",
                         /* more tokens than a line may hold (40 conditions) */
                         "double col 3 by_block/g32/r1/t128/p0 mean<1 mean<1 mean<1 mean<1 mean<1 mean<1 mean<1 "
                         "mean<1 mean<1 mean<1 mean<1 mean<1 mean<1 mean<1 mean<1 mean<1 mean<1 mean<1 mean<1 "
                         "mean<1 mean<1 mean<1 mean<1 mean<1 mean<1 mean<1 mean<1 mean<1 mean<1 mean<1 mean<1 "
                         "mean<1 mean<1 mean<1 mean<1 mean<1 mean<1 mean<1 mean<1 mean<1\n",
                         "point double col 3 1 2 0 1 wide/g32/r1/t128/p0=1 wide/g32/r1/t128/p0=1 "
                         "wide/g32/r1/t128/p0=1 wide/g32/r1/t128/p0=1 wide/g32/r1/t128/p0=1 wide/g32/r1/t128/p0=1 "
                         "wide/g32/r1/t128/p0=1 wide/g32/r1/t128/p0=1 wide/g32/r1/t128/p0=1 wide/g32/r1/t128/p0=1 "
                         "wide/g32/r1/t128/p0=1 wide/g32/r1/t128/p0=1 wide/g32/r1/t128/p0=1 wide/g32/r1/t128/p0=1 "
                         "wide/g32/r1/t128/p0=1 wide/g32/r1/t128/p0=1 wide/g32/r1/t128/p0=1\n"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; ++i) {
        char text[1024];
        snprintf(text, sizeof text, "# ok\n%s", bad[i]);
        TU_FAILS(plan_table_parse(text, "bad.tbl", &t), BSRMV_ERR_FORMAT);
        TU_CHECK(strstr(bsrmv_last_error(), "bad.tbl:2:"), "message '%s'", bsrmv_last_error());
        TU_CHECK(t.n == 0 && !t.rows && t.npoints == 0 && !t.points, "empty after an error");
    }

    /* K2's thread arrays from bs (p0), whatever group a tune file names */
    features_of(&f, 100, 8, 8, 65535, BSRMV_DOUBLE, BSRMV_COL_MAJOR, 50e6);
    c = plan_complete((bsrmv_gpu_config){BSRMV_GPU_K2_MEDIUM, 2147483647, 1, 0, 0}, &f);
    TU_CHECK(c.param == 1, "K2 arrays %d", c.param);

    /* K3's row slices from bs (p0) */
    features_of(&f, 100, 8, 8, 100, BSRMV_DOUBLE, BSRMV_COL_MAJOR, 50e6);
    c = plan_complete((bsrmv_gpu_config){BSRMV_GPU_K3_LARGE, 32, 1, 0, 0}, &f);
    TU_CHECK(c.param == 3, "K3 slices %d", c.param);

    /* the built-in table: every block size and kind has a choice; the
     * 27-point grids keep their measured kernels, irregular rows get the
     * balanced ones */
    const plan_table *d = plan_default_table();
    TU_CHECK(d && d->n > 100, "built-in table");
    for (int bs = 1; bs <= 300; bs += bs < 40 ? 1 : 37)
        for (int ty = 0; ty < 2; ++ty)
            for (int o = 0; o < 2; ++o) {
                features_of(&f, 5000, 27, 27, bs, ty ? BSRMV_FLOAT : BSRMV_DOUBLE,
                            o ? BSRMV_ROW_MAJOR : BSRMV_COL_MAJOR, 50e6);
                TU_CHECK(plan_table_lookup(d, &f, NULL, NULL, &c, NULL), "bs %d: no choice", bs);
                TU_CHECK(c.kernel != BSRMV_GPU_AUTO && (c.kernel != BSRMV_GPU_K3_LARGE || c.param > 0),
                         "bs %d: incomplete choice", bs);
            }
    /* a 27-point grid of ~500 MB (20x the L2): on an H100's bandwidth per
     * SM (features_of: 3350 GB/s over 132 SMs) the staged kernel with 2
     * lanes a row, on an H200's with 4, without the copy engine by-block;
     * at bs 2 wide with 8 lanes a row on both */
    features_of(&f, 1000000, 27, 27, 3, BSRMV_DOUBLE, BSRMV_COL_MAJOR, 50 * 1048576.0);
    f.v[PF_L2] = 20;
    picks(d, &f, "staged/g2/r1/t128/p3");
    f.v[PF_MEMSM] = 4800.0 / 132;
    picks(d, &f, "staged/g4/r1/t128/p3");
    f.v[PF_MEMSM] = 3350.0 / 132;
    f.v[PF_STAGED] = 0;
    picks(d, &f, "by_block/g32/r1/t128/p0");
    f.v[PF_STAGED] = 1;
    f.bs = 2;
    picks(d, &f, "wide/g8/r1/t128/p0");
    /* float at bs 8, and float values with double vectors (mixed, H100):
     * wide with 16 lanes a row at bs 4 where float vectors take 32,
     * staged with 4 lanes and 256 threads at bs 3, and at bs 6 by-column:
     * 32 lanes for the pair and for float (four values a lane), on the
     * grid and within the L2, not staged or the vector stream */
    static const struct {
        int bs, mixed;
        double l2;
        const char *want;
    } grid_float[] = {
        {8, 0, 20, "vec_stream/g32/r1/t128/p0"}, {4, 0, 20, "wide/g32/r1/t128/p0"},
        {4, 1, 20, "wide/g16/r1/t128/p0"},       {3, 1, 20, "staged/g4/r1/t256/p3"},
        {6, 1, 20, "by_column/g32/r1/t128/p0"},  {6, 1, 0.5, "by_column/g32/r1/t128/p0"},
        {6, 0, 0.5, "by_column/g32/r1/t128/p0"},  {6, 0, 20, "by_column/g32/r1/t128/p0"},
        {3, 0, 20, "staged/g2/r1/t128/p3"},
    };
    f.type = BSRMV_FLOAT;
    for (size_t i = 0; i < sizeof grid_float / sizeof grid_float[0]; i++) {
        f.bs = grid_float[i].bs;
        f.v[PF_MIXED] = grid_float[i].mixed;
        f.v[PF_L2] = grid_float[i].l2;
        picks(d, &f, grid_float[i].want);
    }
    /* rows of 7 blocks (a 7-point grid, the bridge frame's 5): on an
     * H100's bandwidth per SM the lane-block kernel with 8 lanes a row at
     * bs 3, in float and row-major blocks too, staged with 2 lanes at
     * double bs 2 and the vector stream at double bs 4; on an H200's
     * staged with 2 lanes a row at bs 2-4 */
    features_of(&f, 1000000, 7, 7, 3, BSRMV_DOUBLE, BSRMV_COL_MAJOR, 50 * 1048576.0);
    f.v[PF_L2] = 20;
    picks(d, &f, "lane_block/g8/r1/t128/p0");
    f.bs = 2;
    picks(d, &f, "staged/g2/r1/t128/p3");
    f.bs = 4;
    picks(d, &f, "vec_stream/g32/r4/t128/p0");
    f.v[PF_MEMSM] = 4800.0 / 132;
    picks(d, &f, "staged/g2/r1/t128/p3");
    f.bs = 3;
    picks(d, &f, "staged/g2/r1/t128/p3");
    f.type = BSRMV_FLOAT;
    f.order = BSRMV_ROW_MAJOR;
    picks(d, &f, "staged/g2/r1/t128/p3");
    f.v[PF_MEMSM] = 3350.0 / 132;
    picks(d, &f, "lane_block/g8/r1/t128/p0");
    /* float column-major blocks at bs 13 on few rows (bcsstk16 split: 376
     * block rows, 37 scalar rows an SM): the column stream, not a thread a
     * scalar row, which a large matrix gets */
    features_of(&f, 376, 20, 30, 13, BSRMV_FLOAT, BSRMV_COL_MAJOR, 50 * 1048576.0);
    picks(d, &f, "k3_large/g32/r1/t0/p1");
    features_of(&f, 400000, 20, 20, 13, BSRMV_FLOAT, BSRMV_COL_MAJOR, 50 * 1048576.0);
    picks(d, &f, "row_per_thread/g0/r1/t256/p8");
    /* short rows past the L2 (3 blocks, at most 8): on an H200 in a banded
     * order the lane-block kernel (8 lanes a row at bs 6, 4 at bs 4), in no
     * banded order the merge path, at double bs 8 the fragment stream (128
     * rows a slice banded, 64 not); the H100 keeps its rows (staged with 4
     * lanes a row at double bs 6) either way */
    features_of(&f, 200000, 3, 8, 6, BSRMV_DOUBLE, BSRMV_COL_MAJOR, 60 * 1048576.0);
    TU_CHECK(f.v[PF_SPREAD] < 0.7 && f.v[PF_L2] > 0.5, "banded short-row features");
    f.v[PF_MEMSM] = 4800.0 / 132;
    picks(d, &f, "lane_block/g8/r1/t128/p0");
    f.v[PF_MEMSM] = 3350.0 / 132;
    picks(d, &f, "staged/g4/r1/t128/p3");
    f.v[PF_MEMSM] = 4800.0 / 132;
    f.v[PF_SPREAD] = 0.9;
    picks(d, &f, "merge_path/g1/r1/t256/p64");
    f.v[PF_MEMSM] = 3350.0 / 132;
    picks(d, &f, "staged/g4/r1/t128/p3");
    f.v[PF_MEMSM] = 4800.0 / 132;
    f.bs = 8;
    picks(d, &f, "fragment/g32/r1/t256/p64");
    f.v[PF_SPREAD] = 0.2;
    picks(d, &f, "fragment/g32/r1/t256/p128");
    f.bs = 4;
    picks(d, &f, "lane_block/g4/r1/t128/p0");
    /* the same short rows on a matrix of few rows (fewer than an H200
     * holds in flight): more lanes a row, 16 where the longest row has
     * more than 8 blocks and the rows are below 16000, else 8 (at bs 2
     * below 12000 rows, at bs 3, 4 and float 8 below 50000) */
    features_of(&f, 5000, 3, 14, 3, BSRMV_DOUBLE, BSRMV_COL_MAJOR, 60 * 1048576.0);
    TU_CHECK(f.v[PF_L2] < 0.1 && f.v[PF_LENMAX] == 14 && f.v[PF_MAXMEAN] <= 8, "few short rows: features");
    bsrmv_gpu_config h100; /* these rows are the H200's: not on an H100's bandwidth per SM */
    TU_CHECK(plan_table_lookup(d, &f, NULL, NULL, &h100, NULL) && h100.kernel != BSRMV_GPU_LANE_BLOCK,
             "few short rows, H100: lane-block");
    f.v[PF_MEMSM] = 4800.0 / 132;
    picks(d, &f, "lane_block/g16/r1/t128/p0");
    f.bs = 6;
    f.type = BSRMV_FLOAT;
    picks(d, &f, "lane_block/g16/r1/t128/p0");
    f.bs = 8; /* in float; double bs 8 keeps its rows */
    picks(d, &f, "lane_block/g16/r1/t128/p0");
    f.bs = 2;
    picks(d, &f, "lane_block/g8/r1/t128/p0");
    features_of(&f, 5000, 3, 8, 4, BSRMV_DOUBLE, BSRMV_ROW_MAJOR, 60 * 1048576.0);
    f.v[PF_MEMSM] = 4800.0 / 132;
    picks(d, &f, "lane_block/g8/r1/t128/p0");
    features_of(&f, 30000, 3, 14, 3, BSRMV_DOUBLE, BSRMV_COL_MAJOR, 60 * 1048576.0);
    f.v[PF_MEMSM] = 4800.0 / 132;
    picks(d, &f, "lane_block/g8/r1/t128/p0");
    /* a stiffness matrix of even rows within the L2 at column-major bs
     * 6 (crystm01 promoted: 4875 rows of ~22 blocks): on an H100's
     * bandwidth per SM by-column in double and float, ahead of the learned
     * rows; on an H200's the vote of the nearest points first, which
     * agrees here; in row-major blocks the vote, the lane-block kernel
     * with 16 lanes a row (on crystm01 itself, H200, the vector stream 3%
     * and staged 7% behind it) */
    features_of(&f, 4875, 22, 27, 6, BSRMV_DOUBLE, BSRMV_COL_MAJOR, 50 * 1048576.0);
    TU_CHECK(f.v[PF_L2] < 1 && f.v[PF_MAXMEAN] < 2, "stiffness features");
    picks(d, &f, "by_column/g32/r1/t128/p0");
    f.type = BSRMV_FLOAT;
    picks(d, &f, "by_column/g32/r1/t128/p0");
    f.v[PF_MEMSM] = 4800.0 / 132;
    picks(d, &f, "by_column/g32/r1/t128/p0");
    f.v[PF_MEMSM] = 3350.0 / 132;
    f.type = BSRMV_DOUBLE;
    f.order = BSRMV_ROW_MAJOR;
    picks(d, &f, "lane_block/g16/r1/t128/p0");
    /* a scale-free graph of a few MB (20000 rows of 7 blocks, one of 565)
     * at bs 2: the merge path with 64-block units, the irregular rows
     * ahead of the vote; a tiny one (l2 below 0.04) goes to the vote */
    features_of(&f, 20000, 7, 565, 2, BSRMV_FLOAT, BSRMV_ROW_MAJOR, 60 * 1048576.0);
    f.v[PF_MEMSM] = 4800.0 / 132;
    TU_CHECK(f.v[PF_IRREGULAR] == 1 && f.v[PF_L2] >= 0.04 && f.v[PF_L2] < 1, "scale-free features");
    picks(d, &f, "merge_path/g1/r1/t256/p64");
    f.v[PF_L2] = 0.02;
    bsrmv_gpu_config tiny;
    TU_CHECK(plan_table_lookup(d, &f, NULL, NULL, &tiny, NULL) && tiny.kernel != BSRMV_GPU_MERGE_PATH,
             "tiny irregular matrix: the vote, not the irregular rows");
    /* a bs-12 grid past the L2: K2 with 4 thread groups, whatever the
     * learned rows say of smaller matrices */
    features_of(&f, 10648, 27, 27, 12, BSRMV_DOUBLE, BSRMV_COL_MAJOR, 60 * 1048576.0);
    f.v[PF_L2] = 6;
    picks(d, &f, "k2_medium/g4/r1/t0/p5");
    /* ... but the fragment stream where the longest row is 1.3x the mean
     * or more (bcsstk16 and bcsstk28 promoted), in float too where the
     * staged kernel, which the float rows try first, is not built for it */
    features_of(&f, 10648, 27, 45, 12, BSRMV_DOUBLE, BSRMV_COL_MAJOR, 60 * 1048576.0);
    f.v[PF_L2] = 6;
    TU_CHECK(f.v[PF_MAXMEAN] > 1.6 && f.v[PF_MAXMEAN] < 2, "maxmean %g", f.v[PF_MAXMEAN]);
    picks(d, &f, "fragment/g32/r1/t256/p14");
    f.type = BSRMV_FLOAT;
    f.v[PF_STAGED] = 0;
    picks(d, &f, "fragment/g32/r1/t256/p14");
    /* power-law rows, large: the lane-sequential merge path at bs 2 */
    features_of(&f, 1000000, 16, 4096, 2, BSRMV_DOUBLE, BSRMV_COL_MAJOR, 50 * 1048576.0);
    f.v[PF_L2] = 20;
    TU_CHECK(f.v[PF_IRREGULAR] == 1, "irregular");
    picks(d, &f, "merge_path/g1/r1/t256/p192");
    /* ... and at bs 24, both block orders: the wide row walk over
     * fragments; at bs 20 (no wide walk built) K3 over them */
    features_of(&f, 60000, 16, 4096, 24, BSRMV_DOUBLE, BSRMV_COL_MAJOR, 50 * 1048576.0);
    picks(d, &f, "fragment/g32/r1/t256/p14");
    f.order = BSRMV_ROW_MAJOR;
    picks(d, &f, "fragment/g32/r1/t256/p14");
    features_of(&f, 60000, 16, 4096, 20, BSRMV_DOUBLE, BSRMV_COL_MAJOR, 50 * 1048576.0);
    picks(d, &f, "fragment/g8/r1/t0/p20");
    /* uneven rows that are not irregular at bs 32 (as ca-GrQc promoted,
     * cv 1.43): rows of 1, 1, 1 and 13 blocks (cv 1.3): the walk; even
     * rows of the same length: plain K2 */
    {
        enum { MB = 4000 };
        static int64_t urp[MB + 1];
        for (int64_t i = 0; i < MB; ++i)
            urp[i + 1] = urp[i] + (i % 4 == 3 ? 13 : 1);
        plan_features_rows(&f, urp, MB, MB, 32, BSRMV_DOUBLE, BSRMV_DOUBLE, BSRMV_COL_MAJOR);
        plan_features_device(&f, 50 * 1048576.0, 3350, 132, 90);
        TU_CHECK(f.v[PF_CV] >= 0.9 && f.v[PF_IRREGULAR] == 0 && f.v[PF_ROWSHARE] < 1.5, "cv %g",
                 f.v[PF_CV]);
        picks(d, &f, "fragment/g32/r1/t256/p8");
        features_of(&f, MB, 4, 4, 32, BSRMV_DOUBLE, BSRMV_COL_MAJOR, 50 * 1048576.0);
        picks(d, &f, "k2_medium/g8/r1/t0/p1");
        /* moderately uneven long rows (8 and 24 blocks: cv 0.5, mean 16,
         * as ex31 or nasa2910): the walk at bs 24, where that was
         * measured, plain K2 at bs 32 */
        for (int64_t i = 0; i < 500; ++i)
            urp[i + 1] = urp[i] + (i % 2 ? 24 : 8);
        plan_features_rows(&f, urp, 500, 500, 24, BSRMV_DOUBLE, BSRMV_DOUBLE, BSRMV_COL_MAJOR);
        plan_features_device(&f, 50 * 1048576.0, 3350, 132, 90);
        TU_CHECK(fabs(f.v[PF_CV] - 0.5) < 1e-9 && f.v[PF_L2] < 2, "cv %g l2 %g", f.v[PF_CV], f.v[PF_L2]);
        picks(d, &f, "fragment/g32/r1/t256/p14");
        plan_features_rows(&f, urp, 500, 500, 32, BSRMV_DOUBLE, BSRMV_DOUBLE, BSRMV_COL_MAJOR);
        plan_features_device(&f, 50 * 1048576.0, 3350, 132, 90);
        picks(d, &f, "k2_medium/g8/r1/t0/p1");
    }
    /* a rectangular LP's rows at bs 32 (lp_ship04l promoted: 402 block
     * rows, the longest 84 blocks, 6380 blocks): one row holds more than
     * an SM's share, so the walk, not plain K2, though the rows' spread is
     * small */
    features_of(&f, 402, 16, 84, 32, BSRMV_DOUBLE, BSRMV_COL_MAJOR, 50 * 1048576.0);
    TU_CHECK(f.v[PF_ROWSHARE] >= 1 && f.v[PF_IRREGULAR] == 0 && f.v[PF_CV] < 0.45, "rowshare %g",
             f.v[PF_ROWSHARE]);
    picks(d, &f, "fragment/g32/r1/t256/p8");
    features_of(&f, 402 * 2, 16, 84, 32, BSRMV_DOUBLE, BSRMV_COL_MAJOR, 50 * 1048576.0);
    TU_CHECK(f.v[PF_ROWSHARE] < 1.5, "rowshare %g", f.v[PF_ROWSHARE]);
    picks(d, &f, "k2_medium/g8/r1/t0/p1");
    printf("test_plan_table: ok (%d rows in the built-in table)\n", d->n);
    return 0;
}
