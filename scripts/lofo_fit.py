#!/usr/bin/env python3
"""Leave-one-family-out fit of the H100's bandwidth parameters on the measurement space
(tests/calibration/h100/space.csv, scripts/silicon/calib/run_space.sh), with scipy's optimizer.

The families are whole kinds of kernel or shape (the grid's narrow, 64 B and wide rows, the
occupancy group, tall tiles, pitched rows, the L2's state at launch). For each one in turn, the
parameters are fitted on the sampled points of all the other families, then the held-out family's
error is measured at the fitted values and at the shipped ones. A parameter whose fitted value
moves a lot between folds is not determined by the data.

  /usr/bin/python3 scripts/lofo_fit.py --jobs 1 --report docs/calibration/lofo_h100.md

How, in a budget of about an hour of one core:
- Design: every sampled point is run at the parameter vectors of a face-centred central composite
  design over the bounds (the box's centre, corners and face centres) and at the shipped values:
  2^d + 2d + 2 vectors, shared by every fold.
- Surrogate: per point, a quadratic in the parameters (least squares on the design) of the log of
  its bandwidth.
- Fit: per fold, scipy.optimize.minimize (Nelder-Mead, bounded) of the surrogates' mean absolute
  relative bandwidth error over the other families' points, from the shipped values and from the
  design's best vector; the result snapped to each parameter's step.
- Check: every point is run again at each fold's fitted values; the table's errors are those real
  runs', never the surrogate's (its prediction is shown beside them).
- Runs: a streaming point is run for 16 and for 32 tiles per SM and its whole-tensor time
  extrapolated from the two (the ramp-up counted once, the steady rate from the difference), or
  run whole when the tensor holds at most 48 tiles per SM; the L2-state points (64 MB) run whole.
  All runs of the design are independent: --jobs N runs N at a time (default: all cores); runs
  are cached per simulator build and architecture file (--cache).
Standard library plus scipy and numpy (Debian python3-scipy).
"""
import argparse
import concurrent.futures
import itertools
import os
import random
import re
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import calibrate as cal  # noqa: E402  (the Runner, its cache, the scenario writers)
import heldout_space as hs  # noqa: E402  (the space's scenarios)

# name: (lower bound, upper bound, rounding step). Start values come from the arch file (the
# consumer from heldout_space.FITTED_CONSUMER_CYCLES, as calibrate.py's note in the arch file).
PARAMS = {
    "dram.bytes_per_cycle": (1550, 1850, 5),          # [cal] 1700: DRAM peak with access overhead
    "dram.row_miss_cycles": (4, 48, 1),               # [cal] 12 on the H100, 24 on the H200
    "consumer_cycles": (250, 450, 5),                 # the measurement kernel's consumer per tile, 340
    "dram.bank_bytes_per_cycle": (8, 20, 0.1),        # [cal] 13.1: the H200's 16 scaled by clocks
    "tma.max_outstanding_requests": (192, 1024, 16),  # [cal] 512: tall narrow boxes from the L2
    "l2.crossbar_bytes_per_cycle": (1000, 2500, 5),   # [cal] 1445: between the two L2 partitions
}
DEFAULT_PARAMS = "dram.bytes_per_cycle,dram.row_miss_cycles,consumer_cycles"
SAMPLE_TILES = (16, 32)  # tiles per SM of the two runs a streaming point's whole time is extrapolated from


def family_of(r):
    """The family of a space.csv row (None: not used)."""
    g, inner = r["group"], int(r["inner_bytes"])
    if g == "grid":
        return "grid 16-32 B" if inner <= 32 else ("grid 64 B" if inner == 64 else "grid 128-256 B")
    if g == "state":
        return "L2 state 64 MB" if r["tensor_mb"] == "64" else None
    if g == "tall":
        # A dirty L2's write-back falls in the middle of a 256 MB run: no sample of it extrapolates.
        return "tall" if r["l2_state"] == "clean" else None
    return {"occupancy": "occupancy", "pitch": "pitch"}.get(g)


FAMILY_WHAT = {
    "grid 16-32 B": "16-32 B rows x 16-256, 4 stages, 1 CTA/SM",
    "grid 64 B": "64 B rows x 16-256, 4 stages, 1 CTA/SM",
    "grid 128-256 B": "128-256 B rows x 16-256, 4 stages, 1 CTA/SM",
    "occupancy": "32-256 B rows, 1-4 CTAs per SM x 2-8 stages",
    "tall": "32-64 B x 128-256 rows, 2-4 CTAs per SM (clean L2)",
    "pitch": "32 and 128 B rows out of wider pitches",
    "L2 state 64 MB": "64 MB tensors run whole, L2 clean, dirty or warm at launch",
}


