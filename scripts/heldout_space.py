#!/usr/bin/env python3
"""The model against the measurement space no fit has seen (tests/calibration/GPU/space*.csv,
gemm*.csv, descriptor_space.csv: scripts/silicon/calib/run_space.sh; GPU h100 or h200), family by family.

Nothing here is fitted: every family is held out of the architecture file's values, which come
from the older calibration set (scripts/calibrate.py). For each family it prints the mean absolute
error, the worst point, and for L2 promotion the effects silicon shows above 3% (sign reproduced,
within half their size). --report FILE writes the tables as Markdown.

  scripts/heldout_space.py [--gpu h100] [--jobs N] [--report docs/calibration/heldout_space.md]

Runs: each row-ordered streaming point a sample of its tiles (--tiles-per-sm, the rate of a
whole-tensor pass in steady state), each column-ordered one whole (a sample would end inside the
columns that share lines and promotion blocks, and its CTAs could not drift apart as a whole pass's
do; --sampled-col samples them too); the L2-state points of the 64 MB tensor whole (the dirty L2's fixed cost is
compared in microseconds); GEMM main loops one and two output tiles per CTA, the whole kernel's
time taken from them (gemm_bandwidth; their DRAM bytes, which depend on the whole schedule, are not
compared), or with --gemm-whole those without a spin whole (DRAM bytes compared), their consumers
costing what the measuring build's cost (gemm_step_cost). Standard library only.
"""
import argparse
import csv
import functools
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import calibrate as cal  # noqa: E402  (the Runner, scenario writers and cache)

# The bandwidth kernel's fitted per-tile cost (calibrate.py): what the replays of kernels whose own
# costs were not measured pay per stage (gemm.cu's and workloads.cu's steps without a spin, which
# their consumers never bind). space.cu's costs are measured (kernel_costs), and so are those of
# gemm.cu's and workloads.cu's consumers with a spin (gemm_step_cost, heldout_workloads.py).
FITTED_CONSUMER_CYCLES = 340
# run_kernel_costs.sh's table (every GPU's measuring builds, timed on one H200: a build's cycles a
# step are the same on both GPUs, 1,392.5 for the H100's gemm.csv build on either).
KERNEL_COSTS_CSV = os.path.join(cal.ROOT, "tests/calibration/h200/kernel_costs.csv")
# space.cu's CTAs issue their first load 1,120-1,250 ns (median 1,180: 2,340 cycles at 1,980 MHz)
# after they start: its prologue's own instructions (mostly the tile walk's 64-bit divisions), the
# same on the H100 and the H200 (tile times against CTA starts, space_startup*; prologue.csv).
# Given to whole runs (below).
SETUP_CYCLES = 2340
NOISE = 0.03


@functools.lru_cache(maxsize=None)
def kernel_costs(data):
    """(consumer cycles a tile, {data file name: issue cycles a load}) of space.cu, measured on the GPU
    whose folder is `data` (tests/calibration/GPU; scripts/silicon/calib/run_roundtrip.sh and
    run_builds.sh): its consumer's work a tile (wait returned, one shared-memory read, the release:
    roundtrip.csv's consumer_cycles, 95 on both GPUs), and its producer's loop, after which it issues
    the next load: 325-449 cycles depending on how the build that measured each data file compiled it
    (space_builds.csv: each build timed at point 0, whose 256 B tiles nothing else binds). The
    bandwidth kernel's fitted 340 stood in for both before."""
    cons = [float(r["consumer_cycles"]) for r in rows(os.path.join(data, "roundtrip.csv")) if r["stamps"] == "1"]
    by_build, files = {}, {}
    for r in rows(os.path.join(data, "space_builds.csv")):
        if r["point"] == "0":
            by_build.setdefault(r["build"], []).append(float(r["cycles_per_tile"]))
            for f in r["data_files"].split("+"):
                gpu, name = f.split("/")
                if gpu == os.path.basename(data.rstrip("/")):
                    files[name] = r["build"]
    return statistics.median(cons), {f: round(statistics.median(by_build[b])) for f, b in files.items()}


def rows(path):
    """The rows of a CSV that measured (status ok), each with its file's path (`path`)."""
    with open(path) as f:
        return [dict(r, path=path) for r in csv.DictReader(f) if r.get("status", "ok") == "ok"]


