#!/bin/sh
# The robot demo split into three processes over shared memory (docs/shm.md): control and
# perception start first and wait for data, then the sensors; each prints its own chain table.
# usage: examples/robot_split/run.sh [SECONDS] [takt-run options, e.g. --shared-domain NAME]
# takt-run is $TAKT_RUN, else the one on PATH, else build/release/tools/takt-run of this tree.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
seconds=${1:-10}
[ $# -gt 0 ] && shift
run=${TAKT_RUN:-$(command -v takt-run || echo "$here/../../build/release/tools/takt-run")}
if [ ! -x "$run" ]; then
  echo "run.sh: no takt-run (build the tree with make, or set TAKT_RUN)" >&2
  exit 2
fi
out=${TAKT_SPLIT_OUT:-$(mktemp -d)}
"$run" "$here/control.yaml" --duration "$seconds" --no-introspect --json "$out/control.json" "$@" \
  > "$out/control.txt" 2>&1 &
control=$!
"$run" "$here/perception.yaml" --duration "$seconds" --no-introspect --json "$out/perception.json" "$@" \
  > "$out/perception.txt" 2>&1 &
perception=$!
sleep 0.3 # both attached and waiting: the first samples find them
status=0
"$run" "$here/sensors.yaml" --duration "$seconds" --no-introspect --json "$out/sensors.json" "$@" \
  > "$out/sensors.txt" 2>&1 || status=$?
wait $perception || status=$?
wait $control || status=$?
for p in sensors perception control; do
  echo "== $p"
  sed -n '/^takt run /,$p' "$out/$p.txt"
done
echo "(output and JSON results in $out)"
exit $status
