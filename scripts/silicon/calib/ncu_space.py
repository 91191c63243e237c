#!/usr/bin/env python3
"""Turns run_space.sh's or run_workloads.sh's raw ncu output (space_ncu.tgz, workloads_ncu.tgz) into *_traffic.csv:
one row per traffic point, its parameters (from the program's --list-traffic), each metric in base
units, and ratios per requested byte.

  ncu_space.py --tgz OUTDIR/space_ncu.tgz --out OUTDIR

Each chunk file holds the profiled launches of traffic points from..to in order; ncu's "ID" counts
the launches of that process, so the n-th profiled launch of chunk FROM is traffic point FROM + n.
Standard library only.
"""
import argparse
import csv
import io
import os
import re
import sys
import tarfile

METRICS = ["dram__bytes_read.sum", "dram__bytes_write.sum", "lts__t_sectors_op_read.sum", "lts__t_sectors_op_write.sum",
           "lts__t_sectors_srcunit_tex_op_read.sum", "lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum",
           "lts__t_sectors_srcunit_tex_op_read_lookup_miss.sum", "lts__t_requests_srcunit_tex_op_read.sum",
           "gpu__time_duration.sum"]


def parse_chunk(text):
    """{launch id: {metric: value}} from one ncu --csv output (lines before the header skipped)."""
    lines = text.splitlines()
    start = next((i for i, l in enumerate(lines) if l.startswith('"ID"')), None)
    if start is None:
        return {}
    out = {}
    for r in csv.DictReader(io.StringIO("\n".join(l for l in lines[start:] if l.startswith('"')))):
        try:
            v = float(r["Metric Value"].replace(",", ""))
        except ValueError:
            continue
        out.setdefault(int(r["ID"]), {})[r["Metric Name"]] = v
    return out


def build(members, prog, bytes_of):
    if "ncu/%s_points.csv" % prog not in members:
        return []  # this archive has no run of that program
    points = list(csv.DictReader(io.StringIO(members["ncu/%s_points.csv" % prog])))
    rows = []
    for name, text in sorted(members.items()):
        m = re.match(r"ncu/%s_t(\d+)\.csv$" % prog, name)
        if not m:
            continue
        first = int(m.group(1))
        for n, lid in enumerate(sorted(parse_chunk(text))):
            tp = first + n
            if tp >= len(points):
                break
            vals = parse_chunk(text)[lid]
            row = dict(points[tp])
            req = bytes_of(row)
            for k in METRICS:
                row[k] = "%.0f" % vals[k] if k in vals else ""
            if all(k in vals for k in METRICS):
                row["requested_bytes"] = "%d" % req
                row["dram_read_per_requested_byte"] = "%.4f" % (vals["dram__bytes_read.sum"] / req)
                row["dram_write_per_requested_byte"] = "%.4f" % (vals["dram__bytes_write.sum"] / req)
                row["l2_read_bytes_per_requested_byte"] = "%.4f" % (vals["lts__t_sectors_op_read.sum"] * 32 / req)
                tex = vals["lts__t_sectors_srcunit_tex_op_read.sum"]
                row["tex_hit_rate"] = "%.4f" % (vals["lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum"] / tex if tex else 0)
                row["status"] = "ok"
            else:
                row["status"] = "missing_metrics"
            rows.append(row)
    return rows


def space_bytes(r):
    mb, rb, inner, rows = int(r["tensor_mb"]), int(r["row_bytes"]), int(r["inner_bytes"]), int(r["rows"])
    height = (mb << 20) // rb
    return (rb // inner) * (height // rows) * inner * rows


def gemm_bytes(r):
    M, N, K, BM, BN, BK = (int(r[k]) for k in ("M", "N", "K", "BM", "BN", "BK"))
    return (M // BM) * (N // BN) * (K // BK) * (BM + BN) * BK * 2


def workload_bytes(r):
    """Bytes a workloads.cu point loads and stores: per item Q once, K and V per KV block, O once."""
    g = {k: int(r[k]) for k in ("batch", "heads", "seq_q", "seq_kv", "head_dim", "block_m", "block_n",
                                "q_heads_per_box", "causal", "split_kv")}
    o_elem = 4 if r["kind"] == "decode" else 2
    m_blocks = -(-g["seq_q"] // g["block_m"])
    kv_blocks = -(-g["seq_kv"] // g["block_n"])
    per_split = -(-kv_blocks // g["split_kv"])
    items = g["batch"] * (g["heads"] // g["q_heads_per_box"]) * g["split_kv"] * m_blocks
    total = 0
    for i in range(items):
        m = i % m_blocks
        if g["causal"]:
            m = m_blocks - 1 - m
        sp = (i // m_blocks) % g["split_kv"]
        end = kv_blocks
        if g["causal"]:
            last = min(g["seq_kv"], (m + 1) * g["block_m"] + g["seq_kv"] - g["seq_q"])
            end = min(end, -(-last // g["block_n"]))
        first = min(sp * per_split, end)
        end = min(first + per_split, end)
        if end <= first:
            continue
        q_tile = g["head_dim"] * g["block_m"] * g["q_heads_per_box"]
        total += (end - first) * 2 * g["head_dim"] * g["block_n"] * 2 + q_tile * 2 + q_tile * o_elem
    return total


def coalesce_group(placement):
    """CTAs a group launches: g of coalesce.cu's group<g>[r<r>] and consec<g> (points 133 on), else 2."""
    for k in ("group", "consec"):
        if placement.startswith(k):
            return int(placement[len(k):].rstrip("c").split("r")[0])
    return 2


def coalesce_bytes(r):
    """Every CTA's loads: the pairs' or groups' and the background's (bg_pairs, points 116 on)."""
    ctas = coalesce_group(r["placement"]) * int(r["pairs"]) + 2 * int(r.get("bg_pairs") or 0)
    return ctas * int(r["tiles_per_cta"]) * 128 * int(r.get("tile_rows") or 64)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tgz", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--space-out", default="space_traffic.csv", help="file name for space.cu's rows")
    a = ap.parse_args()
    with tarfile.open(a.tgz) as t:
        members = {m.name: t.extractfile(m).read().decode() for m in t.getmembers() if m.isfile() and m.name.startswith("ncu/")}
    for prog, fn, name in (("space", space_bytes, a.space_out), ("gemm", gemm_bytes, "gemm_traffic.csv"),
                           ("workloads", workload_bytes, "workloads_traffic.csv"),
                           ("coalesce", coalesce_bytes, "coalesce_traffic.csv")):
        rows = build(members, prog, fn)
        if not rows:
            print("%s: no traffic rows" % prog, file=sys.stderr)
            continue
        cols = list(rows[0].keys())
        for r in rows:
            for k in r:
                if k not in cols:
                    cols.append(k)
        with open(os.path.join(a.out, name), "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=cols)
            w.writeheader()
            w.writerows(rows)
        print("%s: %d rows (%d ok)" % (name, len(rows), sum(r["status"] == "ok" for r in rows)))


if __name__ == "__main__":
    main()