def costs_of(r):
    """kernel_costs() of the GPU that measured row r, and the issue cycles of the build that did."""
    parts = os.path.abspath(r["path"]).split(os.sep)
    gpu_dir = os.sep.join(parts[:parts.index("calibration") + 2])
    consumer, issue = kernel_costs(gpu_dir)
    # A traffic file (ncu) was measured by the same build as its timing file.
    return consumer, issue[os.path.basename(r["path"]).replace("_traffic", "")]


def space_rows(data, pattern, extra=("_load", "_inflight", "_fills", "_sync", "_hits", "_startup")):
    """The rows of space.csv (pattern % ""), then those of the extra files not already there."""
    out, seen = [], set()
    for suffix in ("",) + extra:
        path = os.path.join(data, pattern % suffix)
        if not os.path.exists(path):
            continue
        for r in rows(path):
            if r["point"] not in seen:
                seen.add(r["point"])
                out.append(r)
    return out


def space_scenario(r, tiles_per_sm, whole=False, ctas="real", sampled_col=False):
    mb, rb, inner, nrows = int(r["tensor_mb"]), int(r["row_bytes"]), int(r["inner_bytes"]), int(r["rows"])
    cps = int(r["ctas_per_sm"])
    swz = r["swizzle"]
    # The capacity, hits and startup groups' 2-64 MB tensors, and any warm tensor under 64 MB (one
    # short pass over L2-resident data), run whole: what a second read finds, or the fixed cost
    # against the rate, is the point.
    # A dirty L2's write-backs are a fixed amount (what the memset left) that a whole pass spreads
    # over its length and a sample would crowd into its few tiles: dirty points run whole.
    # Column-ordered streams run whole too: a sample of N tiles per SM ends inside the columns that
    # share a promotion block (and the lines of a 32-64 B row), so the promoted sectors it fetched
    # for the columns after its end are never used, and the pages the next columns would share are
    # never reread; silicon streams the whole tensor (32 B x 64, 256B: sampled 1,252 GB/s and 1.21
    # DRAM bytes a byte, whole 1,505 and 1.00, silicon 1,512 and 1.00).
    whole = whole or r["group"] in ("capacity", "hits", "startup") or (r["l2_state"] == "warm" and mb < 64) \
        or r["l2_state"] == "dirty" or (r["order"] == "col" and not sampled_col)
    per_sm = 0 if whole else cal.block_aligned_sample(tiles_per_sm, mb, rb, inner, nrows, r["order"])
    if ctas == "approx":
        # The older replay: N CTAs on an SM as one issuer with their stages together and 1/N of
        # the per-tile consumer cost (before the model ran several CTAs per SM).
        text = cal.stream_scenario(mb, rb, inner, nrows, swz, r["l2_promotion"], r["order"], int(r["stages"]) * cps,
                                   False, per_sm, 1)
        text = text.replace("l2_warm: false\n", "l2_state: %s\n" % r["l2_state"])
        return text, ["workload.compute_cycles=%d" % round(FITTED_CONSUMER_CYCLES / cps)]
    # As silicon runs it: a grid of N CTAs per SM (CTA e on SM e % 132, taking tiles e, e + grid,
    # ...), each its own issuer and consumer with its own S-stage ring; the sample of tiles per SM
    # is shared by the SM's CTAs (workload.ctas_per_sm, docs/scenarios.md). A grid smaller than the
    # SMs' slots runs one CTA on each of `grid` SMs, as silicon deals it (space_partial_cta_times).
    text = cal.stream_scenario(mb, rb, inner, nrows, swz, r["l2_promotion"], r["order"], int(r["stages"]), False,
                               per_sm, 1)
    text = text.replace("l2_warm: false\n", "l2_state: %s\n" % r["l2_state"])
    consumer, issue = costs_of(r)
    sets = ["workload.compute_cycles=%d" % round(consumer), "workload.issue_cycles=%d" % issue]
    # The prologue in whole runs only: a sample's rate stands for a whole pass, of which 1.2 us is
    # 1% at 256 MB and more of a short sample.
    if whole:
        sets.append("workload.setup_cycles=%d" % SETUP_CYCLES)
    grid = int(r["grid"])
    if grid < 132 * cps:
        sets.append("sms=%d" % grid)
    elif cps > 1:
        # space.cu's CTAs are 64 threads: the producer's warp and the consumer's (its launch), so
        # with 3 CTAs the second's producer has a warp scheduler to itself (workload.warps_per_cta).
        sets += ["workload.ctas_per_sm=%d" % cps, "workload.warps_per_cta=2"]
    return text, sets


