#!/usr/bin/env python3
"""Calibration of the TLM model against silicon measurements.

Replays every measured point of tests/calibration/<gpu>/ in the model (one `tma-sim run` per point,
with a scenario written for it), prints predicted against measured with the error, and the mean
absolute percentage error per family on the fitting and the held-out sets. With --fit, first
searches the architecture parameters that minimise the error on the fitting set (coordinate
descent over candidate values) and prints them; --write puts them into the architecture file.

  scripts/calibrate.py                      # report with configs/arch/h200.yaml as it is
  scripts/calibrate.py --fit --write        # fit, write the file, report
  scripts/calibrate.py --report docs/calibration   # also tables and plots for the docs

Held-out points are chosen by a hash of their family and id (a third of them) and are never used
for fitting. Standard library only, plus matplotlib (Debian python3-matplotlib) for --report plots.
"""
import argparse
import concurrent.futures
import csv
import hashlib
import itertools
import json
import math
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# ---------------------------------------------------------------- the measured points


def read_csv(path):
    with open(path) as f:
        return [r for r in csv.DictReader(f) if r.get("status", "ok") == "ok"]


def held_out(family, pid):
    return int(hashlib.sha256(("%s:%s" % (family, pid)).encode()).hexdigest(), 16) % 3 == 0


class Point:
    """One measurement: how to run it in the model and what silicon measured."""

    def __init__(self, family, pid, measured, scenario, sets, field, label, meta=None, arch_sets=None):
        self.family = family          # latency_cold, latency_warm, bandwidth, dram_bytes, l2_sectors, descriptor
        self.pid = pid
        self.measured = measured
        self.scenario = scenario      # scenario YAML text
        self.sets = sets              # extra --set arguments
        self.arch_sets = arch_sets or []  # --arch-set arguments of this point (over the fit's)
        self.field = field            # function(summary dict) -> predicted value
        self.label = label
        self.meta = meta or {}
        self.held_out = held_out(family.split("_")[0], pid)


def yaml_list(xs):
    return "[" + ", ".join(str(x) for x in xs) + "]"


