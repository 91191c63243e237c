#!/usr/bin/env python3
"""The model against silicon it was never fitted to: FlashAttention-3-style forward loops, split-KV
decode loops and persistent GEMM main loops (one table per workload: time, DRAM bytes, L2 hit
rate, the ranking of promotions and rasters), and pairs of CTAs loading the same tiles a set time
apart (the GPC read coalescer). Data: tests/calibration/h100/workloads*.csv, coalesce*.csv,
gemm*.csv (scripts/silicon/calib/run_workloads.sh, run_space.sh).

  scripts/heldout_workloads.py [--gpu h100] [--jobs N] [--report docs/calibration/heldout_workloads.md]
                               [--skip-gemm] [--skip-long]

Every point is replayed whole (the attention and decode loops, the coalesce pairs) except the GEMM
main loops, whose whole kernel is taken from one and two output tiles per CTA (heldout_space.py's
gemm_bandwidth). The measurement kernels' consumer (wait, read a word, spin, release) costs a step
what its build was measured to cost beside the spin (run_kernel_costs.sh: GEMM by
heldout_space.gemm_step_cost, attention by attention_step_cost below), and without a spin, or at a
spin no cost point measured (decode's 1,024), what the bandwidth kernel's does per stage
(CONSUMER_CYCLES, calibrate.py's fit on other kernels). The coalesce pairs' producer loop issues a
load at most every so many cycles, taken from their own streams warm in the L2 with nothing to
merge (coalesce_issue_cycles: one tile a loop there), and their consumer costs space.cu's measured
95 cycles; nothing else is set from these data.
Standard library only.
"""
import argparse
import csv
import json
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import calibrate as cal  # noqa: E402
import heldout_space as hs  # noqa: E402

CONSUMER_CYCLES = hs.FITTED_CONSUMER_CYCLES
SM_MHZ = 1980  # the coalesce kernel's delays are in ns; the model's SM clock (h100.yaml)


def rows(path):
    return hs.rows(path) if os.path.exists(path) else []


def traffic(path):
    return {t["point"]: t for t in rows(path)}


# ---------------------------------------------------------------- attention and decode
# run_kernel_costs.sh's attention point (kernel_costs_points.py): one batch of 4 query heads on one KV
# head over 8,192 tokens, 128 KV steps a CTA, whose operands stay in the L2 and whose steps the
# consumer alone bounds, in workloads.csv's columns.
COST_POINT = {"kind": "attention", "batch": "1", "heads": "4", "kv_heads": "1", "seq_q": "8192", "seq_kv": "8192",
              "head_dim": "128", "block_m": "128", "block_n": "128", "q_heads_per_box": "1", "causal": "0",
              "split_kv": "1", "stages": "2", "l2_promotion": "none"}
COST_SHAPE = "attention b1 h4/1 s8192 causal0"


def attention_step_cost(run_all, data_file, spin):
    """What workloads.cu's consumer costs a KV step beside a spin of `spin` cycles in the build that
    measured `data_file` ("h200/workloads.csv"): the model replays the cost point (COST_POINT) with
    the fitted cost, and the cost is that plus the difference between silicon's span and the
    model's, per KV step of a CTA (the model's span is the consumer's steps plus what they do not
    bound, the first loads, each item's Q, the last CTA's end, which it models). None where no cost
    point measured the spin."""
    cost_rows = [r for r in hs.kernel_cost_rows("workloads", data_file)
                 if r["shape"] == COST_SHAPE and int(r["compute_cycles"]) == spin]
    if not cost_rows:
        return None
    spans = [float(r["span_us"]) * float(r["sm_mhz"]) for r in cost_rows]
    n = int(cost_rows[0]["steps_per_cta"])
    sc, _ = workload_scenario(dict(COST_POINT, compute_cycles=str(spin)))
    s = run_all([(sc, ["workload.compute_cycles=%d" % (spin + CONSUMER_CYCLES)])])[0]
    return CONSUMER_CYCLES + (statistics.median(spans) - s["seconds"] * 1e6 * SM_MHZ) / n


