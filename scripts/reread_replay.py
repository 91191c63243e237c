#!/usr/bin/env python3
"""Reads that hit and reads that miss under load: the model against partition.cu's timed re-read
points (tests/calibration/GPU/reread_timed*.csv, scripts/silicon/calib/run_reread.sh), which no fit
has seen.

On silicon, 8 pairs of SMs (A, B) load 32-byte x 256-row boxes (32 each, 4 stages): A from DRAM,
B a sector of the same lines (the same one, the 64-byte fetch's other half, or 128B promotion's
other half) `delay_ns` after A issued each box, while the other 116 SMs stream 64 B x 256-row boxes
of a 1 GB tensor from DRAM with 0, 4 or 10 stages (nothing shared). A's and B's times per box
(issue to data) say how long a read that misses and one that hits take at each load.

Each point is replayed as a trace (docs/traces.md): the background CTAs, A's CTAs, and on each B
SM a CTA that only waits before B's. On silicon B issues box k once it sees A's issue time of box
k (a global load, slow under load) and the delay has passed, so B ends well after A: 7-14 us with
no background, 17-34 us under it (b_after_a_ns), whatever the delay, and during that lag the
background moves tens of megabytes through the L2. The trace starts B that lag (the median of the
point's b_after_a_ns) after A and has B's consumer spend A's period per box (the model's A box time
/ 4, from a first run without B), so that B keeps A's pace. The background's 10 stages are 4
stages of 640-row boxes (2,560 rows in flight asked, as silicon's 10 of 256; the trace has one
stage count). Silicon's points at each delay (0-8 us) agree within a few percent, so each is
compared as the median over the delays and every repeat.

  scripts/reread_replay.py [--gpu h100] [--arch FILE] [--jobs N] [--report FILE]

Standard library only.
"""
import argparse
import concurrent.futures as cf
import csv
import glob
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BOXES, BOX_ROWS, STAGES = 32, 256, 4
BG_TILES, BG_ROW_BYTES = 128, 16384  # per background CTA: 128 boxes of 64 B x 256 rows, 16 KB rows


def silicon(gpu):
    """(relation, b_sector, promotion, bg_stages) -> dict of medians over delays and repeats."""
    out = {}
    for path in sorted(glob.glob(os.path.join(ROOT, "tests/calibration", gpu, "reread_timed*.csv"))):
        with open(path) as f:
            for r in csv.DictReader(f):
                if r["status"] != "ok":
                    continue
                k = (r["relation"], int(r["b_sector"]), r["l2_promotion"], int(r["bg_stages"]))
                e = out.setdefault(k, {"a": [], "b": [], "a_sms": r["a_sms"], "b_sms": r["b_sms"], "bg_ns": [],
                                       "gap_ns": []})
                e["a"].append(float(r["a_lat_cycles"]))
                e["gap_ns"].append(float(r["b_after_a_ns"]))
                e["b"].append(float(r["b_lat_cycles"]))
                if int(r["bg_end_after_start_ns"]):
                    e["bg_ns"].append(float(r["bg_end_after_start_ns"]))
    return out