class Pt:
    def __init__(self, family, label, row):
        self.family, self.label, self.row = family, label, row
        self.measured = float(row["span_gbps"])
        self.ctas = int(row["ctas_per_sm"])
        tile = int(row["inner_bytes"]) * int(row["rows"])
        per_sm = -(-(int(row["tensor_mb"]) << 20) // tile // 132)
        self.whole = row["group"] == "state" or per_sm <= SAMPLE_TILES[0] + SAMPLE_TILES[1]
        self.scenarios = ([hs.space_scenario(row, 0, whole=True)[0]] if self.whole else
                          [hs.space_scenario(row, n, sampled_col=True)[0] for n in SAMPLE_TILES])


def sample_points(data, per_family, seed, only=None):
    """per_family points of each family, half in row order and half in column order, by a seeded draw."""
    by = {}
    for r in hs.rows(os.path.join(data, "space.csv")):
        f = family_of(r)
        if f and (not only or f in only):
            by.setdefault(f, []).append(r)
    rng = random.Random(seed)
    pts = []
    for f in sorted(by):
        rs = sorted(by[f], key=lambda r: int(r["point"]))
        pick = []
        for order, n in (("row", per_family // 2), ("col", per_family - per_family // 2)):
            sub = [r for r in rs if r["order"] == order]
            pick += rng.sample(sub, min(len(sub), n))
        for r in sorted(pick, key=lambda r: int(r["point"])):
            label = "#%s %sMB %sB x %s %s %s S%s x%s %s" % (r["point"], r["tensor_mb"], r["inner_bytes"], r["rows"],
                                                          r["order"], r["l2_promotion"], r["stages"],
                                                          r["ctas_per_sm"], r["l2_state"])
            pts.append(Pt(f, label, r))
    return pts


def fmt(names, values):
    return ", ".join("%s=%s" % (n.split(".")[-1], v) for n, v in zip(names, values))


class Model:
    """The sampled points' bandwidth at parameter vectors: every point run (cached), in parallel."""

    def __init__(self, runner, points, names, jobs, log):
        self.runner, self.points, self.names, self.jobs, self.log = runner, points, names, jobs, log
        self.memo = {}
        self.new_runs = 0

    def jobs_of(self, values):
        prm = dict(zip(self.names, values))
        consumer = prm.get("consumer_cycles", hs.FITTED_CONSUMER_CYCLES)
        arch = ["%s=%s" % (k, v) for k, v in sorted(prm.items()) if k != "consumer_cycles"]
        return [[(sc, ["workload.compute_cycles=%d" % round(consumer / p.ctas)], arch) for sc in p.scenarios]
                for p in self.points]

    def run(self, *job):
        """One run; again when a signal ended it (exit 130: the host's other users may stop it)."""
        for attempt in range(3):
            try:
                return self.runner.run_one(*job)
            except RuntimeError as e:
                if "failed (130)" not in str(e) or attempt == 2:
                    raise
                self.log("  a run was ended by a signal: again")

    def predict(self, values):
        key = tuple(values)
        if key in self.memo:
            return self.memo[key]
        per_point = self.jobs_of(values)
        flat = [j for js in per_point for j in js]
        t0 = time.time()
        new = sum(1 for j in flat if self.runner.key(*j) not in self.runner.cache)
        with concurrent.futures.ThreadPoolExecutor(self.jobs) as ex:
            out = iter(list(ex.map(lambda j: self.run(*j), flat)))
        self.runner.save()
        self.new_runs += new
        pred = []
        for p, js in zip(self.points, per_point):
            s = [next(out) for _ in js]
            if len(s) == 1:
                pred.append(s[0]["load_bandwidth_gbs"])
                continue
            # Whole-tensor time: the second run's, plus the rest of the tensor at the rate between the two.
            a, b = s
            total = int(p.row["tensor_mb"]) << 20
            rate = (b["bytes_loaded"] - a["bytes_loaded"]) / (b["seconds"] - a["seconds"])
            pred.append(total / (b["seconds"] + (total - b["bytes_loaded"]) / rate) / 1e9)
        self.memo[key] = pred
        if new:
            self.log("  ran %s: %d runs, %.0f s" % (fmt(self.names, values), new, time.time() - t0))
        return pred


def mean_err(points, pred, fams):
    e = [abs(v - p.measured) / p.measured for p, v in zip(points, pred) if p.family in fams]
    return statistics.mean(e) if e else float("nan")


def snap(names, values):
    out = []
    for n, v in zip(names, values):
        lo, hi, step = PARAMS[n]
        v = round(round(min(hi, max(lo, v)) / step) * step, 6)
        out.append(int(v) if float(step).is_integer() else v)
    return out


def to_z(names, values):
    """Parameter values -> coded units, -1 at the lower bound, +1 at the upper."""
    return [2.0 * (v - PARAMS[n][0]) / (PARAMS[n][1] - PARAMS[n][0]) - 1 for n, v in zip(names, values)]


def from_z(names, z):
    return [PARAMS[n][0] + (zi + 1) / 2 * (PARAMS[n][1] - PARAMS[n][0]) for n, zi in zip(names, z)]


def design(names, start):
    d = len(names)
    zs = [[0.0] * d] + [list(c) for c in itertools.product((-1.0, 1.0), repeat=d)]
    for i in range(d):
        for s in (-1.0, 1.0):
            z = [0.0] * d
            z[i] = s
            zs.append(z)
    vecs = [start] + [snap(names, from_z(names, z)) for z in zs]
    out = []
    for v in vecs:
        if v not in out:
            out.append(v)
    return out


def quad_features(z):
    import numpy as np
    z = np.atleast_2d(z)
    cols = [np.ones(len(z))] + [z[:, i] for i in range(z.shape[1])]
    for i in range(z.shape[1]):
        for j in range(i, z.shape[1]):
            cols.append(z[:, i] * z[:, j])
    return np.stack(cols, axis=1)


def read_start(arch_path, names):
    text = open(arch_path).read()
    start = []
    for n in names:
        if n == "consumer_cycles":
            start.append(hs.FITTED_CONSUMER_CYCLES)
            continue
        section, field = n.split(".")
        m = re.search(r"^%s:\n(?:  .*\n|\s*#.*\n)*?  %s:\s*([0-9.]+)" % (section, field), text, re.M)
        if not m:
            raise SystemExit("cannot find %s in %s" % (n, arch_path))
        v = float(m.group(1))
        start.append(int(v) if v.is_integer() else v)
    return start


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--gpu", default="h100")
    ap.add_argument("--sim", default=os.path.join(cal.ROOT, "build/tma-sim"))
    ap.add_argument("--arch", default=None)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2, help="model runs at a time")
    ap.add_argument("--per-family", type=int, default=6, help="points drawn per family (half row, half column order)")
    ap.add_argument("--seed", type=int, default=14)
    ap.add_argument("--params", default=DEFAULT_PARAMS, help="comma-separated, of: " + ", ".join(PARAMS))
    ap.add_argument("--families", default=None, help="only these families (comma-separated)")
    ap.add_argument("--cache", default=os.path.join(cal.ROOT, "build/lofo-cache.json"))
    ap.add_argument("--report", default=None, help="write the tables as Markdown")
    a = ap.parse_args()
    import numpy as np
    from scipy.optimize import minimize
    t0 = time.time()

    def log(s):
        print("[%5.0f s] %s" % (time.time() - t0, s), flush=True)

    data = os.path.join(cal.ROOT, "tests/calibration", a.gpu)
    arch = a.arch or os.path.join(cal.ROOT, "configs/arch/%s.yaml" % a.gpu)
    names = a.params.split(",")
    for n in names:
        if n not in PARAMS:
            raise SystemExit("unknown parameter %s (known: %s)" % (n, ", ".join(PARAMS)))
    points = sample_points(data, a.per_family, a.seed, a.families.split(",") if a.families else None)
    fams = sorted({p.family for p in points})
    runner = cal.Runner(a.sim, arch, a.jobs, a.cache)
    model = Model(runner, points, names, a.jobs, log)
    model.cached_at_start = len(runner.cache)
    start = read_start(arch, names)
    # The DRAM's rate is the GPU's: its bounds are the H100's (1700 +- 150) in proportion (the
    # H200's 2500: 2280-2720).
    for n, v in zip(names, start):
        lo, hi, step = PARAMS[n]
        if n == "dram.bytes_per_cycle" and v != 1700:
            PARAMS[n] = (round(v * lo / 1700 / step) * step, round(v * hi / 1700 / step) * step, step)
    vecs = design(names, start)
    log("%d points in %d families; %s; start %s; %d design vectors" % (
        len(points), len(fams), ", ".join(names), fmt(names, start), len(vecs)))
    preds = [model.predict(v) for v in vecs]
    shipped = preds[0]
    # The surrogate: per point, log bandwidth quadratic in the coded parameters.
    X = quad_features(np.array([to_z(names, v) for v in vecs]))
    Y = np.log(np.array(preds))                       # vectors x points
    coef, *_ = np.linalg.lstsq(X, Y, rcond=None)
    fit_rms = float(np.sqrt(np.mean((X @ coef - Y) ** 2)))
    log("surrogate: rms residual on the design %.2f%% of bandwidth" % (100 * fit_rms))
    meas = np.array([p.measured for p in points])

    def sur_err(z, mask):
        bw = np.exp(quad_features(np.array(z)) @ coef)[0]
        return float(np.mean(np.abs(bw[mask] - meas[mask]) / meas[mask]))

    z0 = to_z(names, start)
    folds = [(f, {f}) for f in fams] + [("(none: fit on all)", set())]
    rows = []
    for name, held in folds:
        rest = set(fams) - held
        mask = np.array([p.family in rest for p in points])
        best_design = min(range(len(vecs)), key=lambda i: mean_err(points, preds[i], rest))
        cands = []
        for zs in (z0, to_z(names, vecs[best_design])):
            # An explicit first simplex, a quarter of each range (0.5 in coded units) from the start
            # towards the inside: scipy's default steps 5% of a coordinate and 0.00025 of one that is
            # 0, which left a parameter started at the middle of its bounds where it was.
            simplex = [np.array(zs, dtype=float)]
            for i in range(len(names)):
                z = np.array(zs, dtype=float)
                z[i] += -0.5 if z[i] > 0 else 0.5
                simplex.append(z)
            r = minimize(lambda z: sur_err(z, mask), np.array(zs), method="Nelder-Mead", bounds=[(-1, 1)] * len(names),
                         options={"xatol": 1e-3, "fatol": 1e-5, "maxfev": 2000, "initial_simplex": np.array(simplex)})
            cands.append(r)
        r = min(cands, key=lambda r: r.fun)
        fitted = snap(names, from_z(names, r.x))
        log("fold %s: surrogate optimum %s (objective %.4f, %d evaluations)" % (name, fmt(names, fitted), r.fun,
                                                                             sum(c.nfev for c in cands)))
        pf = model.predict(fitted)
        rows.append({"family": name, "held": held, "n": sum(1 for p in points if p.family in held),
                     "held_shipped": mean_err(points, shipped, held), "held_fitted": mean_err(points, pf, held),
                     "fit_shipped": mean_err(points, shipped, rest), "fit_fitted": mean_err(points, pf, rest),
                     "fit_surrogate": sur_err(to_z(names, fitted), mask), "values": fitted, "pred": pf})
        log("  held out: %.1f%% shipped -> %.1f%% fitted; the others %.1f%% -> %.1f%% (surrogate said %.1f%%)" % (
            100 * rows[-1]["held_shipped"], 100 * rows[-1]["held_fitted"], 100 * rows[-1]["fit_shipped"],
            100 * rows[-1]["fit_fitted"], 100 * rows[-1]["fit_surrogate"]))
    runtime = time.time() - t0
    text = report(a, points, fams, names, start, vecs, preds, rows, fit_rms, model, runtime)
    print(text)
    if a.report:
        with open(a.report, "w") as f:
            f.write(text)


def report(a, points, fams, names, start, vecs, preds, rows, fit_rms, model, runtime):
    out = []
    w = out.append
    folds = [r for r in rows if r["held"]]
    allfit = [r for r in rows if not r["held"]]
    w("# Leave-one-family-out fit: the measurement space (%s)\n" % a.gpu)
    w("Written by `/usr/bin/python3 scripts/lofo_fit.py%s --jobs %d --per-family %d --seed %d%s --report %s` "
      "in %.0f s (%.1f min), %s: %d "
      "model runs (%d parameter vectors: %d of the design, %d fits). Points: tests/calibration/%s/space.csv "
      "(the span's bandwidth); start values: configs/arch/%s.yaml. The method is in the script's docstring.\n"
      % ("" if a.gpu == "h100" else " --gpu " + a.gpu, a.jobs, a.per_family, a.seed,
         "" if a.params == DEFAULT_PARAMS else " --params " + a.params, a.report,
         runtime, runtime / 60, "from an empty cache" if not model.cached_at_start else
         "with %d runs of any vector already in the cache" % model.cached_at_start, model.new_runs, len(model.memo), len(vecs), len(model.memo) - len(vecs),
         a.gpu, a.gpu))
    w("| parameter | shipped | bounds | step |")
    w("| --- | ---: | --- | ---: |")
    for n, s in zip(names, start):
        lo, hi, st = PARAMS[n]
        w("| %s | %s | %s-%s | %s |" % (n, s, lo, hi, st))
    w("")
    w("The surrogate (a quadratic per point in the parameters, for the log of its bandwidth) fits the "
      "design's runs to %.2f%% rms.\n" % (100 * fit_rms))
    w("| held-out family | what | points | error at shipped values | error after the fit without it | "
      "the other families: shipped -> fitted (surrogate) | " + " | ".join(n.split(".")[-1] for n in names) + " |")
    w("| --- | --- | ---: | ---: | ---: | ---: | " + " | ".join("---:" for _ in names) + " |")
    for r in rows:
        held = "%.1f%%" % (100 * r["held_shipped"]) if r["held"] else ""
        heldf = "%.1f%%" % (100 * r["held_fitted"]) if r["held"] else ""
        w("| %s | %s | %s | %s | %s | %.1f%% -> %.1f%% (%.1f%%) | %s |" % (
            r["family"], FAMILY_WHAT.get(r["family"], "every family fitted, nothing held out"),
            r["n"] or "", held, heldf, 100 * r["fit_shipped"], 100 * r["fit_fitted"], 100 * r["fit_surrogate"],
            " | ".join(str(v) for v in r["values"])))
    w("")
    if folds:
        w("Spread of the fitted values over the %d folds (a parameter that moves a lot is not determined by "
          "the data):\n" % len(folds))
        w("| parameter | shipped | min | median | max | range / bounds' range |")
        w("| --- | ---: | ---: | ---: | ---: | ---: |")
        for i, n in enumerate(names):
            vs = [r["values"][i] for r in folds]
            lo, hi, _ = PARAMS[n]
            w("| %s | %s | %s | %s | %s | %.0f%% |" % (n, start[i], min(vs), statistics.median(vs), max(vs),
                                                     100 * (max(vs) - min(vs)) / (hi - lo)))
        w("")
        better = sum(1 for r in folds if r["held_fitted"] < r["held_shipped"] - 1e-9)
        worse = sum(1 for r in folds if r["held_fitted"] > r["held_shipped"] + 1e-9)
        w("Held-out families better after the fit without them: %d of %d (worse: %d). Mean over the held-out "
          "families: %.1f%% at the shipped values, %.1f%% after the fits without them.\n" % (
              better, len(folds), worse, 100 * statistics.mean(r["held_shipped"] for r in folds),
              100 * statistics.mean(r["held_fitted"] for r in folds)))
    w("Per point: silicon, the model at the shipped values, at each fold's fitted values (the column of the "
      "fold that held the point's family out is marked *):\n")
    hdr = ["family", "point", "silicon GB/s", "shipped"] + ["fit w/o %s" % r["family"] for r in folds]
    w("| " + " | ".join(hdr) + " |")
    w("| --- | --- | " + " | ".join("---:" for _ in hdr[2:]) + " |")
    for i, p in enumerate(points):
        cells = ["%.0f (%+.0f%%)" % (r["pred"][i], 100 * (r["pred"][i] / p.measured - 1))
                 + (" *" if p.family in r["held"] else "") for r in folds]
        w("| %s | %s | %.0f | %.0f (%+.0f%%) | %s |" % (p.family, p.label, p.measured, preds[0][i],
                                                       100 * (preds[0][i] / p.measured - 1), " | ".join(cells)))
    w("")
    w("Design vectors (%s) and their real error over all sampled points:\n" % ", ".join(names))
    for v, pr in zip(vecs, preds):
        w("- %s: %.1f%%" % (fmt(names, v), 100 * mean_err(points, pr, set(fams))))
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    main()
