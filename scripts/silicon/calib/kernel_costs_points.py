#!/usr/bin/env python3
"""run_kernel_costs.sh's helper: points appended to a measuring build of gemm.cu or workloads.cu
(host code only), the check that the kernels stay byte for byte the original build's, the points
to run, and the table of cycles a step.

  kernel_costs_points.py PROG ORIG.cu OUT.cu          append the cost points to make_points()
  kernel_costs_points.py --compare A.cubin B.cubin    exit 1 unless every kernel's code is the same
  kernel_costs_points.py --points PROG                the point numbers to run
  kernel_costs_points.py --table SRCDIR WORKDIR       kernel_costs.csv on stdout
"""
import csv
import glob
import os
import re
import struct
import sys

# Appended after every original point, so the originals keep their numbers. GEMM: an 8192 x 8192
# output over K = 512 (8 MB operands: in the L2 after the first pass), M raster, no promotion,
# both tile shapes, spins up to 2048 cycles. Attention: one batch of 4 query heads on one KV head
# over 8,192 tokens (2 MB K and V, 8 MB Q), not causal, no promotion, spins up to 4,096.
APPEND = {
    "gemm": ("  return v;\n}\n\nstruct Span {", """  // run_kernel_costs.sh: points whose operands stay in the L2 and whose k-steps only the
  // consumer bounds (what it costs a step beside its spin)
  for (int bn : {128, 256})
    for (int c : {0, 512, 1024, 2048}) {
      GemmPoint p;
      p.K = 512;
      p.BN = bn;
      p.stages = bn == 256 ? 4 : 6;
      p.compute = c;
      v.push_back(p);
    }
"""),
    "workloads": ("  return v;\n}\n\nstruct Span {", """  // run_kernel_costs.sh: points whose operands stay in the L2 and whose KV steps only the
  // consumer bounds (what it costs a step beside its spin)
  for (int c : {0, 2048, 4096}) {
    WlPoint p;
    p.batch = 1;
    p.heads = 4;
    p.kv_heads = 1;
    p.seq_q = p.seq_kv = 8192;
    p.l2 = 0;
    p.compute = c;
    v.push_back(p);
  }
"""),
}
# Original points run again (the M raster without promotion at every spin: the check against the data
# file) and the appended.
POINTS = {"gemm": [0, 1, 2, 27, 28, 29] + list(range(81, 89)), "workloads": [1, 9, 44, 45, 46]}


def append_points(prog, src, dst):
    text = open(src).read()
    anchor, block = APPEND[prog]
    if text.count(anchor) != 1:
        sys.exit("%s: make_points()'s end not found once" % src)
    open(dst, "w").write(text.replace(anchor, block + anchor))


def kernels(path):
    """Each kernel's code (.text.NAME sections; the anonymous namespace's hash dropped from NAME)."""
    data = open(path, "rb").read()
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)

    def header(i):
        name, _type, _flags, _addr, off, size = struct.unpack_from("<IIQQQQ", data, shoff + i * shentsize)
        return name, off, size
    _, stroff, _ = header(shstrndx)
    out = {}
    for i in range(shnum):
        name, off, size = header(i)
        end = data.index(b"\0", stroff + name)
        sec = data[stroff + name:end].decode()
        if sec.startswith(".text."):
            out[re.sub(r"_GLOBAL__N__[0-9a-f]+_", "", sec[6:])] = data[off:off + size]
    return out


def compare(a, b):
    ka, kb = kernels(a), kernels(b)
    same = bool(ka) and ka == kb
    print("%s vs %s: %d kernels, %s" % (os.path.basename(a), os.path.basename(b), len(ka),
                                         "the same code" if same else "DIFFERENT code"))
    return 0 if same else 1


def steps_per_cta(prog, r):
    """k-steps (KV steps) of the CTA with the most, or None where that takes the schedule's detail."""
    grid = int(r["grid"])
    if prog == "gemm":
        tiles = (int(r["M"]) // int(r["BM"])) * (int(r["N"]) // int(r["BN"]))
        return -(-tiles // grid) * (int(r["K"]) // 64)
    if r.get("kind") != "attention" or r.get("causal") != "0":
        return None
    split = int(r["split_kv"])
    items = (int(r["batch"]) * (int(r["heads"]) // int(r["q_heads_per_box"])) * (int(r["seq_q"]) // int(r["block_m"]))
             * split)
    return -(-items // grid) * (int(r["seq_kv"]) // int(r["block_n"]) // split)


def table(src, work):
    w = csv.writer(sys.stdout, lineterminator="\n")
    w.writerow(["build", "program", "data_files", "point", "shape", "compute_cycles", "span_us", "sm_mhz",
                "steps_per_cta", "cycles_per_step"])
    for d in sorted(glob.glob(os.path.join(src, "*/"))):
        b = os.path.basename(d.rstrip("/"))
        prog = open(os.path.join(d, "program")).read().strip()
        files = "+".join(open(os.path.join(d, "files")).read().split())
        path = os.path.join(work, b + ".csv")
        if not os.path.exists(path):
            continue
        for r in csv.DictReader(open(path)):
            if r.get("status", "ok") != "ok":
                continue
            shape = ("%sx%sx%s %sx%s S%s" % (r["M"], r["N"], r["K"], r["BM"], r["BN"], r["stages"]) if prog == "gemm" else
                     "%s b%s h%s/%s s%s causal%s" % (r["kind"], r["batch"], r["heads"], r["kv_heads"], r["seq_kv"],
                                                     r["causal"]))
            n = steps_per_cta(prog, r)
            cyc = float(r["span_us"]) * float(r["sm_mhz"]) / n if n else None
            w.writerow([b, prog, files, r["point"], shape, r["compute_cycles"], r["span_us"], r["sm_mhz"], n or "",
                        "%.1f" % cyc if cyc else ""])


def main():
    a = sys.argv[1:]
    if a[:1] == ["--compare"] and len(a) == 3:
        return compare(a[1], a[2])
    if a[:1] == ["--points"] and len(a) == 2:
        print(" ".join(str(p) for p in POINTS[a[1]]))
        return 0
    if a[:1] == ["--table"] and len(a) == 3:
        return table(a[1], a[2])
    if len(a) == 3 and a[0] in APPEND:
        return append_points(*a)
    sys.exit(__doc__)


if __name__ == "__main__":
    sys.exit(main())
