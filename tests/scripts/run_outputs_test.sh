#!/usr/bin/env bash
# What tma-sim run writes (docs/scenarios.md): one mode per ctest test.
#
#   run_outputs_test.sh TMA_SIM ROOT stats      --stats: valid JSON, numbers as numbers, the resolved
#                                               configuration (scenario after --set, the whole
#                                               architecture after --arch-set, the tool's version)
#   run_outputs_test.sh TMA_SIM ROOT vcd        --vcd: through GTKWave's own vcd2fst and fst2vcd, the time
#                                               axis stays in picoseconds of the clock (a cycle is
#                                               the clock period), scopes in SM order, the L2 and
#                                               DRAM beside the SMs (needs gtkwave: exit 77 without)
#   run_outputs_test.sh TMA_SIM ROOT trace      --trace with --trace-max-events: the events dropped by the
#                                               cap are said in the summary and the trace's metadata
#   run_outputs_test.sh TMA_SIM ROOT interrupt  SIGINT and SIGTERM during a run: exit 130, every file
#                                               complete; in a regression the stopped job is not run
#   run_outputs_test.sh TMA_SIM ROOT progress   run, regress and sweep with stderr not a terminal: plain
#                                               progress lines with the percent done and the time left
#   run_outputs_test.sh TMA_SIM ROOT summary    the summary explains its headline: the GPC coalescer's
#                                               bytes, promoted bytes never read, consumers' waits
set -euo pipefail
sim=$1
root=$2
what=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
py=$(command -v python3 || echo /usr/bin/python3)
gemm="$root/configs/scenarios/gemm_bf16.yaml"
small=(--set sms=8 --set workload.m=512 --set workload.n=512 --set workload.k=256)

case "$what" in
  stats)
    "$sim" run "$gemm" "${small[@]}" --arch-set l2.hit_latency=301 --quiet --stats "$work/s.json" >"$work/out.txt" ||
      fail "run failed: $(cat "$work/out.txt")"
    "$py" - "$work/s.json" <<'EOF'
import json, sys
s = json.load(open(sys.argv[1]))
summary = {k[len("summary."):]: v for k, v in s.items() if k.startswith("summary.")}
assert summary, "no summary.* keys"
for k, v in summary.items():
    if k in ("scenario", "arch", "l2_state"):
        assert isinstance(v, str), (k, v)
    else:
        assert isinstance(v, (int, float)) and not isinstance(v, bool), f"summary.{k} is {v!r}, not a number"
assert summary["sms"] == 8 and summary["cycles"] > 0 and summary["scoreboard_mismatches"] == 0, summary
assert s["interrupted"] is False and s["simulated_cycles"] >= summary["cycles"], s["simulated_cycles"]
assert s["tool"]["name"] == "tma-sim" and s["tool"]["version"], s["tool"]
c = s["config"]
# The scenario as it ran: the file's fields with the --set overrides applied.
sc = c["scenario"]
assert sc["file"].endswith("configs/scenarios/gemm_bf16.yaml"), sc["file"]
assert sc["overrides"] == ["sms=8", "workload.m=512", "workload.n=512", "workload.k=256"], sc["overrides"]
assert sc["resolved"]["sms"] == 8 and sc["resolved"]["workload"]["m"] == 512, sc["resolved"]
assert sc["resolved"]["name"] == "gemm_bf16" and sc["resolved"]["workload"]["kind"] == "gemm"
assert isinstance(sc["resolved"]["tensors"]["A"]["address"], int), sc["resolved"]["tensors"]["A"]
# The whole architecture after --arch-set, every section.
a = c["arch"]
assert a["name"] == "h100" and a["overrides"] == ["l2.hit_latency=301"], a
assert a["fields"]["l2"]["hit_latency"] == 301 and a["fields"]["sm_clock_mhz"] > 1000, a["fields"]["l2"]
for section in ("tma", "descriptor_cache", "smem", "l2", "dram", "cluster", "sim"):
    assert isinstance(a["fields"][section], dict) and a["fields"][section], section
