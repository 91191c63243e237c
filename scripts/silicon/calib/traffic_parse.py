#!/usr/bin/env python3
"""Turns the per-point ncu CSV outputs of run_calibration.sh into traffic.csv.

Inputs: --points POINTS.csv (`bandwidth --list-traffic`), --raw DIR holding t<N>.csv (ncu --csv
stdout, which may also hold ncu's ==PROF== lines) and t<N>.rc (ncu's exit status) for every point.
Output: one row per point with the point's parameters, the five metrics in base units (bytes,
sectors, requests, nanoseconds) and a few ratios. Standard library only.
"""
import argparse
import csv
import io
import os

METRICS = [
    "dram__bytes_read.sum",
    "lts__t_sectors_op_read.sum",
    "lts__t_requests_op_read.sum",
    "lts__t_sectors_srcunit_tex_op_read.sum",
    "gpu__time_duration.sum",
]


def number(s):
    s = s.strip().replace(",", "").replace(" ", "")
    if s in ("", "n/a", "N/A"):
        return None
    try:
        return float(s)
    except ValueError:
        return None


def parse_ncu(path):
    """Metric name -> (value, unit) for the profiled bw_stream launch."""
    if not os.path.exists(path):
        return {}, "no_output"
    with open(path, errors="replace") as f:
        lines = [ln for ln in f if ln.startswith('"')]
    rows = list(csv.reader(io.StringIO("".join(lines))))
    header = None
    found = {}
    for row in rows:
        if "Metric Name" in row and "Metric Value" in row:
            header = row
            continue
        if header is None or len(row) != len(header):
            continue
        rec = dict(zip(header, row))
        if "bw_stream" not in rec.get("Kernel Name", "bw_stream"):
            continue
        name = rec.get("Metric Name", "")
        if name in METRICS and name not in found:
            found[name] = (number(rec.get("Metric Value", "")), rec.get("Metric Unit", ""))
    return found, None


def fmt(v, prec=4):
    if v is None:
        return ""
    if abs(v - round(v)) < 1e-9 and abs(v) < 1e18:
        return str(int(round(v)))
    return "%.*f" % (prec, v)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--points", required=True)
    ap.add_argument("--raw", required=True)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    with open(a.points) as f:
        points = list(csv.DictReader(f))
    param_cols = list(points[0].keys()) if points else ["tpoint"]
    cols = param_cols + ["requested_bytes"] + METRICS + [
        "dram_bytes_per_requested_byte", "l2_read_bytes_per_requested_byte", "sectors_per_request",
        "requested_gbps", "units", "ncu_rc", "status"]
    with open(a.out, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(cols)
        for p in points:
            i = p["tpoint"]
            rc_path = os.path.join(a.raw, "t%s.rc" % i)
            rc = open(rc_path).read().strip() if os.path.exists(rc_path) else ""
            found, err = parse_ncu(os.path.join(a.raw, "t%s.csv" % i))
            tensor = int(p["tensor_mb"]) << 20
            row_bytes, inner, rows = int(p["row_bytes"]), int(p["inner_bytes"]), int(p["rows"])
            tiles = (tensor // row_bytes // rows) * (row_bytes // inner) * int(p["passes"])
            req = tiles * int(p["tile_bytes"])
            vals = {m: found.get(m, (None, ""))[0] for m in METRICS}
            dram, sec, reqs, tns = (vals["dram__bytes_read.sum"], vals["lts__t_sectors_op_read.sum"],
                                    vals["lts__t_requests_op_read.sum"], vals["gpu__time_duration.sum"])
            missing = [m for m in METRICS if vals[m] is None]
            if err:
                status = err if not rc else "%s_rc_%s" % (err, rc)
            elif missing:
                status = "missing:" + ";".join(missing) + ("" if rc in ("", "0") else ";ncu_rc_" + rc)
            else:
                status = "ok" if rc in ("", "0") else "ok_ncu_rc_" + rc
            units = ";".join("%s=%s" % (m, found[m][1]) for m in METRICS if m in found)
            w.writerow([p[c] for c in param_cols] + [req] + [fmt(vals[m]) for m in METRICS] + [
                fmt(dram / req if dram is not None and req else None),
                fmt(sec * 32 / req if sec is not None and req else None),
                fmt(sec / reqs if sec is not None and reqs else None),
                fmt(req / tns if tns else None, 1),
                units, rc, status])


if __name__ == "__main__":
    main()
