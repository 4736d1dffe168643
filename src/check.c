/* Structure check of BSR index arrays: the first broken rule, and where. */
#include "internal.h"

#include <stddef.h>

const char *bsrmv_rule_string(bsrmv_rule r)
{
    switch (r) {
    case BSRMV_RULE_OK: return "ok";
    case BSRMV_RULE_SIZES: return "sizes out of range";
    case BSRMV_RULE_ROW_PTR_START: return "row_ptr[0] is not 0";
    case BSRMV_RULE_ROW_PTR_ORDER: return "row_ptr decreases";
    case BSRMV_RULE_ROW_PTR_END: return "row_ptr[mb] is not nnzb";
    case BSRMV_RULE_COL_RANGE: return "col_idx out of range";
    case BSRMV_RULE_COL_ORDER: return "col_idx not sorted within a block row";
    case BSRMV_RULE_COL_DUPLICATE: return "col_idx repeated within a block row";
    }
    return "unknown rule";
}

static bsrmv_status broken(bsrmv_check_report *rep, bsrmv_rule rule, int64_t row,
                           int64_t pos, int64_t value)
{
    if (rep) {
        rep->rule = rule;
        rep->row = row;
        rep->pos = pos;
    }
    if (row >= 0)
        return bsrmv_fail(BSRMV_ERR_STRUCTURE,
                          "BSR structure: %s at block row %lld (position %lld, value %lld)",
                          bsrmv_rule_string(rule), (long long)row, (long long)pos,
                          (long long)value);
    return bsrmv_fail(BSRMV_ERR_STRUCTURE, "BSR structure: %s (value %lld)",
                      bsrmv_rule_string(rule), (long long)value);
}

/* One of rp64, rp32 is the row_ptr (per-entry width switch: a check
 * streams the arrays once, the branch is always predicted). */
static bsrmv_status check(int64_t mb, int64_t nb, int bs, int64_t nnzb, const int64_t *rp64,
                          const int32_t *rp32, const int32_t *col_idx, bsrmv_check_report *rep)
{
    if (rep) {
        rep->rule = BSRMV_RULE_OK;
        rep->row = -1;
        rep->pos = -1;
    }
    int64_t scratch;
    /* Sizes first: every later index computation relies on them. */
    if (bs < 1)
        return broken(rep, BSRMV_RULE_SIZES, -1, -1, bs);
    if (mb < 0 || !bsrmv_mul64(mb, bs, &scratch))
        return broken(rep, BSRMV_RULE_SIZES, -1, -1, mb);
    if (nb < 0 || nb > INT32_MAX || !bsrmv_mul64(nb, bs, &scratch))
        return broken(rep, BSRMV_RULE_SIZES, -1, -1, nb);
    if (nnzb < 0 || !bsrmv_mul64(nnzb, (int64_t)bs * bs, &scratch))
        return broken(rep, BSRMV_RULE_SIZES, -1, -1, nnzb);
    if ((!rp64 && !rp32) || (nnzb > 0 && !col_idx))
        return bsrmv_fail(BSRMV_ERR_ARGUMENT, "bsrmv_check_bsr: NULL index array");
#define RP(i) bsrmv_rp_at(rp64, rp32, i)
    if (RP(0) != 0)
        return broken(rep, BSRMV_RULE_ROW_PTR_START, 0, 0, RP(0));
    for (int64_t i = 0; i < mb; i++)
        if (RP(i + 1) < RP(i))
            return broken(rep, BSRMV_RULE_ROW_PTR_ORDER, i, i + 1, RP(i + 1));
    if (RP(mb) != nnzb)
        return broken(rep, BSRMV_RULE_ROW_PTR_END, mb, mb, RP(mb));

    for (int64_t i = 0; i < mb; i++) {
        const int64_t k0 = RP(i), k1 = RP(i + 1);
        for (int64_t k = k0; k < k1; k++) {
            int32_t c = col_idx[k];
            if (c < 0 || c >= nb)
                return broken(rep, BSRMV_RULE_COL_RANGE, i, k, c);
            if (k > k0) {
                if (c == col_idx[k - 1])
                    return broken(rep, BSRMV_RULE_COL_DUPLICATE, i, k, c);
                if (c < col_idx[k - 1])
                    return broken(rep, BSRMV_RULE_COL_ORDER, i, k, c);
            }
        }
    }
    return BSRMV_SUCCESS;
#undef RP
}

bsrmv_status bsrmv_check_bsr(int64_t mb, int64_t nb, int bs, int64_t nnzb,
                             const int64_t *row_ptr, const int32_t *col_idx,
                             bsrmv_check_report *rep)
{
    return check(mb, nb, bs, nnzb, row_ptr, NULL, col_idx, rep);
}

bsrmv_status bsrmv_check_bsr_i32(int64_t mb, int64_t nb, int bs, int64_t nnzb,
                                 const int32_t *row_ptr, const int32_t *col_idx,
                                 bsrmv_check_report *rep)
{
    return check(mb, nb, bs, nnzb, NULL, row_ptr, col_idx, rep);
}

bool bsrmv_ranges_overlap(const void *a, size_t abytes, const void *b, size_t bbytes)
{
    if (!a || !b || abytes == 0 || bbytes == 0)
        return false;
    uintptr_t a0 = (uintptr_t)a, b0 = (uintptr_t)b;
    /* a0 < b0 + bbytes, written so that a range ending at the top of the
     * address space does not wrap. */
    return a0 - b0 < bbytes || b0 - a0 < abytes;
}

bsrmv_status bsrmv_check_disjoint(const char *who, const void *x, int64_t n_x, const void *y,
                                  int64_t n_y, size_t vs)
{
    size_t xb, yb;
    if (!bsrmv_bytes(n_x, vs, &xb) || !bsrmv_bytes(n_y, vs, &yb))
        return bsrmv_fail(BSRMV_ERR_OVERFLOW, "%s: vector sizes overflow", who);
    if (bsrmv_ranges_overlap(x, xb, y, yb))
        return bsrmv_fail(BSRMV_ERR_ARGUMENT,
                          "%s: the input [%p, +%zu bytes) and the output [%p, +%zu bytes) "
                          "overlap; they must be separate arrays",
                          who, x, xb, y, yb);
    return BSRMV_SUCCESS;
}