assert c["options"]["scoreboard"] is True, c["options"]
# Module statistics stay objects of numbers.
assert all(isinstance(v, (int, float)) for v in s["gpu.l2"].values()), s["gpu.l2"]
EOF
    ;;
  vcd)
    command -v vcd2fst >/dev/null && command -v fst2vcd >/dev/null ||
      { echo "GTKWave's vcd2fst/fst2vcd missing (the Debian package gtkwave; scripts/setup.sh installs it): skipped"; exit 77; }
    # 12 SMs: sm10 and sm11 sort before sm2 as text. The H100's clock is 1980 MHz: 505 ps a cycle,
    # which VCD cannot write as a timescale (1, 10 or 100 of a unit).
    "$sim" run "$gemm" --set sms=12 --set workload.m=768 --set workload.n=512 --set workload.k=256 --quiet \
      --vcd "$work/run.vcd" --vcd-sample 16 --stats "$work/s.json" >"$work/out.txt" || fail "run failed: $(cat "$work/out.txt")"
    vcd2fst "$work/run.vcd" "$work/run.fst" >/dev/null 2>&1 || fail "vcd2fst refused the VCD"
    fst2vcd "$work/run.fst" >"$work/back.vcd" 2>/dev/null || fail "fst2vcd failed"
    "$py" - "$work/run.vcd" "$work/back.vcd" "$work/s.json" <<'EOF'
import json, re, sys
stats = json.load(open(sys.argv[3]))
period_ps = round(1e6 / stats["config"]["arch"]["fields"]["sm_clock_mhz"])

def parse(path):
    """timescale, scope names in order, {scope.signal: [(time, value)]}, last time"""
    text = open(path).read()
    m = re.search(r"\$timescale\s+(\S+)\s*(\S*)\s*\$end", text)
    scale = (m.group(1) + m.group(2)).replace(" ", "")
    scopes = re.findall(r"\$scope module (\S+) \$end", text)
    ids, changes, t, scope = {}, {}, 0, None
    for line in text.splitlines():
        if line.startswith("$scope module "):
            scope = line.split()[2]
        elif line.startswith("$var "):
            f = line.split()
            ids[f[3]] = scope + "." + f[4]
        elif line.startswith("#"):
            t = int(line[1:])
        elif line[:1] in ("0", "1") and line[1:] in ids:
            changes.setdefault(ids[line[1:]], []).append((t, int(line[0])))
        elif line.startswith("b"):
            v, i = line[1:].split()
            changes.setdefault(ids[i], []).append((t, int(v, 2)))
    return scale, scopes, changes, t

scale, scopes, changes, end = parse(sys.argv[1])
bscale, bscopes, bchanges, bend = parse(sys.argv[2])
assert scale == "1ps", f"timescale {scale}: VCD allows only 1, 10 or 100 of a unit"
assert bscale == "1ps" and bend == end, (bscale, bend, end)  # GTKWave reads the same time axis
assert bscopes == scopes, (bscopes, scopes)
assert scopes == [f"sm{i}" for i in range(12)] + ["l2", "dram"], scopes
# The waveform lasts the run: its last time is the simulated end, in picoseconds.
assert end == stats["simulated_cycles"] * period_ps, (end, stats["simulated_cycles"], period_ps)
# Every change is on a cycle boundary, and each CTA is done at its finish cycle (within a sample).
for sig, ch in bchanges.items():
    assert all(t % period_ps == 0 for t, _ in ch), sig
for sm in range(12):
    done = [t for t, v in bchanges[f"sm{sm}.cta_done"] if v == 1]
    finish = stats[f"cta{sm}"]["finish_cycle"]
    assert done and finish <= done[0] // period_ps < finish + 16, (sm, done, finish)
# The L2 and DRAM were busy during the run, and idle at its end.
for unit, occ in (("l2", "requests_in_flight"), ("dram", "accesses_in_flight")):
    assert max(v for _, v in bchanges[f"{unit}.{occ}"]) > 0, unit
    assert any(v == 1 for _, v in bchanges[f"{unit}.busy"]), unit
    assert bchanges[f"{unit}.busy"][-1][1] == 0 and bchanges[f"{unit}.{occ}"][-1][1] == 0, unit
