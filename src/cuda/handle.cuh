/* The device matrix handle and what the backend's files share about it:
 * the launch of one configuration (launch.cuh), the candidates
 * (candidates.cu), the plan (plan.cu).  Not installed. */
#ifndef BSRMV_CUDA_HANDLE_CUH
#define BSRMV_CUDA_HANDLE_CUH

#include "common.cuh"
#include "errors.cuh"
#include "schedule.h"

extern "C" {
#include "plan/plan.h"
}

struct bsrmv_gpu_matrix {
    int device;
    int64_t mb, nb, nnzb;
    int bs;
    bsrmv_type type;  /* of val                                  */
    bsrmv_type vtype; /* of x, y and the sums (the host matrix's) */
    bsrmv_order order;
    int64_t *row_ptr;
    int32_t *col_idx;
    void *val;
    bool owns;
    bool sym;  /* symmetric storage: only the SYM kernels apply          */
    bool herm; /* ... Hermitian (complex values): A(J,I) = A(I,J)^H      */
    /* Symmetric storage whose full storage fits the L2: the
     * full storage too (sym_full_copy in matrix.cu), which the plan's own
     * choice runs (use_full); a configuration set by hand or by the
     * measured choice runs on the symmetric arrays. */
    bsrmv_gpu_matrix *full;
    bool use_full;
    size_t dev_bytes;
    /* the plan: computed once, when the handle is made */
    int64_t *h_row_ptr; /* host copy: the balanced kernels' work units */
    int64_t len_min, len_max, empty;
    double len_mean, len_std;
    int sms, cc;
    size_t l2, smem_optin;
    plan_features feat;
    bsrmv_gpu_config cfg;
    bsrmv_gpu_config short_cfg; /* the segmented scheme's short rows */
    int from_tune;
    int table_row; /* the row of the table that chose cfg (-1: none) */
    /* work units of a balanced cfg (k_balanced.cu); sched_for says which */
    bsrmv_cuda::Schedule sched;
    bsrmv_gpu_config sched_for;
    void *sched_mem;
    size_t sched_bytes;
    /* bsrmv_gpu_spmm: the row-major copy of a column-major X, grown on
     * demand (spmm.cu) */
    void *mm_scratch;
    size_t mm_scratch_bytes;
};

namespace bsrmv_cuda {

/* Whether op(A) of symmetric or Hermitian storage is conj(A) (complex
 * values): op C of symmetric storage (A^H = conj(A^T) = conj(A)), op T of
 * Hermitian storage (A^T = conj(A^H) = conj(A)).  The other ops are A. */
static inline bool sym_conj_a(const bsrmv_gpu_matrix *m, bsrmv_op op)
{
    return bsrmv_type_is_complex(m->type) && op == (m->herm ? BSRMV_OP_T : BSRMV_OP_C);
}

static inline bool is_balanced(bsrmv_gpu_kernel k)
{
    return k == BSRMV_GPU_SEGMENTED || k == BSRMV_GPU_MERGE_PATH || k == BSRMV_GPU_FRAGMENT;
}

/* Whether c's kernel is instantiated for the matrix (a dry launch). */
bool cfg_built(const bsrmv_gpu_matrix *m, const bsrmv_gpu_config &c);
/* Every configuration that applies, up to max into out; returns the count.
 * The plan's order first (plan_rank), then the others. */
int build_candidates(const bsrmv_gpu_matrix *m, bsrmv_gpu_config *out, int max);

/* plan.cu: features and the table's choice, with the host row_ptr; the
 * work units of a balanced configuration; the measured choice. */
/* h_col_idx: the host col_idx, or NULL: a sample is read from the device */
bsrmv_status plan_analyse(bsrmv_gpu_matrix *m, const int64_t *h_row_ptr, const int32_t *h_col_idx);
bsrmv_status plan_choose(bsrmv_gpu_matrix *m);
/* The built configurations in the order the plan tries them, plan_choose's
 * first: up to max into out; returns the count. */
int plan_rank(const bsrmv_gpu_matrix *m, bsrmv_gpu_config *out, int max);
bsrmv_status plan_set(bsrmv_gpu_matrix *m, const bsrmv_gpu_config &c);
void plan_free(bsrmv_gpu_matrix *m);
/* c with work units small enough that the matrix fills the device (the
 * lane-sequential merge path and the warp kernels over fragments; c
 * itself for other kernels and matrices of many units). */
bsrmv_gpu_config plan_fit_units(const bsrmv_gpu_matrix *m, bsrmv_gpu_config c);

} // namespace bsrmv_cuda

#endif
