#!/usr/bin/env python3
"""The L2's partitions as silicon shows them (scripts/silicon/calib/partition.cu, run_partition.sh):
which SMs read through which partition, what a line homed in the other partition costs, and the
GPCs each partition holds; from tests/calibration/{h100,h200}/partition_*.csv and placement.csv.

  scripts/partition_report.py [--report docs/calibration/partition.md]

Each SM read the same 256 lines (a chain of 16 dependent ld.global.cg loads per line, so a line's
time is 16 latencies): a line is homed where most SMs of one group reach it sooner. The groups are
the map's (partition_map.csv: the sign of each SM's latency correlation with SM 0's). Standard
library only (and the project's mechanisms_report.py).
"""
import argparse
import csv
import gzip
import os
import statistics
import sys
from collections import defaultdict

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import mechanisms_report as mr  # noqa: E402  (gpc_of_sm)
CHAIN = 16  # dependent loads per line in partition.cu


def topology(gpu):
    d = os.path.join(ROOT, "tests/calibration", gpu)
    group = {int(r["smid"]): int(r["group"]) for r in csv.DictReader(open(os.path.join(d, "partition_map.csv")))}
    hit, cold = defaultdict(dict), defaultdict(dict)
    with gzip.open(os.path.join(d, "partition_topology.csv.gz"), "rt") as f:
        for r in csv.DictReader(f):
            sm, line, c = int(r["smid"]), int(r["line"]), int(r["cycles"])
            if r["pass"] == "1":
                hit[sm][line] = c / CHAIN
            elif r["pass"] == "0":
                cold[sm][line] = c
    sms = sorted(hit)
    lines = sorted(hit[sms[0]])
    home = {}
    for l in lines:
        g0 = statistics.mean(hit[s][l] for s in sms if group[s] == 0)
        g1 = statistics.mean(hit[s][l] for s in sms if group[s] == 1)
        home[l] = 0 if g0 < g1 else 1
    near = [hit[s][l] for s in sms for l in lines if group[s] == home[l]]
    far = [hit[s][l] for s in sms for l in lines if group[s] != home[l]]
    # pass 0: the first load of each chain from DRAM, the other 15 from the L2
    miss_near = [cold[s][l] - (CHAIN - 1) * hit[s][l] for s in sms for l in lines if group[s] == home[l]]
    miss_far = [cold[s][l] - (CHAIN - 1) * hit[s][l] for s in sms for l in lines if group[s] != home[l]]
    return dict(group=group, home=home, near=near, far=far, miss_near=miss_near, miss_far=miss_far, sms=sms,
                lines=lines)


def gpcs(gpu):
    """GPCs as the CTAs of clusters show them (placement.csv, mechanisms_report.gpc_of_sm): lists of SMs."""
    out = defaultdict(list)
    for sm, gpc in sorted(mr.gpc_of_sm(os.path.join(ROOT, "tests/calibration", gpu, "placement.csv")).items()):
        out[gpc].append(sm)
    return sorted(out.values(), key=lambda v: v[0])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--report", default=None)
    a = ap.parse_args()
    out = ["# The L2's partitions on silicon", "",
           "Written by `scripts/partition_report.py` from tests/calibration/{h100,h200}/partition_*.csv "
           "(`scripts/silicon/calib/run_partition.sh`) and placement.csv. Each SM read the same 256 lines, "
           "warm in the L2 and, in the first pass, from DRAM; a line is homed in the partition whose SMs "
           "reach it sooner.", "",
           "| GPU | SMs per partition | lines homed per partition | L2 hit, near line | far line | far - near | "
           "DRAM miss, near line | far line | far - near |",
           "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    maps = {}
    for gpu in ("h100", "h200"):
        t = topology(gpu)
        maps[gpu] = t["group"]
        n = [sum(1 for s in t["sms"] if t["group"][s] == g) for g in (0, 1)]
        h = [sum(1 for l in t["lines"] if t["home"][l] == g) for g in (0, 1)]
        med = statistics.median
        out.append("| %s | %d / %d | %d / %d | %.0f | %.0f | %+.0f | %.0f | %.0f | %+.0f |" % (
            gpu.upper(), n[0], n[1], h[0], h[1], med(t["near"]), med(t["far"]), med(t["far"]) - med(t["near"]),
            med(t["miss_near"]), med(t["miss_far"]), med(t["miss_far"]) - med(t["miss_near"])))
    out += ["", "Cycles of one ld.global.cg (median over SMs and lines; a miss is the chain's first load less 15 hits).", ""]
    same = maps["h100"] == maps["h200"]
    out.append("The two GPUs group their SMs %s." % ("identically, SM for SM" if same else "differently"))
    out += ["", "GPCs (SMs that shared a cluster, placement.csv) and their partition:", ""]
    for gpu in ("h100", "h200"):
        rows = []
        for g in gpcs(gpu):
            parts = sorted({maps[gpu][s] for s in g})
            rows.append("%d SMs from %d: partition %s" % (len(g), g[0], "/".join(map(str, parts))))
        out.append("- %s: %s" % (gpu.upper(), "; ".join(rows)))
    out += ["", "Partition 0 as a list of SMs (%smid), the same on both: " +
            ", ".join(str(s) for s in sorted(maps["h200"]) if maps["h200"][s] == 0) + ".", ""]
    text = "\n".join(out) + "\n"
    if a.report:
        with open(a.report, "w") as f:
            f.write(text)
    print(text)


if __name__ == "__main__":
    main()