EOF
    ;;
  trace)
    # A cap that applies: the summary and the trace's metadata say how many events were dropped.
    "$sim" run "$gemm" "${small[@]}" --quiet --trace "$work/t.json" --trace-max-events 100 >"$work/out.txt" ||
      fail "run failed: $(cat "$work/out.txt")"
    grep -qE "^  trace +.*L2 request events dropped" "$work/out.txt" || fail "no line about dropped events: $(cat "$work/out.txt")"
    # No cap: every event written, no such line.
    "$sim" run "$gemm" "${small[@]}" --quiet --trace "$work/all.json" --trace-max-events 0 >"$work/all.txt" ||
      fail "run failed: $(cat "$work/all.txt")"
    ! grep -q "dropped" "$work/all.txt" || fail "no cap, yet: $(grep dropped "$work/all.txt")"
    "$py" - "$work/t.json" "$work/all.json" "$work/out.txt" <<'EOF'
import json, sys
capped, full = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
def l2_events(t): return sum(1 for e in t["traceEvents"] if e.get("cat") == "l2")
total = l2_events(full)
m = capped["metadata"]
assert total > 100 and full["metadata"]["l2_request_events"] == total, (total, full["metadata"])
assert full["metadata"]["l2_request_events_dropped"] == 0 and full["metadata"]["max_l2_request_events"] == 0
assert l2_events(capped) == 100 and m["max_l2_request_events"] == 100, m
assert m["l2_request_events"] == total and m["l2_request_events_dropped"] == total - 100, (m, total)
line = [l for l in open(sys.argv[3]) if l.startswith("  trace ")][0]
assert f"{total - 100} of {total} L2 request events dropped" in line, line
EOF
    ;;
  interrupt)
    # A run of about 15 s stopped after its start by SIGINT, then by SIGTERM: exit 130, and the
    # summary, stats, trace and VCD of the run so far, every file complete.
    long=("$root/configs/scenarios/stream_tiles.yaml" --set workload.passes=5 --vcd-sample 256)
    for sig in INT TERM; do
      d="$work/$sig"
      mkdir -p "$d"
      "$sim" run "${long[@]}" --stats "$d/s.json" --trace "$d/t.json" --vcd "$d/r.vcd" >"$d/out.txt" 2>"$d/err.txt" &
      pid=$!
      for _ in $(seq 1 300); do [ -s "$d/r.vcd" ] && break; sleep 0.05; done  # simulating (VCD samples flushed)
      [ -s "$d/r.vcd" ] || fail "the run wrote no VCD within 15 s"
      kill -"$sig" "$pid"
      set +e
      wait "$pid"
      rc=$?
      set -e
      [ "$rc" = 130 ] || { cat "$d/out.txt" "$d/err.txt"; fail "SIG$sig: exit $rc, expected 130"; }
      grep -q "^  INTERRUPTED        by SIG$sig at cycle [1-9]" "$d/out.txt" || fail "SIG$sig: summary: $(cat "$d/out.txt")"
      grep -q "^  host " "$d/out.txt" || fail "SIG$sig: the summary is not complete: $(cat "$d/out.txt")"
      "$py" - "$d/s.json" "$d/t.json" "$d/r.vcd" <<'EOF'
