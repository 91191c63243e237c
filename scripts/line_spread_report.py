#!/usr/bin/env python3
"""How far apart the CTAs that read one 128-byte line ask for it, silicon against the model's
whole runs: space.cu --tile-times logs (run_tile_times.sh) against the model's trace of the same
point.

A column-ordered stream of N-byte rows (N < 128) reads each line in 128 / N tiles, one per column,
dealt to different CTAs; the spread of a line is the time from the first of those tiles' issue to
the last. Quarters: the lines in order of their first issue, in four equal parts (the run's
course). The model runs the point whole (scripts/heldout_space.py's scenario) with --trace; each
SM's loads in issue order are its tiles s, s + 132, s + 264, ... (its CTAs keep pace, so the
i-th load of SM s is tile s + 132 i to within a tile).

  scripts/line_spread_report.py --tiles tests/calibration/h200/repeat/tile_times_col/space_tile_times.csv.gz \\
      [--tiles MORE.csv.gz]... --gpu h200 --only 76,108,233,580,701 [--report FILE.md] [--jobs 2]

A point is taken from the first --tiles file that logged it.
"""
import argparse
import collections
import concurrent.futures
import csv
import gzip
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import calibrate as cal  # noqa: E402
import heldout_space as hs  # noqa: E402

SMS = 132


def shown(path):
    """A path as the report names it: relative to the repository when inside it."""
    rel = os.path.relpath(os.path.abspath(path), cal.ROOT)
    return path if rel.startswith("..") else rel


def quarters(first_and_spread):
    """Median and 90th percentile (ns) of the spreads in each quarter of the lines by first issue."""
    v = sorted(first_and_spread)
    n = len(v)
    out = []
    for q in range(4):
        part = sorted(d for _, d in v[q * n // 4:(q + 1) * n // 4])
        out.append((statistics.median(part), part[int(0.9 * (len(part) - 1))]) if part else (float("nan"),) * 2)
    return out


def spreads(issued, group):
    """issued: {(tx, ty): ns}; the spread of every line all `group` of whose tiles were issued."""
    lines = collections.defaultdict(list)
    for (tx, ty), t in issued.items():
        lines[(tx // group, ty)].append(t)
    return [(min(v), max(v) - min(v)) for v in lines.values() if len(v) == group]


def silicon_issues(path, points):
    out = collections.defaultdict(dict)
    with gzip.open(path, "rt") as f:
        for r in csv.DictReader(f):
            if r["point"] in points:
                out[r["point"]][(int(r["tx"]), int(r["ty"]))] = int(r["issued_ns"])
    return out


def model_run(runner, row):
    """The model's whole run of a space point: its stats and each tile's issue (ns)."""
    stats, events = runner.run_traced(*hs.space_scenario(row, 0, whole=True), [])
    by_sm = collections.defaultdict(list)
    for e in events:
        if e.get("cat") == "op" and e.get("name") == "load":
            by_sm[e["pid"]].append(e["ts"])
    tiles_y = (int(row["tensor_mb"]) << 20) // int(row["row_bytes"]) // int(row["rows"])
    issued = {}
    for sm, ts in by_sm.items():
        for i, t in enumerate(sorted(ts)):
            tile = sm + SMS * i
            issued[(tile // tiles_y, tile % tiles_y)] = t * 1000.0
    return stats, issued


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tiles", required=True, action="append",
                    help="space_tile_times.csv.gz of run_tile_times.sh (repeatable: a point from the first that has it)")
    ap.add_argument("--gpu", default="h200")
    ap.add_argument("--only", required=True, help="comma-separated space.csv points (column order, rows < 128 B)")
    ap.add_argument("--sim", default=os.path.join(cal.ROOT, "build", "tma-sim"))
    ap.add_argument("--arch", default=None)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--report", default=None)
    a = ap.parse_args()
    arch = a.arch or os.path.join(cal.ROOT, "configs/arch/%s.yaml" % a.gpu)
    points = a.only.split(",")
    rows = {r["point"]: r for r in hs.space_rows(os.path.join(cal.ROOT, "tests/calibration", a.gpu), "space%s.csv")}
    for p in points:
        if p not in rows:
            sys.exit("point %s is not in tests/calibration/%s/space*.csv" % (p, a.gpu))
        if rows[p]["order"] != "col" or int(rows[p]["inner_bytes"]) >= 128:
            sys.exit("point %s: not a column-ordered stream of rows under 128 B" % p)
    sil, timed, source = {}, {}, {}
    for path in a.tiles:
        got = silicon_issues(path, set(points) - set(sil))
        # The same points timed without the log on the same lease, where run_tile_times.sh left them.
        timed_path = os.path.join(os.path.dirname(path), "space_tile_times_timed.csv")
        lease = {r["point"]: float(r["bytes"]) / float(r["span_us"]) / 1000 for r in hs.rows(timed_path)} \
            if os.path.exists(timed_path) else {}
        for p in got:
            sil[p], source[p] = got[p], shown(path)
            if p in lease:
                timed[p] = lease[p]
    missing = [p for p in points if p not in sil]
    if missing:
        sys.exit("no --tiles file logged point(s) %s" % ",".join(missing))
    runner = cal.Runner(a.sim, arch, a.jobs, None)
    with concurrent.futures.ThreadPoolExecutor(a.jobs) as ex:
        runs = dict(zip(points, ex.map(lambda p: model_run(runner, rows[p]), points)))
    fmt = lambda q: " / ".join("%.1f" % (m / 1000) for m, _ in q)
    lines = ["# How far apart a line's readers ask for it: silicon against the model (%s)" % a.gpu, "",
             "Generated by `scripts/line_spread_report.py %s --gpu %s --only %s` with %s." % (
                 " ".join("--tiles " + shown(t) for t in a.tiles), a.gpu, a.only,
                 shown(arch)),
             "Spread: first to last issue of the tiles that read one 128-byte line, median in us, in each "
             "quarter of the run (lines by first issue). Model: whole runs. Silicon GB/s: the point in space.csv, "
             "and in parentheses timed without the log on the lease that logged it (where it was).", "",
             "| point | stream | rows in flight per SM | silicon spread (q1 / q2 / q3 / q4) | model | "
             "silicon GB/s: space.csv (this lease) | model GB/s | model DRAM B/B |",
             "| ---: | --- | ---: | --- | --- | ---: | ---: | ---: |"]
    for p in points:
        r = rows[p]
        group = 128 // int(r["inner_bytes"])
        stats, issued = runs[p]
        s_q = quarters(spreads(sil[p], group))
        m_q = quarters(spreads(issued, group))
        inflight = int(r["rows"]) * int(r["stages"]) * hs.ctas_on_each_sm(r)
        lease = " (%.0f)" % timed[p] if p in timed else ""
        lines.append("| %s | %sB x %s col %s S%s, %s CTAs | %d | %s | %s | %.0f%s | %.0f | %.3f |" % (
            p, r["inner_bytes"], r["rows"], r["l2_promotion"], r["stages"], r["grid"], inflight, fmt(s_q),
            fmt(m_q), float(r["span_gbps"]), lease, stats["summary.load_bandwidth_gbs"],
            stats["summary.dram_read_bytes"] / max(1.0, stats["summary.bytes_loaded"])))
    lines += ["", "Tiles logged in: " + "; ".join(
        "%s (%s)" % (t, ", ".join(p for p in points if source[p] == t)) for t in sorted(set(source.values())))]
    text = "\n".join(lines) + "\n"
    print(text)
    if a.report:
        with open(a.report, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
