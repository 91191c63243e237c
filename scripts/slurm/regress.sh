#!/usr/bin/env bash
# Runs a tma-sim regression (or sweep) on a Slurm cluster: one job-array task per shard, then a
# merge job that waits for all of them (docs/regressions.md, "Slurm").
#
#   scripts/slurm/regress.sh --shards 8 --out /shared/runs/nightly -- \
#       configs/regressions/default.yaml --list nightly
#
# Array task K runs   tma-sim regress ARGS... --shard K/N --out OUT/shard-K --jobs J
# and the merge job   tma-sim regress-merge OUT/shard-* --out OUT/merged --junit OUT/merged/junit.xml
# (afterany: it runs whatever the shards' exit status). OUT must be on a file system every node
# sees. Slurm's own output goes to OUT/slurm/.
#
# Options (before --; everything after -- goes to tma-sim regress or sweep):
#   --shards N          array tasks (default 4)
#   --out DIR           farm folder (required)
#   --jobs J            jobs at a time in each task, and its --cpus-per-task (default 1)
#   --tma-sim PATH      the executable (default: build/tma-sim of this checkout); must be
#                       reachable at the same path on the compute nodes
#   --sweep             run 'tma-sim sweep' (ARGS: a sweep file) instead of 'tma-sim regress'
#   --sbatch-args ARGS  extra sbatch arguments for both jobs, e.g. "--partition=cpu --time=2:00:00"
#   --wait              wait until the merge job ends; exit with its status (0 all passed,
#                       1 failures or jobs not run)
#   --dry-run           print the sbatch commands and the batch scripts, submit nothing
# Prints the array and merge job ids. Exit status 2 on bad usage or a failed submission.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
shards=4 out= jobs=1 sim="$root/build/tma-sim" mode=regress sbatch_args= wait=0 dry=0
usage() { awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 2; }
while [ $# -gt 0 ]; do
  case "$1" in
    --shards) shards=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --jobs) jobs=$2; shift 2 ;;
    --tma-sim) sim=$2; shift 2 ;;
    --sweep) mode=sweep; shift ;;
    --sbatch-args) sbatch_args=$2; shift 2 ;;
    --wait) wait=1; shift ;;
    --dry-run) dry=1; shift ;;
    --) shift; break ;;
    -h|--help) usage ;;
    *) echo "regress.sh: unknown option '$1' (tma-sim arguments go after --)" >&2; usage ;;
  esac
done
[ $# -gt 0 ] || { echo "regress.sh: no tma-sim $mode arguments after --" >&2; usage; }
[ -n "$out" ] || { echo "regress.sh: --out DIR is required" >&2; usage; }
[[ "$shards" =~ ^[1-9][0-9]*$ ]] || { echo "regress.sh: --shards must be a positive number" >&2; exit 2; }
[[ "$jobs" =~ ^[1-9][0-9]*$ ]] || { echo "regress.sh: --jobs must be a positive number" >&2; exit 2; }
[ -x "$sim" ] || { echo "regress.sh: no executable tma-sim at $sim (build it, or --tma-sim PATH)" >&2; exit 2; }
sim=$(cd "$(dirname "$sim")" && pwd)/$(basename "$sim")
mkdir -p "$out/slurm"
out=$(cd "$out" && pwd)

# Relative paths in the arguments are resolved here, so the tasks may start anywhere.
args=()
for a in "$@"; do
  if [ -e "$a" ] && [[ "$a" != /* ]]; then args+=("$(pwd)/$a"); else args+=("$a"); fi
done
quoted=$(printf '%q ' "${args[@]}")

cat > "$out/slurm/shard.sh" <<EOF
#!/usr/bin/env bash
# One shard of the array (written by scripts/slurm/regress.sh).
set -u
k=\${SLURM_ARRAY_TASK_ID:?not an array task}
exec $(printf '%q' "$sim") $mode $quoted--shard "\$k/$shards" --out $(printf '%q' "$out")/shard-\$k --jobs $jobs --quiet
EOF
cat > "$out/slurm/merge.sh" <<EOF
#!/usr/bin/env bash
# Merges the shards (written by scripts/slurm/regress.sh).
set -u
exec $(printf '%q' "$sim") regress-merge $(printf '%q' "$out")/shard-* --out $(printf '%q' "$out")/merged \\
  --junit $(printf '%q' "$out")/merged/junit.xml$([ "$mode" = sweep ] && printf ' --csv %q' "$out/merged/sweep.csv")
EOF
chmod +x "$out/slurm/shard.sh" "$out/slurm/merge.sh"

# shellcheck disable=SC2206
extra=($sbatch_args)
array_cmd=(sbatch --parsable --job-name=tma-$mode --array=0-$((shards - 1)) --cpus-per-task="$jobs"
           --output="$out/slurm/shard-%a.out" "${extra[@]}" "$out/slurm/shard.sh")
if [ "$dry" = 1 ]; then
  echo "${array_cmd[*]}"
  echo "sbatch --parsable --job-name=tma-$mode-merge --dependency=afterany:ARRAY_JOB_ID --output=$out/slurm/merge.out ${extra[*]} $out/slurm/merge.sh"
  cat "$out/slurm/shard.sh" "$out/slurm/merge.sh"
  exit 0
fi
command -v sbatch >/dev/null || { echo "regress.sh: sbatch not found (is Slurm installed here?)" >&2; exit 2; }
array_id=$("${array_cmd[@]}") || { echo "regress.sh: submitting the array failed" >&2; exit 2; }
array_id=${array_id%%;*}
merge_cmd=(sbatch --parsable --job-name=tma-$mode-merge --dependency=afterany:"$array_id"
           --output="$out/slurm/merge.out" "${extra[@]}")
[ "$wait" = 1 ] && merge_cmd+=(--wait)
echo "regress.sh: array job $array_id ($shards shards of $mode), merge into $out/merged"
if [ "$wait" = 1 ]; then
  set +e
  merge_id=$("${merge_cmd[@]}" "$out/slurm/merge.sh")
  rc=$?
  set -e
  echo "regress.sh: merge job ${merge_id%%;*} ended with status $rc; reports in $out/merged"
  [ -f "$out/merged/summary.md" ] && head -1 "$out/merged/summary.md"
  exit "$rc"
fi
merge_id=$("${merge_cmd[@]}" "$out/slurm/merge.sh") || { echo "regress.sh: submitting the merge failed" >&2; exit 2; }
echo "regress.sh: merge job ${merge_id%%;*} (runs after the array)"