def ctas_on_each_sm(r):
    """The CTAs each SM runs in a space point: a grid no larger than the SMs runs one CTA on each of
    `grid` SMs, as silicon deals it (space_scenario's sms=grid), a full one ctas_per_sm."""
    return 1 if int(r["grid"]) <= 132 else int(r["ctas_per_sm"])


def roundtrip_points(data):
    """roundtrip.csv's points (median of the runs without stamps), each marked issue-bound when its
    tiles came no slower than 5% over the producer's issue time (roundtrip_issue_cycles)."""
    by = {}
    for r in rows(os.path.join(data, "roundtrip.csv")):
        if r["stamps"] == "0":
            by.setdefault(int(r["point"]), []).append(r)
    out = []
    for point, rs in sorted(by.items()):
        r = rs[0]
        gbps = statistics.median(float(x["span_gbps"]) for x in rs)
        out.append(dict(r, gbps=gbps, cycles=int(r["tile_bytes"]) * 132 / gbps * float(r["sm_mhz"]) / 1000,
                        label="%sB x %s S%s %s" % (r["inner_bytes"], r["rows"], r["stages"], r["l2_state"])))
    issue = roundtrip_issue_cycles(out)
    for p in out:
        p["issue_cycles"] = issue
        p["issue_bound"] = p["cycles"] <= 1.05 * issue
    return out


def roundtrip_issue_cycles(points):
    """roundtrip.cu's own issue time: its 256 B tiles with 8 stages from a clean L2, cycles a tile."""
    return round(next(p["cycles"] for p in points
                      if p["tile_bytes"] == "256" and p["stages"] == "8" and p["l2_state"] == "clean"))


