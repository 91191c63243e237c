#!/usr/bin/env python3
"""Three L2 mechanisms measured directly on an H100 (scripts/silicon/calib/run_mechanisms.sh),
against what the model does: where two SMs' reads of the same tile merge (one TPC or two TPCs of
one GPC), how far apart the CTAs of a persistent GEMM main loop run (per-CTA step times), and
whether promotion's second DRAM reads follow the tiles or the lines in flight.

  scripts/mechanisms_report.py [--gpu h100] [--sim build/tma-sim] [--arch FILE] [--jobs N]
                               [--no-replay] [--report docs/calibration/mechanisms_h100.md]

Data: tests/calibration/GPU/coalesce_tpc*.csv, gemm_skew.csv.gz, space_fills*.csv, placement.csv,
gemm.csv. The fills points are replayed through the model (48 tiles per SM, as heldout_space.py
does; about a minute with two jobs) unless --no-replay. Standard library only.
"""
import argparse
import collections
import csv
import gzip
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import calibrate as cal  # noqa: E402
import heldout_space as hs  # noqa: E402


def rows(path):
    """A CSV's rows, each with its file's path (heldout_space.space_scenario finds the kernel's costs by it)."""
    with open(path) as f:
        return [dict(r, path=path) for r in csv.DictReader(f)]


# ---------------------------------------------------------------- where reads merge
def coalesce_section(data):
    pts = {r["point"]: r for r in rows(os.path.join(data, "coalesce_tpc.csv"))}
    out = ["## Where two SMs' reads of the same tile merge", "",
           "`coalesce.cu` points 64-95: pairs of CTAs streaming the same 8 KB tiles (or, `shared` 0, each its own), "
           "in 4-CTA clusters: `tpc4` pairs ranks 0+1 (the two SMs of one TPC), `gpc` pairs ranks 0+2 (two TPCs of "
           "one GPC; placement.csv: ranks 0-1 and 2-3 sit on SMs 2t, 2t+1 and 2t+16, 2t+17). Share of the loaded "
           "bytes that reach the L2 (ncu TEX sectors x 32 / bytes): 0.5 means every read of the pair merged.", "",
           "| source | pairs | delay ns | one TPC | two TPCs of one GPC |", "| --- | ---: | ---: | ---: | ---: |"]
    share = {}
    for t in rows(os.path.join(data, "coalesce_tpc_traffic.csv")):
        r = pts.get(t["point"])
        if not r:
            continue
        s = float(t["lts__t_sectors_srcunit_tex_op_read.sum"]) * 32 / float(t["requested_bytes"])
        share[(r["placement"], r["source"], r["pairs"], r["delay_ns"] if r["shared"] == "1" else "own")] = s
    keys = sorted({k[1:] for k in share}, key=lambda k: (k[0], int(k[1]), -1 if k[2] == "own" else int(k[2])))
    diffs = []
    for src, pairs, d in keys:
        a, b = share.get(("tpc4", src, pairs, d)), share.get(("gpc", src, pairs, d))
        if a is not None and b is not None:
            diffs.append(abs(a - b))
        out.append("| %s | %s | %s | %s | %s |" % (src, pairs, "(own tiles)" if d == "own" else d,
                                                  "%.3f" % a if a is not None else "-", "%.3f" % b if b is not None else "-"))
    out += ["", "The two placements differ by %.3f at most (mean %.3f): the reads merge across the TPCs of a GPC as "
            "within one TPC, so the merging point is the GPC's, as the model has it (`l2.gpc_sms`)."
            % (max(diffs), statistics.mean(diffs)), ""]
    return out


# ---------------------------------------------------------------- GEMM CTAs apart
def gpc_of_sm(placement):
    """GPCs from placement.csv: the CTAs of a cluster share a GPC (union of every cluster's SMs)."""
    parent = {}

    def find(x):
        parent.setdefault(x, x)
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    clusters = collections.defaultdict(list)
    for r in rows(placement):
        find(int(r["smid"]))
        if r["mode"] == "cluster":
            clusters[(r["cluster_size"], r["repeat"], r["cluster"])].append(int(r["smid"]))
    for sms in clusters.values():
        for s in sms[1:]:
            parent[find(s)] = find(sms[0])
    return {s: find(s) for s in parent}


