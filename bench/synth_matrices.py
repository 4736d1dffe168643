#!/usr/bin/env python3
"""Generated sparsity patterns of kinds the users' matrices have and
../shared/matrices has few of: unstructured 2D and 3D meshes in good and
poor node orders, higher-order elements, meshless neighbour graphs, road
networks, circuits with global nodes, saddle-point (KKT) systems, chemical
process flowsheets, scale-free graphs.  Written as Matrix Market pattern
files (DIR/syn_*.mtx.gz), the same bytes on every run (fixed seeds), for
bench/plan_data.sh (MATRICES=DIR) and bench/plan_table.py (--matrices
../shared/matrices:DIR).

  bench/synth_matrices.py DIR
"""
import gzip
import os
import sys
import zlib

import numpy as np
import scipy.sparse as sp
from scipy.spatial import Delaunay, cKDTree


def sym(a):
    """The pattern of a + a^T with the diagonal."""
    a = sp.csr_matrix(a)
    n = a.shape[0]
    a = (a + a.T + sp.identity(n, format="csr")).tocsr()
    a.data[:] = 1
    return a


def simplices_graph(n, simp):
    """Nodes joined where they share a simplex (P1 element connectivity)."""
    k = simp.shape[1]
    r = np.repeat(simp, k, axis=1).ravel()
    c = np.tile(simp, (1, k)).ravel()
    return sym(sp.csr_matrix((np.ones(len(r)), (r, c)), shape=(n, n)))


def morton_order(pts):
    """A space-filling-curve order of the points (what mesh generators and
    partitioners leave): interleaved bits of the quantised coordinates."""
    q = ((pts - pts.min(0)) / (np.ptp(pts, 0) + 1e-12) * 1023).astype(np.int64)
    key = np.zeros(len(pts), np.int64)
    for b in range(10):
        for d in range(pts.shape[1]):
            key |= ((q[:, d] >> b) & 1) << (b * pts.shape[1] + d)
    return np.argsort(key, kind="stable")


def permute(a, p):
    """a with its rows and columns renumbered: node p[i] becomes i."""
    return a[p][:, p].tocsr()


def mesh2d(rng, n, order):
    pts = rng.random((n, 2))
    a = simplices_graph(n, Delaunay(pts).simplices)
    return permute(a, morton_order(pts) if order == "sfc" else rng.permutation(n))


def mesh3d(rng, n, order):
    pts = rng.random((n, 3))
    a = simplices_graph(n, Delaunay(pts).simplices)
    return permute(a, morton_order(pts) if order == "sfc" else np.argsort(pts[:, 0]))


def p2like3d(rng, n):
    """Neighbours of neighbours on a 3D tet mesh: the wider rows of
    quadratic elements, in a space-filling-curve order."""
    pts = rng.random((n, 3))
    a = simplices_graph(n, Delaunay(pts).simplices)
    a = (a @ a).tocsr()
    a.data[:] = 1
    return permute(a, morton_order(pts))


def knn3d(rng, n, k):
    """A meshless method's k nearest neighbours, symmetrised, random order."""
    pts = rng.random((n, 3))
    _, nb = cKDTree(pts).query(pts, k + 1)
    r = np.repeat(np.arange(n), k + 1)
    a = sym(sp.csr_matrix((np.ones(len(r)), (r, nb.ravel())), shape=(n, n)))
    return permute(a, rng.permutation(n))


def road(rng, n):
    """A planar graph of mean degree ~2.5 (a road network): a 2D Delaunay
    mesh with most edges dropped, keeping a spanning tree's."""
    pts = rng.random((n, 2))
    t = Delaunay(pts).simplices
    e = np.vstack([t[:, [0, 1]], t[:, [1, 2]], t[:, [0, 2]]])
    e = np.unique(np.sort(e, 1), axis=0)
    w = np.hypot(*(pts[e[:, 0]] - pts[e[:, 1]]).T)
    g = sp.csr_matrix((w, (e[:, 0], e[:, 1])), shape=(n, n))
    tree = sp.csgraph.minimum_spanning_tree(g).tocoo()
    keep = rng.random(len(e)) < 0.12
    r = np.concatenate([tree.row, e[keep, 0]])
    c = np.concatenate([tree.col, e[keep, 1]])
    a = sym(sp.csr_matrix((np.ones(len(r)), (r, c)), shape=(n, n)))
    return permute(a, morton_order(pts))


def circuit(rng, n, globals_):
    """A 2D mesh of devices plus global nets (supply, ground, clock), each
    joined to 2-30% of the nodes: a few rows and columns far longer than
    the rest, as in circuit simulation."""
    a = mesh2d(rng, n - globals_, "sfc").tocoo()
    r, c = [a.row], [a.col]
    for g in range(globals_):
        m = rng.choice(n - globals_, int((n - globals_) * rng.uniform(0.02, 0.3)), replace=False)
        r += [np.full(len(m), n - globals_ + g), m]
        c += [m, np.full(len(m), n - globals_ + g)]
    r, c = np.concatenate(r), np.concatenate(c)
    return sym(sp.csr_matrix((np.ones(len(r)), (r, c)), shape=(n, n)))


def kkt(rng, n, m):
    """A saddle-point system [H A^T; A 0]: H a 2D mesh Laplacian's pattern,
    A m constraints of 2-12 variables each."""
    h = mesh2d(rng, n, "sfc").tocoo()
    cnt = rng.integers(2, 13, m)
    ar = np.repeat(np.arange(m), cnt)
    start = rng.integers(0, n - 64, m)
    ac = np.repeat(start, cnt) + rng.integers(0, 64, cnt.sum())
    r = np.concatenate([h.row, n + ar, ac])
    c = np.concatenate([h.col, ac, n + ar])
    a = sp.csr_matrix((np.ones(len(r)), (r, c)), shape=(n + m, n + m))
    a.data[:] = 1
    return a.tocsr()