def workload_scenario(r, step_cost=None):
    decode = r["kind"] == "decode"
    b, h, kvh = int(r["batch"]), int(r["heads"]), int(r["kv_heads"])
    sq, skv, d = int(r["seq_q"]), int(r["seq_kv"]), int(r["head_dim"])
    bm, bn, hq, split = int(r["block_m"]), int(r["block_n"]), int(r["q_heads_per_box"]), int(r["split_kv"])
    promo = r["l2_promotion"]
    text = ("name: heldout_%s\nsms: 132\ntensors:\n"
            "  Q: {dtype: bf16, dims: [%d, %d, %d, %d], address: 0x100000000}\n"
            "  K: {dtype: bf16, dims: [%d, %d, %d, %d], address: 0x200000000}\n"
            "  V: {dtype: bf16, dims: [%d, %d, %d, %d], address: 0x300000000}\n"
            "  O: {dtype: %s, dims: [%d, %d, %d, %d], address: 0x400000000}\n"
            "descriptors:\n"
            "  Q_tile: {tensor: Q, box: [64, %d, %d, 1], swizzle: 128B, l2_promotion: 128B}\n"
            "  K_tile: {tensor: K, box: [64, %d, 1, 1], swizzle: 128B, l2_promotion: %s}\n"
            "  V_tile: {tensor: V, box: [64, %d, 1, 1], swizzle: 128B, l2_promotion: %s}\n"
            "  O_tile: {tensor: O, box: [64, %d, %d, 1]}\n"
            "workload:\n  kind: %s\n  q: Q_tile\n  k: K_tile\n  v: V_tile\n  o: O_tile\n"
            "  stages: %s\n  split_kv: %d\n%s"
            % (r["kind"], d, sq, h, b, d, skv, kvh, b, d, skv, kvh, b, "f32" if decode else "bf16", d, sq, h, b * split,
               bm, hq, bn, promo, bn, promo, bm, hq, r["kind"], r["stages"], split,
               "" if decode else "  causal: %s\n" % ("true" if r["causal"] == "1" else "false")))
    cost = CONSUMER_CYCLES if step_cost is None else step_cost
    return text, ["workload.compute_cycles=%d" % round(int(r["compute_cycles"]) + cost)]


def workload_label(r):
    if r["kind"] == "decode":
        return "decode b%s kv%s split%s, %s, %s cyc" % (r["batch"], r["seq_kv"], r["split_kv"], r["l2_promotion"],
                                                      r["compute_cycles"])
    return "%s b%s h%s/%s s%s, %s, %s cyc" % ("causal" if r["causal"] == "1" else "full", r["batch"], r["heads"],
                                            r["kv_heads"], r["seq_q"], r["l2_promotion"], r["compute_cycles"])


# ---------------------------------------------------------------- coalesce pairs (traces)
def coalesce_tiles(r):
    """A coalesce point's tile rows (of 128 B) and stages: its columns, or the 64 and 4 of the
    points measured before coalesce.cu had them."""
    return int(r.get("tile_rows") or 64), int(r.get("stages") or 4)


def coalesce_background(r):
    """A coalesce point's background: clusters streaming their own tiles, and their stages (none
    before point 116)."""
    return int(r.get("bg_pairs") or 0), int(r.get("bg_stages") or 0)


def coalesce_launch(r):
    """How coalesce.cu launches a point's kernel: as clusters (cluster, gpc, tpc4, group<g>) or plain
    (apart, consec<g>)."""
    return "plain" if r["placement"] == "apart" or r["placement"].startswith("consec") else "cluster"


def coalesce_group(r):
    """(g, readers) of a point: its groups' CTAs and how many of them read each set of tiles (coalesce.cu's
    group<g>[r<r>] and consec<g>, points 133 on; the pairs' placements: 2 and 2)."""
    pl = r["placement"]
    for k in ("group", "consec"):
        if pl.startswith(k):
            g, _, rd = pl[len(k):].rstrip("c").partition("r")  # ...c: delays spun on the SM clock
            return int(g), int(rd or g)
    return 2, 2