def tile_latency_scenario(r, descriptors=1, prefetch=False, ops=2, step=0, location="param"):
    """One SM, the same tiled load issued `ops` times (the first cold, the rest warm). The
    measurement kernels pass their tensor map as a __grid_constant__ parameter, except the
    descriptor family's, which reads them from global memory."""
    esize = {"u8": 1, "bf16": 2, "f32": 4}[r["dtype"]]
    rank = int(r["rank"])
    box = [int(r["box%d" % i]) for i in range(rank)]
    pitch = int(r["pitch_bytes"])
    dims = [2 * box[0]] if rank == 1 else [pitch // esize] + [2 * b for b in box[1:]]
    swz = r["swizzle"]
    promo = r["l2_promotion"]
    lines = ["name: calib_latency", "sms: 1", "tensors:",
             "  T: {dtype: %s, dims: %s, address: 0x100000000}" % (r["dtype"], yaml_list(dims)), "descriptors:"]
    for d in range(descriptors):
        lines.append("  D%d: {tensor: T, box: %s, swizzle: %s, l2_promotion: %s, location: %s}"
                     % (d, yaml_list(box), swz, promo, location))
    lines += ["workload:", "  kind: ops", "  stages: 1", "  prefetch_descriptors: %s" % ("true" if prefetch else "false"), "  ops:"]
    for i in range(ops):
        lines.append("    - {descriptor: D%d, kind: load, coords: %s, smem_addr: 0}" % (i % descriptors, yaml_list([0] * rank)))
    return "\n".join(lines) + "\n"


def im2col_latency_scenario(r, ops=2):
    c = int(r["channels"])
    px = int(r["pixels"])
    return ("name: calib_latency_im2col\nsms: 1\ntensors:\n"
            "  X: {dtype: bf16, dims: [%d, 64, 64, 2], address: 0x100000000}\n"
            "descriptors:\n  D0: {tensor: X, mode: im2col, lower_corner: [0, 0], upper_corner: [0, 0], "
            "channels_per_pixel: %d, pixels_per_column: %d, swizzle: %s, l2_promotion: %s}\n"
            "workload:\n  kind: ops\n  stages: 1\n  ops:\n" % (c, c, px, r["swizzle"], r["l2_promotion"])
            + "".join("    - {descriptor: D0, kind: load, coords: [0, 0, 0, 0], im2col_offsets: [0, 0], smem_addr: 0}\n"
                      for _ in range(ops)))


def passes_for(tensor_bytes, tile_bytes, tiles_per_sm, sms=132):
    """Passes over a tensor that give every SM its tiles (silicon streams an L2-resident tensor many
    times over; a run must not end in its ramp-up because the tensor holds few tiles per SM)."""
    return max(1, -(-sms * tiles_per_sm * tile_bytes // tensor_bytes))


def block_aligned_sample(tiles_per_sm, tensor_mb, row_bytes, inner, rows, order, sms=132):
    """Tiles per SM for a sample of a DRAM-bound stream in column order that ends where a 256-byte
    promotion block's columns end. Silicon streams the whole tensor; a sample cut inside a block's
    columns would fetch whole blocks for the first column of them and end before the others use
    them (1 GB, 32 B rows: 33 of 1024 columns, the last one fetching 8x its bytes)."""
    if order != "col" or tensor_mb < 1024:
        return tiles_per_sm
    group = (tensor_mb << 20) // row_bytes // rows * max(1, 256 // inner)
    total = sms * tiles_per_sm // group * group
    return total // sms if total else tiles_per_sm


def stream_scenario(tensor_mb, row_bytes, inner, rows, swizzle, promo, order, stages, warm, tiles_per_sm, passes=1):
    width = row_bytes // 2  # bf16
    height = tensor_mb * (1 << 20) // row_bytes
    return ("name: calib_stream\nsms: 132\nl2_warm: %s\ntensors:\n"
            "  T: {dtype: bf16, dims: [%d, %d], address: 0x100000000}\n"
            "descriptors:\n  L: {tensor: T, box: [%d, %d], swizzle: %s, l2_promotion: %s}\n"
            "workload:\n  kind: stream\n  load: L\n  stages: %d\n  tile_order: %s\n  max_tiles_per_sm: %d\n"
            "  passes: %d\n"
            % ("true" if warm else "false", width, height, inner // 2, rows, swizzle, promo, stages,
               "row_major" if order == "row" else "column_major", tiles_per_sm, passes))


def fetch_scenario(r):
    """fetch.csv: 256-row boxes of `inner` bytes a row from rows `pitch` bytes apart, each loaded
    once by 132 SMs from a cold L2 (one sector-sized piece of each line: what a miss fetches), or
    of rows of `width` bytes read `inner` bytes at a time in column order."""
    inner, pitch, span = int(r["inner_bytes"]), int(r["pitch_bytes"]), int(r["span_bytes"])
    width = int(r.get("width_bytes") or inner)
    rows = span // pitch
    return ("name: calib_fetch\nsms: 132\nl2_warm: false\ntensors:\n"
            "  T: {dtype: u8, dims: [%d, %d], strides: [%d], address: 0x100000000}\n"
            "descriptors:\n  L: {tensor: T, box: [%d, 256], swizzle: none, l2_promotion: %s}\n"
            "workload:\n  kind: stream\n  load: L\n  stages: 1\n  tile_order: column_major\n"
            % (width, rows, pitch, inner, r["l2_promotion"]))


def store_latency_scenario(r, ops=2):
    """One SM, the same tile store (or reduction) issued `ops` times: the first cold, the rest warm."""
    esize = {"bf16": 2, "f32": 4, "u32": 4}[r["dtype"]]
    kind = "store" if r["op"] == "store" else "reduce_" + r["op"]
    inner, rows, pitch = int(r["inner_bytes"]), int(r["rows"]), int(r["row_bytes"])
    return ("name: calib_store_latency\nsms: 1\ntensors:\n"
            "  T: {dtype: %s, dims: [%d, %d], address: 0x100000000}\n"
            "descriptors:\n  D0: {tensor: T, box: [%d, %d], swizzle: none, l2_promotion: none}\n"
            "workload:\n  kind: ops\n  stages: 1\n  ops:\n" % (r["dtype"], pitch // esize, 2 * rows, inner // esize, rows)
            + "".join("    - {descriptor: D0, kind: %s, coords: [0, 0], smem_addr: 0}\n" % kind for _ in range(ops)))


def store_stream_scenario(r, tiles_per_sm):
    """Every SM stores (or reduces) tiles from its stages, at most `stages` bulk operations in flight."""
    esize = {"bf16": 2, "f32": 4, "u32": 4}[r["dtype"]]
    mb, pitch, inner, rows = int(r["tensor_mb"]), int(r["row_bytes"]), int(r["inner_bytes"]), int(r["rows"])
    warm = mb == 16
    reduce = "" if r["op"] == "store" else "  reduce: %s\n" % r["op"]
    return ("name: calib_store_stream\nsms: 132\nl2_warm: %s\ntensors:\n"
            "  T: {dtype: %s, dims: [%d, %d], address: 0x100000000}\n"
            "descriptors:\n  S: {tensor: T, box: [%d, %d], swizzle: none, l2_promotion: none}\n"
            "workload:\n  kind: stream\n  store: S\n%s  stages: %d\n  max_tiles_per_sm: %d\n  passes: %d\n"
            % ("true" if warm else "false", r["dtype"], pitch // esize, mb * (1 << 20) // pitch, inner // esize, rows,
               reduce, int(r["stages"]) * int(r["ctas_per_sm"]), tiles_per_sm,
               4 if warm else 1))  # the 16 MB tensor holds ~16 tiles per SM: several passes, as silicon


def multicast_scenario(r, tiles_per_sm):
    """A cluster streams tiles; each tile is multicast once to every CTA (by CTA 0, or rotating), or
    loaded by every CTA itself (plain). Latency points: one cluster, one tile, cold then warm."""
    cs = int(r["cluster_size"])
    latency = r["kind"] == "latency"
    inner, rows = int(r["inner_bytes"]), int(r["rows"])
    mb = 0 if latency else int(r["tensor_mb"])
    pitch = 4096 if latency else (32768 if mb >= 1024 else 8192)
    height = 2 * rows if latency else mb * (1 << 20) // pitch
    swz = "none" if inner >= 256 else "%dB" % inner
    issuer = {"multicast": "first", "multicast_rr": "rotate", "plain": None}[r["mode"]]
    sms = cs if latency else int(r["grid"])
    stages = 1 if latency else int(r["stages"])
    text = ("name: calib_multicast\nsms: %d\ncluster_size: %d\nl2_warm: %s\ntensors:\n"
            "  T: {dtype: bf16, dims: [%d, %d], address: 0x100000000}\n"
            "descriptors:\n  L: {tensor: T, box: [%d, %d], swizzle: %s, l2_promotion: none}\n"
            "workload:\n  kind: stream\n  load: L\n  stages: %d\n"
            % (sms, max(cs, 1), "true" if mb == 16 else "false", pitch // 2, height, inner // 2, rows, swz, stages))
    if cs > 1 and issuer:
        text += "  multicast: true\n  multicast_issuer: %s\n" % issuer
    elif cs > 1:
        text += "  shared_tiles: true\n"  # plain: every CTA loads the cluster's tile itself
    if latency:
        text += "  max_tiles_per_sm: 1\n  passes: 2\n"
    else:
        text += "  max_tiles_per_sm: %d\n  passes: %d\n" % (tiles_per_sm, passes_for(mb << 20, inner * rows, tiles_per_sm))
    return text


def load_points(data, tiles_per_sm):
    pts = []
    for r in read_csv(os.path.join(data, "latency.csv")):
        if r["mode"] == "im2col":
            sc = im2col_latency_scenario(r)
        else:
            sc = tile_latency_scenario(r)
        label = "%s %s r%s inner %sB x %s rows %s/%s" % (r["sweep"], r["mode"], r["rank"], r["inner_bytes"], r["rows"],
                                                        r["swizzle"], r["l2_promotion"])
        pts.append(Point("latency_cold", r["point"], float(r["cold_cycles"]), sc, [], lambda s: s["latency_max"], label))
        pts.append(Point("latency_warm", r["point"], float(r["warm_cycles"]), sc, [], lambda s: s["latency_min"], label))
    for r in read_csv(os.path.join(data, "descriptor.csv")):
        if r["variant"] != "rr":
            continue  # burst (16 in flight) and kernel-parameter variants: not replayed, see docs
        k = int(r["K"])
        fake = {"dtype": "bf16", "rank": "2", "box0": "64", "box1": "8", "pitch_bytes": "4096", "swizzle": "none",
                "l2_promotion": "none"}
        sc = tile_latency_scenario(fake, descriptors=k, prefetch=r["prefetch"] == "1", ops=max(64, 4 * k),
                                   location="global")
        label = "round robin over %d descriptors%s" % (k, ", prefetched" if r["prefetch"] == "1" else "")
        pts.append(Point("descriptor", r["point"], float(r["median_cycles"]), sc, [], lambda s: s["latency_p50"], label))
    for r in read_csv(os.path.join(data, "descriptor.csv")):
        # First use of a descriptor the kernel never touched (data L2-resident): the full fetch.
        if r["variant"] not in ("rr", "first_global", "first_param") or r["prefetch"] != "0":
            continue
        fake = {"dtype": "bf16", "rank": "2", "box0": "64", "box1": "8", "pitch_bytes": "4096", "swizzle": "none",
                "l2_promotion": "none"}
        where = "param" if r["variant"] == "first_param" else "global"
        sc = tile_latency_scenario(fake, location=where).replace("sms: 1\n", "sms: 1\nl2_warm: true\n")
        pts.append(Point("descriptor", r["point"] + "f", float(r["first_cycles"]), sc, [], lambda s: s["latency_max"],
                         "first use of a descriptor (%s, K %s)" % (r["variant"], r["K"])))
    for r in read_csv(os.path.join(data, "bandwidth.csv")):
        if r["pattern"] != "ring":
            continue  # batch pattern: not replayed
        ctas = int(r["ctas_per_sm"])
        warm = r["tensor_mb"] == "16"
        mb, tile = int(r["tensor_mb"]), int(r["inner_bytes"]) * int(r["rows"])
        per_sm = block_aligned_sample(tiles_per_sm, mb, int(r["row_bytes"]), int(r["inner_bytes"]), int(r["rows"]),
                                      r["order"])
        sc = stream_scenario(mb, int(r["row_bytes"]), int(r["inner_bytes"]), int(r["rows"]), r["swizzle"],
                             r["l2_promotion"], r["order"], int(r["stages"]) * ctas, warm, per_sm,
                             passes_for(mb << 20, tile, tiles_per_sm))
        label = "%s %sMB inner %sB x %s %s %s S%s x%s" % (r["group"], r["tensor_mb"], r["inner_bytes"], r["rows"],
                                                        r["l2_promotion"], r["order"], r["stages"], ctas)
        # Two CTAs on an SM are two consumers: as one with half the per-tile cost and twice the stages.
        pts.append(Point("bandwidth", r["point"], float(r["gbps"]), sc, [], lambda s: s["load_bandwidth_gbs"], label,
                         {"ctas": ctas, "tensor_mb": r["tensor_mb"], "inner": r["inner_bytes"], "order": r["order"],
                          "promo": r["l2_promotion"], "rows": r["rows"], "stages": r["stages"], "group": r["group"]}))
    for r in read_csv(os.path.join(data, "traffic.csv")):
        passes = int(r["passes"])
        mb = int(r["tensor_mb"])
        tiles = mb * (1 << 20) // int(r["tile_bytes"])
        # The 1 GB tensor once (a sample of its tiles: the ratios do not depend on how many), the
        # 16 MB one for every pass (only the first comes from DRAM).
        per_sm = (min(block_aligned_sample(tiles_per_sm, mb, int(r["row_bytes"]), int(r["inner_bytes"]), int(r["rows"]),
                                           r["order"]), -(-tiles // 132)) if mb == 1024 else -(-tiles // 132))
        sc = stream_scenario(mb, int(r["row_bytes"]), int(r["inner_bytes"]), int(r["rows"]), r["swizzle"],
                             r["l2_promotion"], r["order"], int(r["stages"]), False, per_sm,
                             1 if mb == 1024 else passes)
        label = "%sMB inner %sB %s %s" % (mb, r["inner_bytes"], r["l2_promotion"], r["order"])
        meta = {"key": (r["tensor_mb"], r["inner_bytes"], r["rows"], r["order"], r["stages"], r["passes"]),
                "promo": r["l2_promotion"]}
        pts.append(Point("dram_bytes", r["tpoint"], float(r["dram_bytes_per_requested_byte"]), sc, [],
                         lambda s: s["dram_read_bytes"] / max(1, s["bytes_loaded"]), label, meta))
        pts.append(Point("l2_sectors", r["tpoint"], float(r["l2_read_bytes_per_requested_byte"]), sc, [],
                         lambda s: s["lts_sectors"] * 32 / max(1, s["bytes_loaded"]), label, meta))
    # The L2's fetch size (fetch.csv, ncu): TMA loads only (its ld.global.cg rows are for contrast);
    # a point with cudaLimitMaxL2FetchGranularity set runs with l2.fetch_granularity_bytes at it.
    fetch_path = os.path.join(data, "fetch.csv")
    for r in read_csv(fetch_path) if os.path.exists(fetch_path) else []:
        if r["kind"] != "tma" or r["status"] != "ok":
            continue
        sc = fetch_scenario(r)
        limit = int(r["fetch_limit"])
        arch = ["l2.fetch_granularity_bytes=%d" % limit] if limit else []
        width = int(r.get("width_bytes") or r["inner_bytes"])
        later = "" if width == int(r["inner_bytes"]) else " (%dB in %sB columns)" % (width, r["inner_bytes"])
        label = "fetch %sB of each %sB%s, %s, limit %s, %d MB" % (
            width if later else r["inner_bytes"], r["pitch_bytes"], later, r["l2_promotion"], limit or "default",
            int(r["span_bytes"]) >> 20)
        pid = "f%s" % r["fpoint"]
        # The promotion effects on the fetch, at the driver's default limit.
        where = "%d (rows %s B apart%s)" % (int(r["span_bytes"]) >> 20, r["pitch_bytes"],
                                            ", %d B of each in columns" % width if later else "")
        meta = ({"key": (where, r["inner_bytes"], "256", "col" if later else "row", "1", "1"),
                 "promo": r["l2_promotion"]} if not limit else {})
        pts.append(Point("dram_bytes", pid, float(r["dram_bytes_per_requested_byte"]), sc, [],
                         lambda s: s["dram_read_bytes"] / max(1, s["bytes_loaded"]), label, meta, arch))
        pts.append(Point("l2_sectors", pid, float(r["l2_read_bytes_per_requested_byte"]), sc, [],
                         lambda s: s["lts_sectors"] * 32 / max(1, s["bytes_loaded"]), label, meta, arch))
    for r in read_csv(os.path.join(data, "store_reduce.csv")):
        label = "%s %s %s" % (r["op"], r["dtype"], "%s rows" % r["rows"] if r["kind"] == "latency" else
                               "%sMB S%s x%s" % (r["tensor_mb"], r["stages"], r["ctas_per_sm"]))
        if r["kind"] == "latency":
            sc = store_latency_scenario(r)
            pts.append(Point("store_latency_cold", r["point"], float(r["cold_done_cycles"]), sc, [],
                             lambda s: s["latency_max"], label))
            pts.append(Point("store_latency_warm", r["point"], float(r["warm_done_cycles"]), sc, [],
                             lambda s: s["latency_min"], label))
        else:
            # Beyond the L2 the stores must also push the L2's dirty lines out: enough tiles to overflow it.
            per_sm = tiles_per_sm if r["tensor_mb"] == "16" else 8 * tiles_per_sm
            pts.append(Point("store_bandwidth", r["point"], float(r["gbps"]), store_stream_scenario(r, per_sm), [],
                             lambda s: s["bytes_stored"] / s["seconds"] / 1e9, label))
    for r in read_csv(os.path.join(data, "multicast.csv")):
        sc = multicast_scenario(r, tiles_per_sm)
        cs = int(r["cluster_size"])
        label = "%s cluster %s %s x %s%s" % (r["mode"], cs, r["inner_bytes"], r["rows"],
                                             "" if r["kind"] == "latency" else " %sMB S%s" % (r["tensor_mb"], r["stages"]))
        if r["kind"] == "latency":
            pts.append(Point("multicast_latency_cold", r["point"], float(r["issuer_cold_cycles"]), sc, [],
                             lambda s: s["latency_max"], label))
            pts.append(Point("multicast_latency_warm", r["point"], float(r["issuer_warm_cycles"]), sc, [],
                             lambda s: s["latency_min"], label))
        else:
            pts.append(Point("multicast_bandwidth", r["point"], float(r["delivered_gbps"]), sc, [],
                             lambda s: s.get("delivered_bandwidth_gbs", s["load_bandwidth_gbs"]), label,
                             {"ctas": 1}))
    return pts


# ---------------------------------------------------------------- running the model


class Runner:
    def __init__(self, sim, arch, jobs, cache_path):
        self.sim, self.arch, self.jobs = sim, arch, jobs
        self.cache_path = cache_path
        self.cache = {}
        if cache_path and os.path.exists(cache_path):
            with open(cache_path) as f:
                self.cache = json.load(f)
        self.tmp = tempfile.mkdtemp(prefix="tma-calib-")
        self.run_ids = itertools.count()  # thread-safe enough: next() on a count holds the GIL
        # Results are cached per simulator build and architecture file contents.
        self.sim_stamp = [os.path.getmtime(sim), hashlib.sha256(open(arch, "rb").read()).hexdigest()]

    def save(self):
        if self.cache_path:
            with open(self.cache_path, "w") as f:
                json.dump(self.cache, f)

    def key(self, scenario, sets, arch_sets):
        return hashlib.sha256(json.dumps([scenario, sets, arch_sets, self.arch, self.sim_stamp]).encode()).hexdigest()

    def run_one(self, scenario, sets, arch_sets, ext=".yaml"):
        """`scenario`: a scenario's YAML text, or with ext ".jsonl" a trace's. Its summary, cached."""
        key = self.key(scenario, sets, arch_sets)
        if key in self.cache:
            return self.cache[key]
        j = self.run_stats(scenario, sets, arch_sets, ext)
        summary = {}
        for k, v in j.items():
            if k.startswith("summary."):
                try:
                    summary[k[8:]] = float(v)
                except ValueError:
                    summary[k[8:]] = v
        self.cache[key] = summary
        return summary

    def run_stats(self, scenario, sets, arch_sets, ext=".yaml"):
        """One run of the model, not cached: its whole statistics file (per-SM records included)."""
        return self._run(scenario, sets, arch_sets, ext, traced=False)[0]

    def run_traced(self, scenario, sets, arch_sets, ext=".yaml"):
        """run_stats(), and the run's trace events (--trace with one request event: the ops' own
        events, each with its SM as pid and its start as ts in us)."""
        return self._run(scenario, sets, arch_sets, ext, traced=True)

    def _run(self, scenario, sets, arch_sets, ext, traced):
        # Files named by the run, not the key: two jobs may run the same scenario at once.
        name = "%s-%d" % (self.key(scenario, sets, arch_sets)[:16], next(self.run_ids))
        path = os.path.join(self.tmp, name + ext)
        stats = os.path.join(self.tmp, name + ".json")
        trace = os.path.join(self.tmp, name + "_ops.json")
        with open(path, "w") as f:
            f.write(scenario)
        cmd = [self.sim, "run", path, "--arch", self.arch, "--quiet", "--no-scoreboard", "--stats", stats]
        if traced:
            cmd += ["--trace", trace, "--trace-max-events", "1"]
        for s in sets:
            cmd += ["--set", s]
        for a in arch_sets:
            cmd += ["--arch-set", a]
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode != 0:
            raise RuntimeError("model run failed (%d): %s\n%s" % (p.returncode, " ".join(cmd), p.stderr[-2000:]))
        with open(stats) as f:
            j = json.load(f)
        if not traced:
            return j, None
        with open(trace) as f:
            events = json.load(f)["traceEvents"]
        os.remove(trace)  # whole runs' traces are large
        return j, events

    def predict(self, points, arch_sets, consumer):
        """`consumer`: the measurement kernels' per-tile costs, by name (KERNEL_COSTS)."""
        def cost(p):
            return consumer["multicast_consumer_cycles" if p.family == "multicast_bandwidth" else "consumer_cycles"]

        def sets_of(p):
            sets = list(p.sets)
            if p.family in ("bandwidth", "multicast_bandwidth"):
                sets.append("workload.compute_cycles=%d" % round(cost(p) / p.meta["ctas"]))
            return sets
        def arch_sets_of(p):
            return list(arch_sets) + p.arch_sets
        # Points that share a run (cold and warm latency of one scenario) run it once.
        runs = {}
        for p in points:
            runs.setdefault(self.key(p.scenario, sets_of(p), arch_sets_of(p)), (p.scenario, sets_of(p), arch_sets_of(p)))
        with concurrent.futures.ThreadPoolExecutor(self.jobs) as ex:
            done = dict(zip(runs, ex.map(lambda r: self.run_one(*r), runs.values())))
        self.save()
        return [p.field(done[self.key(p.scenario, sets_of(p), arch_sets_of(p))]) for p in points]


# ---------------------------------------------------------------- errors and fitting


def ape(pred, meas):
    return abs(pred - meas) / abs(meas) if meas else 0.0


def family_errors(points, preds):
    out = {}
    for p, v in zip(points, preds):
        out.setdefault((p.family, p.held_out), []).append(ape(v, p.measured))
    return out


def median(xs):
    xs = sorted(xs)
    n = len(xs)
    return 0.0 if not n else (xs[n // 2] if n % 2 else (xs[n // 2 - 1] + xs[n // 2]) / 2)


# Parameters the fit may move, with candidate values, in two phases: the single-operation
# latencies first (cheap runs), then the all-SM bandwidth and traffic.
LATENCY_SEARCH = [
    ("l2.hit_latency", [200, 220, 240, 260]),
    ("tma.command_setup_cycles", [10, 20, 40, 60, 80]),
    ("tma.completion_latency", [0, 10, 20, 40]),
    ("dram.latency", [300, 350, 400, 450, 500]),
    ("dram.slow_read_fraction", [0, 0.05, 0.08, 0.12]),
    ("dram.slow_read_extra_cycles", [300, 350, 400, 450]),
    ("l2.sm_port_bytes_per_cycle", [64, 96, 112, 128, 160]),
    ("tma.max_outstanding_requests", [128, 256, 512]),
    ("descriptor_cache.fetch_latency", [230, 250, 270, 290]),
    ("descriptor_cache.sm_l1_hit_latency", [60, 70, 80, 90]),
    ("descriptor_cache.l2_hit_latency", [10, 20, 30]),
    ("descriptor_cache.param_fetch_latency", [30, 42, 60]),
]
# The bandwidth phase also weighs the latency families (their runs are cheap and cached), so that
# what it moves (the DRAM's structure, for one) cannot buy bandwidth with latency.
BANDWIDTH_SEARCH = [
    ("dram.scheduler_window_cycles", [0, 100, 500, 2000]),
    ("dram.banks", [8, 16, 32, 384, 512]),
    ("dram.row_miss_cycles", [16, 24, 48, 96]),
    ("dram.bank_bytes_per_cycle", [0, 11.2, 16]),
    ("dram.background_promoted_fills", [0, 1]),
    ("dram.background_max_wait_cycles", [0, 300, 1000]),
    ("dram.access_overhead_bytes", [0, 4, 8, 16]),
    ("dram.activations_per_cycle", [0, 12, 14, 16, 18, 20, 24]),
    ("dram.page_bytes", [1024, 2048]),
    ("tma.max_outstanding_requests", [256, 512, 1024]),
    ("dram.latency", [400, 450]),
    ("consumer_cycles", [300, 320, 340, 360]),
    ("multicast_consumer_cycles", [340, 400, 470, 540]),
    ("dram.bytes_per_cycle", [1500, 1580, 1700, 2200, 2290, 2500]),
    ("l2.bytes_per_cycle", [4000, 4400, 4800]),
    ("dram.channels", [1, 16, 160, 192]),
    ("dram.interleave_bytes", [256, 1024]),
    ("l2.far_latency", [0, 40]),
    ("l2.crossbar_bytes_per_cycle", [1500, 1700, 2048, 4096]),
    ("l2.tag_lookups_per_cycle", [0, 110, 122, 140]),
]
# Rounds of coordinate descent per phase (a bandwidth evaluation replays ~300 all-SM runs).
ROUNDS = {"latency": 2, "bandwidth": 1}


# Which families each phase of the fit weighs (the others are only reported).
LATENCY_FAMILIES = ("latency_cold", "latency_warm", "descriptor", "store_latency_cold", "store_latency_warm",
                    "multicast_latency_cold", "multicast_latency_warm")
BANDWIDTH_FAMILIES = ("bandwidth", "dram_bytes", "l2_sectors", "store_bandwidth", "multicast_bandwidth")


PROMOTION_NOISE = 0.03  # silicon's run-to-run spread: smaller promotion effects are noise


def objective(points, preds):
    """Sum over families of the mean absolute percentage error on the fitting points, plus the
    mean miss (in fractions of the baseline) of the bandwidth gains or losses that L2 promotion
    shows on silicon above the noise, among fitting points: the calibration's targets include
    reproducing those, and a fit on the errors alone trades them away."""
    errs = family_errors(points, preds)
    total = 0.0
    for (fam, held), e in errs.items():
        if not held:
            total += sum(e) / len(e)
    fitting = [(p, v) for p, v in zip(points, preds) if not p.held_out]
    misses = [abs(m - s) for fam, _k, _p, s, m in promotion_effects([p for p, _ in fitting], [v for _, v in fitting])
              if fam == "bandwidth" and abs(s) > PROMOTION_NOISE]
    if misses:
        total += sum(misses) / len(misses)
    return total


def fit(runner, points, params, consumer, log, phases=("latency", "bandwidth"), only=None):
    fitting = [p for p in points if not p.held_out]
    lat = [p for p in fitting if p.family in LATENCY_FAMILIES]
    bw = [p for p in fitting if p.family in BANDWIDTH_FAMILIES] + lat
    cur = dict(params)

    def score(pts, prm):
        return objective(pts, runner.predict(pts, arch_sets(prm), kernel_costs(prm, consumer)))

    for group, pts, search in (("latency", lat, LATENCY_SEARCH), ("bandwidth", bw, BANDWIDTH_SEARCH)):
        if group not in phases:
            continue
        best = score(pts, cur)
        log("%s: start objective %.4f" % (group, best))
        for _round in range(ROUNDS[group]):
            for name, values in search:
                if only and name not in only:
                    continue
                for v in values:
                    if cur.get(name) == v:
                        continue
                    trial = dict(cur)
                    trial[name] = v
                    a = score(pts, trial)
                    if a < best - 1e-4:
                        log("  %s = %s: %.4f -> %.4f" % (name, v, best, a))
                        cur, best = trial, a
    return cur


def arch_sets(params):
    return ["%s=%s" % (k, v) for k, v in sorted(params.items()) if k not in KERNEL_COSTS]


# Per-tile costs of the measurement kernels' consumers, not of the model: the bandwidth kernel's
# (a local mbarrier arrive) and the multicast kernel's (a remote arrive on the filling CTA's
# barrier: slower, silicon's plain one-CTA clusters stream 128 x 64 tiles 23% slower than the
# bandwidth kernel does). Kept as "# calibration NAME: value" lines of the arch file.
KERNEL_COSTS = ("consumer_cycles", "multicast_consumer_cycles")


def kernel_costs(params, defaults):
    return {k: params.get(k, defaults[k]) for k in KERNEL_COSTS}


def read_kernel_costs(arch_path, consumer_override):
    text = open(arch_path).read()
    costs = {}
    for k in KERNEL_COSTS:
        m = re.search(r"#\s*calibration %s:\s*([0-9.]+)" % k, text)
        costs[k] = float(m.group(1)) if m else None
    if consumer_override is not None:
        costs["consumer_cycles"] = consumer_override
    if costs["consumer_cycles"] is None:
        costs["consumer_cycles"] = 330.0
    if costs["multicast_consumer_cycles"] is None:
        costs["multicast_consumer_cycles"] = costs["consumer_cycles"]
    return costs


# ---------------------------------------------------------------- promotion effects


def promotion_effects(points, preds):
    """Each L2 promotion relative to none, per configuration, for bandwidth, DRAM bytes and L2
    sectors: (metric, configuration, promotion, silicon change, model change)."""
    base = {}
    for p, v in zip(points, preds):
        if p.family == "bandwidth" and p.meta.get("group") in ("core", "shape"):
            key = (p.meta["tensor_mb"], p.meta["inner"], p.meta["rows"], p.meta["order"], p.meta["stages"],
                   "x%s" % p.meta["ctas"])
        elif p.family in ("dram_bytes", "l2_sectors") and "key" in p.meta:
            key = p.meta["key"][:5] + ("%s passes" % p.meta["key"][5],)
        else:
            continue
        base.setdefault((p.family, key), {})[p.meta["promo"]] = (p.measured, v)
    rows = []
    for (fam, key), byp in sorted(base.items()):
        if "none" not in byp:
            continue
        m0, v0 = byp["none"]
        for promo in ("64B", "128B", "256B"):
            if promo in byp:
                m, v = byp[promo]
                rows.append((fam, key, promo, m / m0 - 1, v / v0 - 1))
    return rows


# ---------------------------------------------------------------- main


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default=os.path.join(ROOT, "tests/calibration/h200"))
    ap.add_argument("--arch", default=os.path.join(ROOT, "configs/arch/h200.yaml"))
    ap.add_argument("--sim", default=os.path.join(ROOT, "build/tma-sim"))
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--tiles-per-sm", type=int, default=128,
                    help="tiles each SM streams in a bandwidth replay (128: the steady state silicon measured, "
                         "ramp-up under 3%% of the run, and several columns of tiles in column order)")
    ap.add_argument("--consumer-cycles", type=float, default=None,
                    help="per-tile consumer cost of the measurement kernel (default: from the arch file's note or fit)")
    ap.add_argument("--brief", action="store_true", help="only the per-family table, not every point")
    ap.add_argument("--phases", default="latency,bandwidth", metavar="P,Q",
                    help="the fit's phases to run (latency, bandwidth; default both)")
    ap.add_argument("--search", metavar="NAME,NAME",
                    help="the fit moves only these parameters (the others keep their start values)")
    ap.add_argument("--families", metavar="F,G", help="only these families (comma-separated prefixes, e.g. store,multicast)")
    ap.add_argument("--fit", action="store_true")
    ap.add_argument("--write", action="store_true", help="with --fit: write the fitted values into --arch")
    ap.add_argument("--report", metavar="DIR", help="write tables (Markdown, CSV) and plots into DIR")
    ap.add_argument("--cache", default=os.path.join(ROOT, "build/calibration-cache.json"))
    ap.add_argument("--param", action="append", default=[], metavar="NAME=VALUE",
                    help="start from this value (an arch field, or consumer_cycles); repeatable")
    a = ap.parse_args()

    points = load_points(a.data, a.tiles_per_sm)
    if a.families:
        keep = tuple(a.families.split(","))
        points = [p for p in points if p.family.startswith(keep)]
    runner = Runner(a.sim, a.arch, a.jobs, a.cache)
    consumer = read_kernel_costs(a.arch, a.consumer_cycles)
    params = dict(consumer)
    for kv in a.param:
        k, v = kv.split("=", 1)
        params[k] = float(v) if "." in v else int(v)
    if a.fit:
        params = fit(runner, points, params, consumer, lambda s: print(s, flush=True),
                     a.phases.split(","), a.search.split(",") if a.search else None)
        print("fitted:", ", ".join("%s=%s" % kv for kv in sorted(params.items())))
        if a.write:
            write_arch(a.arch, params)
            params = kernel_costs(params, consumer)
            runner.sim_stamp[1] = hashlib.sha256(open(a.arch, "rb").read()).hexdigest()
    consumer = kernel_costs(params, consumer)
    preds = runner.predict(points, arch_sets(params), consumer)
    report(points, preds, a.report, consumer, a)


def write_arch(path, params):
    text = open(path).read()
    for name, v in params.items():
        if name in KERNEL_COSTS:
            if re.search(r"#\s*calibration %s:" % name, text):
                text = re.sub(r"(#\s*calibration %s:\s*)[0-9.]+" % name, r"\g<1>%s" % v, text)
            else:
                text += "# calibration %s: %s   (a measurement kernel's per-tile cost; scripts/calibrate.py)\n" % (name, v)
            continue
        section, field = name.split(".")
        pat = re.compile(r"(^%s:\n(?:  .*\n)*?  %s:\s*)([0-9.]+)" % (section, field), re.M)
        text, n = pat.subn(lambda m: m.group(1) + str(v), text, count=1)
        if not n:
            raise SystemExit("cannot find %s in %s" % (name, path))
    with open(path, "w") as f:
        f.write(text)


def report(points, preds, outdir, consumer, args):
    if not args.brief:
        print("%-24s %-6s %-8s %12s %12s %8s  %s" % ("family", "point", "set", "silicon", "model", "error", "what"))
        for p, v in zip(points, preds):
            print("%-24s %-6s %-8s %12.4g %12.4g %+7.1f%%  %s" % (p.family, p.pid, "held-out" if p.held_out else "fitting",
                                                              p.measured, v, 100 * (v - p.measured) / p.measured if p.measured else 0.0, p.label))
        print()
    errs = family_errors(points, preds)
    fams = sorted({p.family for p in points})
    lines = []
    lines.append("| family | set | points | mean abs % error | median abs % error |")
    lines.append("| --- | --- | ---: | ---: | ---: |")
    for fam in fams:
        for held in (False, True):
            e = errs.get((fam, held), [])
            if e:
                lines.append("| %s | %s | %d | %.1f | %.1f |" % (fam, "held-out" if held else "fitting", len(e),
                                                               100 * sum(e) / len(e), 100 * median(e)))
    table = "\n".join(lines)
    print(table)
    eff = promotion_effects(points, preds)
    eff_lines = ["| metric | tensor MB | inner B | rows | order | stages | CTAs / passes | promotion | silicon | model | reproduced |",
                 "| --- | ---: | ---: | ---: | --- | ---: | --- | --- | ---: | ---: | --- |"]
    # An effect counts as reproduced when the model moves the same way by at least half and at
    # most one and a half times as much (or within the noise of it).
    noise = PROMOTION_NOISE
    reproduced = total = 0
    for fam, key, promo, s, m in eff:
        above = abs(s) > noise
        ok = (not above) or (math.copysign(1, s) == math.copysign(1, m) and abs(m - s) <= max(noise, abs(s) / 2))
        if above:
            total += 1
            reproduced += ok
        eff_lines.append("| %s | %s | %s | %s | %s | %s | %s | %s | %+.1f%% | %+.1f%% | %s |" % (
            fam, key[0], key[1], key[2], key[3], key[4], key[5], promo, 100 * s, 100 * m,
            ("yes" if ok else "NO") if above else "(noise)"))
    print("\n" + "\n".join(eff_lines))
    print("\nL2 promotion effects above %.0f%% noise reproduced: %d of %d" % (100 * noise, reproduced, total))
    if outdir:
        os.makedirs(outdir, exist_ok=True)
        with open(os.path.join(outdir, "points.csv"), "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["family", "point", "set", "label", "measured", "predicted", "abs_pct_error"])
            for p, v in zip(points, preds):
                w.writerow([p.family, p.pid, "held-out" if p.held_out else "fitting", p.label, p.measured,
                            "%.4g" % v, "%.2f" % (100 * ape(v, p.measured))])
        with open(os.path.join(outdir, "summary.md"), "w") as f:
            f.write(table + "\n\n" + "\n".join(eff_lines) + "\n\nL2 promotion effects above %.0f%% noise "
                    "reproduced: %d of %d\n" % (100 * noise, reproduced, total))
        plots(points, preds, outdir)


def plots(points, preds, outdir):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib not available: no plots", file=sys.stderr)
        return
    fams = sorted({p.family for p in points})
    fig, axes = plt.subplots(2, (len(fams) + 1) // 2, figsize=(4.2 * ((len(fams) + 1) // 2), 8))
    for ax, fam in zip(axes.flat, fams):
        for held, marker, color in ((False, "o", "tab:blue"), (True, "x", "tab:red")):
            xs = [p.measured for p, v in zip(points, preds) if p.family == fam and p.held_out == held]
            ys = [v for p, v in zip(points, preds) if p.family == fam and p.held_out == held]
            ax.scatter(xs, ys, marker=marker, color=color, s=18, label="held-out" if held else "fitting")
        allv = [p.measured for p in points if p.family == fam] + [v for p, v in zip(points, preds) if p.family == fam]
        lo, hi = min(allv), max(allv)
        ax.plot([lo, hi], [lo, hi], color="gray", lw=0.8)
        ax.plot([lo, hi], [lo * 0.9, hi * 0.9], color="gray", lw=0.5, ls=":")
        ax.plot([lo, hi], [lo * 1.1, hi * 1.1], color="gray", lw=0.5, ls=":")
        ax.set_title(fam)
        ax.set_xlabel("silicon")
        ax.set_ylabel("model")
        ax.legend(fontsize=7)
    for ax in list(axes.flat)[len(fams):]:
        ax.axis("off")
    fig.tight_layout()
    fig.savefig(os.path.join(outdir, "predicted_vs_measured.png"), dpi=110)


if __name__ == "__main__":
    main()
