#!/usr/bin/env python3
"""Turns raw capture results (tma_capture output) into tma-golden/1 cases.

usage: to_golden.py CASES RAWDIR OUTDIR

For each case of CASES (gen_cases.py format) with a result RAWDIR/NAME.res it writes
OUTDIR/NAME.yaml and the binary files it names (NAME.smem, NAME.gmem, NAME.desc). The
format is ../../docs/golden-format.md (tma-golden/1 plus the store/reduce extension).
Only the Python standard library is used.
"""
import os
import shutil
import struct
import sys


def read_cases(path):
    cases = []
    for line in open(path):
        if line.startswith("#") or not line.strip():
            continue
        d = dict(kv.split("=", 1) for kv in line.split())
        cases.append(d)
    return cases


def read_result(path):
    d = {}
    for line in open(path):
        if ":" in line:
            k, v = line.split(":", 1)
            d[k.strip()] = v.strip()
    return d


def ints(s):
    return [] if s in ("", "-", None) else [int(x) for x in s.split(",")]


def flow(xs):
    return "[" + ", ".join(str(x) for x in xs) + "]"


def word_hash_bytes(start, end):
    """Bytes [start, end) of the word_hash image."""
    w0, w1 = start // 4, (end + 3) // 4
    data = b"".join(struct.pack("<I", (i * 2654435761 + 0x12345) & 0xFFFFFFFF) for i in range(w0, w1))
    return data[start - 4 * w0:end - 4 * w0]


def origin_line(rawdir, mode):
    driver = "unknown"
    gpu = "NVIDIA GPU"
    try:
        rows = open(os.path.join(rawdir, "nvidia-smi.csv")).read().splitlines()
        cols = [c.strip() for c in rows[1].split(",")]
        gpu, driver = cols[0], cols[1]
    except (OSError, IndexError):
        pass
    api = "cuTensorMapEncodeIm2col" if mode == "im2col" else "cuTensorMapEncodeTiled"
    return "%s (sm_90), driver %s, %s + cp.async.bulk.tensor, scripts/silicon/tma_capture.cu" % (gpu, driver, api)


def convert(c, r, rawdir, outdir):
    name = c["name"]
    mode = c["mode"]
    kind = c["kind"]
    rank = int(c["rank"])
    lines = ["schema: tma-golden/1", "name: " + name,
             'origin: "%s"' % origin_line(rawdir, mode),
             "intent: %s          # what the generator meant; the outcome below is what silicon did" % c["intent"],
             "global:", "  fill: word_hash", "  size: %s" % c["gsize"],
             "tensor_map:", "  mode: " + mode, "  dtype: " + c["dtype"], "  rank: %d" % rank,
             "  base: %s" % c["base"], "  dims: " + flow(ints(c["dims"])),
             "  strides: " + flow(ints(c.get("strides")))]
    if mode == "tiled":
        lines.append("  box: " + flow(ints(c["box"])))
    lines += ["  element_strides: " + flow(ints(c["estr"])), "  interleave: " + c["interleave"],
              "  swizzle: " + c["swizzle"], "  l2_promotion: " + c["l2"], "  oob_fill: " + c["oob"]]
    if mode == "im2col":
        lines += ["  lower_corner: " + flow(ints(c["lower"])), "  upper_corner: " + flow(ints(c["upper"])),
                  "  channels_per_pixel: " + c["cpp"], "  pixels_per_column: " + c["ppc"]]
    lines += ["op:", "  kind: " + kind, "  coords: " + flow(ints(c["coords"]))]
    if mode == "im2col":
        lines.append("  im2col_offsets: " + flow(ints(c.get("offsets"))))
    lines.append("  smem_addr: " + c["smem"])
    win = int(c["win"])
    if kind not in ("load", "prefetch"):
        lines += ["  smem_fill:", "    fill: word_hash", "    seed: %s" % c["smem_seed"], "    size: %d" % win]
    lines.append("expect:")
    files = []
    if "encode_error" in r:
        lines.append("  outcome: encode_error")
    elif "fault" in r:
        lines += ["  outcome: fault", "  # silicon: %s" % r["fault"]]
    elif kind == "load":
        if r.get("tx_confirmed") != "1":
            return None, "complete_tx count not found"
        smem = open(os.path.join(rawdir, name + ".smem"), "rb").read()
        last = max((i for i, b in enumerate(smem) if b != 0xCD), default=-1)
        if last >= len(smem) - 128:
            return None, "shared-memory window too small (written up to its end)"
        size = min(len(smem), ((last + 1 + 127) // 128) * 128 + 128)
        open(os.path.join(outdir, name + ".smem"), "wb").write(smem[:size])
        lines += ["  outcome: ok", "  smem_bytes: %d" % size, "  smem_image: %s.smem" % name,
                  "  tx_bytes: %s" % r["tx"]]
    elif kind == "prefetch":
        lines += ["  outcome: ok", "  smem_bytes: 1024", "  smem_image: %s.smem" % name, "  tx_bytes: 0"]
        open(os.path.join(outdir, name + ".smem"), "wb").write(b"\xcd" * 1024)
    else:
        gsize = int(c["gsize"])
        changed = int(r.get("changed_bytes", "0"))
        if changed:
            lo, hi = int(r["changed_lo"]), int(r["changed_hi"])
            after = open(os.path.join(rawdir, name + ".gmem"), "rb").read()
        else:
            lo = hi = min(int(c["base"]), gsize)
            after = b""
        wlo = max(0, (lo - 64) // 16 * 16)
        whi = min(gsize, (hi + 64 + 15) // 16 * 16)
        image = word_hash_bytes(wlo, lo) + after + word_hash_bytes(hi, whi)
        open(os.path.join(outdir, name + ".gmem"), "wb").write(image)
        lines += ["  outcome: ok", "  global_window:", "    offset: %d" % wlo, "    size: %d" % (whi - wlo),
                  "    image: %s.gmem" % name]
    if os.path.exists(os.path.join(rawdir, name + ".desc")) and "encode_error" not in r:
        shutil.copy(os.path.join(rawdir, name + ".desc"), os.path.join(outdir, name + ".desc"))
        lines.append("driver_descriptor: %s.desc" % name)
    if "cold_cycles" in r and r["cold_cycles"] != "0":
        lines += ["silicon:", "  cold_cycles: " + r["cold_cycles"], "  warm_cycles: " + r["warm_cycles"]]
    with open(os.path.join(outdir, name + ".yaml"), "w") as f:
        f.write("\n".join(lines) + "\n")
    return name, None


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    cases_path, rawdir, outdir = sys.argv[1:]
    os.makedirs(outdir, exist_ok=True)
    done = skipped = 0
    for c in read_cases(cases_path):
        res = os.path.join(rawdir, c["name"] + ".res")
        if not os.path.exists(res):
            print("%s: no result" % c["name"], file=sys.stderr)
            skipped += 1
            continue
        name, why = convert(c, read_result(res), rawdir, outdir)
        if why:
            print("%s: skipped: %s" % (c["name"], why), file=sys.stderr)
            skipped += 1
        else:
            done += 1
    print("%d cases written to %s, %d skipped" % (done, outdir, skipped))


if __name__ == "__main__":
    main()