def pack_clusters(sizes, gpc_sms=16, sms=132):
    """Model SMs for clusters of these sizes, each inside one GPC of `gpc_sms` consecutive SMs where one
    has room (first fit), else on the lowest free SMs (silicon's GPCs hold 16-18 SMs, the model's 16)."""
    free = [list(range(g0, min(g0 + gpc_sms, sms))) for g0 in range(0, sms, gpc_sms)]
    out = []
    for n in sizes:
        gpc = next((f for f in free if len(f) >= n), None)
        if gpc is None:
            left = sorted(sm for f in free for sm in f)[:n]
            for f in free:
                f[:] = [sm for sm in f if sm not in left]
            out.append(left)
        else:
            out.append(gpc[:n])
            del gpc[:n]
    return out


def coalesce_issue_cycles(points):
    """{launch: cycles a load} of coalesce.cu's producer loop, per kernel it launches: a stream of its
    8 KB tiles warm in the L2 with nothing to merge (`source` l2, `shared` 0) runs at one tile per
    loop of its producer at any number of pairs (H100 and H200: 469-475 cycles a tile as clusters,
    418-422 plain, at 8 and at 60-66 pairs alike), so the point with the fewest pairs gives it. The
    capacity points (96 on, another build of the same loop, 32 KB tiles that the loop does not
    bind) take the cluster kernel's."""
    out = {}
    for r in sorted(points, key=lambda r: int(r["pairs"])):
        if r["source"] == "l2" and r["shared"] == "0" and coalesce_launch(r) not in out:
            tile_rows, _ = coalesce_tiles(r)
            ctas = 2 * int(r["pairs"])
            out[coalesce_launch(r)] = round(128 * tile_rows * ctas / (float(r["span_gbps"]) * 1e3) * SM_MHZ)
    return out


