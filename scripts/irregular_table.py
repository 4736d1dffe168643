#!/usr/bin/env python3
"""Summary of `bsrmv bench --gpu --json` runs on irregular matrices.

Per matrix: the device read bandwidth, the automatic choice (GB/s and share
of the read bandwidth), the matrix's gather bound (its val/col_idx/x traffic
without rows, bsrmv_gpu_gather_bound) and the automatic choice's share of
it, the best plain (one group per block row) and best
balanced bsrmv kernel, and the ratios of the automatic choice to each
cuSPARSE path: Dbsrmv (best direction), SpMV BSR_ALG1 (best order) and
CSR_ALG1 on the scalar expansion.  GB/s always count the BSR bytes, so the
ratios are ratios of time.  Also the CPU GB/s (all cores) where present.
"""
import json
import sys

BALANCED = ("segmented", "merge_path", "fragment")


def main(path):
    rows = {}
    order = []
    for line in open(path):
        line = line.strip()
        if not line.startswith("{"):
            continue
        r = json.loads(line)
        m = r.get("matrix")
        if m is None:
            continue
        if m not in rows:
            rows[m] = []
            order.append(m)
        rows[m].append(r)
    print("%-36s %3s %6s %6s %5s %6s %5s %-30s %6s %6s %6s %6s %6s %6s %6s"
          % ("matrix", "bs", "read", "auto", "%read", "bound", "%bnd", "auto kernel", "plain", "balan",
             "xDbsr", "xBSR1", "xCSR1", "cpu", "err"))
    for m in order:
        rs = rows[m]
        gpu = [r for r in rs if r.get("backend") == "gpu"]
        cus = [r for r in rs if r.get("backend") == "cusparse"]
        cpu = [r for r in rs if r.get("backend") == "cpu"]
        auto = next((r for r in gpu if r["kernel"].startswith("auto:")), None)
        if auto is None:
            continue
        read = auto["gbps"] / auto["stream_frac"] if auto.get("stream_frac") else float("nan")
        cand = [r for r in gpu if not r["kernel"].startswith("auto:")]
        plain = max((r["gbps"] for r in cand if not r["kernel"].startswith(BALANCED)), default=0)
        bal = max((r["gbps"] for r in cand if r["kernel"].startswith(BALANCED)), default=0)

        def best(prefix):
            g = [r["gbps"] for r in cus if r["kernel"].startswith(prefix)]
            return max(g) if g else float("nan")

        def ratio(prefix):
            b = best(prefix)
            return auto["gbps"] / b if b == b and b > 0 else float("nan")

        bound = next((r["gbps"] for r in rs if r.get("backend") == "bound"), float("nan"))
        worst_err = max((r.get("rel_err", 0) or 0) for r in gpu)
        print("%-36s %3d %6.0f %6.0f %5.1f %6.0f %5.1f %-30s %6.0f %6.0f %6.1f %6.1f %6.2f %6.1f %6.1e"
              % (m[:36], auto["bs"], read, auto["gbps"], 100 * auto["gbps"] / read,
                 bound, 100 * auto["gbps"] / bound,
                 auto["kernel"][5:35], plain, bal, ratio("Dbsrmv"), ratio("SpMV_BSR_ALG1"),
                 ratio("SpMV_CSR_ALG1"), max((r["gbps"] for r in cpu), default=float("nan")),
                 worst_err))


if __name__ == "__main__":
    main(sys.argv[1])