def roundtrip_scenario(p):
    """roundtrip.cu's point as the model runs it: 132 CTAs, row order, 16 KB rows; clean 256 MB as a
    sample of tiles, warm 16 MB whole over as many passes as the kernel made; space.cu's consumer and
    roundtrip.cu's own issue time."""
    inner, nrows, mb = int(p["inner_bytes"]), int(p["rows"]), int(p["tensor_mb"])
    warm = p["l2_state"] == "warm"
    total = (16384 // inner) * ((mb << 20) // 16384 // nrows)
    passes = -(-int(p["tiles_per_cta"]) * 132 // total) if warm else 1
    text = cal.stream_scenario(mb, 16384, inner, nrows, "none", "none", "row", int(p["stages"]), warm,
                               0 if warm else 48, passes)
    consumer, _ = kernel_costs(os.path.dirname(p["path"]))
    return text, ["workload.compute_cycles=%d" % round(consumer), "workload.issue_cycles=%d" % p["issue_cycles"]]


def kernel_cost_rows(program, data_file):
    """KERNEL_COSTS_CSV's rows of the build of `program` that measured `data_file` ("h100/gemm.csv")."""
    return [r for r in rows(KERNEL_COSTS_CSV) if r["program"] == program and data_file in r["data_files"].split("+")]


def build_steps(program, data_file):
    """{(shape, compute cycles): [cycles a step]} of the build that measured `data_file`, from
    KERNEL_COSTS_CSV."""
    out = {}
    for r in kernel_cost_rows(program, data_file):
        if r["cycles_per_step"]:
            out.setdefault((r["shape"], int(r["compute_cycles"])), []).append(float(r["cycles_per_step"]))
    if not out:
        sys.exit("%s: no rows for %s's build of %s" % (KERNEL_COSTS_CSV, data_file, program))
    return out


def gemm_step_cost(data_file, spin):
    """What gemm.cu's consumer costs a k-step beside a spin of `spin` cycles (its wait, read and
    release, and the spin loop's overrun of it) in the build that measured `data_file`: that build
    timed on K = 512 main loops whose operands stay in the L2, so that the consumer alone bounds
    them (run_kernel_costs.sh). A span also has a fixed part F (the first loads, the last CTA's
    end) that adds F/n to a step of a CTA's n: 256 k-steps with 128x128 tiles, 128 with 128x256,
    hence 2 step(128x128) - step(128x256) - spin. Against the 8192^3 main loops' compute-bound steps
    (4,096 a CTA, F negligible): 393 and 426 cycles at spins of 512 and 1,024 for the H200's build,
    where those run at 390 and 424. Without a spin the consumer never binds: the fitted cost."""
    if spin == 0:
        return FITTED_CONSUMER_CYCLES
    steps = build_steps("gemm", data_file)
    try:
        small = statistics.median(steps[("8192x8192x512 128x128 S6", spin)])
        large = statistics.median(steps[("8192x8192x512 128x256 S4", spin)])
    except KeyError:
        sys.exit("%s: no cost points at a %d-cycle spin for %s" % (KERNEL_COSTS_CSV, spin, data_file))
    return 2 * small - large - spin


def gemm_scenario(r, tiles_per_sm=2):
    M, N, K, BM, BN = (int(r[k]) for k in ("M", "N", "K", "BM", "BN"))
    promo = r["l2_promotion"]
    text = ("name: heldout_gemm\nsms: 132\ntensors:\n"
            "  A: {dtype: bf16, dims: [%d, %d], address: 0x100000000}\n"
            "  B: {dtype: bf16, dims: [%d, %d], address: 0x200000000}\n"
            "descriptors:\n"
            "  A_tile: {tensor: A, box: [64, %d], swizzle: 128B, l2_promotion: %s}\n"
            "  B_tile: {tensor: B, box: [64, %d], swizzle: 128B, l2_promotion: %s}\n"
            "workload:\n  kind: gemm\n  a: A_tile\n  b: B_tile\n  m: %d\n  n: %d\n  k: %d\n  stages: %s\n"
            "  schedule: {%s}\n  max_tiles_per_sm: %d\n"
            % (K, M, K, N, BM, promo, BN, promo, M, N, K, r["stages"],
               "group_size_m: 8" if r["raster"] == "grouped" else "raster: %s" % r["raster"], tiles_per_sm))
    # The kernel's consumer spins compute_cycles and pays what its build's consumer was measured to
    # cost a step beside the spin.
    gpu = os.path.basename(os.path.dirname(os.path.abspath(r["path"])))
    spin = int(r["compute_cycles"])
    return text, ["workload.compute_cycles=%d" % round(spin + gemm_step_cost(gpu + "/gemm.csv", spin))]


def runs_whole(r, whole):
    """Whether a GEMM point runs whole (--gemm-whole: those without a spin, which are memory-bound
    and whose CTAs drift apart over the whole kernel)."""
    return whole and r["compute_cycles"] == "0"


def gemm_jobs(r, whole=False):
    """The model runs of a GEMM point: one and two output tiles per CTA (gemm_bandwidth), or the
    whole kernel (runs_whole)."""
    if runs_whole(r, whole):
        return [gemm_scenario(r, 1 << 20)]
    return [gemm_scenario(r, 1), gemm_scenario(r, 2)]


def gemm_results(gm, run_all, whole=False):
    """[(GB/s, L2 hit rate, DRAM read bytes per byte or None)] of the GEMM points `gm`, their runs
    (gemm_jobs) made by run_all in one batch."""
    jobs = [gemm_jobs(r, whole) for r in gm]
    flat = run_all([j for js in jobs for j in js])
    out = []
    for r, js in zip(gm, jobs):
        out.append(gemm_bandwidth(r, flat[:len(js)]))
        flat = flat[len(js):]
    return out


def gemm_bandwidth(r, runs):
    """The whole kernel's bandwidth, L2 hit rate and DRAM read bytes per byte loaded from gemm_jobs'
    runs (summaries). From one and two output tiles per CTA: a tile's time in the steady state is
    their difference, and the kernel lasts as long as the CTAs with the most tiles (32 of 8192^3's
    4,096 128x128 tiles where the average is 31.03), as silicon's span does; the hit rate is the
    sample's, and its DRAM bytes (which depend on the whole schedule) are None. A whole run gives all
    three."""
    if len(runs) == 1:
        run = runs[0]
        loaded = (int(r["M"]) * int(r["N"]) // (int(r["BM"]) * int(r["BN"])) * int(r["K"]) * 2
                  * (int(r["BM"]) + int(r["BN"])))
        return run["load_bandwidth_gbs"], run["l2_hit_rate"], run["dram_read_bytes"] / loaded
    one, two = runs
    tiles, grid = (int(r["M"]) // int(r["BM"])) * (int(r["N"]) // int(r["BN"])), int(r["grid"])
    rounds = -(-tiles // grid)
    cycles = two["cycles"] + (rounds - 2) * (two["cycles"] - one["cycles"])
    return two["load_bandwidth_gbs"] * two["cycles"] / cycles * tiles / (grid * 2), two["l2_hit_rate"], None


def descriptor_scenario(r):
    fake = {"dtype": "bf16", "rank": "2", "box0": "64", "box1": "8", "pitch_bytes": "4096", "swizzle": "none",
            "l2_promotion": "none"}
    k = int(r["K"])
    sc = cal.tile_latency_scenario(fake, descriptors=k, prefetch=r["prefetch"] == "all", ops=max(64, 4 * k),
                                   location="global" if r["location"] == "global" else "param")
    return sc, []


class Family:
    """Points of one family; `absolute`: errors in the unit (differences near zero, rates in
    points), not relative to the measured value; `floor`: relative to the measured value or this,
    whichever is larger (bytes per byte asked: a warm L2 that reads next to nothing from DRAM is
    judged against the bytes asked, not against its few bytes)."""

    def __init__(self, name, unit, absolute=False, floor=0.0):
        self.name, self.unit, self.pts, self.absolute, self.floor = name, unit, [], absolute, floor

    def add(self, label, measured, predicted):
        self.pts.append((label, measured, predicted))

    def error(self, m, p):
        if self.absolute:
            return abs(p - m)
        d = max(abs(m), self.floor)
        return abs(p - m) / d if d else 0.0

    def line(self):
        if not self.pts:
            return None
        e = [self.error(m, p) for _, m, p in self.pts]
        worst = max(self.pts, key=lambda t: self.error(t[1], t[2]))
        fmt = (lambda v: "%.2f %s" % (v, self.unit)) if self.absolute else (lambda v: "%.1f%%" % (100 * v))
        return "| %s | %d | %s | %s | %s: %.4g vs %.4g |" % (
            self.name, len(e), fmt(statistics.mean(e)), fmt(statistics.median(e)), worst[0], worst[2], worst[1])


def runs_note(a):
    """How the streaming points and the GEMM main loops (when replayed) were run, for the report's header."""
    gemm = "" if a.skip_gemm or a.groups else (
        ". GEMM main loops: %s, each spin costing what the measuring build's consumer costs beside it "
        "(kernel_costs.csv)" % ("those without a spin whole, the others' whole kernel from one and two output "
                                "tiles per CTA" if a.gemm_whole else
                                "the whole kernel from one and two output tiles per CTA"))
    if a.gemm_only:
        return "none (--gemm-only)" + gemm
    if a.tiles_per_sm == 0:
        return "every point whole" + gemm
    sample = "a sample of %d tiles per SM" % a.tiles_per_sm
    if a.sampled_col:
        return sample + " (both orders)" + gemm
    return ("row order %s, column order whole (with the dirty L2, warm tensors under 64 MB and the capacity, "
            "hits and startup groups)" % sample) + gemm


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--gpu", default="h100")
    ap.add_argument("--sim", default=os.path.join(cal.ROOT, "build/tma-sim"))
    ap.add_argument("--arch", default=None)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--tiles-per-sm", type=int, default=48,
                    help="tiles per SM of each streaming point's sample (default 48); 0 replays every point whole")
    ap.add_argument("--cache", default=os.path.join(cal.ROOT, "build/heldout-cache.json"))
    ap.add_argument("--report", default=None)
    ap.add_argument("--points", default=None, metavar="CSV",
                    help="also write every point of every family: family, point, silicon, model, error")
    ap.add_argument("--skip-gemm", action="store_true")
    ap.add_argument("--gemm-whole", action="store_true",
                    help="run the GEMM main loops without a spin (memory-bound: their CTAs drift apart over the "
                         "whole kernel) whole, about 190 s of CPU a point, instead of one and two tiles per CTA")
    ap.add_argument("--gemm-only", action="store_true",
                    help="replay only the GEMM main loops (their families alone in the report)")
    ap.add_argument("--groups", default=None,
                    help="comma-separated space.csv groups to replay (grid, occupancy, state, tall, pitch); "
                         "only these, without the descriptor and GEMM families")
    ap.add_argument("--sampled-col", action="store_true",
                    help="sample column-ordered streams as row-ordered ones (the replay before 2026-11-28: "
                         "samples end inside promotion blocks' columns) instead of running them whole")
    ap.add_argument("--ctas", choices=("real", "approx"), default="real",
                    help="several CTAs per SM as the model's CTA slots (real, the default) or as the older "
                         "one-issuer approximation (approx)")
    a = ap.parse_args()
    data = os.path.join(cal.ROOT, "tests/calibration", a.gpu)
    arch = a.arch or os.path.join(cal.ROOT, "configs/arch/%s.yaml" % a.gpu)
    runner = cal.Runner(a.sim, arch, a.jobs, a.cache)
    t0 = time.time()

    def run_all(jobs):
        """jobs: [(scenario, sets)] -> summaries, in parallel, cached."""
        import concurrent.futures
        with concurrent.futures.ThreadPoolExecutor(a.jobs) as ex:
            out = list(ex.map(lambda j: runner.run_one(j[0], j[1], []), jobs))
        runner.save()
        return out

    # The space's later groups were measured into files of their own on the H100 (space_load.csv,
    # space_inflight.csv, space_fills.csv); the H200's space.csv holds them. A point is taken once.
    space = space_rows(data, "space%s.csv") if not a.gemm_only else []
    if a.groups:
        space = [r for r in space if r["group"] in a.groups.split(",")]
    space = [r for r in space if r["group"] != "state" or r["tensor_mb"] == "64"]
    # Group sync's points with a grid-wide barrier every few tiles have no counterpart in the model
    # (its CTAs run in step without one); those without (sync_every 0) are ordinary streams.
    barriered = [r for r in space if r.get("sync_every", "0") not in ("", "0")]
    space = [r for r in space if r not in barriered]
    state64 = [r for r in space if r["group"] == "state"]
    # A grid of fewer CTAs than the SMs' slots (groups load, inflight, fills: 33-132 CTAs with room
    # for 2 per SM) runs one CTA per SM on `grid` SMs, as silicon deals it (the H200's
    # space_partial_cta_times.csv.gz: every such point used grid SMs, one CTA each); a grid above
    # 132 that does not fill the slots would not be replayable so, and is listed.
    partial = [r for r in space if r["group"] != "state" and int(r["grid"]) > 132
               and int(r["grid"]) != 132 * int(r["ctas_per_sm"])]
    stream = [r for r in space if r["group"] != "state" and r not in partial]
    preds = run_all([space_scenario(r, a.tiles_per_sm, ctas=a.ctas, sampled_col=a.sampled_col) for r in stream])
    fams = {}
    def fam(name, unit="GB/s", absolute=False, floor=0.0):
        return fams.setdefault(name, Family(name, unit, absolute, floor))
    pred_of = {}
    for r, s in zip(stream, preds):
        key = "bandwidth %s, %s order" % (r["group"], r["order"])
        if r["group"] == "grid":
            key = "bandwidth grid, %s B rows, %s order" % (r["inner_bytes"] if int(r["inner_bytes"]) <= 64 else "128-256",
                                                         r["order"])
        label = "%sMB %sB x %s %s %s S%s x%s %s" % (r["tensor_mb"], r["inner_bytes"], r["rows"], r["order"],
                                                   r["l2_promotion"], r["stages"], r["ctas_per_sm"], r["l2_state"])
        fam(key).add(label, float(r["span_gbps"]), s["load_bandwidth_gbs"])
        pred_of[r["point"]] = s["load_bandwidth_gbs"]
    # The L2 at launch: 64 MB tensors run whole; dirty and warm against clean, in microseconds.
    spreds = run_all([space_scenario(r, 0, whole=True, ctas=a.ctas) for r in state64])
    by = {}
    for r, s in zip(state64, spreds):
        by.setdefault((r["inner_bytes"], r["rows"], r["order"], r["l2_promotion"]), {})[r["l2_state"]] = (r, s)
    for key, st in sorted(by.items()):
        if not all(k in st for k in ("clean", "dirty", "warm")):
            continue
        label = "64MB %sB x %s %s %s" % key
        c_r, c_s = st["clean"]
        fam("L2 state: clean span (64 MB, whole)", "us").add(label, float(c_r["span_us"]), c_s["seconds"] * 1e6)
        for k in ("dirty", "warm"):
            r, s = st[k]
            fam("L2 state: %s minus clean (64 MB)" % k, "us", True).add(
                label, float(r["span_us"]) - float(c_r["span_us"]), (s["seconds"] - c_s["seconds"]) * 1e6)
        fam("launch: cudaEvent time (64 MB, clean)", "us").add(label, float(c_r["event_us"]), c_s["kernel_seconds"] * 1e6)

    # Promotion effects: each promotion against none, the rest of the point the same.
    base = {}
    for r in stream:
        k = (r["group"], r["tensor_mb"], r["row_bytes"], r["inner_bytes"], r["rows"], r["order"], r["stages"],
             r["ctas_per_sm"], r["l2_state"])
        base.setdefault(k, {})[r["l2_promotion"]] = r
    effects = []
    for k, v in base.items():
        if "none" not in v:
            continue
        for p, r in v.items():
            if p == "none":
                continue
            sil = float(r["span_gbps"]) / float(v["none"]["span_gbps"]) - 1
            mod = pred_of[r["point"]] / pred_of[v["none"]["point"]] - 1
            if abs(sil) > NOISE:
                effects.append((k, p, sil, mod))
    sign = sum(1 for e in effects if e[2] * e[3] > 0)
    half = sum(1 for e in effects if e[2] * e[3] > 0 and abs(e[3] - e[2]) <= abs(e[2]) / 2)
    # Traffic (ncu) of the space points, against the model's sampled runs.
    grid_of = {r["point"]: r["grid"] for r in stream}  # the traffic files have no grid column
    tr = [dict(t, grid=grid_of[t["point"]]) for t in space_rows(data, "space%s_traffic.csv") if t["point"] in pred_of]
    tpreds = run_all([space_scenario(t, a.tiles_per_sm, ctas=a.ctas, sampled_col=a.sampled_col) for t in tr])
    for t, s in zip(tr, tpreds):
        label = "%sMB %sB x %s %s %s x%s" % (t["tensor_mb"], t["inner_bytes"], t["rows"], t["order"], t["l2_promotion"],
                                            t["ctas_per_sm"])
        req = max(1.0, s["bytes_loaded"])
        fam("DRAM read bytes / requested", "ratio", floor=1.0).add(label, float(t["dram_read_per_requested_byte"]),
                                                        s["dram_read_bytes"] / req)
        fam("L2 sectors (lts) / requested", "ratio", floor=1.0).add(label, float(t["l2_read_bytes_per_requested_byte"]),
                                                         s["lts_sectors"] * 32 / req)
        fam("L2 hit rate (TEX sectors)", "points", True).add(label, 100 * float(t["tex_hit_rate"]),
                                                             100 * s["l2_hit_rate"])
    # roundtrip.csv: space.cu's loop with stamps, 1-8 stages, clean and warm; the points with few
    # stages test the trip round a stage (copy, consumer, release), those with many the issue time,
    # which comes from these points (so that family is not held out).
    rt = roundtrip_points(data) if not (a.groups or a.gemm_only) else []
    rpreds = run_all([roundtrip_scenario(p) for p in rt])
    for p, s in zip(rt, rpreds):
        bound = "issue-bound, not held out" if p["issue_bound"] else "trip-bound"
        fam("round trip: roundtrip.csv, %s, %s" % (p["l2_state"], bound)).add(p["label"], p["gbps"],
                                                                            s["load_bandwidth_gbs"])
    # Descriptor cache: serial loads over K maps in global memory (param: the model has no K > 1 there).
    ds = [r for r in rows(os.path.join(data, "descriptor_space.csv"))
          if r["mode"] == "serial" and r["location"] == "global" and r["prefetch"] in ("none", "all")
          and not (a.groups or a.gemm_only)]
    dpreds = run_all([descriptor_scenario(r) for r in ds])
    one = {}
    for r, s in zip(ds, dpreds):
        fam("descriptor: serial loads over K global maps, prefetch %s" % r["prefetch"], "cycles").add(
            "K=%s" % r["K"], float(r["median_cycles"]), s["latency_p50"])
        if r["K"] == "1":
            one[r["prefetch"]] = (float(r["median_cycles"]), s["latency_p50"])
    for r, s in zip(ds, dpreds):  # the cache's steps: the cost over K = 1
        if r["K"] != "1" and r["prefetch"] in one:
            # The H100's cache was set from its descriptor_space.csv; no other GPU's was.
            fitted = a.gpu == "h100"
            fam("descriptor: cost over K = 1, prefetch %s%s" % (
                r["prefetch"], " (FITTED: h100.yaml's cache is set from it)" if fitted else ""), "cycles", True).add(
                "K=%s" % r["K"], float(r["median_cycles"]) - one[r["prefetch"]][0], s["latency_p50"] - one[r["prefetch"]][1])
    gm = []
    if not a.skip_gemm and not a.groups:
        gm = [r for r in rows(os.path.join(data, "gemm.csv")) if r["M"] == "8192"]
        gtr = {t["point"]: t for t in rows(os.path.join(data, "gemm_traffic.csv"))}
        for r, (gbps, hit, dram) in zip(gm, gemm_results(gm, run_all, a.gemm_whole)):
            label = "%sx%s %s raster, %s, %s cycles" % (r["BM"], r["BN"], r["raster"], r["l2_promotion"],
                                                     r["compute_cycles"])
            shape = "8192^3, %sx%sx64" % (r["BM"], r["BN"])
            fam("GEMM main loop bandwidth (%s)" % shape, "GB/s").add(label, float(r["span_gbps"]), gbps)
            t = gtr.get(r["point"])
            if t:
                fam("GEMM L2 hit rate (TEX sectors, %s)" % shape, "points", True).add(
                    label, 100 * float(t["tex_hit_rate"]), 100 * hit)
            if t and dram is not None:
                fam("GEMM DRAM read bytes / loaded, whole kernels (%s)" % shape, "ratio").add(
                    label, float(t["dram_read_per_requested_byte"]), dram)
    lines = ["| family (held out: never fitted) | points | mean abs error | median | worst: model vs silicon |",
             "| --- | ---: | ---: | ---: | --- |"]
    for f in fams.values():
        l = f.line()
        if l:
            lines.append(l)
    lines.append("")
    if barriered:
        lines.append("Not replayed: %d points of group sync whose CTAs wait for each other every few tiles "
                     "(the model's run in step without a barrier)." % len(barriered))
        lines.append("")
    if partial:
        lines.append("Not replayed: %d points whose grid of more than 132 CTAs does not fill the SMs' CTA slots "
                     "(groups %s)." % (len(partial), ", ".join(sorted({r["group"] for r in partial}))))
        lines.append("")
    if stream:
        lines.append("L2 promotion effects above 3%% on silicon (streaming points, each promotion against none): %d; "
                     "sign reproduced %d (%.0f%%), within half their size %d (%.0f%%)."
                     % (len(effects), sign, 100.0 * sign / max(1, len(effects)), half, 100.0 * half / max(1, len(effects))))
        lines.append("")
        lines.append("| point | promotion | silicon | model |")
        lines.append("| --- | --- | ---: | ---: |")
        for k, p, sil, mod in sorted(effects, key=lambda e: -abs(e[2])):
            lines.append("| %s %sMB %sB x %s %s S%s x%s %s | %s | %+.1f%% | %+.1f%% |" % (
                k[0], k[1], k[3], k[4], k[5], k[6], k[7], k[8], p, 100 * sil, 100 * mod))
    text = "\n".join(lines)
    print(text)
    print("\n%d model runs, %.0f s" % (len(stream) + len(state64) + len(tr) + len(ds) + len(gm), time.time() - t0))
    if a.points:
        with open(a.points, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["family", "point", "unit", "silicon", "model", "error"])
            for fm in fams.values():
                for label, m, p in fm.pts:
                    w.writerow([fm.name, label, fm.unit, "%.4g" % m, "%.4g" % p, "%.4f" % fm.error(m, p)])
    if a.report:
        with open(a.report, "w") as f:
            f.write("# Held-out families: the measurement space (%s)\n\n" % a.gpu)
            f.write("Written by `scripts/heldout_space.py%s --report %s` from tests/calibration/%s/ "
                    "(%s) and configs/arch/%s.yaml. Streaming points: %s.\n\n"
                    % ((" --gemm-whole" if a.gemm_whole else "") + (" --gemm-only" if a.gemm_only else ""),
                       a.report, a.gpu,
                       "gemm.csv, gemm_traffic.csv" if a.gemm_only
                       else "space*.csv, space*_traffic.csv, descriptor_space.csv, gemm.csv",
                       a.gpu, runs_note(a)))
            f.write(text + "\n")


if __name__ == "__main__":
    main()
