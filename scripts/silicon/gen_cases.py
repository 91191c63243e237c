#!/usr/bin/env python3
"""Seeded random TMA cases for silicon capture.

Writes one case per line, `key=value` pairs separated by spaces (arrays comma-separated),
for tma_capture (scripts/silicon/tma_capture.cu) to run on a Hopper GPU. The same seed gives
the same file on any machine (Python's random.Random is portable across platforms).

Each case has an `intent`: what the generator meant (valid, encode_error:<rule>, fault:<why>,
probe:<what>). It is a label only: the golden outcome is what the driver and the GPU did.

Usage: gen_cases.py --seed 1 --scale 1.0 --prefix t > cases.txt
"""
import argparse
import random
import sys

ESIZE = {"u8": 1, "u16": 2, "u32": 4, "s32": 4, "u64": 8, "s64": 8, "f16": 2, "f32": 4,
         "f64": 8, "bf16": 2, "f32_ftz": 4, "tf32": 4, "tf32_ftz": 4}
DTYPES = list(ESIZE)
FLOATS = {"f16", "f32", "f64", "bf16", "f32_ftz", "tf32", "tf32_ftz"}
SPAN = {"none": 0, "32B": 32, "64B": 64, "128B": 128}
SWIZZLES = list(SPAN)
L2 = ["none", "64B", "128B", "256B"]
MAX_WINDOW = 200 * 1024       # dynamic shared memory the capture kernel may use
MAX_IMAGE = 8 << 20           # largest global image


