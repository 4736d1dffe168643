/* Plane structures for `bsrmv bridge`: nodes, bar and frame members,
 * supports and loads, the suspension-bridge generator, the stiffness matrix
 * assembled straight into BSR (one block row per node), and a dense LU
 * reference solve.  Units are SI throughout: m, N, Pa, kg.
 *
 *   bridge_model.c     the model container, supports, loads
 *   bridge_geometry.c  the parametric suspension bridge
 *   bridge_assemble.c  element stiffness in global axes, BSR assembly
 *   bridge_dense.c     dense LU with partial pivoting (small checks)
 */
#ifndef BSRMV_TOOLS_BRIDGE_MODEL_H
#define BSRMV_TOOLS_BRIDGE_MODEL_H

#include "bsrmv.h"
#include "bsrmv_bench.h"

#include <stdint.h>

/* Member kinds; each has its own section. */
enum bridge_part {
    BRIDGE_CABLE,  /* main cable                              */
    BRIDGE_HANGER, /* vertical suspender from cable to deck   */
    BRIDGE_CHORD,  /* deck truss top and bottom chords        */
    BRIDGE_WEB,    /* deck truss verticals and diagonals      */
    BRIDGE_TOWER,  /* tower legs                              */
    BRIDGE_BRACE,  /* tower struts, diagonals and saddle      */
    BRIDGE_N_PARTS
};

/* What a node is, for reports and the picture. */
enum bridge_role {
    BRIDGE_DECK_BOTTOM,
    BRIDGE_DECK_TOP,
    BRIDGE_CABLE_NODE,
    BRIDGE_TOWER_NODE,
    BRIDGE_ANCHOR
};

#define BRIDGE_GRAVITY 9.81 /* m/s^2 */

/* Supports: bits of bridge_model.fixed (zero displacement of that dof). */
#define BRIDGE_FIX_U 1u /* horizontal      */
#define BRIDGE_FIX_V 2u /* vertical        */
#define BRIDGE_FIX_R 4u /* rotation (bs 3) */

struct bridge_section {
    double E;   /* Young's modulus, Pa                                  */
    double A;   /* cross-section area, m^2                              */
    double I;   /* second moment of area, m^4 (frame members)           */
    double rho; /* density, kg/m^3 (self-weight)                        */
    int frame;  /* 1: Euler-Bernoulli frame element in a bs 3 model;
                 * 0: pin-jointed bar (always so in a bs 2 model)       */
};

struct bridge_model {
    int bs; /* 2: u, v per node; 3: u, v, theta       */
    int64_t n_nodes, n_members;
    double *x, *y;   /* node coordinates, m                    */
    uint8_t *fixed;  /* supports per node, BRIDGE_FIX_* bits   */
    uint8_t *role;   /* enum bridge_role per node              */
    int32_t *end[2]; /* member end nodes                       */
    uint8_t *part;   /* enum bridge_part per member            */
    /* Axial force each member already carries in the dead-load state, N
     * (tension > 0; 0 when added).  It adds the geometric ("string")
     * stiffness T/L across the member: what holds a cable in shape
     * against loads its parabola is not funicular for. */
    double *tension;
    struct bridge_section sec[BRIDGE_N_PARTS];
    /* Constrained dofs: fixed, plus (bs 3) the rotation of every node that
     * no frame member touches, which would otherwise have no stiffness.
     * Set by bridge_model_finish. */
    uint8_t *cons;
    /* Generated bridges: deck from deck_x0 to deck_x1, main span between
     * the tower centres main_x0, main_x1 (m). */
    double deck_x0, deck_x1, main_x0, main_x1;
    /* Dead load of the roadway (slab, floor system: not members), N per m
     * of deck, part of the self-weight; 0 for hand-built models. */
    double roadway;
    int64_t cap_nodes, cap_members; /* allocated room */
};

/* Message of the last failing bridge_* call (one thread at a time). */
const char *bridge_last_error(void);
#if defined(__GNUC__)
#define BRIDGE_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define BRIDGE_PRINTF(f, a)
#endif
/* Records a message for bridge_last_error() and returns -1. */
int bridge_fail(const char *fmt, ...) BRIDGE_PRINTF(1, 2);

/* ---- bridge_model.c ---------------------------------------------------- */

/* An empty model with bs 2 or 3 and room for the given counts (it grows
 * as nodes and members are added).  0 on success, -1 on failure. */