import json, sys
s = json.load(open(sys.argv[1]))
assert s["interrupted"] is True and s["simulated_cycles"] > 0, (s["interrupted"], s["simulated_cycles"])
assert s["summary.cycles"] == s["simulated_cycles"] and s["summary.loads"] > 0, s["summary.cycles"]
t = json.load(open(sys.argv[2]))
assert t["traceEvents"] and t["metadata"]["l2_request_events"] > 0, t["metadata"]
# The VCD ends at the simulated time reached (in ps).
period_ps = round(1e6 / s["config"]["arch"]["fields"]["sm_clock_mhz"])
last = [l for l in open(sys.argv[3]) if l.startswith("#")][-1]
assert int(last[1:]) == s["simulated_cycles"] * period_ps, (last, s["simulated_cycles"])
EOF
      if command -v vcd2fst >/dev/null; then vcd2fst "$d/r.vcd" "$d/r.fst" >/dev/null 2>&1 || fail "SIG$sig: vcd2fst refused the VCD"; fi
    done
    # In a regression, a run job the interrupt stops exits 130 with its files: it stays unfinished
    # (not run, for --resume), not an error of its own.
    printf 'lists:\n  l:\n    tests:\n      - {name: long, scenario: %s, set: {workload.passes: 5}}\n' \
      "$root/configs/scenarios/stream_tiles.yaml" >"$work/l.yaml"
    "$sim" regress "$work/l.yaml" --jobs 1 --out "$work/runs" --quiet >"$work/reg.txt" 2>&1 &
    pid=$!
    for _ in $(seq 1 300); do ls "$work"/runs/l-*/logs/long.log >/dev/null 2>&1 && break; sleep 0.05; done
    sleep 1
    kill -INT "$pid"
    set +e
    wait "$pid"
    rc=$?
    set -e
    [ "$rc" = 130 ] || { cat "$work/reg.txt"; fail "interrupted regress: exit $rc, expected 130"; }
    grep -q "0 passed, 0 failed, 1 not run" "$work/reg.txt" || fail "the stopped run job: $(tail -3 "$work/reg.txt")"
    ;;
  progress)
    # stderr not a terminal: plain lines (no carriage return) with the percent done and the time
    # left; TMA_PROGRESS_INTERVAL=0 prints them at every chance, so short commands show them.
    check_progress() {  # FILE PREFIX
      ! grep -q $'\r' "$1" || fail "carriage returns on a stderr that is not a terminal: $(cat -A "$1" | head -3)"
      grep -qE "^$2.* [0-9]+%, about [0-9]+:[0-9]{2} left" "$1" ||
        fail "no '$2... N%, about M:SS left' line: $(head -5 "$1")"
    }
    TMA_PROGRESS_INTERVAL=0 "$sim" run "$root/configs/scenarios/stream_tiles.yaml" --set workload.max_tiles_per_sm=64 \
      --no-scoreboard >/dev/null 2>"$work/run.err" || fail "run failed: $(cat "$work/run.err")"
    check_progress "$work/run.err" "progress: [0-9]+/[0-9]+ operations done,"
    printf 'lists:\n  p:\n    tests:\n' >"$work/p.yaml"
    for i in 1 2 3 4; do printf '      - {name: j%s, selftest: pass, args: [--seconds, "0.3"]}\n' "$i" >>"$work/p.yaml"; done
    TMA_PROGRESS_INTERVAL=0 "$sim" regress "$work/p.yaml" --jobs 1 --out "$work/runs" >/dev/null 2>"$work/regress.err" ||
      fail "regress failed: $(cat "$work/regress.err")"
    check_progress "$work/regress.err" "regress: [0-9]+/4 done,"
    cat >"$work/s.yaml" <<EOF
name: p
scenario: $root/configs/sweeps/l2_promotion_stream.yaml
set: {sms: 2, workload.max_tiles_per_sm: 4, tensors.T.dims: "[64, 4096]", descriptors.T_tile.box: "[64, 64]"}
parameters:
  - {name: promotion, set: descriptors.T_tile.l2_promotion, values: [none, 128B, 256B]}
