#!/usr/bin/python3
"""Plots a sweep CSV (tma-sim sweep ... --csv FILE) as PNGs: one figure per metric, the metric
against one parameter (x), one line per value of a second parameter, one panel per combination
of the other parameters.

    /usr/bin/python3 scripts/plot_sweep.py docs/sweeps/l2_promotion.csv --out docs/sweeps

Needs matplotlib (Debian: python3-matplotlib). The parameters are the CSV's columns between
'point' and 'status'; by default x is the first of them and the lines the second. Values keep
the order they first appear in (the sweep file's order).
"""
import argparse
import csv
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

# metric -> (title, axis label, scale). "l2_sectors" draws sectors requested and sectors missed.
METRICS = {
    "load_bandwidth_gbs": ("Load bandwidth", "GB/s", 1.0),
    "dram_read_bytes": ("DRAM bytes read", "MB", 1e-6),
    "l2_sectors": ("L2 sectors: requested (solid) and missed (dashed)", "million sectors", 1e-6),
    "overfetch_bytes": ("Over-fetch (DRAM fill beyond the missed sectors)", "MB", 1e-6),
    "l2_hit_rate": ("L2 sector hit rate", "fraction of sectors", 1.0),
}
FILES = {
    "load_bandwidth_gbs": "bandwidth",
    "dram_read_bytes": "dram_bytes",
    "l2_sectors": "l2_sectors",
    "overfetch_bytes": "overfetch",
    "l2_hit_rate": "l2_hit_rate",
}


def ordered(values):
    out = []
    for v in values:
        if v not in out:
            out.append(v)
    return out


def number(row, key):
    try:
        return float(row[key])
    except (KeyError, ValueError):
        return None


def value(row, metric):
    if metric == "l2_sectors":
        return number(row, "sectors_requested")
    return number(row, metric)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("csv", help="sweep.csv written by tma-sim sweep")
    ap.add_argument("--out", default=".", help="folder for the PNGs (default: here)")
    ap.add_argument("--prefix", help="file name prefix (default: the CSV's name)")
    ap.add_argument("--x", help="parameter on the x axis (default: the first)")
    ap.add_argument("--lines", help="parameter drawn as one line per value (default: the second)")
    ap.add_argument("--metrics", default=",".join(METRICS),
                    help="comma-separated: any summary column, or l2_sectors (default: %(default)s)")
    args = ap.parse_args()

    with open(args.csv, newline="") as f:
        reader = csv.DictReader(f)
        columns = reader.fieldnames or []
        rows = list(reader)
    if "point" not in columns or "status" not in columns:
        sys.exit(f"plot_sweep: {args.csv} is not a sweep CSV (no 'point' and 'status' columns)")
    params = columns[columns.index("point") + 1:columns.index("status")]
    if not params:
        sys.exit("plot_sweep: the CSV has no parameter columns")
    x = args.x or params[0]
    lines = args.lines or (params[1] if len(params) > 1 else None)
    for p in (x, lines):
        if p is not None and p not in params:
            sys.exit(f"plot_sweep: no parameter '{p}' (the CSV has: {', '.join(params)})")
    panels = [p for p in params if p not in (x, lines)]
    good = [r for r in rows if r["status"] == "pass"]
    if len(good) < len(rows):
        print(f"plot_sweep: {len(rows) - len(good)} points did not pass and are left out", file=sys.stderr)
    if not good:
        sys.exit("plot_sweep: no point passed")

    xs = ordered(r[x] for r in rows)
    line_values = ordered(r[lines] for r in rows) if lines else [None]
    # Panels: rows of the grid by the first remaining parameter, columns by the rest combined.
    if panels:
        grid_rows = ordered(r[panels[0]] for r in rows)
        rest = panels[1:]
        grid_cols = ordered(tuple(r[p] for p in rest) for r in rows)
    else:
        grid_rows, rest, grid_cols = [None], [], [()]

    prefix = args.prefix or os.path.splitext(os.path.basename(args.csv))[0]
    os.makedirs(args.out, exist_ok=True)
    made = []
    for metric in [m.strip() for m in args.metrics.split(",") if m.strip()]:
        title, unit, scale = METRICS.get(metric, (metric, metric, 1.0))
        if metric != "l2_sectors" and metric not in columns:
            print(f"plot_sweep: no column '{metric}', skipped", file=sys.stderr)
            continue
        fig, axes = plt.subplots(len(grid_rows), len(grid_cols), squeeze=False, sharex=True,
                                 figsize=(4.2 * len(grid_cols) + 1.5, 3.2 * len(grid_rows) + 0.8))
        for i, gr in enumerate(grid_rows):
            for j, gc in enumerate(grid_cols):
                ax = axes[i][j]
                sel = [r for r in good
                       if (gr is None or r[panels[0]] == gr) and all(r[p] == v for p, v in zip(rest, gc))]
                for k, lv in enumerate(line_values):
                    pts = [r for r in sel if lv is None or r[lines] == lv]
                    by_x = {r[x]: r for r in pts}
                    xi = [n for n, xv in enumerate(xs) if xv in by_x]
                    ys = [value(by_x[xs[n]], metric) for n in xi]
                    keep = [(a, b) for a, b in zip(xi, ys) if b is not None]
                    if not keep:
                        continue
                    # Lines that coincide stay visible: each has its own marker, size and width.
                    color = f"C{k % 10}"
                    style = dict(marker="os^Dvx+*"[k % 8], markersize=max(3, 9 - 1.5 * k),
                                 linewidth=max(0.8, 2.6 - 0.5 * k), color=color)
                    ax.plot([a for a, _ in keep], [b * scale for _, b in keep],
                            label=lv if lv is not None else metric, **style)
                    if metric == "l2_sectors":
                        miss = []
                        for a in xi:
                            r = by_x[xs[a]]
                            req, hit = number(r, "sectors_requested"), number(r, "sector_hits")
                            if req is not None and hit is not None:
                                miss.append((a, (req - hit) * scale))
                        ax.plot([a for a, _ in miss], [b for _, b in miss], linestyle="--", **style)
                ax.set_xticks(range(len(xs)))
                ax.set_xticklabels(xs)
                ax.grid(True, alpha=0.3)
                ax.set_ylim(bottom=0)
                label = []
                if gr is not None:
                    label.append(f"{panels[0]}={gr}")
                label += [f"{p}={v}" for p, v in zip(rest, gc)]
                if label:
                    ax.set_title(", ".join(label), fontsize=9)
                if i == len(grid_rows) - 1:
                    ax.set_xlabel(x)
                if j == 0:
                    ax.set_ylabel(unit)
        handles, labels = axes[0][0].get_legend_handles_labels()
        if lines and handles:
            fig.legend(handles, labels, title=lines, loc="center right", fontsize=8)
        fig.suptitle(f"{title} against {x}" + (f", one line per {lines}" if lines else ""), fontsize=11)
        fig.tight_layout(rect=(0, 0, 0.86 if lines else 1, 0.95))
        path = os.path.join(args.out, f"{prefix}_{FILES.get(metric, metric)}.png")
        fig.savefig(path, dpi=90)
        plt.close(fig)
        made.append(path)
    for p in made:
        print(p)


if __name__ == "__main__":
    main()