def coalesce_trace(r, issue_cycles, consumer_cycles):
    """A trace: each pair's two CTAs load the same tiles (128 B x tile_rows, 64 rows before the
    capacity points) through `stages` stages (4 before them) in the same order, the second after a
    first step that only computes the delay (its loads wait for it); the producer issues a load at
    most every `issue_cycles` (coalesce_issue_cycles) and the consumer spends `consumer_cycles` on
    each (space.cu's measured consumer: wait, release). Beside them (points 116 on) `bg_pairs`
    clusters whose CTAs stream their own tiles through `bg_stages` stages; the trace's ring is the
    deeper of the two, and one-stage pairs in a deeper ring wait for their last tile's release."""
    pairs, delay_ns, shared = int(r["pairs"]), int(r["delay_ns"]), int(r["shared"])
    g, readers = coalesce_group(r)
    sets = g // readers  # sets of tiles a group reads (groups of g CTAs, `readers` on each set)
    tiles = int(r["tiles_per_cta"])
    tile_rows, stages = coalesce_tiles(r)
    bg_pairs, bg_stages = coalesce_background(r)
    ring = max(stages, bg_stages)
    if stages not in (1, ring):
        raise ValueError("point %s: pairs of %d stages beside a background of %d" % (r["point"], stages, bg_stages))
    tile_bytes = 128 * tile_rows
    region_tiles = 16 if r["source"] == "l2" else tiles
    # model SMs: a 2-CTA cluster's two CTAs on neighbouring SMs (one TPC; the background's clusters
    # after the pairs'); a 4-CTA cluster's four on SMs 4c to 4c + 3 (one GPC of 16), its pairs on
    # one TPC each (`tpc4`) or across its two TPCs (`gpc`); `apart` on SMs p and p + max(pairs, 64):
    # other GPCs, every CTA its own SM; a g-CTA cluster (`group<g>`) inside one GPC where one has
    # room (pack_clusters); `consec<g>` CTA b on SM b (the model's SMs are numbered in silicon's
    # dealing order)
    def pair_sms(p):
        c, k = divmod(p, 2)
        return {"cluster": (2 * p, 2 * p + 1), "tpc4": (4 * c + 2 * k, 4 * c + 2 * k + 1),
                "gpc": (4 * c + k, 4 * c + k + 2)}.get(r["placement"], (p, max(pairs, 64) + p))
    if r["placement"].startswith("group"):
        sms = pack_clusters([g] * pairs)
    elif r["placement"].startswith("consec"):
        sms = [list(range(g * p, g * p + g)) for p in range(pairs)]
    else:
        sms = [pair_sms(p) for p in range(pairs + bg_pairs)]
    rows_total = (1 << 30) // 128
    scen = {"name": "heldout_coalesce", "sms": 132, "cluster_size": 1, "gpu": "sm_90", "memory_fill": "word_hash",
            "arch": "configs/arch/h100.yaml", "l2_state": "warm" if r["source"] == "l2" else "clean",
            "tensors": {"D": {"dtype": "u8", "dims": [128, rows_total], "strides": [128], "address": 0x100000000}},
            "descriptors": {"D_tile": {"tensor": "D", "mode": "tiled", "box": [128, tile_rows], "swizzle": "none",
                                       "l2_promotion": "none", "location": "param"}}}
    grid, ctas = [], []
    for p in range(pairs + bg_pairs):
        for rank in range(g if p < pairs else 2):
            grid.append(sms[p][rank])
            ctas.append((p, rank))
    lines = [json.dumps({"format": "tma-trace", "version": 1, "scenario": scen, "stages": ring, "grid": grid,
                         "issue_cycles": issue_cycles})]
    # The producer's loop counts the first step (which issues nothing) as a step, so every CTA's
    # first load goes issue_cycles after it starts; the follower's first step lasts that much longer.
    def delay(reader):  # reader k of a set starts k x delay_ns after the first
        return round(reader * delay_ns * SM_MHZ / 1000) + issue_cycles if delay_ns and reader else 0
    for c, (p, rank) in enumerate(ctas):
        sm = grid[c]
        background = p >= pairs
        # shared: the group's set rank % sets, read by its readers in the order rank // sets
        region = p * sets + rank % sets if shared and not background else (c if g > 2 else 2 * p + rank)
        reader = rank // sets
        own_stages = bg_stages if background else stages
        lines.append(json.dumps({"cta": c, "sm": sm, "step": 0, "issue": "consumer", "op": "none", "stage": 0,
                                 "phase": 0, "expects": 0,
                                 "compute_cycles": 0 if background else delay(reader)}))
        for t in range(tiles):
            step = t + 1
            row = (region * region_tiles + t % region_tiles) * tile_rows
            lines.append(json.dumps({"cta": c, "sm": sm, "step": step, "issue": "producer", "op": "load",
                                     "descriptor": "D_tile", "coords": [0, row],
                                     "smem_addr": (step % ring) * tile_bytes,
                                     "wait": "released" if step == 1 or own_stages < ring else "stage",
                                     "stage": step % ring, "phase": step // ring, "expects": 1,
                                     "compute_cycles": consumer_cycles}))
    return "\n".join(lines) + "\n"