def read_skew(path):
    """gemm --skew's file: {point: {cta: {step: t_ns}}} and {point: {cta: smid}}."""
    steps = collections.defaultdict(lambda: collections.defaultdict(dict))
    sm = collections.defaultdict(dict)
    with gzip.open(path, "rt") as f:
        for r in csv.DictReader(f):
            steps[r["point"]][int(r["cta"])][int(r["step"])] = int(r["t_ns"])
            sm[r["point"]][int(r["cta"])] = int(r["smid"])
    return steps, sm


def split_rates(d):
    """Each CTA's k-steps per us over its run, the median, and the fast CTAs (20% above it)."""
    rate = {c: max(v) / (v[max(v)] - v[0]) * 1e3 for c, v in d.items()}
    med = statistics.median(rate.values())
    return rate, med, sorted(c for c in d if rate[c] > 1.2 * med)


def skew_section(data):
    gemm = {r["point"]: r for r in rows(os.path.join(data, "gemm.csv"))}
    gpc = gpc_of_sm(os.path.join(data, "placement.csv"))
    steps, sm = read_skew(os.path.join(data, "gemm_skew.csv.gz"))
    out = ["## How far apart a GEMM's CTAs run", "",
           "`gemm.cu --skew`: one launch of each point (8192^3 bf16, 128x128x64, 6 stages, 132 persistent CTAs), each "
           "CTA's consumer logging when it gets every 16th k-step's data, and its SM. Rate: k-steps per us over the "
           "whole run. `fast`: CTAs more than 20% above the median rate.", "",
           "| point | raster, promotion, cycles a step | span us | median steps/us | fast CTAs: SMs | fast steps/us | "
           "slow CTAs after the fast ones end | same-GPC spread at step 128 / 1024 (ns, median) |",
           "| --- | --- | ---: | ---: | --- | ---: | --- | --- |"]
    fast_sets = []
    for p in sorted(steps, key=int):
        g, d = gemm[p], steps[p]
        rate, med, fast = split_rates(d)
        fast_sms = sorted(sm[p][c] for c in fast)
        if fast:
            fast_sets.append(tuple(fast_sms))
        slow = [c for c in d if c not in fast]
        after = "-"
        if fast:
            t_fast = max(max(d[c].values()) for c in fast)

            def rate_in(c, t0, t1):
                pts = sorted((t, s) for s, t in d[c].items() if t0 <= t <= t1)
                return (pts[-1][1] - pts[0][1]) / (pts[-1][0] - pts[0][0]) * 1e3 if len(pts) > 1 and pts[-1][0] > pts[0][0] else None
            before = [x for x in (rate_in(c, 0.2 * t_fast, 0.9 * t_fast) for c in slow) if x]
            later = [x for x in (rate_in(c, 1.02 * t_fast, 1e18) for c in slow) if x]
            if before and later:
                after = "%.3f -> %.3f steps/us (%+.0f%%)" % (statistics.median(before), statistics.median(later),
                                                            100 * (statistics.median(later) / statistics.median(before) - 1))

        def spread(step):
            groups = collections.defaultdict(list)
            for c, v in d.items():
                if step in v:
                    # CTAs of one GPC at the same output-tile index and step: for the M and grouped
                    # rasters they share the B tile (M: 8 consecutive CTAs per GPC half)
                    groups[(gpc[sm[p][c]], (c + 132 * (step // 128)) // 64 if g["raster"] == "m" else c // 8)].append(v[step])
            s = [max(x) - min(x) for x in groups.values() if len(x) > 1]
            return statistics.median(s) if s else 0
        out.append("| %s | %s, %s, %s | %.0f | %.3f | %d: %s | %s | %s | %.0f / %.0f |" % (
            p, g["raster"], g["l2_promotion"], g["compute_cycles"], max(max(v.values()) for v in d.values()) / 1e3, med,
            len(fast), ",".join(map(str, fast_sms)) if len(fast_sms) <= 24 else "%d SMs" % len(fast_sms),
            "%.3f" % statistics.median(rate[c] for c in fast) if fast else "-", after, spread(128), spread(1024)))
    same = len(set(fast_sets)) == 1 if fast_sets else False
    rate0, _, fast0 = split_rates(steps["0"])
    fr = statistics.median(rate0[c] for c in fast0)
    sr = statistics.median(x for c, x in rate0.items() if c not in fast0)
    out += ["", "Memory-bound (0 cycles a step), every raster has %s %d fast SMs: they run %.0f%% faster than the other "
            "%d (point 0) and finish a quarter of the span early, and CTAs that share tiles drift apart by microseconds "
            "within a few output tiles. Compute-bound (512, 1024 cycles a step) all CTAs keep one rate and stay within "
            "0.6 us of each other. One reading, not proven: GH100 has 8 GPCs of 9 TPCs in groups of 3 (CPCs); the "
            "H100 SXM enables 66 of the 72 TPCs, which can leave 6 groups of 2 TPCs, 24 SMs. Per group the rates come "
            "to about the same share (4 x %.2f = %.1f k-steps per us against 6 x %.2f = %.1f), as if the L2's "
            "throughput were shared out per group when saturated; in the M and N rasters the slow CTAs speed up by "
            "9-18%% once the fast ones end (the grouped raster's do not), so unused shares go to others. The model's "
            "SMs are all alike: its CTAs run in step and keep merging their shared B tiles (45%% of the bytes merged in "
            "the model, 11%% on silicon), and silicon's drifting CTAs read shared panels from DRAM again (0.361 DRAM "
            "bytes per byte asked, gemm_traffic.csv; the model's whole-kernel replay 0.254)."
            % ("the same" if same else "", len(fast_sets[0]) if fast_sets else 0, 100 * (fr / sr - 1),
               len(steps["0"]) - len(fast_sets[0]) if fast_sets else 0, fr, 4 * fr, sr, 6 * sr), ""]
    return out


def second_chip_section(data):
    """gemm_skew_shapes.csv.gz and space_cta_times.csv: a later call, on another H100."""
    out = ["## The fast SMs are the chip's", "",
           "A second device call (another H100 80GB HBM3, cta_times_conditions.txt): `gemm.cu --skew --only 27,36,45,54` "
           "(128x256 tiles) and `space.cu --cta-times` (group `cta`: each CTA's start and end in one launch of four "
           "streams).", "", "| what | CTAs | fast (>20% above the median rate, or ending before 85% of the median end): SMs |",
           "| --- | ---: | --- |"]
    steps, sm = read_skew(os.path.join(data, "gemm_skew_shapes.csv.gz"))
    gemm = {r["point"]: r for r in rows(os.path.join(data, "gemm.csv"))}
    for p in sorted(steps, key=int):
        d = steps[p]
        fast = sorted(sm[p][c] for c in split_rates(d)[2])
        g = gemm[p]
        out.append("| GEMM %sx%sx%s %sx%s %s raster, 0 cycles | %d | %d: %s |" % (
            g["M"], g["N"], g["K"], g["BM"], g["BN"], g["raster"], len(d), len(fast), ",".join(map(str, fast))))
    pts = {}
    for r in rows(os.path.join(data, "space_cta_times.csv")):
        pts.setdefault(r["point"], []).append((int(r["smid"]), int(r["end_ns"])))
    for p, v in sorted(pts.items()):
        med = statistics.median(e for _, e in v)
        early = sorted({s for s, e in v if e < 0.85 * med})
        out.append("| stream, space.cu point %s | %d | %d: %s |" % (p, len(v), len(early), ",".join(map(str, early))))
    out += ["", "On this chip 12 SMs (6 TPCs) are fast, other SMs than the first chip's 24: the same ones in every "
            "8192^3 GEMM raster and in the 32 B x 256 column-order stream (point 803, 2 CTAs per SM). The 128 B x 64 "
            "streams end within 15% of each other on every SM (800-801 are L2-resident and last 4 us, too short to "
            "tell; 802 is DRAM-bound), and so do the 16384x4096x4096 GEMM's CTAs. Which SMs get more depends on the "
            "chip (which TPCs it has disabled): a model of it needs the chip's SM groups, and a rule for how the L2 "
            "shares out its requests among them.", ""]
    return out


# ---------------------------------------------------------------- second DRAM reads
def fills_section(data, preds):
    tr = {r["point"]: r for r in rows(os.path.join(data, "space_fills_traffic.csv"))}
    pts = rows(os.path.join(data, "space_fills.csv"))
    out = ["## Second DRAM reads: tiles or lines in flight", "",
           "`space.cu` group `fills` (points 728-799): 32 B-wide boxes of 64, 128 and 256 rows (each row its own "
           "128-byte line, rows 16 KB apart) over a 256 MB tensor, 132 or 264 CTAs (two CTAs' shared memory each) x 2, "
           "4 or 8 stages. Lines in flight: CTAs x stages x rows. DRAM bytes read per byte asked (ncu)%s." %
           (", silicon against the model" if preds else ""), "",
           "| rows | CTAs | stages | tiles in flight | lines in flight (k) | order | promotion | DRAM B/B silicon | %s"
           "GB/s silicon |%s" % ("model | " if preds else "", " model |" if preds else ""),
           "| ---: | ---: | ---: | ---: | ---: | --- | --- | ---: | %s---: |%s" % ("---: | " if preds else "", " ---: |" if preds else "")]
    by_lines = collections.defaultdict(list)
    for i, r in enumerate(pts):
        t = tr.get(r["point"])
        if not t:
            continue
        tiles = int(r["grid"]) * int(r["stages"])
        lines = tiles * int(r["rows"])
        sil = float(t["dram_read_per_requested_byte"])
        by_lines[(lines, int(r["rows"]))].append(sil)
        m = preds[i] if preds else None
        out.append("| %s | %s | %s | %d | %.0f | %s | %s | %.3f | %s%s |%s" % (
            r["rows"], r["grid"], r["stages"], tiles, lines / 1e3, r["order"], r["l2_promotion"], sil,
            "%.3f | " % (m["dram_read_bytes"] / m["bytes_loaded"]) if m else "", r["span_gbps"],
            " %.0f |" % m["load_bandwidth_gbs"] if m else ""))
    out += ["", "Worst DRAM bytes per byte by lines in flight and box height:", "",
            "| lines in flight (k) | rows | points | worst DRAM B/B |", "| ---: | ---: | ---: | ---: |"]
    for (lines, nrows), v in sorted(by_lines.items()):
        out.append("| %.0f | %d | %d | %.3f |" % (lines / 1e3, nrows, len(v), max(v)))
    out += ["", "Tiles in flight do not decide it: 2112 tiles of 64 rows read everything once (at most 1.016), 528 "
            "tiles of 256 rows read up to 1.315. Lines in flight set a threshold: none up to 68k lines (8.7 MB of "
            "128-byte lines), at 135k (17 MB) 1.02, 1.16 and 1.32 at most for boxes of 64, 128 and 256 rows, and "
            "1.46-1.55 from 270k (35 MB, 70%% of the L2's 50 MB) on, in column order; row order reads twice only "
            "with 128B promotion, 1.24-1.26, from 270k. So it grows with the lines being filled at once and, at the "
            "same count, with the box's height (its rows are 16 KB apart: 4 MB of addresses for 256 rows). Silicon "
            "keeps that many rows in flight (264 CTAs x 8 stages x 256 rows is 4096 box rows per SM); the model lets "
            "a TMA unit have 512 (`tma.max_outstanding_requests`, fitted to tall boxes' bandwidth), so it cannot "
            "reach the regime%s." % (", and reads 1.00-1.09 everywhere" if preds else ""), ""]
    return out


def replay_fills(data, sim, arch, jobs, cache):
    runner = cal.Runner(sim, arch, jobs, cache)
    scen = []
    for r in rows(os.path.join(data, "space_fills.csv")):
        r = dict(r)
        r["ctas_per_sm"] = str(int(r["grid"]) // 132)
        scen.append(hs.space_scenario(r, 48, sampled_col=True))
    import concurrent.futures
    with concurrent.futures.ThreadPoolExecutor(jobs) as ex:
        out = list(ex.map(lambda j: runner.run_one(j[0], j[1], []), scen))
    runner.save()
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--gpu", default="h100")
    ap.add_argument("--sim", default=os.path.join(cal.ROOT, "build/tma-sim"))
    ap.add_argument("--arch", default=None)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--cache", default=os.path.join(cal.ROOT, "build/mechanisms-cache.json"))
    ap.add_argument("--no-replay", action="store_true")
    ap.add_argument("--report", default=None)
    a = ap.parse_args()
    data = os.path.join(cal.ROOT, "tests/calibration", a.gpu)
    arch = a.arch or os.path.join(cal.ROOT, "configs/arch/%s.yaml" % a.gpu)
    t0 = time.time()
    preds = None if a.no_replay else replay_fills(data, a.sim, arch, a.jobs, a.cache)
    text = "\n".join(["# Three L2 mechanisms measured directly (%s)" % a.gpu, "",
                      "Written by `scripts/mechanisms_report.py` from tests/calibration/%s/ (run_mechanisms.sh, "
                      "mechanisms_conditions.yaml) and configs/arch/%s.yaml. Nothing here was fitted." % (a.gpu, a.gpu), ""]
                     + coalesce_section(data) + skew_section(data) + second_chip_section(data)
                     + fills_section(data, preds))
    print(text)
    print("\n%.0f s" % (time.time() - t0), file=sys.stderr)
    if a.report:
        with open(a.report, "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    main()
