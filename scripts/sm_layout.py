#!/usr/bin/env python3
"""The SM layout an arch file's per-SM lists are written in (tma.cpc_of_sm, l2.sm_partition), from
silicon's placement of CTAs (tests/calibration/GPU/placement.csv, placement.cu).

The model numbers its SMs in the order silicon deals a launch's CTAs: model SM e is the SM that
CTA e of a one-CTA-per-SM grid lands on (placement.csv, mode plain, the same on the H100 and the
H200). So CTA e on SM e % sms, as the model places CTAs, is silicon's placement, and the CTAs
that share lines (neighbours in a tile order) share SMs, TPCs and CPCs as on silicon.

The GPCs come from the cluster launches (a cluster's CTAs share a GPC); the TPCs no cluster of 4
could pair (the ninth TPC of a GPC, or the last four) join the GPC they are dealt with. Within a
GPC, silicon's TPC numbering takes its CPCs in turn (the TPC at place p of the GPC's list is in
CPC p % 3), and one CPC of each 8-TPC GPC has a TPC disabled (it drops out of the turn): its four
SMs are the GPC's fast ones (docs/calibration.md, "CPC pools"). Which CPC is short differs from
chip to chip; --fast names the fast SMs (silicon %smid) of the chip the arch file follows.

Prints the lists (tma.cpc_of_sm, l2.sm_partition) in the model's numbering, with the silicon %smid of each model SM.
"""
import argparse
import collections
import csv
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def ranges(text):
    out = set()
    for part in text.split(","):
        lo, _, hi = part.partition("-")
        out.update(range(int(lo), int(hi or lo) + 1))
    return out


def layout(placement, fast_sms):
    rows = list(csv.DictReader(open(placement)))
    plain = sorted((r for r in rows if r["mode"] == "plain" and r["ctas_per_sm"] == "1" and r["repeat"] == "0"),
                   key=lambda r: int(r["block"]))
    deal = [int(r["smid"]) for r in plain]
    if sorted(deal) != list(range(len(deal))):
        sys.exit("%s: the one-CTA-per-SM launch does not place a CTA on every SM once" % placement)
    # GPCs: the TPCs (SMs 2t, 2t + 1) a cluster joins, merged over every cluster launch.
    parent = list(range(len(deal) // 2))

    def find(t):
        while parent[t] != t:
            parent[t] = parent[parent[t]]
            t = parent[t]
        return t

    clusters = {}
    for r in rows:
        if r["mode"] == "cluster":
            clusters.setdefault((r["cluster_size"], r["repeat"], r["cluster"]), []).append(int(r["smid"]) // 2)
    for tpcs in clusters.values():
        for t in tpcs[1:]:
            parent[find(t)] = find(tpcs[0])
    tpc_order = [s // 2 for s in deal[::2]]
    # A TPC in no cluster of 4 or more joins the GPC dealt next to it: after it (the dealing's
    # first TPCs) or before it (a GPC's ninth, dealt last of its GPC).
    sizes = collections.Counter(find(t) for t in tpc_order)
    big = {g for g, n in sizes.items() if n >= 4}
    for i, t in enumerate(tpc_order):
        if find(t) in big:
            continue
        after = next((u for u in tpc_order[i + 1:] if find(u) in big), None)
        before = next((u for u in reversed(tpc_order[:i]) if find(u) in big), None)
        parent[find(t)] = find(before if before is not None and i > len(tpc_order) // 2 else after)
    by_root = {}  # GPCs in the order they are first dealt, each its TPCs as dealt
    for t in tpc_order:
        by_root.setdefault(find(t), []).append(t)
    gpcs = list(by_root.values())
    # A GPC's TPCs in silicon's numbering (the order of their SM numbers) take its three CPCs in
    # turn; in a GPC of 8 the short CPC drops out of the turn once it has its two, and which one is
    # short is the one whose TPCs are fast.
    cpc_of_tpc, fast_tpcs, n = {}, {s // 2 for s in fast_sms}, 0
    for g in gpcs:
        listed = sorted(g)
        options = []
        for short in (range(3) if len(listed) == 8 else [None]):
            groups, turn = [[], [], []], 0
            for t in listed:
                while turn % 3 == short and len(groups[short]) == 2:
                    turn += 1
                groups[turn % 3].append(t)
                turn += 1
            if all(len(grp) == 3 or set(grp) <= fast_tpcs for grp in groups):
                options.append(groups)
        if len(listed) not in (8, 9) or not options:
            sys.exit("GPC of TPCs %s: no 4-SM CPC of it is among the fast SMs (--fast)" % listed)
        for grp in options[0]:
            for t in grp:
                cpc_of_tpc[t] = n
            n += 1
    return deal, gpcs, cpc_of_tpc


def arch_lists(gpu, fast_sms):
    """The GPCs (TPCs as dealt) and the per-SM lists in the model's numbering: silicon_smid_of_sm,
    cpc_of_sm, sm_partition (partition_map.csv, partition.cu: by silicon %smid)."""
    data = os.path.join(ROOT, "tests/calibration", gpu)
    deal, gpcs, cpc_of_tpc = layout(os.path.join(data, "placement.csv"), fast_sms)
    group = {int(r["smid"]): int(r["group"]) for r in csv.DictReader(open(os.path.join(data, "partition_map.csv")))}
    return gpcs, {"silicon_smid_of_sm": deal, "cpc_of_sm": [cpc_of_tpc[s // 2] for s in deal],
                  "sm_partition": [group[s] for s in deal]}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--gpu", default="h100")
    ap.add_argument("--fast", default="32-43,78-87,126-127",
                    help="the fast SMs by silicon %%smid (default: the H100 of space_cta_times_space.csv.gz "
                    "and the H200 of gemm_skew.csv.gz)")
    a = ap.parse_args()
    gpcs, lists = arch_lists(a.gpu, ranges(a.fast))
    for g in gpcs:
        print("# GPC: TPCs %s (dealt %s)" % (sorted(g), g))
    for key, values in lists.items():
        print("%s: [%s]" % (key, ", ".join(map(str, values))))

if __name__ == "__main__":
    main()
