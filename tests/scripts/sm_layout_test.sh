#!/usr/bin/env bash
# The arch files' per-SM lists (tma.cpc_of_sm, l2.sm_partition) are silicon's layout in the model's
# SM numbering, the order silicon deals CTAs (scripts/sm_layout.py from placement.csv and
# partition_map.csv): each file holds what the script derives, the CPCs are 6 of 4 SMs (the fast
# ones) and 18 of 6, a TPC's two SMs share a CPC and a partition, and the dealing order is the
# measured one (model SM 0 is %smid 128). The other chips' fast SMs fit the same layout.
set -euo pipefail
root=$1
python3 - "$root" <<'PY'
import re, subprocess, sys
root = sys.argv[1]
sys.path.insert(0, root + "/scripts")
from sm_layout import arch_lists, ranges
fail = 0
def check(ok, what):
    global fail
    print(("ok: " if ok else "FAIL: ") + what)
    fail |= not ok
for gpu in ("h100", "h200"):
    _, derived = arch_lists(gpu, ranges("32-43,78-87,126-127"))  # the fast SMs the arch files follow
    text = open("%s/configs/arch/%s.yaml" % (root, gpu)).read()
    for key in ("cpc_of_sm", "sm_partition"):
        listed = [int(x) for x in re.search(key + r":.*?\n\s*\[([\d,\s]*)\]", text, re.S).group(1).replace("\n", " ").split(",")]
        check(listed == derived[key], "%s.yaml %s is silicon's layout in the dealing order" % (gpu, key))
    cpc = derived["cpc_of_sm"]
    sizes = sorted(cpc.count(c) for c in set(cpc))
    check(sizes == [4] * 6 + [6] * 18, "%s: 6 CPCs of 4 SMs and 18 of 6 (%s)" % (gpu, sizes))
    smid = derived["silicon_smid_of_sm"]
    fast = {s for s, c in zip(smid, cpc) if cpc.count(c) == 4}
    check(fast == set(range(32, 44)) | set(range(78, 88)) | {126, 127}, "%s: the 4-SM CPCs are the fast SMs" % gpu)
    check(all(cpc[e] == cpc[e + 1] and derived["sm_partition"][e] == derived["sm_partition"][e + 1] and smid[e] // 2 == smid[e + 1] // 2
              for e in range(0, 132, 2)), "%s: model SMs 2t and 2t + 1 are one TPC" % gpu)
    check(smid[:8] == [128, 129, 130, 131, 124, 125, 126, 127], "%s: silicon deals to %%smid 128-131, 124-127 first" % gpu)
# The fast SMs of the other chips measured (space_onset_sm.csv, point 860: the 24 that end first)
# are a short CPC in each of six GPCs as well, another CPC of the turn on some GPCs.
for gpu, fast in (("h100", "20-21,32-35,38-43,66-67,78-79,82-87,126-127"), ("h200", "16-17,34-43,78-87,124-125")):
    try:
        cpc = arch_lists(gpu, ranges(fast))[1]["cpc_of_sm"]
    except SystemExit:  # the script's refusal
        cpc = []
    check(sorted(cpc.count(c) for c in set(cpc)) == [4] * 6 + [6] * 18, "the fast SMs of %s's onset run (%s) are 6 short CPCs" % (gpu, fast))
# A chip whose short CPCs are not the named fast SMs is refused.
bad = subprocess.run([sys.executable, root + "/scripts/sm_layout.py", "--fast", "0-23"], capture_output=True, text=True)
check(bad.returncode != 0 and "4-SM CPC" in bad.stderr, "fast SMs that are not the short CPCs are refused")
sys.exit(fail)
PY
