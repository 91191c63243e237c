#!/usr/bin/env python3
"""A group of the space measured on its own (space_GROUP.csv, its ncu traffic and a repeat in
repeat/GROUP_rep2/) against the model's whole runs of the same streams:
  onset  where the fast SMs start to run ahead (space.cu points 837-872, run_onset.sh: one CTA per
         SM of 32 B and 64 B x 256-row boxes, 768-2,048 rows in flight per SM)
  pages  what column order costs at the DRAM (points 873-890, run_pages.sh: 64 B x 256 boxes at
         row pitches of 256 B to 64 KB, 768 rows in flight per SM)

For each point: the bandwidth, the DRAM bytes read per byte asked (ncu; the model's statistics),
and, where silicon's tile times were taken (space_GROUP_sm.csv), how far the fast SMs lead: the
mean end of the fast SMs as a fraction of the run, and (silicon) the fast SMs' rate over the
others' in the first half of the run. Silicon's fast SMs are the 24 that end first in the point
with the most rows in flight (860: 32 B column, 128B promotion, 8 stages), the model's those of
its 4-SM CPCs (the arch file's tma.cpc_of_sm).

  space_group_report.py --group onset --gpu h100 [--arch F] [--arch-set K=V ...] [--jobs N] [--report F]
  space_group_report.py --summarise TILE_TIMES.csv.gz OUT.csv   (per-SM figures of tile times)

Standard library only (and build/tma-sim).
"""
import argparse
import collections
import concurrent.futures
import csv
import gzip
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import heldout_space  # noqa: E402  (space_scenario: a space point as the model's scenario)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REFERENCE_POINT = "860"  # the most rows in flight: the fast SMs are plainest there


def summarise(raw, out):
    """Per point and SM: tiles, tiles whose data was in by half the run, the SM's last data time."""
    tiles = collections.defaultdict(list)
    with gzip.open(raw, "rt") as f:
        for r in csv.DictReader(f):
            if int(r["data_ns"]) < 0:
                raise SystemExit("space_group_report.py: point %s tile %s,%s has no time" % (r["point"], r["tx"], r["ty"]))
            tiles[r["point"]].append((int(r["smid"]), int(r["data_ns"])))
    with open(out, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["point", "smid", "tiles", "tiles_first_half", "end_ns", "span_ns"])
        for p in sorted(tiles, key=int):
            span = max(t[1] for t in tiles[p])
            by_sm = collections.defaultdict(list)
            for sm, t in tiles[p]:
                by_sm[sm].append(t)
            for sm in sorted(by_sm):
                ts = by_sm[sm]
                w.writerow([p, sm, len(ts), sum(1 for t in ts if t < span / 2), max(ts), span])


def silicon_run(folder, group):
    """{point: figures} of one run: stream row, DRAM bytes per byte, fast and slow ends, rate ratio."""
    def rows(name):
        path = os.path.join(folder, name)
        if not os.path.exists(path):
            return []
        with open(path) as f:  # each row with its path: space_scenario finds the kernel's costs by it
            return [dict(r, path=path) for r in csv.DictReader(f)]
    streams = {r["point"]: r for r in rows("space_%s.csv" % group) if r["status"] == "ok"}
    traffic = {r["point"]: r for r in rows("space_%s_traffic.csv" % group)}
    per_sm = collections.defaultdict(dict)
    for r in rows("space_%s_sm.csv" % group):
        per_sm[r["point"]][int(r["smid"])] = r
    ref = per_sm.get(REFERENCE_POINT, {})
    fast = set(sorted(ref, key=lambda s: int(ref[s]["end_ns"]))[:24])
    out = {}
    for p, s in streams.items():
        f = dict(gbps=float(s["span_gbps"]), per_byte=float(traffic[p]["dram_read_per_requested_byte"]))
        if p in per_sm and fast:
            sms = per_sm[p]
            span = max(int(r["span_ns"]) for r in sms.values())
            f["fast_end"] = statistics.mean(int(sms[x]["end_ns"]) / span for x in sms if x in fast)
            f["slow_end"] = statistics.mean(int(sms[x]["end_ns"]) / span for x in sms if x not in fast)
            f["rate_ratio"] = (statistics.mean(int(sms[x]["tiles_first_half"]) for x in sms if x in fast) /
                               statistics.mean(int(sms[x]["tiles_first_half"]) for x in sms if x not in fast))
        out[p] = f
    return streams, out


