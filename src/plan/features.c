/* The features of a matrix that the plan's table reads. */
#include "plan.h"

#include <math.h>
#include <string.h>

static const char *const names[PF_COUNT] = {
    "mean", "cv", "maxmean", "lenmax", "empty", "mb", "nnzb", "l2", "memsm", "rowsm", "staged", "irregular",
    "mixed", "rowshare", "spread",
};

const char *plan_feature_name(int i)
{
    return i >= 0 && i < PF_COUNT ? names[i] : "unknown";
}

void plan_features_rows(plan_features *f, const int64_t *row_ptr, int64_t mb, int64_t nb, int bs,
                        bsrmv_type type, bsrmv_type vtype, bsrmv_order order)
{
    memset(f, 0, sizeof *f);
    f->bs = bs;
    f->type = type;
    f->order = order;
    int64_t mx = 0, empty = 0;
    double sum = 0, sq = 0;
    for (int64_t i = 0; i < mb; ++i) {
        const int64_t l = row_ptr[i + 1] - row_ptr[i];
        mx = l > mx ? l : mx;
        empty += l == 0;
        sum += (double)l;
        sq += (double)l * (double)l;
    }
    const double mean = mb ? sum / (double)mb : 0;
    const double sd = mb ? sqrt(fmax(0.0, sq / (double)mb - mean * mean)) : 0;
    const int64_t nnzb = mb ? row_ptr[mb] - row_ptr[0] : 0;
    const double ts = (double)bsrmv_type_size(type), vs = (double)bsrmv_type_size(vtype);
    f->v[PF_MEAN] = mean;
    f->v[PF_CV] = mean > 0 ? sd / mean : 0;
    f->v[PF_MAXMEAN] = mean > 0 ? (double)mx / mean : 0;
    f->v[PF_LENMAX] = (double)mx;
    f->v[PF_EMPTY] = mb ? (double)empty / (double)mb : 0;
    f->v[PF_MB] = (double)mb;
    f->v[PF_NNZB] = (double)nnzb;
    /* the bytes of bsrmv_matrix_spmv_bytes, kept in l2 until the device's
     * size divides them */
    f->v[PF_L2] = (double)nnzb * bs * bs * ts + (double)nnzb * 4 + (double)(mb + 1) * 8 + (double)nb * bs * vs +
                  (double)mb * bs * vs;
    f->v[PF_IRREGULAR] = mx >= 256 && (double)mx > 16.0 * mean;
    f->v[PF_MIXED] = vtype != type;
}

int plan_features_spread(plan_features *f, const int64_t *row_ptr, int64_t mb, int64_t nb, plan_cols_fn cols,
                         void *ctx)
{
    const int64_t nnzb = mb ? row_ptr[mb] - row_ptr[0] : 0;
    f->v[PF_SPREAD] = 0;
    if (nnzb <= 0)
        return 0;
    const int all = nnzb <= (int64_t)PLAN_SPREAD_RUNS * PLAN_SPREAD_RUN;
    const int runs = all ? 1 : PLAN_SPREAD_RUNS, run = all ? (int)nnzb : PLAN_SPREAD_RUN;
    int32_t c[PLAN_SPREAD_RUNS * PLAN_SPREAD_RUN];
    double sum = 0;
    int64_t row = 0;
    for (int r = 0; r < runs; ++r) {
        /* in 64 bits: r x (nnzb - run) may pass 2^63 only past 1e17 blocks */
        const int64_t first = row_ptr[0] + (runs > 1 ? (int64_t)r * ((nnzb - run) / (runs - 1)) : 0);
        const int e = cols(ctx, first, run, c);
        if (e)
            return e;
        /* the runs go forward: the row of their first block by a search
         * from the last one */
        int64_t lo = row, hi = mb - 1;
        while (lo < hi) {
            const int64_t mid = lo + (hi - lo + 1) / 2;
            if (row_ptr[mid] <= first)
                lo = mid;
            else
                hi = mid - 1;
        }
        row = lo;
        for (int k = 0; k < run; ++k) {
            while (row_ptr[row + 1] <= first + k)
                ++row;
            const double d = fabs((double)c[k] - (double)row);
            sum += log2(1.0 + d);
        }
    }
    f->v[PF_SPREAD] = sum / ((double)runs * run) / log2(1.0 + (double)(nb > 0 ? nb : 1));
    return 0;
}

void plan_features_device(plan_features *f, double l2_bytes, double dram_gbps, int sms, int cc)
{
    if (l2_bytes > 0)
        f->v[PF_L2] /= l2_bytes;
    f->v[PF_MEMSM] = sms > 0 ? dram_gbps / sms : 0;
    f->v[PF_ROWSM] = sms > 0 ? f->v[PF_MB] * f->bs / sms : 0;
    f->v[PF_STAGED] = cc >= 90;
    f->v[PF_ROWSHARE] = sms > 0 && f->v[PF_NNZB] > 0 ? f->v[PF_LENMAX] * sms / f->v[PF_NNZB] : 0;
}