def ceil_div(a, b):
    return -(-a // b)


def round_up(a, b):
    return ceil_div(a, b) * b


class Gen:
    def __init__(self, seed, prefix):
        self.r = random.Random(seed)
        self.prefix = prefix
        self.count = 0
        self.lines = []

    # ---------- helpers ----------
    def pick(self, seq):
        return self.r.choice(seq)

    def chance(self, p):
        return self.r.random() < p

    def emit(self, c):
        self.count += 1
        c = dict(c)
        name = "%s%04d" % (self.prefix, self.count)
        fields = ["name=" + name]
        for k, v in c.items():
            if isinstance(v, (list, tuple)):
                v = ",".join(str(x) for x in v)
            fields.append("%s=%s" % (k, v))
        self.lines.append(" ".join(fields))

    def layout(self, dims, e, align=16, pad_choices=(0, 0, 1, 2, 3)):
        """Dense-ish strides with a little padding; returns strides and the byte extent."""
        strides = []
        row = dims[0] * e
        prev = round_up(row, align) + align * self.pick(pad_choices)
        for i in range(1, len(dims)):
            strides.append(prev)
            prev = prev * dims[i] + align * self.pick((0, 0, 0, 1, 2))
        if len(dims) == 1:
            extent = row
        else:
            extent = strides[-1] * (dims[-1] - 1) + (strides[-2] * (dims[-2] - 1) if len(dims) > 2 else 0)
            # the highest byte touched: sum over dims of (dim-1)*stride plus one row
            extent = sum((dims[i] - 1) * strides[i - 1] for i in range(1, len(dims))) + row
        return strides, extent

    def coord(self, dim, box, align_elems=1):
        """A start coordinate: inside, negative, past the end, or fully outside."""
        kind = self.r.random()
        if kind < 0.55:
            lo, hi = 0, max(0, dim - box)
        elif kind < 0.75:
            lo, hi = -box, -1
        elif kind < 0.93:
            lo, hi = max(0, dim - box), dim + 2
        else:
            lo, hi = dim, dim + box + 3
        c = self.r.randint(lo, max(lo, hi))
        if align_elems > 1:
            c = (c // align_elems) * align_elems
        return c

    def image(self, base, extent, extra=256):
        return max(65536, round_up(base + extent + extra, 4096))

    # ---------- tiled loads ----------
    def tiled(self, rank=None, dtype=None, swizzle=None, kind="load", big=False, small_tensor=False):
        r = self.r
        rank = rank or self.pick([1, 2, 2, 3, 3, 4, 5])
        dtype = dtype or self.pick(DTYPES)
        swizzle = swizzle or self.pick(SWIZZLES)
        e = ESIZE[dtype]
        span = SPAN[swizzle]
        max_inner = span if span else min(256 * e, 256)
        inner = 16 * r.randint(1, max(1, max_inner // 16))
        if self.chance(0.3):
            inner = max_inner if span else 16 * r.randint(1, 4)
        box0 = min(256, inner // e)
        box = [box0]
        est = [1]
        budget = (96 * 1024 if big else 16 * 1024) // max(span, inner)
        rows = 1
        for i in range(1, rank):
            hi = 256 if big else (24 if rank <= 2 else 8)
            b = r.randint(1, hi)
            s = 1 if self.chance(0.7) else r.randint(2, 8)
            n = ceil_div(b, s)
            while rows * n > max(1, budget) and b > 1:
                b = max(1, b // 2)
                n = ceil_div(b, s)
            rows *= n
            box.append(b)
            est.append(s)
        if self.chance(0.08):
            est[0] = r.randint(2, 8)  # ignored without interleave, says the driver's documentation
        dims = []
        for i in range(rank):
            b = box[i]
            if small_tensor:
                d = r.randint(1, max(2, b + 4)) if i else r.randint(1, b + 24)
            elif self.chance(0.2):
                d = r.randint(1, max(1, b))                  # box larger than the tensor
            else:
                d = r.randint(max(1, b // 2), b * 3 + 8)
            dims.append(d)
        # keep the image bounded
        while True:
            strides, extent = self.layout(dims, e)
            if extent < MAX_IMAGE // 2:
                break
            j = max(range(rank), key=lambda k: dims[k])
            dims[j] = max(1, dims[j] // 2)
        base = 16 * r.randint(0, 64)
        coords = [self.coord(dims[0], box[0], max(1, 16 // e))]
        for i in range(1, rank):
            coords.append(self.coord(dims[i], box[i]))
        smem = 128 * r.randint(0, 15)
        pitch = max(inner, span) if span else inner
        win = min(MAX_WINDOW, round_up(smem + rows * pitch * 2 + 1024, 1024))
        oob = "nan" if (dtype in FLOATS and self.chance(0.4)) else "zero"
        return dict(intent="valid", kind=kind, mode="tiled", dtype=dtype, rank=rank, base=base,
                    gsize=self.image(base, extent), dims=dims, strides=strides or ["-"], box=box,
                    estr=est, interleave="none", swizzle=swizzle, l2=self.pick(L2), oob=oob,
                    coords=coords, smem=smem, win=win)

    def interleaved(self):
        r = self.r
        rank = self.pick([3, 3, 4, 5])
        il = self.pick(["16B", "32B"])
        slice_bytes = 16 if il == "16B" else 32
        dtype = self.pick(DTYPES)
        e = ESIZE[dtype]
        swizzle = "32B" if il == "32B" else self.pick(SWIZZLES)
        span = SPAN[swizzle]
        d0 = max(1, slice_bytes // e)
        if self.chance(0.2):
            d0 = max(1, r.randint(1, 2 * d0))
        box0 = d0 if self.chance(0.7) else r.randint(1, max(1, 2 * d0))
        box = [box0]
        est = [1 if self.chance(0.8) else r.randint(2, 3)]
        for i in range(1, rank):
            box.append(r.randint(1, 8 if i == 1 else 4))
            est.append(1 if self.chance(0.8) else r.randint(2, 3))
        dims = [d0] + [r.randint(max(1, box[i] // 2), box[i] * 2 + 4) for i in range(1, rank)]
        align = 32 if il == "32B" else 16
        strides, extent = self.layout(dims, e, align=align)
        base = align * r.randint(0, 32)
        coords = [0 if self.chance(0.85) else self.pick([d0, -d0])]
        coords += [self.coord(dims[i], box[i]) for i in range(1, rank)]
        rows = 1
        for i in range(1, rank):
            rows *= ceil_div(box[i], est[i])
        pitch = max(round_up(box0 * e, 16), span, slice_bytes)
        smem = 128 * r.randint(0, 15)
        win = min(MAX_WINDOW, round_up(smem + rows * pitch * 2 + 2048, 1024))
        oob = "nan" if (dtype in FLOATS and self.chance(0.4)) else "zero"
        return dict(intent="valid", kind="load", mode="tiled", dtype=dtype, rank=rank, base=base,
                    gsize=self.image(base, extent), dims=dims, strides=strides, box=box, estr=est,
                    interleave=il, swizzle=swizzle, l2=self.pick(L2), oob=oob, coords=coords,
                    smem=smem, win=win)

    # ---------- im2col loads ----------
    def im2col(self, rank=None, dtype=None):
        r = self.r
        rank = rank or self.pick([3, 4, 5])
        dtype = dtype or self.pick(DTYPES)
        e = ESIZE[dtype]
        swizzle = self.pick(SWIZZLES)
        span = SPAN[swizzle]
        unit = max(1, 16 // e)
        max_cpp_bytes = span if span else 256
        cpp = unit * r.randint(1, max(1, min(256, max_cpp_bytes // e) // unit))
        cpp = min(cpp, 256)
        if self.chance(0.3):
            c = cpp + unit * r.randint(0, 3)           # the tensor has more channels than a pixel takes
        elif self.chance(0.3):
            c = max(1, cpp - unit * r.randint(0, 2))   # fewer: the rest is out of bounds
        else:
            c = cpp
        nsp = rank - 2
        lim = {3: 32767, 4: 127, 5: 15}[rank]
        spatial = [r.randint(2, 10) for _ in range(nsp)]
        n = r.randint(1, 4)
        dims = [c] + spatial + [n]
        lower = [max(-lim - 1, r.randint(-3, 1)) for _ in range(nsp)]
        upper = [min(lim, r.randint(-3, 1)) for _ in range(nsp)]
        # the driver wants a box of non-zero area: keep dims-1+upper >= lower mostly
        for i in range(nsp):
            if spatial[i] - 1 + upper[i] < lower[i] and self.chance(0.9):
                upper[i] = lower[i] - spatial[i] + 1 + r.randint(0, 2)
        est = [1] + [1 if self.chance(0.6) else r.randint(2, 3) for _ in range(nsp)] + \
              [1 if self.chance(0.8) else 2]
        ppc = self.pick([1, 2, 7, 16, 32, 33, 64, 100, 128, 256])
        pitch = max(cpp * e, span) if span else cpp * e
        while ppc * pitch > 96 * 1024:
            ppc //= 2
        strides, extent = self.layout(dims, e)
        base = 16 * r.randint(0, 32)
        cc = 0 if self.chance(0.7) else unit * r.randint(-1, max(0, c // unit))
        coords = [cc]
        for i in range(nsp):
            lo, hi = lower[i], spatial[i] - 1 + upper[i]
            if self.chance(0.85):
                coords.append(r.randint(min(lo, hi), max(lo, hi)))
            else:
                coords.append(r.randint(lo - 2, hi + 2))
        coords.append(r.randint(0, n - 1) if self.chance(0.85) else r.randint(-1, n + 1))
        off_lim = {3: 65535, 4: 255, 5: 31}[rank]
        offsets = [min(off_lim, r.randint(0, 3)) for _ in range(nsp)]
        smem = 128 * r.randint(0, 15)
        win = min(MAX_WINDOW, round_up(smem + ppc * max(pitch, 16) * 2 + 1024, 1024))
        oob = "nan" if (dtype in FLOATS and self.chance(0.4)) else "zero"
        return dict(intent="valid", kind="load", mode="im2col", dtype=dtype, rank=rank, base=base,
                    gsize=self.image(base, extent), dims=dims, strides=strides, estr=est,
                    interleave="none", swizzle=swizzle, l2=self.pick(L2), oob=oob,
                    lower=lower, upper=upper, cpp=cpp, ppc=ppc, coords=coords, offsets=offsets,
                    smem=smem, win=win)

    # ---------- invalid descriptors ----------
    def broken(self):
        """A valid case with one driver rule broken. Returns the case (intent names the rule)."""
        r = self.r
        rule = self.pick(BROKEN_RULES)
        im = rule.startswith("im2col")
        c = self.im2col() if im else self.tiled()
        rank = c["rank"]
        e = ESIZE[c["dtype"]]
        if rule == "rank.zero":
            c["rank"] = 0
        elif rule == "rank.six":
            c["rank"] = 6
            c["dims"] = list(c["dims"]) + [1] * (6 - rank)
            c["strides"] = []  # filled below
        elif rule == "address.align16":
            c["base"] = c["base"] + self.pick([4, 8, 2])
        elif rule == "dim.zero":
            c["dims"][r.randrange(rank)] = 0
        elif rule == "dim.over_2_32":
            c["dims"][r.randrange(rank)] = (1 << 32) + self.pick([1, 16])
        elif rule == "stride.multiple_16" and rank > 1:
            c["strides"][r.randrange(rank - 1)] += self.pick([4, 8, 1])
        elif rule == "stride.max_2_40" and rank > 1:
            c["strides"][r.randrange(rank - 1)] = (1 << 40) + self.pick([0, 16])
        elif rule == "box.zero":
            c["box"][r.randrange(rank)] = 0
        elif rule == "box.over_256":
            c["box"][self.pick(range(1, rank)) if rank > 1 else 0] = 257
        elif rule == "box.inner_bytes_16":
            if e >= 16:
                c["dtype"] = "u8"
            c["box"][0] = max(1, 16 // ESIZE[c["dtype"]]) + 1
        elif rule == "estride.zero":
            c["estr"][r.randrange(rank)] = 0
        elif rule == "estride.over_8":
            c["estr"][r.randrange(rank)] = 9
        elif rule == "swizzle.inner_span":
            sw = self.pick(["32B", "64B", "128B"])
            c["swizzle"] = sw
            c["dtype"] = "u8"
            c["box"][0] = SPAN[sw] + 16
        elif rule == "oob.nan_int":
            c["dtype"] = self.pick([t for t in DTYPES if t not in FLOATS])
            c["oob"] = "nan"
        elif rule == "interleave.rank":
            c = self.tiled(rank=self.pick([1, 2]))
            c["interleave"] = "16B"
        elif rule == "interleave32.swizzle":
            c = self.interleaved()
            c["interleave"] = "32B"
            c["swizzle"] = self.pick(["none", "64B", "128B"])
        elif rule == "interleave32.align":
            c = self.interleaved()
            c["interleave"] = "32B"
            c["swizzle"] = "32B"
            c["base"] = 32 * r.randint(0, 8) + 16
        elif rule == "im2col.rank":
            c["rank"] = self.pick([1, 2])
            c["dims"] = c["dims"][:c["rank"]]
            c["estr"] = c["estr"][:c["rank"]]
            c["lower"], c["upper"], c["offsets"] = [], [], []
            c["coords"] = c["coords"][:c["rank"]]
        elif rule == "im2col.corner_range":
            lim = {3: 32768, 4: 128, 5: 16}[rank]
            side = self.pick(["lower", "upper"])
            i = r.randrange(rank - 2)
            c[side][i] = self.pick([lim, -lim - 1])
        elif rule == "im2col.cpp_range":
            c["cpp"] = self.pick([0, 257])
            c["swizzle"] = "none"
        elif rule == "im2col.ppc_range":
            c["ppc"] = self.pick([0, 1025])
        elif rule == "im2col.zero_area":
            i = r.randrange(rank - 2)
            c["upper"][i] = c["lower"][i] - c["dims"][i + 1] - self.pick([0, 1, 2])
        elif rule == "im2col.inner_span":
            sw = self.pick(["32B", "64B", "128B"])
            c["swizzle"] = sw
            c["cpp"] = (SPAN[sw] + 16) // e if (SPAN[sw] + 16) % e == 0 else (SPAN[sw] // e) + 1
        else:
            return None
        # keep arrays consistent with the (possibly new) rank
        rk = max(1, min(5, c["rank"]))
        if c["rank"] == 6:
            c["strides"] = [16 * (i + 1) for i in range(5)]
            c["box"] = list(c.get("box", [16])) + [1] * 6
            c["box"] = c["box"][:6]
            c["estr"] = (list(c["estr"]) + [1] * 6)[:6]
            c["coords"] = (list(c["coords"]) + [0] * 6)[:6]
        elif c["rank"] > 0:
            c["strides"] = self.layout(c["dims"][:rk], max(1, e))[0] if rule in (
                "rank.zero", "im2col.rank", "interleave.rank") else c["strides"]
        c["intent"] = "encode_error:" + rule
        return c

    # ---------- stores and reductions ----------
    def prefetch(self):
        c = self.tiled(kind="prefetch")
        return c


BROKEN_RULES = [
    "rank.zero", "rank.six", "address.align16", "dim.zero", "dim.over_2_32", "stride.multiple_16",
    "stride.max_2_40", "box.zero", "box.over_256", "box.inner_bytes_16", "estride.zero",
    "estride.over_8", "swizzle.inner_span", "oob.nan_int", "interleave.rank", "interleave32.swizzle",
    "interleave32.align", "im2col.rank", "im2col.corner_range", "im2col.cpp_range",
    "im2col.ppc_range", "im2col.zero_area", "im2col.inner_span",
]

# PTX ISA cp.reduce.async.bulk.tensor type table.
REDUCE_TYPES = {
    "reduce_add": ["u32", "s32", "u64", "f32", "f16", "bf16"],
    "reduce_min": ["u32", "s32", "u64", "s64", "f16", "bf16"],
    "reduce_max": ["u32", "s32", "u64", "s64", "f16", "bf16"],
    "reduce_inc": ["u32"],
    "reduce_dec": ["u32"],
    "reduce_and": ["u32", "s32", "u64"],
    "reduce_or": ["u32", "s32", "u64"],
    "reduce_xor": ["u32", "s32", "u64"],
}


def generate(seed, scale, prefix):
    g = Gen(seed, prefix)
    n = lambda k: max(1, int(round(k * scale)))
    # tiled loads: every dtype x swizzle x a spread of ranks
    for rep in range(n(10)):
        for dt in DTYPES:
            for sw in SWIZZLES:
                if g.chance(0.55 if rep < 5 else 0.35):
                    g.emit(g.tiled(rank=g.pick([1, 2, 3, 4, 5]), dtype=dt, swizzle=sw))
    for _ in range(n(25)):
        g.emit(g.tiled(big=True))
    for _ in range(n(60)):
        g.emit(g.interleaved())
    for rank in (3, 4, 5):
        for _ in range(n(50)):
            g.emit(g.im2col(rank=rank))
    # edge values the driver accepts
    for _ in range(n(12)):
        c = g.tiled(rank=g.pick([2, 3, 4, 5]))
        k = g.r.randrange(1, c["rank"])
        what = g.pick(["dim_max", "stride_max", "box_256", "estr_8"])
        if what == "dim_max":
            c["dims"][-1] = 1 << 32
            c["coords"][-1] = g.r.randint(0, 3)
        elif what == "stride_max":
            c["strides"][-1] = (1 << 40) - 16
            c["coords"][-1] = 0
            c["box"][-1] = 1
            c["estr"][-1] = 1
        elif what == "box_256":
            c["box"][k] = 256
            c["estr"][k] = 8
        else:
            c["estr"][k] = 8
        c["intent"] = "valid:" + what
        g.emit(c)
    # invalid descriptors
    emitted = 0
    while emitted < n(90):
        c = g.broken()
        if c is not None:
            g.emit(c)
            emitted += 1
    # faults: misaligned start in dimension 0; smem destinations not 128-byte aligned
    for _ in range(n(8)):
        c = g.tiled(dtype=g.pick(["u8", "u16", "f16", "bf16", "u32", "f32"]))
        e = ESIZE[c["dtype"]]
        c["coords"][0] = g.pick([1, 2, 3, 5]) * max(1, 4 // e) if e < 16 else 1
        if (c["coords"][0] * e) % 16 == 0:
            c["coords"][0] += 1
        c["intent"] = "fault:start_dim0_misaligned"
        g.emit(c)
    for _ in range(n(3)):
        c = g.im2col()
        e = ESIZE[c["dtype"]]
        if 16 // e > 1:
            c["coords"][0] = 1
            c["intent"] = "fault:channel_start_misaligned"
            g.emit(c)
    for _ in range(n(4)):
        c = g.tiled()
        c["smem"] = 128 * g.r.randint(0, 7) + g.pick([16, 32, 64])
        c["intent"] = "probe:smem_align"
        g.emit(c)
    # stores and reductions
    for _ in range(n(40)):
        g.emit(_store_typed(g, "store", g.pick(DTYPES)))
    for op, types in REDUCE_TYPES.items():
        for dt in types:
            for _ in range(n(3)):
                g.emit(_store_typed(g, op, dt))
    for op, dt in [("reduce_add", "f64"), ("reduce_add", "u8"), ("reduce_add", "tf32"),
                   ("reduce_add", "f32_ftz"), ("reduce_min", "f32"), ("reduce_and", "s64"),
                   ("reduce_inc", "u64"), ("reduce_max", "f64")]:
        c = _store_typed(g, op, dt)
        c["intent"] = "probe:reduce_type"
        g.emit(c)
    for _ in range(n(10)):
        g.emit(g.prefetch())
    return g.lines


def _store_typed(g, op, dt):
    c = g.tiled(dtype=dt, kind=op, small_tensor=True)
    # a store or reduction with a negative coordinate traps on sm_90: keep most inside
    if g.chance(0.85):
        c["coords"] = [max(0, x) for x in c["coords"]]
    if dt not in FLOATS:
        c["oob"] = "zero"
    c["smem_seed"] = g.r.randint(0, 1 << 20)
    return c


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--scale", type=float, default=1.0, help="multiplies the number of cases of each kind")
    ap.add_argument("--prefix", default="t", help="case names are PREFIX0001, PREFIX0002, ...")
    a = ap.parse_args()
    lines = generate(a.seed, a.scale, a.prefix)
    sys.stdout.write("# gen_cases.py --seed %d --scale %g --prefix %s\n" % (a.seed, a.scale, a.prefix))
    for line in lines:
        sys.stdout.write(line + "\n")


if __name__ == "__main__":
    main()
