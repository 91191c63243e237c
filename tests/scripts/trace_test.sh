#!/usr/bin/env bash
# Traces (docs/traces.md): 'tma-sim trace export' writes a scenario's CTAs as JSON lines and
# 'tma-sim run TRACE.jsonl' replays them. For each shipped scenario (made small), the replay's
# --stats statistics equal the scenario's run: every summary.* field and every module's counters
# (all but host time). Then the header's scenario_file form, --set on a replay, and the errors a
# bad trace gets (exit 2, naming the line and the field).
set -euo pipefail
sim=$1
root=$2
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
fail=0
check() { if eval "$1"; then echo "ok: $2"; else echo "FAIL: $2"; fail=1; fi; }

# The statistics without what depends on the host (host seconds and rates, if any) and the record of
# what was run (config: the scenario file or the trace, their overrides).
same_stats() {
  python3 - "$1" "$2" <<'PY'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
def strip(d):
    return {k: (strip(v) if isinstance(v, dict) else v) for k, v in d.items() if "host" not in k and k != "config"}
a, b = strip(a), strip(b)
summary = [k for k in a if k.startswith("summary.")]
assert len(summary) > 20, "no summary fields"
diff = sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))
if diff:
    print("differ:", ", ".join(diff[:8]))
    sys.exit(1)
PY
}

roundtrip() {  # name scenario sets...
  local name=$1 scenario=$2
  shift 2
  "$sim" trace export "$root/configs/scenarios/$scenario.yaml" -o "$out/$name.jsonl" "$@" >/dev/null
  "$sim" run "$root/configs/scenarios/$scenario.yaml" --quiet --stats "$out/$name.scenario.json" "$@" >/dev/null
  "$sim" run "$out/$name.jsonl" --quiet --stats "$out/$name.trace.json" >/dev/null
  check "same_stats $out/$name.scenario.json $out/$name.trace.json" "$name: the replay's statistics are the scenario's"
}
small_gemm=(--set sms=8 --set workload.m=512 --set workload.n=512)
roundtrip gemm gemm_bf16 "${small_gemm[@]}"
roundtrip gemm_waves_warm gemm_bf16 "${small_gemm[@]}" --set "workload.schedule={persistent: false, swizzle: 2}" \
  --set l2_state=warm
roundtrip gemm_multicast gemm_multicast "${small_gemm[@]}"
roundtrip conv_reads conv_im2col --set sms=8 --set workload.max_tiles_per_sm=2 --set workload.consumer_reads=true
roundtrip stream_reduce stream_reduce --set sms=8 --set workload.max_tiles_per_sm=8
roundtrip stream_store_dirty stream_store --set l2_state=dirty
roundtrip stream_multicast stream_multicast --set workload.multicast_issuer=rotate --set workload.consumer_reads=true
roundtrip attention attention_fwd --set sms=16 --set "tensors.Q.dims=[128, 512, 4, 1]" \
  --set "tensors.O.dims=[128, 512, 4, 1]" --set "tensors.K.dims=[128, 512, 1, 1]" --set "tensors.V.dims=[128, 512, 1, 1]"
roundtrip gemm_2ctas gemm_bf16 "${small_gemm[@]}" --set workload.ctas_per_sm=2 --set workload.stages=3
roundtrip stream_3ctas_waves stream_tiles --set sms=8 --set workload.max_tiles_per_sm=12 --set workload.ctas_per_sm=3
roundtrip decode decode --set sms=16 --set "tensors.K.dims=[128, 1024, 8, 4]" --set "tensors.V.dims=[128, 1024, 8, 4]"
"$sim" trace export "$root/tests/fuzz/seeds/scenario/ops_with_overrides.yaml" -o "$out/ops.jsonl" >/dev/null
"$sim" run "$root/tests/fuzz/seeds/scenario/ops_with_overrides.yaml" --quiet --stats "$out/ops.scenario.json" >/dev/null
"$sim" run "$out/ops.jsonl" --quiet --stats "$out/ops.trace.json" >/dev/null
check "same_stats $out/ops.scenario.json $out/ops.trace.json" "ops: the replay's statistics are the scenario's"

# The format: a header, then one line per operation, each naming its CTA, SM and step.
lines=$(wc -l <"$out/gemm.jsonl")
ops=$(python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); print(int(s["summary.loads"]) + int(s["summary.stores"]) + 16)' \
  "$out/gemm.scenario.json")  # 8 CTAs x 2 descriptor prefetches
check "[ $lines -eq $((ops + 1)) ]" "gemm: one line per operation after the header ($lines lines, $ops operations)"
check "head -1 $out/gemm.jsonl | grep -q '^{\"format\":\"tma-trace\",\"version\":1,'" "the header names the format and version"
check "sed -n 4p $out/gemm.jsonl | grep -q '\"cta\":0,\"sm\":0,\"step\":0,\"issue\":\"producer\",\"op\":\"load\"'" \
  "an operation line starts with its CTA, SM, step, issuer and op"
check "grep -q '\"sm\":null' $out/gemm_waves_warm.jsonl" "a CTA that goes to the first SM free has sm null"

