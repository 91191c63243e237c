#!/usr/bin/env python3
"""page_share.csv (scripts/silicon/calib/page_share.cu) against the model: two partner CTAs read the
two 64 B halves of the same 128-byte rows (one line per 1 KB DRAM page), the second a number of
boxes behind. Each point without a start delay is replayed whole as a trace (the model's traces
have no per-CTA start delay, so the delay points are silicon's alone) and compared on bandwidth,
DRAM bytes and L2 sectors; the time between the two halves' issues is silicon's (tile logs).

  scripts/page_share_report.py [--gpu h200] [--sim BIN] [--arch FILE] [--arch-set K=V]... [--jobs N]
                               [--items N] [--report FILE.md]
"""
import argparse
import concurrent.futures
import csv
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import calibrate as cal  # noqa: E402  (the Runner)

ROOT = cal.ROOT

# page_share.cu's geometry
PITCH, BOX_ROWS, HALF_BYTES = 1024, 256, 64
TENSOR_BYTES = 4 << 30
ROWS = TENSOR_BYTES // PITCH
BLOCKS = ROWS // BOX_ROWS
PAIRS, CTAS, LAG_MAX, STAGES = 66, 132, 8, 3
ITEMS = BLOCKS // PAIRS - LAG_MAX
# space.cu's consumer (roundtrip.csv, both GPUs); its producer's loop is space.cu's least (not
# binding here: a 16 KB box takes about 1,000 cycles of each SM's share of DRAM)
CONSUMER_CYCLES, ISSUE_CYCLES, SETUP_CYCLES = 95, 325, 2340


def rows(path):
    with open(path) as f:
        return [r for r in csv.DictReader(f) if r.get("status", "ok") == "ok"]


def role(cta, far):
    """(half, pair) of a CTA, as page_share.cu's role()."""
    return (int(cta >= PAIRS), cta % PAIRS) if far else (cta & 1, cta >> 1)


def item_of(half, step, lag):
    """The item (box of the pair's rows) a CTA reads at its step: the second half `lag` boxes behind,
    its first `lag` steps on items past the first half's end (page_share.cu)."""
    return step if half == 0 else (step - lag if step >= lag else ITEMS + step)