class Table:
    """One workload's rows: label, silicon and model time, DRAM bytes, hit rate."""

    def __init__(self, name):
        self.name, self.rows = name, []

    def add(self, label, key, t_sil, t_mod, dram_sil, dram_mod, hit_sil, hit_mod):
        self.rows.append((label, key, t_sil, t_mod, dram_sil, dram_mod, hit_sil, hit_mod))

    def markdown(self, time_unit):
        out = ["| point | silicon %s | model | error | DRAM bytes silicon | model | error | L2 hit silicon | model |" % time_unit,
               "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
        for lab, _, ts, tm, ds, dm, hs_, hm in self.rows:
            out.append("| %s | %.4g | %.4g | %+.1f%% | %s | %s | %s | %s | %s |" % (
                lab, ts, tm, 100 * (tm - ts) / ts,
                "%.3g" % ds if ds is not None else "-", "%.3g" % dm,
                "%+.1f%%" % (100 * (dm - ds) / ds) if ds else "-",
                "%.1f%%" % (100 * hs_) if hs_ is not None else "-", "%.1f%%" % (100 * hm)))
        return out

    def summary(self):
        te = [abs(r[3] - r[2]) / r[2] for r in self.rows]
        de = [abs(r[5] - r[4]) / r[4] for r in self.rows if r[4]]
        he = [abs(r[7] - r[6]) for r in self.rows if r[6] is not None]
        return "| %s | %d | %.1f%% | %.1f%% | %s | %s |" % (
            self.name, len(self.rows), 100 * statistics.mean(te), 100 * max(te),
            "%.1f%%" % (100 * statistics.mean(de)) if de else "-",
            "%.1f points" % (100 * statistics.mean(he)) if he else "-")

    def rankings(self, group_of, variant_of):
        """Within each group (the point without the varied parameter), is the order of the variants
        by time the same on silicon and in the model? (ties within 2% on silicon count as either)"""
        groups = {}
        for row in self.rows:
            groups.setdefault(group_of(row[1]), []).append(row)
        same = total = 0
        detail = []
        for g, rs in groups.items():
            if len(rs) < 2:
                continue
            total += 1
            ok = True
            for i in range(len(rs)):
                for j in range(i + 1, len(rs)):
                    ds = rs[i][2] - rs[j][2]
                    dm = rs[i][3] - rs[j][3]
                    if abs(ds) > 0.02 * max(rs[i][2], rs[j][2]) and ds * dm <= 0:
                        ok = False
            same += ok
            if not ok:
                detail.append("%s: silicon %s, model %s" % (
                    g, " < ".join(variant_of(r[1]) for r in sorted(rs, key=lambda r: r[2])),
                    " < ".join(variant_of(r[1]) for r in sorted(rs, key=lambda r: r[3]))))
        return same, total, detail


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--gpu", default="h100")
    ap.add_argument("--sim", default=os.path.join(cal.ROOT, "build/tma-sim"))
    ap.add_argument("--arch", default=None, help="architecture file (default configs/arch/GPU.yaml)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--cache", default=os.path.join(cal.ROOT, "build/heldout-cache.json"))
    ap.add_argument("--report", default=None)
    ap.add_argument("--skip-gemm", action="store_true")
    ap.add_argument("--skip-long", action="store_true", help="leave out the 8192-token attention (8.7 GB a point)")
    ap.add_argument("--only", default="attention,gemm,coalesce",
                    help="comma-separated workloads to replay: attention (with decode), gemm, coalesce (default all)")
    a = ap.parse_args()
    only = set(a.only.split(","))
    if only - {"attention", "gemm", "coalesce"}:
        ap.error("--only: unknown workload(s) %s (attention, gemm, coalesce)" % ", ".join(sorted(only - {"attention", "gemm", "coalesce"})))
    data = os.path.join(cal.ROOT, "tests/calibration", a.gpu)
    arch = a.arch or os.path.join(cal.ROOT, "configs/arch/%s.yaml" % a.gpu)
    runner = cal.Runner(a.sim, arch, a.jobs, a.cache)
    t0 = time.time()

    def run_all(jobs):
        import concurrent.futures
        with concurrent.futures.ThreadPoolExecutor(a.jobs) as ex:
            out = list(ex.map(lambda j: runner.run_one(j[0], j[1], [], *j[2:]), jobs))
        runner.save()
        return out

    out = ["# Held-out workloads: attention, decode, GEMM main loops, coalescing (%s)" % a.gpu, "",
           "Written by `scripts/heldout_workloads.py --report ...` from tests/calibration/%s/ (workloads.csv, "
           "workloads_traffic.csv, gemm.csv, gemm_traffic.csv, coalesce*.csv) and "
           "configs/arch/%s.yaml. Nothing in these files was fitted." % (a.gpu, a.gpu), ""]
    summaries = []
    n_runs = 0

    # attention and decode
    wl = rows(os.path.join(data, "workloads.csv")) if "attention" in only else []
    if a.skip_long:
        wl = [r for r in wl if not (r["kind"] == "attention" and r["seq_q"] == "8192")]
    wtr = traffic(os.path.join(data, "workloads_traffic.csv"))
    costs = {}
    for spin in sorted({int(r["compute_cycles"]) for r in wl if r["kind"] == "attention" and r["compute_cycles"] != "0"}):
        costs[spin] = attention_step_cost(run_all, a.gpu + "/workloads.csv", spin)
    preds = run_all([workload_scenario(r, costs.get(int(r["compute_cycles"])) if r["kind"] == "attention" else None)
                     for r in wl])
    n_runs += len(wl)
    tables = {"attention": Table("FlashAttention-3 forward loop"), "decode": Table("split-KV decode loop")}
    for r, s in zip(wl, preds):
        t = wtr.get(r["point"])
        dram_sil = (float(t["dram__bytes_read.sum"]) + float(t["dram__bytes_write.sum"])) if t else None
        hit_sil = float(t["tex_hit_rate"]) if t else None
        tables[r["kind"]].add(workload_label(r), r, float(r["span_us"]), s["seconds"] * 1e6, dram_sil,
                              s["dram_read_bytes"] + s["dram_write_bytes"], hit_sil, s["l2_hit_rate"])
    for kind, tab in tables.items():
        if not tab.rows:
            continue
        summaries.append(tab.summary())
        out += ["## %s" % tab.name, ""] + tab.markdown("us") + [""]
        same, total, detail = tab.rankings(
            lambda r: (r["kind"], r["batch"], r["seq_kv"], r["causal"], r["split_kv"], r["compute_cycles"]),
            lambda r: r["l2_promotion"])
        out.append("Promotions ranked by time as on silicon (differences above 2%%): %d of %d groups." % (same, total))
        out += ["- " + d for d in detail] + [""]

    # GEMM main loops (the whole kernel from one and two output tiles per CTA)
    if not a.skip_gemm and "gemm" in only:
        gm = [r for r in rows(os.path.join(data, "gemm.csv")) if r["M"] == "8192"]
        gtr = traffic(os.path.join(data, "gemm_traffic.csv"))
        n_runs += 2 * len(gm)
        tab = Table("GEMM main loop, 8192^3 (whole kernel from one and two output tiles per CTA)")
        for r, (gbps, hit, _) in zip(gm, hs.gemm_results(gm, run_all)):
            t = gtr.get(r["point"])
            # times per requested byte, in us per GB
            tab.add("%sx%s %s, %s, %s cyc" % (r["BM"], r["BN"], r["raster"], r["l2_promotion"], r["compute_cycles"]),
                    r, 1e3 / float(r["span_gbps"]), 1e3 / gbps, None, 0.0, float(t["tex_hit_rate"]) if t else None, hit)
        summaries.append(tab.summary())
        out += ["## %s" % tab.name, "", "Time per GB loaded (us/GB): the kernel's time from one and two output tiles "
                "per CTA (a tile's steady time, times the most tiles a CTA has). DRAM bytes are not compared, nor "
                "is the L2 hit rate the whole schedule's: the replay runs the first two tiles of each CTA.", ""]
        out += tab.markdown("us/GB") + [""]
        for what, grp, var in (("Rasters", lambda r: (r["BN"], r["l2_promotion"], r["compute_cycles"]),
                                lambda r: r["raster"]),
                               ("Promotions", lambda r: (r["BN"], r["raster"], r["compute_cycles"]),
                                lambda r: r["l2_promotion"])):
            same, total, detail = tab.rankings(grp, var)
            out.append("%s ranked by time as on silicon (differences above 2%%): %d of %d groups." % (what, same, total))
            out += ["- " + d for d in detail[:12]] + [""]

    # coalescing pairs (coalesce.csv; coalesce_capacity.csv, points 96 on, coalesce_background.csv,
    # 116 on, and coalesce_group.csv, 133 on, where measured)
    parts = ("coalesce", "coalesce_capacity", "coalesce_background", "coalesce_group")
    co = [r for part in parts for r in rows(os.path.join(data, part + ".csv"))] if "coalesce" in only else []
    ctr = {}
    for part in parts:
        ctr.update(traffic(os.path.join(data, part + "_traffic.csv")))
    issue = coalesce_issue_cycles(co)
    consumer, _ = hs.kernel_costs(data)
    cpreds = run_all([(coalesce_trace(r, issue[coalesce_launch(r)], round(consumer)), [], ".jsonl") for r in co])
    n_runs += len(co)
    out += [] if not co else ["## Two CTAs loading the same tiles a set time apart (GPC read coalescer)", "",
            "Share of the loaded bytes that reach the L2 (silicon: lts TEX sectors x 32 / bytes asked; model: "
            "bytes less those the GPC coalescer served). `cluster`: the pair is a 2-CTA cluster (one GPC); "
            "`tpc4` and `gpc`: 4-CTA clusters, each pair on one TPC or across two TPCs of one GPC (model: SMs 4c to 4c + 3); "
            "`apart`: CTAs p and p + pairs (silicon: other GPCs; model: SMs p and p + max(pairs, 64)). "
            "Tiles: 128 B x rows, through that many stages (coalesce_capacity.csv: 32 KB tiles, 1-6 stages). "
            "Background (coalesce_background.csv): that many more clusters stream their own tiles through that "
            "many stages beside the pairs; the share is the pairs' (the background's bytes, which nothing merges, "
            "taken out of both sides). Groups (coalesce_group.csv): `pairs` groups of g CTAs of one GPC on the same tiles, "
            "`group<g>` a g-CTA cluster (model: inside one of its GPCs of 16 SMs where one has room), `consec<g>` "
            "CTAs b..b+g-1 of a plain grid (model: SMs b..b+g-1), `group<g>r<r>` r of a cluster's CTAs on each set "
            "of tiles, spread over its TPCs; the delay is each rank's after the one before.", "",
            "| placement | source | pairs | tile rows x stages | background | delay ns | silicon | model | silicon GB/s "
            "| model GB/s |",
            "| --- | --- | ---: | --- | --- | ---: | ---: | ---: | ---: | ---: |"]
    errs = []
    for r, s in zip(co, cpreds):
        t = ctr.get(r["point"])
        if not t:
            continue
        req = float(t["requested_bytes"])
        bg_pairs, bg_stages = coalesce_background(r)
        bg = req * bg_pairs / (int(r["pairs"]) + bg_pairs)  # the background's bytes
        sil = (float(t["lts__t_sectors_srcunit_tex_op_read.sum"]) * 32 - bg) / (req - bg)
        mod = (s["bytes_loaded"] - s["gpc_coalesced_bytes"] - bg) / (s["bytes_loaded"] - bg)
        errs.append(abs(mod - sil))
        out.append("| %s | %s | %s | %d x %d | %s | %s | %.3f | %.3f | %s | %.0f |" % (
            (r["placement"], r["source"], r["pairs"]) + coalesce_tiles(r) + (
            "%d x %d" % (2 * bg_pairs, bg_stages) if bg_pairs else "-",
            r["delay_ns"] if r["shared"] == "1" else "(own tiles)", sil, mod, r["span_gbps"], s["load_bandwidth_gbs"])))
    if errs:
        summaries.append("| coalesce pairs: share of bytes reaching the L2 | %d | %.3f (abs) | %.3f (abs) | - | - |"
                         % (len(errs), statistics.mean(errs), max(errs)))
    out += [""]
    head = ["## Summary", "", "| workload | points | time mean abs error | worst | DRAM bytes mean abs error | L2 hit rate |",
            "| --- | ---: | ---: | ---: | ---: | ---: |"] + summaries + [""]
    text = "\n".join(out[:4] + head + out[4:])
    print(text)
    print("\n%d model runs, %.0f s" % (n_runs, time.time() - t0))
    if a.report:
        with open(a.report, "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    main()
