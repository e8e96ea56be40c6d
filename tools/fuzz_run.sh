#!/usr/bin/env bash
# Run the libFuzzer targets of a fuzz build (`make fuzz`, `make fuzz-smoke`): each for SECONDS on a
# copy of its seed corpus (tests/fuzz/corpus), JOBS targets at a time. Each target's output is kept
# in BUILD/fuzz/log-NAME.txt and shown whole once it ends; the status is 1 when any target failed.
#   tools/fuzz_run.sh BUILD SECONDS JOBS
set -uo pipefail
cd "$(dirname "$0")/.."
build=$1 seconds=$2 jobs=$3
fuzz=$build/fuzz

# name, its corpus (BUILD/fuzz/corpus-CORPUS), where its program is, its seeds (under
# tests/fuzz/corpus), extra libFuzzer options
targets=(
  "system_file system tests system/*.yaml"
  "frame frame tests frame/*.bin"
  "daemon_rx daemon tests frame/*.bin"
  "bridge_description description tests bridge_description/*.bin"
  "xmlrpc_request xmlrpc_request tests xmlrpc/* -max_len=8192"
  "xmlrpc_response xmlrpc_response tests xmlrpc/* -max_len=8192"
  "tcpros_header tcpros_header tests tcpros/* -max_len=8192"
  "ros1_master ros1_master tests ros1_master/* -max_len=8192"
  "msg_ros1 ros1 msgs msg_ros1/*.bin -rss_limit_mb=4096"
  "msg_cdr cdr msgs msg_cdr/*.bin -rss_limit_mb=4096"
)
# the DDS receive path, when the DDS layer and the ROS 2 types are built (docs/dds.md)
[ -x "$fuzz/tests/fuzz_dds_rx" ] && targets+=("dds_rx dds tests dds/*.bin -rss_limit_mb=4096")

one() {  # NAME CORPUS DIR SEEDS [OPTIONS...]: the target's corpus set up, then its run
  local name=$1 corpus=$fuzz/corpus-$2 dir=$3 seeds=$4
  shift 4
  mkdir -p "$corpus" && cp tests/fuzz/corpus/$seeds "$corpus/" &&
    "$fuzz/$dir/fuzz_$name" -max_total_time="$seconds" "$@" "$corpus"
}

failed=0
declare -A names=()
finish() {  # wait for one target to end; show its output
  local pid status
  wait -n -p pid
  status=$?
  cat "$fuzz/log-${names[$pid]}.txt"
  if [ "$status" -ne 0 ]; then
    echo "ERROR: fuzz_${names[$pid]} ended with status $status"
    failed=1
  fi
  unset "names[$pid]"
}
for t in "${targets[@]}"; do
  read -r -a a <<< "$t"
  [ "${#names[@]}" -lt "$jobs" ] || finish
  one "${a[@]}" > "$fuzz/log-${a[0]}.txt" 2>&1 &
  names[$!]=${a[0]}
done
while [ "${#names[@]}" -gt 0 ]; do finish; done
exit "$failed"