def flowsheet(rng, units, size):
    """A chemical process flowsheet: dense-ish unit blocks on the diagonal,
    streams coupling a unit to a few later and earlier ones (unsymmetric)."""
    n = units * size
    r, c = [], []
    for u in range(units):
        o = u * size
        d = rng.random((size, size)) < 0.35
        ii, jj = np.nonzero(d | np.eye(size, dtype=bool))
        r.append(o + ii)
        c.append(o + jj)
        for v in rng.choice(units, 3):
            k = rng.integers(1, size // 2)
            r.append(o + rng.integers(0, size, k))
            c.append(v * size + rng.integers(0, size, k))
    r, c = np.concatenate(r), np.concatenate(c)
    a = sp.csr_matrix((np.ones(len(r)), (r, c)), shape=(n, n))
    a.data[:] = 1
    return a.tocsr()


def scalefree(rng, n, m):
    """Preferential attachment (Barabasi-Albert): each new node joins m
    earlier ones chosen by degree; heavy-tailed rows, random order."""
    targets = list(range(m))
    ends = []
    r, c = [], []
    for v in range(m, n):
        pick = set()
        while len(pick) < m:
            pick.add(ends[rng.integers(len(ends))] if ends else targets[rng.integers(m)])
        for t in pick:
            r.append(v)
            c.append(t)
            ends += [v, t]
    a = sym(sp.csr_matrix((np.ones(len(r)), (r, c)), shape=(n, n)))
    return permute(a, rng.permutation(n))


def hex_holes(rng, nx, frac):
    """A 27-point hexahedral mesh of nx^3 nodes with a fraction of its nodes
    removed (inactive cells, holes): rows of 8-27 entries."""
    idx = np.arange(nx**3).reshape(nx, nx, nx)
    alive = rng.random(idx.shape) >= frac
    r, c = [], []
    for dx in (-1, 0, 1):
        for dy in (-1, 0, 1):
            for dz in (-1, 0, 1):
                s = idx[max(0, -dx):nx - max(0, dx), max(0, -dy):nx - max(0, dy), max(0, -dz):nx - max(0, dz)]
                t = idx[max(0, dx):nx - max(0, -dx), max(0, dy):nx - max(0, -dy), max(0, dz):nx - max(0, -dz)]
                ok = alive.ravel()[s.ravel()] & alive.ravel()[t.ravel()]
                r.append(s.ravel()[ok])
                c.append(t.ravel()[ok])
    keep = np.flatnonzero(alive.ravel())
    new = -np.ones(nx**3, np.int64)
    new[keep] = np.arange(len(keep))
    r, c = new[np.concatenate(r)], new[np.concatenate(c)]
    return sp.csr_matrix((np.ones(len(r)), (r, c)), shape=(len(keep), len(keep))).tocsr()


def quad2d_q2(nx):
    """Biquadratic (9-node) quadrilaterals on an nx x nx element grid: rows
    of 9, 15 and 25 entries, node-numbered line by line."""
    m = 2 * nx + 1
    idx = np.arange(m * m).reshape(m, m)
    els = np.array([idx[2 * i:2 * i + 3, 2 * j:2 * j + 3].ravel() for i in range(nx) for j in range(nx)])
    return simplices_graph(m * m, els)


MATRICES = {
    "syn_tri2d_sfc": lambda r: mesh2d(r, 60000, "sfc"),
    "syn_tri2d_random": lambda r: mesh2d(r, 30000, "random"),
    "syn_tet3d_sfc": lambda r: mesh3d(r, 25000, "sfc"),
    "syn_tet3d_slab": lambda r: mesh3d(r, 12000, "slab"),
    "syn_tet3d_p2": lambda r: p2like3d(r, 5000),
    "syn_knn3d": lambda r: knn3d(r, 40000, 10),
    "syn_road": lambda r: road(r, 120000),
    "syn_circuit": lambda r: circuit(r, 20000, 12),
    "syn_kkt": lambda r: kkt(r, 30000, 8000),
    "syn_flowsheet": lambda r: flowsheet(r, 400, 24),
    "syn_scalefree": lambda r: scalefree(r, 20000, 3),
    "syn_hex_holes": lambda r: hex_holes(r, 36, 0.2),
    "syn_quad2d_q2": lambda r: quad2d_q2(90),
}


def write(path, a):
    a = sp.coo_matrix(a)
    with gzip.GzipFile(path, "wb", mtime=0) as f:
        f.write(b"%%MatrixMarket matrix coordinate pattern general\n")
        f.write(("%d %d %d\n" % (a.shape[0], a.shape[1], a.nnz)).encode())
        f.write("".join("%d %d\n" % (i + 1, j + 1) for i, j in zip(a.row.tolist(), a.col.tolist())).encode())


def write_all(folder, log=None):
    os.makedirs(folder, exist_ok=True)
    for name, make in MATRICES.items():
        a = make(np.random.default_rng(zlib.crc32(name.encode())))
        write(os.path.join(folder, name + ".mtx.gz"), a)
        lens = np.diff(a.indptr)
        if log:
            log.write("%-18s %7d rows %8d entries, row lengths mean %.1f max %d\n"
                      % (name, a.shape[0], a.nnz, lens.mean(), lens.max()))


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    write_all(sys.argv[1], sys.stdout)


if __name__ == "__main__":
    main()
