/* The host vector operations of the solvers for one value type: included by
 * cpu.c with T (float, double or their complex forms), SUF (a name suffix)
 * and, for the complex types, CPLX defined.  Each op works on the block rows
 * [r0, r1) of one thread, adds its dot products into red[] (double; a
 * complex dot takes two slots, re and im), and touches every vector once:
 * the M-applications run on the block just written, still in L1.  For the
 * real types the macros below reduce to the plain real expressions, and
 * the imaginary sums are dead code. */

#define CAT_(a, b) a##_##b
#define CAT(a, b) CAT_(a, b)
#define F(name) CAT(name, SUF)

#ifdef CPLX
#define NP 2
#define DT double _Complex
#define CJ(v) conj(v)
#define RE(v) creal(v)
#define IM(v) cimag(v)
/* __builtin_complex: glibc defines CMPLX for GCC only, not for clang */
#define SCAL(s) ((T)__builtin_complex((s).re, (s).im))
#else
#define NP 1
#define DT double
#define CJ(v) (v)
#define RE(v) (v)
#define IM(v) 0.0
#define SCAL(s) ((T)(s).re)
#endif
/* conj(a) b in double */
#define DOT(a, b) (CJ((DT)(a)) * (DT)(b))
/* |a|^2 in double */
#define NORM2(a) RE(DOT(a, a))

/* z = Pinv_i y for one block (column-major inverse); constant bs lets the
 * compiler unroll. */
static inline __attribute__((always_inline)) void F(apply_n)(int bs, const T *restrict pi,
                                                             const T *restrict y,
                                                             T *restrict z)
{
    for (int r = 0; r < bs; r++)
        z[r] = 0;
    for (int c = 0; c < bs; c++) {
        const T yc = y[c];
        for (int r = 0; r < bs; r++)
            z[r] += pi[(size_t)c * bs + r] * yc;
    }
}

#define APPLY_CASE(B)                                                          \
    case B:                                                                    \
        F(apply_n)(B, pi, y, z);                                               \
        break;
static inline void F(apply)(int bs, const T *pi, const T *y, T *z)
{
    switch (bs) {
        APPLY_CASE(1) APPLY_CASE(2) APPLY_CASE(3) APPLY_CASE(4)
        APPLY_CASE(5) APPLY_CASE(6) APPLY_CASE(7) APPLY_CASE(8)
    default:
        F(apply_n)(bs, pi, y, z);
    }
}
#undef APPLY_CASE

/* z[block i] = M y[block i] for the rows [r0, r1) */
static inline void F(apply_rows)(const cpu_op *o, int64_t r0, int64_t r1, const T *y, T *z)
{
    const int bs = o->bs;
    const T *inv = o->inv;
    for (int64_t i = r0; i < r1; i++)
        F(apply)(bs, inv + (size_t)i * bs * bs, y + i * bs, z + i * bs);
}

static void F(op_zero)(const cpu_op *o, int64_t r0, int64_t r1, double *red, void *scratch)
{
    T *x = o->v[0];
    for (int64_t e = r0 * o->bs; e < r1 * o->bs; e++)
        x[e] = 0;
}

static void F(op_copy)(const cpu_op *o, int64_t r0, int64_t r1, double *red, void *scratch)
{
    const T *x = o->v[0];
    T *y = o->v[1];
    for (int64_t e = r0 * o->bs; e < r1 * o->bs; e++)
        y[e] = x[e];
}

static void F(op_precond)(const cpu_op *o, int64_t r0, int64_t r1, double *red, void *scratch)
{
    F(apply_rows)(o, r0, r1, o->v[0], o->v[1]);
}

/* red[0] (and red[1] for complex) += a . b over the entries [e0, e1) */
static inline void F(dot_range)(const T *a, const T *b, int64_t e0, int64_t e1, double *red)
{
    double s = 0, si = 0;
#pragma omp simd reduction(+ : s, si)
    for (int64_t e = e0; e < e1; e++) {
        const DT d = DOT(a[e], b[e]);
        s += RE(d);
        si += IM(d);
    }
    red[0] += s;
    if (NP == 2)
        red[1] += si;
}