def model_run(runner, arch_sets, row):
    """The model's whole run of a space point: bandwidth, DRAM bytes per byte, the 4-SM CPCs' and the
    other SMs' mean end (fractions of the run)."""
    text, sets = heldout_space.space_scenario(row, 0, whole=True)
    j = runner.run_stats(text, sets, arch_sets)
    cpc = j["config"]["arch"]["fields"]["tma"]["cpc_of_sm"]
    size = collections.Counter(cpc)
    sms = int(j["summary.sms"])
    end = [j["cta%d" % sm]["finish_cycle"] for sm in range(sms)]
    last = max(end)
    fast = [sm for sm in range(sms) if cpc and size[cpc[sm]] == 4]
    return dict(gbps=float(j["summary.load_bandwidth_gbs"]),
                per_byte=float(j["summary.dram_read_bytes"]) / float(j["summary.bytes_loaded"]),
                fast_end=statistics.mean(end[s] / last for s in fast) if fast else None,
                slow_end=statistics.mean(end[s] / last for s in range(sms) if s not in fast))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--group", choices=("onset", "pages"), default="onset")
    ap.add_argument("--gpu", default="h100")
    ap.add_argument("--arch", default=None)
    ap.add_argument("--arch-set", action="append", default=[], help="KEY=VALUE over the arch file (what-ifs)")
    ap.add_argument("--sim", default=os.path.join(ROOT, "build/tma-sim"))
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--report", default=None)
    ap.add_argument("--summarise", nargs=2, metavar=("RAW", "OUT"))
    a = ap.parse_args()
    if a.summarise:
        summarise(*a.summarise)
        return
    data = os.path.join(ROOT, "tests/calibration", a.gpu)
    arch = a.arch or os.path.join(ROOT, "configs/arch/%s.yaml" % a.gpu)
    streams, sil = silicon_run(data, a.group)
    if not streams:
        raise SystemExit("space_group_report.py: no space_%s.csv in %s" % (a.group, data))
    sil2 = silicon_run(os.path.join(data, "repeat/%s_rep2" % a.group), a.group)[1]
    points = sorted(streams, key=int)
    t0 = time.time()
    runner = heldout_space.cal.Runner(a.sim, arch, a.jobs, None)
    with concurrent.futures.ThreadPoolExecutor(a.jobs) as ex:
        mod = dict(zip(points, ex.map(lambda p: model_run(runner, a.arch_set, streams[p]), points)))
    took = time.time() - t0

    def cell(f, k, fmt):
        return fmt % f[k] if f and f.get(k) is not None else "-"
    title = {"onset": "Where the fast SMs start to run ahead", "pages": "What column order costs at the DRAM"}[a.group]
    lines = ["# %s (%s): silicon's group %s against the model" % (title, a.gpu.upper(), a.group), "",
             "Generated by `scripts/space_group_report.py --group %s --gpu %s%s` from tests/calibration/%s/space_%s*.csv "
             "(run_%s.sh; the repeat in repeat/%s_rep2) and %s%s; the model's runs are whole (%.0f s, %d jobs). "
             "One CTA per SM, 256-row boxes, 256 MB, clean L2; rows in flight per SM = 256 x stages. "
             "Fast SMs: silicon's 24 that end first in point %s, the model's those of its 4-SM CPCs; ends are "
             "fractions of the run; rate: the fast SMs' tiles over the others' in the first half of the run."
             % (a.group, a.gpu, "".join(" --arch-set " + s for s in a.arch_set), a.gpu, a.group, a.group, a.group,
                os.path.relpath(arch, ROOT), "".join(" with " + s for s in a.arch_set), took, a.jobs,
                REFERENCE_POINT), "",
             "| point | stream | pitch | rows | silicon GB/s (repeat) | model GB/s | silicon DRAM B/B (repeat) | model | "
             "silicon fast end (repeat) | model | silicon rate fast/slow (repeat) |",
             "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    errs, bb = collections.defaultdict(list), []
    for p in points:
        s, m, s2 = streams[p], mod[p], sil2.get(p)
        rows = 256 * int(s["stages"])
        key = "%s B %s %s" % (s["inner_bytes"], s["order"], s["l2_promotion"])
        errs[key].append(abs(m["gbps"] / sil[p]["gbps"] - 1))
        bb.append(abs(m["per_byte"] - sil[p]["per_byte"]))
        lines.append("| %s | %s | %s | %d | %.0f (%s) | %.0f | %.3f (%s) | %.3f | %s (%s) | %s | %s (%s) |" % (
            p, key, s["row_bytes"], rows, sil[p]["gbps"], cell(s2, "gbps", "%.0f"), m["gbps"], sil[p]["per_byte"],
            cell(s2, "per_byte", "%.3f"), m["per_byte"], cell(sil[p], "fast_end", "%.2f"), cell(s2, "fast_end", "%.2f"),
            cell(m, "fast_end", "%.2f"), cell(sil[p], "rate_ratio", "%.2f"), cell(s2, "rate_ratio", "%.2f")))
    lines += ["", "| stream | bandwidth mean abs error |", "| --- | ---: |"]
    for k, v in errs.items():
        lines.append("| %s | %.1f%% |" % (k, 100 * statistics.mean(v)))
    allerr = [e for v in errs.values() for e in v]
    lines += ["", "All %d points: bandwidth %.1f%% mean abs error (worst %.1f%%); DRAM bytes per byte %.3f mean abs "
              "difference (worst %.3f)." % (len(allerr), 100 * statistics.mean(allerr), 100 * max(allerr),
                                            statistics.mean(bb), max(bb))]
    text = "\n".join(lines) + "\n"
    if a.report:
        with open(a.report, "w") as f:
            f.write(text)
    print(text)


if __name__ == "__main__":
    main()