def trace(clock_mhz, key, a_sms, b_sms, b_period, with_b, lag_ns=0):
    """The point as a version-1 trace (a list of JSON lines)."""
    _, sector, promotion, bg_stages = key
    descriptors = {
        "P_box": {"tensor": "P", "box": [32, BOX_ROWS], "l2_promotion": promotion},
    }
    tensors = {"P": {"dtype": "u8", "dims": [128, len(a_sms) * BOXES * BOX_ROWS], "address": 0x200000000}}
    # The 1 GB background tensor seen as [16384 B, 128 rows, 512 blocks]: a box of `blocks` 128-row
    # blocks is blocks x 128 consecutive rows of one 64-byte column.
    blocks = 5 if bg_stages > STAGES else 2
    bg_box_rows = blocks * 128
    if bg_stages:
        tensors["BG"] = {"dtype": "u8", "dims": [BG_ROW_BYTES, 128, (1 << 30) // BG_ROW_BYTES // 128],
                         "address": 0x100000000}
        descriptors["BG_box"] = {"tensor": "BG", "box": [64, 128, blocks]}
    lines, grid = [], []

    def load(cta, sm, k, desc, coords, smem, compute=0):
        lines.append({"cta": cta, "sm": sm, "step": k, "issue": "producer", "op": "load", "descriptor": desc,
                      "coords": coords, "smem_addr": smem, "wait": "stage", "stage": k % STAGES,
                      "phase": k // STAGES, "expects": 1, "compute_cycles": compute})

    probes = set(a_sms) | set(b_sms)
    if bg_stages:
        index = 0
        rows = BG_TILES * BOX_ROWS
        for sm in range(132):
            if sm in probes:
                continue
            cta = len(grid)
            grid.append(sm)
            for k in range(rows // bg_box_rows):
                load(cta, sm, k, "BG_box", [(index % (BG_ROW_BYTES // 64)) * 64, 0, k * blocks],
                     (k % STAGES) * 64 * bg_box_rows)
            index += 1
    for i, sm in enumerate(a_sms):
        cta = len(grid)
        grid.append(sm)
        for k in range(BOXES):
            load(cta, sm, k, "P_box", [0, (i * BOXES + k) * BOX_ROWS], (k % STAGES) * 32 * BOX_ROWS)
    if with_b:
        for i, sm in enumerate(b_sms):
            cta = len(grid)
            grid.append(sm)
            lines.append({"cta": cta, "sm": sm, "step": 0, "issue": "consumer", "op": "none", "stage": 0, "phase": 0,
                          "expects": 0, "compute_cycles": round(lag_ns * clock_mhz / 1000)})
            cta = len(grid)
            grid.append(sm)
            for k in range(BOXES):
                load(cta, sm, k, "P_box", [32 * sector, (i * BOXES + k) * BOX_ROWS], (k % STAGES) * 32 * BOX_ROWS,
                     b_period)
    header = {"format": "tma-trace", "version": 1,
              "scenario": {"name": "reread", "sms": 132, "l2_state": "clean",
                           "tensors": tensors, "descriptors": descriptors},
              "stages": STAGES, "grid": grid}
    return [json.dumps(header)] + [json.dumps(x) for x in lines]


def run(sim, arch, text_lines):
    with tempfile.TemporaryDirectory() as d:
        tp, sp = os.path.join(d, "t.jsonl"), os.path.join(d, "s.json")
        with open(tp, "w") as f:
            f.write("\n".join(text_lines) + "\n")
        p = subprocess.run([sim, "run", tp, "--arch", arch, "--no-scoreboard", "--quiet", "--stats", sp],
                           capture_output=True, text=True)
        if p.returncode:
            raise RuntimeError(p.stderr.strip())
        with open(sp) as f:
            return json.load(f)


def box_cycles(stats, sms):
    """Mean issue-to-completion cycles of the loads of these SMs."""
    return statistics.mean(stats["gpu.sm%d" % s]["latency_cycles_sum"] / max(1, stats["gpu.sm%d" % s]["loads"])
                           for s in sms)


def replay(sim, arch, clock_mhz, key, e):
    a_sms = [int(x) for x in e["a_sms"].split()]
    b_sms = [int(x) for x in e["b_sms"].split()]
    first = run(sim, arch, trace(clock_mhz, key, a_sms, b_sms, 0, False))
    a_alone = box_cycles(first, a_sms)
    lag_ns = statistics.median(e["gap_ns"])
    full = run(sim, arch, trace(clock_mhz, key, a_sms, b_sms, round(a_alone / STAGES), True, lag_ns))
    span_ns = full["summary.cycles"] / clock_mhz * 1000 if key[3] else 0.0
    missed = sum(full["gpu.sm%d.splitter" % s]["sectors_missed"] for s in b_sms)
    asked = sum(full["gpu.sm%d.splitter" % s]["sectors_requested"] for s in b_sms)
    return {"a": box_cycles(full, a_sms), "b": box_cycles(full, b_sms), "span_ns": span_ns,
            "b_missed": missed / max(1, asked), "lag_ns": lag_ns}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--gpu", default="h100")
    ap.add_argument("--arch", default=None)
    ap.add_argument("--sim", default=os.path.join(ROOT, "build/tma-sim"))
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--report", default=None)
    a = ap.parse_args()
    arch = a.arch or os.path.join(ROOT, "configs/arch/%s.yaml" % a.gpu)
    with open(arch) as f:
        clock_mhz = next(float(l.split(":")[1].split("#")[0]) for l in f if l.startswith("sm_clock_mhz:"))
    sil = silicon(a.gpu)
    if not sil:
        sys.exit("no tests/calibration/%s/reread_timed*.csv" % a.gpu)
    t0 = time.time()
    with cf.ThreadPoolExecutor(a.jobs) as ex:
        futs = {k: ex.submit(replay, a.sim, arch, clock_mhz, k, e) for k, e in sil.items()}
        model = {k: f.result() for k, f in futs.items()}
    minutes = (time.time() - t0) / 60

    def err(m, s):
        return (m - s) / s * 100

    rows = []
    for k in sorted(sil):
        e, m = sil[k], model[k]
        sa, sb = statistics.median(e["a"]), statistics.median(e["b"])
        bg_ns = statistics.median(e["bg_ns"]) if e["bg_ns"] else 0
        rows.append((k, sa, sb, m["a"], m["b"], bg_ns, m["span_ns"], m["b_missed"], m["lag_ns"]))
    out = ["# Reads that hit and reads that miss under load (%s)" % a.gpu.upper(), "",
           "`scripts/reread_replay.py --gpu %s` (%.1f min): partition.cu's re-read points "
           "(tests/calibration/%s/reread_timed*.csv; medians over 5 delays and every repeat) against the "
           "model (%s), held out. A: a box of 32 B x 256 rows from DRAM; B: a sector of the same lines, "
           "B's lag after A (silicon's b_after_a_ns); background: the other 116 SMs streaming 64 B x 256 boxes from DRAM with "
           "0, 4 or 10 stages. Cycles per box, issue to data." % (a.gpu, minutes, a.gpu, os.path.relpath(arch, ROOT)),
           "",
           "| relation | B's sector | promotion | background stages | B's lag (us) | silicon A | model A | silicon B | model B | silicon B/A | model B/A | model: B's sectors missed |",
           "| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for k, sa, sb, ma, mb, _, _, missed, lag in rows:
        out.append("| %s | %d | %s | %d | %.1f | %.0f | %.0f (%+.0f%%) | %.0f | %.0f (%+.0f%%) | %.2f | %.2f | %.0f%% |" % (
            k[0], k[1], k[2], k[3], lag / 1000, sa, ma, err(ma, sa), sb, mb, err(mb, sb), sb / sa, mb / ma,
            100 * missed))
    out.append("")
    for bg in (0, 4, 10):
        sel = [r for r in rows if r[0][3] == bg]
        ea = statistics.mean(abs(err(r[3], r[1])) for r in sel)
        eb = statistics.mean(abs(err(r[4], r[2])) for r in sel)
        ratio = statistics.mean(abs(r[4] / r[3] - r[2] / r[1]) for r in sel)
        line = "- background %d stages: A mean |error| %.1f%%, B %.1f%%, B/A %.2f off on average" % (bg, ea, eb, ratio)
        if bg:
            sil_ns = statistics.median(r[5] for r in sel)
            line += "; the background's %d x 2 MB in %.1f us on silicon (span of the model's run: %.1f us)" % (
                116, sil_ns / 1000, statistics.median(r[6] for r in sel) / 1000)
        out.append(line)
    text = "\n".join(out) + "\n"
    print(text)
    if a.report:
        with open(a.report, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
