#!/usr/bin/env python3
"""Turns the per-point ncu CSV outputs of run_calibration.sh into traffic.csv (or fetch.csv).

Inputs: --points POINTS.csv (`bandwidth --list-traffic`, `fetch --list`), --raw DIR holding
<prefix><N>.csv (ncu --csv stdout, which may also hold ncu's ==PROF== lines and the program's own
key=value lines) and <prefix><N>.rc (ncu's exit status) for every point N of the --id column.
Output: one row per point with the point's parameters, the five metrics in base units (bytes,
sectors, requests, nanoseconds), a few ratios and, with --values K,K, the program's key=value
lines. The bytes a point requested are its requested_bytes column where it has one, else computed
from the bandwidth kernel's tensor and tile. Standard library only.
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


def parse_ncu(path, kernel):
    """Metric name -> (value, unit) for the profiled launch of `kernel` (a name prefix), and the
    program's own key=value lines."""
    if not os.path.exists(path):
        return {}, {}, "no_output"
    with open(path, errors="replace") as f:
        text = f.readlines()
    lines = [ln for ln in text if ln.startswith('"')]
    values = dict(tok.split("=", 1) for ln in text if not ln.startswith(('"', "==")) for tok in ln.split() if "=" in tok)
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
        if kernel not in rec.get("Kernel Name", kernel):
            continue
        name = rec.get("Metric Name", "")
        if name in METRICS and name not in found:
            found[name] = (number(rec.get("Metric Value", "")), rec.get("Metric Unit", ""))
    return found, values, None


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
    ap.add_argument("--id", default="tpoint", help="the points' id column")
    ap.add_argument("--prefix", default="t", help="raw files are <prefix><id>.csv and .rc")
    ap.add_argument("--kernel", default="bw_stream", help="the profiled kernel's name (prefix)")
    ap.add_argument("--values", default="", help="the program's key=value lines to keep, comma-separated")
    a = ap.parse_args()
    keep = [k for k in a.values.split(",") if k]
    with open(a.points) as f:
        points = list(csv.DictReader(f))
    param_cols = [c for c in points[0].keys() if c != "requested_bytes"] if points else [a.id]
    cols = param_cols + ["requested_bytes"] + METRICS + [
        "dram_bytes_per_requested_byte", "l2_read_bytes_per_requested_byte", "sectors_per_request",
        "requested_gbps"] + keep + ["units", "ncu_rc", "status"]
    with open(a.out, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(cols)
        for p in points:
            i = p[a.id]
            rc_path = os.path.join(a.raw, "%s%s.rc" % (a.prefix, i))
            rc = open(rc_path).read().strip() if os.path.exists(rc_path) else ""
            found, values, err = parse_ncu(os.path.join(a.raw, "%s%s.csv" % (a.prefix, i)), a.kernel)
            if "requested_bytes" in p:
                req = int(p["requested_bytes"])
            else:
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
                fmt(req / tns if tns else None, 1)] + [values.get(k, "") for k in keep] + [
                units, rc, status])


if __name__ == "__main__":
    main()