def trace_lines(promotion, far, lag, items):
    head = {
        "format": "tma-trace", "version": 1,
        "scenario": {
            "name": "page_share", "sms": CTAS, "cluster_size": 1, "gpu": "sm_90", "memory_fill": "word_hash",
            "arch": "configs/arch/h200.yaml", "l2_state": "clean",
            "tensors": {"T": {"dtype": "bf16", "dims": [128 // 2, ROWS], "strides": [PITCH],
                              "address": 0x100000000}},
            "descriptors": {"T_half": {"tensor": "T", "box": [HALF_BYTES // 2, BOX_ROWS], "swizzle": "none",
                                       "l2_promotion": promotion}}},
        "stages": STAGES, "grid": list(range(CTAS)),
        "setup_cycles": SETUP_CYCLES, "issue_cycles": ISSUE_CYCLES}
    yield json.dumps(head, separators=(",", ":"))
    tile = HALF_BYTES * BOX_ROWS
    for cta in range(CTAS):
        half, pair = role(cta, far)
        for j in range(items):
            block = pair + PAIRS * item_of(half, j, lag)
            s = j % STAGES
            yield json.dumps({"cta": cta, "sm": cta, "step": j, "issue": "producer", "op": "load",
                              "descriptor": "T_half", "coords": [half * HALF_BYTES // 2, block * BOX_ROWS],
                              "smem_addr": s * tile, "wait": "stage", "stage": s, "phase": j // STAGES,
                              "expects": 1, "compute_cycles": CONSUMER_CYCLES}, separators=(",", ":"))


def model_run(runner, arch_sets, point, items):
    trace = "".join(line + "\n" for line in trace_lines(point["l2_promotion"], point["partners"] == "far",
                                                          int(point["lag_items"]), items))
    stats, events = runner.run_traced(trace, [], arch_sets, ext=".jsonl")
    stats["lag_ns"] = model_lags(events, point["partners"] == "far", int(point["lag_items"]), items)
    return stats


def model_lags(events, far, lag, items):
    """The time between the two halves' issues (ns) of every block both read: each SM runs one CTA
    whose k-th load is its step k (the trace's order). `events`: the run's trace events."""
    starts = {}
    for e in events:
        if e.get("cat") == "op" and e.get("name") == "load":
            starts.setdefault(e["pid"], []).append(e["ts"])
    issued = {}
    for cta in range(CTAS):
        half, pair = role(cta, far)
        for j, ts in enumerate(sorted(starts.get(cta, []))[:items]):
            issued.setdefault(pair + PAIRS * item_of(half, j, lag), [None, None])[half] = ts * 1000.0
    return sorted(b - a for a, b in issued.values() if a is not None and b is not None)


def pct(v, q):
    return v[min(len(v) - 1, int(q * len(v)))] if v else float("nan")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--gpu", default="h200")
    ap.add_argument("--sim", default=os.path.join(ROOT, "build", "tma-sim"))
    ap.add_argument("--arch")
    ap.add_argument("--arch-set", action="append", default=[])
    ap.add_argument("--jobs", type=int, default=os.cpu_count())
    ap.add_argument("--items", type=int, default=ITEMS, help="boxes each CTA reads (silicon: %d)" % ITEMS)
    ap.add_argument("--report")
    a = ap.parse_args()
    data = os.path.join(ROOT, "tests", "calibration", a.gpu, "page_share")
    arch = a.arch or os.path.join(ROOT, "configs", "arch", "%s.yaml" % a.gpu)
    timed = rows(os.path.join(data, "page_share.csv"))
    traffic = {r["point"]: r for r in rows(os.path.join(data, "page_share_traffic.csv"))}
    rep_path = os.path.join(ROOT, "tests", "calibration", a.gpu, "repeat", "page_share_rep0", "page_share.csv")
    rep = {r["point"]: r for r in rows(rep_path)} if os.path.exists(rep_path) else {}
    replayed = [p for p in timed if p["delay_ns"] == "0"]
    runner = cal.Runner(a.sim, arch, a.jobs, None)
    with concurrent.futures.ThreadPoolExecutor(max(1, a.jobs)) as ex:
        runs = dict(zip([p["point"] for p in replayed],
                        ex.map(lambda p: model_run(runner, a.arch_set, p, a.items), replayed)))
    out = []
    title = "Two reads of one DRAM page: page_share.csv (%s) against the model" % a.gpu.upper()
    out.append("# " + title + "\n")
    out.append("Generated by `scripts/page_share_report.py --gpu %s%s` from tests/calibration/%s/page_share/ "
               "(run_page_share.sh; the first lease's run in repeat/page_share_rep0) and %s; the model's runs "
               "are whole traces (%d boxes a CTA). Partners `tpc`: CTAs 2p and 2p+1; `far`: p and p+66. Lag: the "
               "second half's issue after the first's, silicon's tile logs, median (p10-p90), ns.\n"
               % (a.gpu, "".join(" --arch-set " + s for s in a.arch_set), a.gpu, os.path.relpath(arch, ROOT),
                  a.items))
    out.append("| point | promotion | partners | lag boxes | delay ns | silicon lag ns | silicon GB/s (first lease) "
               "| model lag ns | model GB/s | error | silicon DRAM B/B | model | silicon lts sectors/B | model |")
    out.append("| ---: | --- | --- | ---: | ---: | --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    errs = []
    for p in timed:
        t = traffic.get(p["point"], {})
        req = 2.0 * (CTAS // 2) * ITEMS * HALF_BYTES * BOX_ROWS
        dram = "%.3f" % (float(t["dram_read_bytes"]) / req) if t else "-"
        lts = "%.3f" % (float(t["lts_read_sectors"]) * 32 / req) if t else "-"
        r = rep.get(p["point"])
        sil = "%s (%s)" % (p["gbs"], r["gbs"] if r else "-")
        lag = "%s (%s to %s)" % (p["lag_ns_median"], p["lag_ns_p10"], p["lag_ns_p90"])
        if p["point"] in runs:
            j = runs[p["point"]]
            mreq = float(j["summary.bytes_loaded"])
            gbs = float(j["summary.load_bandwidth_gbs"])
            mdram = float(j["summary.dram_read_bytes"]) / mreq
            mlts = float(j["summary.lts_sectors"]) * 32 / mreq
            e = gbs / float(p["gbs"]) - 1
            errs.append(abs(e))
            ml = j["lag_ns"]
            mlag = "%.0f (%.0f to %.0f)" % (pct(ml, 0.5), pct(ml, 0.1), pct(ml, 0.9))
            out.append("| %s | %s | %s | %s | %s | %s | %s | %s | %.0f | %+.1f%% | %s | %.3f | %s | %.3f |"
                       % (p["point"], p["l2_promotion"], p["partners"], p["lag_items"], p["delay_ns"], lag, sil, mlag,
                          gbs, 100 * e, dram, mdram, lts, mlts))
        else:
            out.append("| %s | %s | %s | %s | %s | %s | %s | - | - | - | %s | - | %s | - |"
                       % (p["point"], p["l2_promotion"], p["partners"], p["lag_items"], p["delay_ns"], lag, sil, dram,
                          lts))
    out.append("")
    if errs:
        out.append("Replayed points: bandwidth mean abs error %.1f%% (worst %.1f%%), %d points."
                   % (100 * sum(errs) / len(errs), 100 * max(errs), len(errs)))
    text = "\n".join(out) + "\n"
    if a.report:
        with open(a.report, "w") as f:
            f.write(text)
    sys.stdout.write(text)


if __name__ == "__main__":
    main()