/* red[i] += a_i . b_i for the k pairs */
static void F(op_dots)(const cpu_op *o, int64_t r0, int64_t r1, double *red, void *scratch)
{
    for (int i = 0; i < o->k; i++)
        F(dot_range)(o->v[i], o->v[SV_MAX_DOTS + i], r0 * o->bs, r1 * o->bs, red + NP * i);
}

/* GMRES dots red[l] += V_l . u, chunk by chunk so that u is read from
 * memory once */
static void F(op_mdot)(const cpu_op *o, int64_t r0, int64_t r1, double *red, void *scratch)
{
    const T *V = o->v[0], *u = o->v[1];
    const int64_t end = r1 * o->bs;
    for (int64_t e0 = r0 * o->bs; e0 < end; e0 += SV_CHUNK) {
        const int64_t e1 = e0 + SV_CHUNK < end ? e0 + SV_CHUNK : end;
        for (int l = 0; l < o->k; l++)
            F(dot_range)(V + (size_t)l * o->n, u, e0, e1, red + NP * l);
    }
}

static void F(op_axpy)(const cpu_op *o, int64_t r0, int64_t r1, double *red, void *scratch)
{
    const T a = SCAL(o->s[0]), *x = o->v[0];
    T *y = o->v[1];
    for (int64_t e = r0 * o->bs; e < r1 * o->bs; e++)
        y[e] += a * x[e];
}

static void F(op_xpby)(const cpu_op *o, int64_t r0, int64_t r1, double *red, void *scratch)
{
    const T b = SCAL(o->s[0]), *z = o->v[0];
    T *p = o->v[1];
    for (int64_t e = r0 * o->bs; e < r1 * o->bs; e++)
        p[e] = z[e] + b * p[e];
}

static void F(op_residual)(const cpu_op *o, int64_t r0, int64_t r1, double *red, void *scratch)
{
    const T *b = o->v[0];
    T *r = o->v[1];
    double s = 0;
#pragma omp simd reduction(+ : s)
    for (int64_t e = r0 * o->bs; e < r1 * o->bs; e++) {
        const T v = b[e] - r[e];
        r[e] = v;
        s += NORM2(v);
    }
    red[0] += s;
}

/* x += a p; r -= a q; z = M r; red = {Re r.z, r.r}.  Block row by block
 * row, so z is computed from the r just written. */
static void F(op_cg_step)(const cpu_op *o, int64_t r0, int64_t r1, double *red, void *scratch)
{
    const int bs = o->bs;
    const T a = SCAL(o->s[0]);
    T *x = o->v[0], *r = o->v[2], *z = o->v[4];
    const T *p = o->v[1], *q = o->v[3];
    double rz = 0, rr = 0;
    for (int64_t i = r0; i < r1; i++) {
        const int64_t e0 = i * bs, e1 = e0 + bs;
        for (int64_t e = e0; e < e1; e++) {
            x[e] += a * p[e];
            r[e] -= a * q[e];
            rr += NORM2(r[e]);
        }
        if (o->inv) {
            F(apply)(bs, (const T *)o->inv + (size_t)i * bs * bs, r + e0, z + e0);
            for (int64_t e = e0; e < e1; e++)
                rz += RE(DOT(r[e], z[e]));
        }
    }
    red[0] += o->inv ? rz : rr;
    red[1] += rr;
}

/* p = r + beta (p - omega v); phat = M p */
static void F(op_bicg_p)(const cpu_op *o, int64_t r0, int64_t r1, double *red, void *scratch)
{
    const T beta = SCAL(o->s[0]), omega = SCAL(o->s[1]), *r = o->v[0], *v = o->v[2];
    T *p = o->v[1];
    for (int64_t e = r0 * o->bs; e < r1 * o->bs; e++)
        p[e] = r[e] + beta * (p[e] - omega * v[e]);
    if (o->inv)
        F(apply_rows)(o, r0, r1, p, o->v[3]);
}