int bridge_model_init(struct bridge_model *m, int bs, int64_t nodes, int64_t members);
void bridge_model_free(struct bridge_model *m);

/* Index of the new node, or -1 (out of memory, too many nodes). */
int64_t bridge_add_node(struct bridge_model *m, double x, double y, unsigned fixed,
                        enum bridge_role role);
/* 0, or -1 (out of memory, bad node index, a == b, zero length). */
int bridge_add_member(struct bridge_model *m, int64_t a, int64_t b, enum bridge_part part);

/* Computes cons[] once every node and member is in (0, or -1). */
int bridge_model_finish(struct bridge_model *m);

/* Number of unknowns, n_nodes * bs. */
int64_t bridge_unknowns(const struct bridge_model *m);

/* Length and direction cosines of a member. */
double bridge_member_length(const struct bridge_model *m, int64_t k, double *c, double *s);

/* f -= weight: gravity g (m/s^2) on every member, half its weight lumped
 * to each end node. */
void bridge_add_gravity(const struct bridge_model *m, double g, double *f);

/* f -= q (N/m, downward) on the deck top chord between x0 and x1, lumped
 * to the chord nodes with the load's resultant and moment kept. */
void bridge_add_deck_load(const struct bridge_model *m, double q, double x0, double x1, double *f);

/* Zeroes f at the constrained dofs (they are held at zero displacement). */
void bridge_zero_constrained(const struct bridge_model *m, double *f);

/* Moving traffic: the stretch of deck `width` m long that case j of `cases`
 * loads, moved in equal steps from the left end of the deck (j = 0) to the
 * right one (j = cases - 1; one case: the middle).  ext[] gets x0, x1. */
void bridge_case_extent(const struct bridge_model *m, double width, int j, int cases,
                        double ext[2]);

/* F (n x cases, column j at F + j*ld, ld >= unknowns) = self-weight
 * (gravity and the roadway) + traffic q (N/m) on case j's stretch, zeroed
 * at the constrained dofs: the right-hand sides of the load cases. */
void bridge_load_cases(const struct bridge_model *m, double q, double width, int cases, double *F,
                       int64_t ld);

/* ---- bridge_geometry.c ------------------------------------------------- */

struct bridge_params {
    int bs;             /* 2: truss model, 3: frame model             */
    int64_t segments;   /* deck panels over the whole deck (>= 6)     */
    double panel;       /* panel length, m                            */
    double depth;       /* deck truss depth, m                        */
    double deck_height; /* deck bottom chord above the tower bases, m */
    double roadway;     /* roadway dead load, N/m (>= 0)             */
};

/* Golden Gate-like defaults (one cable plane): 130 panels of 15.24 m, a
 * roadway of 90 kN/m. */
void bridge_default_params(struct bridge_params *p, int bs);

/* Builds the suspension bridge into m (initialised here; free it with
 * bridge_model_free).  0, or -1 with bridge_last_error() set. */
int bridge_generate(struct bridge_model *m, const struct bridge_params *p);

/* ---- bridge_assemble.c ------------------------------------------------- */

/* Global-axes stiffness block of member k coupling end `row` to end `col`
 * (0 or 1): bs x bs, column-major. */
void bridge_member_block(const struct bridge_model *m, int64_t k, int row, int col, double *blk);

/* The assembled stiffness matrix: BSR arrays owned here, K wraps them. */
struct bridge_matrix {
    bsrmv_matrix *K;
    int64_t *row_ptr;
    int32_t *col_idx;
    double *val;
};

/* K, block row i = node i, column-major double blocks; the rows and columns
 * of constrained dofs are replaced by those of the identity, so K stays
 * symmetric positive definite when the structure is stable.  0 or -1. */
int bridge_assemble(const struct bridge_model *m, struct bridge_matrix *out);
void bridge_matrix_free(struct bridge_matrix *km);

/* ---- bridge_dense.c ---------------------------------------------------- */

/* Largest system bridge_dense_solve accepts (its n*n doubles). */
#define BRIDGE_DENSE_MAX 3000

/* Solves K u = f by dense LU with partial pivoting (n = rows of K <=
 * BRIDGE_DENSE_MAX).  0, or -1 (too large, out of memory, singular). */
int bridge_dense_solve(const bsrmv_matrix *K, const double *f, double *u);

#endif
