#!/usr/bin/env bash
# The folders by concern include one way (docs/architecture.md, "Folders by concern"): every
# #include "tma/<concern>/<file>" of model/, tb/ and tests/ must name a file that exists, and a
# file of model/<a> or tb/<a> may include only its own concern and the ones listed for it below;
# the file-level include graph must have no cycle. Prints each edge between concerns with its count.
set -euo pipefail
root=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$root"

# concern: the concerns it may include (besides itself). model/ never includes tb/.
allowed() {
  case $1 in
    descriptor) echo "" ;;
    core)       echo "descriptor" ;;
    tma|memory) echo "core descriptor" ;;
    gpu)        echo "tma memory core descriptor" ;;
    config|reference) echo "descriptor core tma memory gpu" ;;
    golden|scenario)  echo "config reference descriptor core tma memory gpu" ;;
    regress)    echo "golden scenario config reference descriptor core tma memory gpu" ;;
    cli)        echo "regress golden scenario config reference descriptor core tma memory gpu" ;;
    bindings)   echo "golden config reference descriptor" ;;  # Python module, DPI-C; nothing includes it
    *) return 1 ;;
  esac
}
where() {  # concern -> model or tb
  if [ -d "model/$1" ]; then echo model; elif [ -d "tb/$1" ]; then echo tb; else return 1; fi
}

fail=0
edges=$(mktemp)
graph=$(mktemp)
trap 'rm -f "$edges" "$graph"' EXIT
for f in $(find model tb tests -path tests/golden -prune -o \( -name '*.h' -o -name '*.cpp' \) -print | sort); do
  from=$(echo "$f" | cut -d/ -f2)
  side=$(echo "$f" | cut -d/ -f1)
  if [ "$side" != tests ] && ! allowed "$from" >/dev/null; then
    echo "FAIL: $f: folder $side/$from is not a known concern (add it to $0)"; fail=1; continue
  fi
  while IFS= read -r inc; do
    case $inc in
      tma/*/*) ;;
      *) if [ "$side" != tests ]; then echo "FAIL: $f: #include \"$inc\" is not of the form tma/<concern>/<file>"; fail=1; fi
         continue ;;
    esac
    to=$(echo "$inc" | cut -d/ -f2)
    file=$(echo "$inc" | cut -d/ -f3-)
    if ! toside=$(where "$to") || [ ! -f "$toside/$to/$file" ]; then
      echo "FAIL: $f: #include \"$inc\": no such file"; fail=1; continue
    fi
    echo "$f $toside/$to/$file" >>"$graph"
    [ "$side" = tests ] && continue
    echo "$side/$from -> $toside/$to" >>"$edges"
    if [ "$from" != "$to" ] && ! allowed "$from" | tr ' ' '\n' | grep -qx "$to"; then
      echo "FAIL: $f: #include \"$inc\" runs from $side/$from up to $toside/$to"; fail=1
    fi
  done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f")
done
sort "$edges" | uniq -c | awk '$2 != $4 {print}'
if ! tsort "$graph" >/dev/null 2>"$edges"; then
  echo "FAIL: the include graph has a cycle:"; cat "$edges"; fail=1
fi
[ $fail -eq 0 ] && echo "layering: OK ($(wc -l <"$graph") includes, no upward include, no cycle)"
exit $fail