/* s = r - alpha v (into r); shat = M s */
static void F(op_bicg_s)(const cpu_op *o, int64_t r0, int64_t r1, double *red, void *scratch)
{
    const T alpha = SCAL(o->s[0]), *v = o->v[1];
    T *r = o->v[0];
    for (int64_t e = r0 * o->bs; e < r1 * o->bs; e++)
        r[e] -= alpha * v[e];
    if (o->inv)
        F(apply_rows)(o, r0, r1, r, o->v[2]);
}

/* x += alpha phat + omega shat; r = s - omega t (r holds s);
 * red = {r.r, r0.r} (r0.r: NP slots) */
static void F(op_bicg_x)(const cpu_op *o, int64_t r0, int64_t r1, double *red, void *scratch)
{
    const T alpha = SCAL(o->s[0]), omega = SCAL(o->s[1]);
    T *x = o->v[0], *r = o->v[3];
    const T *ph = o->v[1], *sh = o->v[2], *t = o->v[4], *rs = o->v[5];
    double rr = 0, r0r = 0, r0ri = 0;
#pragma omp simd reduction(+ : rr, r0r, r0ri)
    for (int64_t e = r0 * o->bs; e < r1 * o->bs; e++) {
        x[e] += alpha * ph[e] + omega * sh[e];
        const T v = r[e] - omega * t[e];
        r[e] = v;
        rr += NORM2(v);
        const DT d = DOT(rs[e], v);
        r0r += RE(d);
        r0ri += IM(d);
    }
    red[0] += rr;
    red[1] += r0r;
    if (NP == 2)
        red[2] += r0ri;
}

/* u -= sum_l c_l V_l; red[0] = u.u, chunk by chunk (u stays in L1) */
static void F(op_lincomb)(const cpu_op *o, int64_t r0, int64_t r1, double *red, void *scratch)
{
    const T *V = o->v[0];
    T *u = o->v[1];
    const int64_t end = r1 * o->bs;
    double s = 0;
    for (int64_t e0 = r0 * o->bs; e0 < end; e0 += SV_CHUNK) {
        const int64_t e1 = e0 + SV_CHUNK < end ? e0 + SV_CHUNK : end;
        for (int l = 0; l < o->k; l++) {
            const T *vl = V + (size_t)l * o->n, c = SCAL(o->c[l]);
            for (int64_t e = e0; e < e1; e++)
                u[e] -= c * vl[e];
        }
        for (int64_t e = e0; e < e1; e++)
            s += NORM2(u[e]);
    }
    red[0] += s;
}

/* x += M (sum_l c_l V_l), a block row at a time through scratch */
static void F(op_gmres_x)(const cpu_op *o, int64_t r0, int64_t r1, double *red, void *scratch)
{
    const int bs = o->bs;
    const T *V = o->v[0];
    T *x = o->v[1], *y = scratch, *z = y + bs;
    for (int64_t i = r0; i < r1; i++) {
        const int64_t e0 = i * bs;
        for (int r = 0; r < bs; r++)
            y[r] = 0;
        for (int l = 0; l < o->k; l++) {
            const T *vl = V + (size_t)l * o->n + e0, c = SCAL(o->c[l]);
            for (int r = 0; r < bs; r++)
                y[r] += c * vl[r];
        }
        const T *add = y;
        if (o->inv) {
            F(apply)(bs, (const T *)o->inv + (size_t)i * bs * bs, y, z);
            add = z;
        }
        for (int r = 0; r < bs; r++)
            x[e0 + r] += add[r];
    }
}

static const cpu_kernels F(kernels) = {
    F(op_zero),     F(op_copy),    F(op_precond), F(op_dots),    F(op_mdot),
    F(op_axpy),     F(op_xpby),    F(op_residual), F(op_cg_step), F(op_bicg_p),
    F(op_bicg_s),   F(op_bicg_x),  F(op_lincomb),  F(op_gmres_x),
};

#undef F
#undef CAT
#undef CAT_
#undef NP
#undef DT
#undef CJ
#undef RE
#undef IM
#undef SCAL
#undef DOT
#undef NORM2