check "head -1 $out/gemm_2ctas.jsonl | grep -q '\"ctas_per_sm\":2,\"cta_smem_stride\":'" \
  "several CTAs per SM: the header has the slots and where each slot's shared memory starts"
check "! head -1 $out/gemm.jsonl | grep -q ctas_per_sm" "one CTA per SM: the header as version 1 first wrote it"

# The header may name a scenario file instead of holding its tensors and descriptors.
"$sim" trace export "$root/configs/scenarios/stream_reduce.yaml" -o "$out/sr.jsonl" >/dev/null
python3 - "$out/sr.jsonl" "$out/sr_file.jsonl" <<'PY'
import json, sys
lines = open(sys.argv[1]).read().splitlines()
h = json.loads(lines[0])
del h["scenario"]
h["scenario_file"] = "configs/scenarios/stream_reduce.yaml"
open(sys.argv[2], "w").write("\n".join([json.dumps(h)] + lines[1:]) + "\n")
PY
"$sim" run "$out/sr.jsonl" --quiet --stats "$out/sr.json" >/dev/null
"$sim" run "$out/sr_file.jsonl" --quiet --stats "$out/sr_file.json" >/dev/null
check "same_stats $out/sr.json $out/sr_file.json" "a header's scenario_file gives the tensors and descriptors"

# --set changes the header's scenario: a warm L2 reads less from DRAM.
"$sim" run "$out/gemm.jsonl" --quiet --stats "$out/gemm_warm.json" --set l2_state=warm >/dev/null
field() { python3 -c 'import json,sys; print(int(float(json.load(open(sys.argv[1]))["summary."+sys.argv[2]])))' "$1" "$2"; }
check "[ $(field "$out/gemm_warm.json" dram_read_bytes) -lt $(field "$out/gemm.trace.json" dram_read_bytes) ]" \
  "--set l2_state=warm on a replay"

# Bad traces: exit 2, the line and the field named.
bad() {  # expected-message sed-script
  local want=$1 script=$2
  sed "$script" "$out/gemm.jsonl" >"$out/bad.jsonl"
  set +e
  "$sim" run "$out/bad.jsonl" --quiet >"$out/bad.out" 2>&1
  local rc=$?
  set -e
  check "[ $rc -eq 2 ] && grep -qF -- \"$want\" $out/bad.out" "refused: $want (exit $rc: $(head -c 300 "$out/bad.out"))"
}
bad "bad.jsonl:1: field 'version': this tma-sim reads version 1 traces, not version 2" '1s/"version":1/"version":2/'
bad "bad.jsonl:4: field 'descriptor': no descriptor named 'C_tile'" '4s/"A_tile"/"C_tile"/'
bad "bad.jsonl:4: field 'stage': step 0 fills stage 0" '4s/"stage":0/"stage":1/'
bad "bad.jsonl:4: field 'sm': CTA 0 runs on SM 0" '4s/"sm":0/"sm":3/'
bad "bad.jsonl:4: field 'step'" '4s/"step":0/"step":2/'
bad "bad.jsonl:5: step 0 of CTA 0: expects, compute_cycles" '5s/"compute_cycles":512/"compute_cycles":7/'
bad "bad.jsonl:4: field 'coords'" '4s/"coords":\[0,0\]/"coords":[0]/'
bad "bad.jsonl:1: field 'scenario.descriptors.A_tile.box[1]'" '1s/"box":\[64,128\]/"box":[64,999]/'
bad "bad.jsonl:3: field 'op': a prologue issues no loads" '3s/"prefetch_descriptor"/"load"/'
set +e
bad2() {  # expected-message sed-script: on the 2-CTA-per-SM trace
  local want=$1 script=$2 rc=0
  sed "$script" "$out/gemm_2ctas.jsonl" >"$out/bad.jsonl"
  "$sim" run "$out/bad.jsonl" --quiet >"$out/bad.out" 2>&1 || rc=$?
  check "[ $rc -eq 2 ] && grep -qF -- \"$want\" $out/bad.out" "refused: $want (exit $rc: $(head -c 300 "$out/bad.out"))"
}
bad2 "bad.jsonl:1: field 'ctas_per_sm': several CTAs per SM need 'cta_smem_stride'" '1s/,"cta_smem_stride":[0-9]*//'
bad2 "field 'smem_addr': smem_addr 999999 is outside its CTA's slot" '4s/"smem_addr":[0-9]*/"smem_addr":999999/'
bad2 "field 'cta_smem_stride': 2 CTA slots 9999999 bytes apart do not fit" '1s/"cta_smem_stride":[0-9]*/"cta_smem_stride":9999999/'
"$sim" run "$out/gemm.jsonl" --quiet --set sms=4 >"$out/bad.out" 2>&1
rc=$?
set -e
check "[ $rc -eq 2 ] && grep -qF \"field 'grid[4]'\" $out/bad.out" "--set sms=4 leaves the grid's SMs 4-7 without an SM: refused"
: >"$out/empty.jsonl"
set +e
"$sim" run "$out/empty.jsonl" --quiet >"$out/bad.out" 2>&1
rc=$?
set -e
check "[ $rc -eq 2 ] && grep -qF 'the file is empty' $out/bad.out" "an empty trace: refused"

[ "$fail" = 0 ] || exit 1
echo "traces: OK"