EOF
    TMA_PROGRESS_INTERVAL=0 "$sim" sweep "$work/s.yaml" --jobs 1 --out "$work/runs" >/dev/null 2>"$work/sweep.err" ||
      fail "sweep failed: $(cat "$work/sweep.err")"
    check_progress "$work/sweep.err" "sweep: [0-9]+/3 done,"
    ;;
  summary)
    # The headline explained: (1) a GEMM on one GPC's 16 SMs, whose SMs share A and B tiles: the
    # load bandwidth exceeds what the L2 slices served, and the coalescer served the difference;
    # (2) 256B promotion of 64-byte rows with gaps (the gaps are never read) and of 128-byte rows
    # (the neighbours read the promoted halves); (3) consumers that wait and consumers that compute.
    "$sim" run "$gemm" --set sms=16 --set workload.m=512 --set workload.n=1024 --set workload.k=256 --quiet \
      --stats "$work/gemm.json" >"$work/gemm.txt" || fail "gemm failed"
    stream=("$root/configs/sweeps/l2_promotion_stream.yaml" --quiet --set sms=4 --set workload.max_tiles_per_sm=8
            --set descriptors.T_tile.l2_promotion=256B)
    "$sim" run "${stream[@]}" --set 'tensors.T.dims=[32, 4096]' --set 'tensors.T.strides=[256]' \
      --set 'descriptors.T_tile.box=[32, 64]' --stats "$work/gaps.json" >"$work/gaps.txt" || fail "gaps failed"
    "$sim" run "${stream[@]}" --set 'tensors.T.dims=[64, 4096]' --set 'descriptors.T_tile.box=[64, 64]' \
      --stats "$work/rows.json" >"$work/rows.txt" || fail "rows failed"
    "$sim" run "${stream[@]}" --set 'tensors.T.dims=[64, 4096]' --set 'descriptors.T_tile.box=[64, 64]' \
      --set workload.compute_cycles=20000 --stats "$work/compute.json" >"$work/compute.txt" || fail "compute failed"
    "$py" - "$work" <<'EOF'
import json, re, sys
w = sys.argv[1]
def run(name):
    return json.load(open(f"{w}/{name}.json")), open(f"{w}/{name}.txt").read()
def line(text, head):
    m = [l for l in text.splitlines() if l.startswith("  " + head)]
    assert m, f"no '{head}' line in:\n{text}"
    return m[0]
def mb(x): return f"{x / 1e6:.3f} MB"

# (1) Load sources: the L2 slices' bytes and the coalescer's add up to the SMs' reads.
s, text = run("gemm")
splitters = [v for k, v in s.items() if k.endswith(".splitter")]
reads = sum(v["bytes_requested"] - v["write_bytes"] - v["reduce_bytes"] - v["prefetch_bytes"] for v in splitters)
co, l2 = s["summary.gpc_coalesced_bytes"], s["summary.l2_read_bytes"]
assert co == s["gpu.l2"]["gpc_coalesced_bytes"] > 0 and co + l2 == reads, (co, l2, reads)
assert s["summary.l2_read_bandwidth_gbs"] < s["summary.load_bandwidth_gbs"], s
l = line(text, "load sources")
assert f"L2 slices {mb(l2)}" in l and f"GPC coalescer {mb(co)} ({100 * co / reads:.1f}%" in l, l
assert f"{s['summary.l2_read_bandwidth_gbs']:.1f} GB/s" in l, l

# (2) Promoted bytes never read: all of the gaps', none of the neighbouring halves'.
s, text = run("gaps")
assert s["summary.overfetch_bytes"] > 0 and s["summary.overfetch_unread_bytes"] == s["summary.overfetch_bytes"], s
assert f"{mb(s['summary.overfetch_unread_bytes'])} of it never read" in line(text, "DRAM"), line(text, "DRAM")
s, text = run("rows")
assert s["summary.overfetch_bytes"] > 0 and s["summary.overfetch_unread_bytes"] < s["summary.overfetch_bytes"], s

# (3) The consumers' share of time waiting on loads, from their own counters.
for name, bound in (("rows", "memory-bound"), ("compute", "compute-bound")):
    s, text = run(name)
    ctas = [v for k, v in s.items() if re.fullmatch(r"cta\d+", k)]
    share = sum(c["consumer_wait_cycles"] for c in ctas) / sum(c["finish_cycle"] for c in ctas)
    assert abs(s["summary.consumer_load_wait_share"] - share) < 1e-5, (s["summary.consumer_load_wait_share"], share)
    l = line(text, "consumers")
    assert f"waited on loads {100 * share:.1f}%" in l and l.endswith(bound), l
EOF
    ;;
  *)
    fail "unknown mode '$what'"
    ;;
esac
echo "run outputs ($what): OK"
