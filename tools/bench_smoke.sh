#!/usr/bin/env bash
# `make bench-smoke`: every benchmark in its --quick mode, which checks that it runs and writes
# its result (NAME.json and NAME.md); the numbers of a smoke run mean nothing. The lanes run side
# by side, the benchmarks of a lane one after another; each lane's lines appear as it goes.
#   tools/bench_smoke.sh TAKT OUT "LANE" "LANE" ...   (a LANE: benchmark names; NAME:--mcu for
#                                                     the firmware variant)
set -uo pipefail
takt=$1 out=$2
shift 2
mkdir -p "$out"

lane() {  # NAME[:--mcu]...: one after another; the status is 1 if any failed
  local rc=0 b name flag log t0
  for b in "$@"; do
    t0=$SECONDS
    name=${b%%:*} flag=""
    [ "$name" != "$b" ] && flag=${b#*:}
    log="$out/${name}${flag:+_mcu}.log"
    if "$takt" bench "$name" $flag --quick --out "$out" >"$log" 2>&1 &&
       test -s "$out/${name}${flag:+_mcu}.json" && test -s "$out/${name}${flag:+_mcu}.md"; then
      echo "$name${flag:+ $flag} smoke: ok ($((SECONDS - t0)) s)"
    else
      tail -20 "$log"
      echo "$name${flag:+ $flag} smoke: FAILED after $((SECONDS - t0)) s"
      rc=1
    fi
  done
  return $rc
}

pids=()
for l in "$@"; do
  # shellcheck disable=SC2086
  lane $l &
  pids+=($!)
done
rc=0
for p in "${pids[@]}"; do wait "$p" || rc=1; done
exit $rc
