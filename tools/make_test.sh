#!/usr/bin/env bash
# `make test` (the Makefile's test target, after the Release build): every suite, one after
# another, stopping at the first that fails. While a suite runs, the build trees of the suites
# after it are built in the background at SCHED_IDLE: the compilers get only the CPU time the
# running tests leave idle (a test waiting for its ROS peers, a serial test on one CPU) and give
# way to any test process the moment it is runnable, so the tests see the CPUs as before. Each
# background build's output is kept in BUILD/bg-TREE.log; a tree that is not built in time (or
# whose background build failed) is built, with its errors shown, by its suite in the foreground.
#   tools/make_test.sh MAKE BUILD
set -uo pipefail
cd "$(dirname "$0")/.."
make=$1 build=$2

idle=(chrt -i 0)
"${idle[@]}" true 2>/dev/null || idle=(nice -n 19)

bg=""  # the background builds' process group
background() {  # TREE...: make tree-TREE for each, one after another, in a process group of their own
  # shellcheck disable=SC2016
  setsid -w "${idle[@]}" bash -c 'make=$1 build=$2; shift 2
    for t in "$@"; do $make --no-print-directory "tree-$t" >"$build/bg-$t.log" 2>&1; done' \
    bg "$make" "$build" "$@" &
  bg=$!
}
settle() {  # wait for the background builds
  [ -n "$bg" ] && wait "$bg"
  bg=""
}
stop_background() {  # (the builds are a session of their own: Ctrl-C does not reach them)
  [ -n "$bg" ] && kill -- "-$bg" 2>/dev/null
  bg=""
}
trap stop_background EXIT
trap 'stop_background; exit 130' INT
trap 'stop_background; exit 143' TERM
suite() {  # TARGET: one suite in the foreground, its time shown
  local t0=$SECONDS
  if ! $make --no-print-directory "$1"; then
    echo "make test: $1 FAILED after $((SECONDS - t0)) s"
    exit 1
  fi
  echo "make test: $1 took $((SECONDS - t0)) s (${SECONDS} s in all)"
}

background asan
suite test-release
settle
background tsan
suite test-asan
settle
background minimal partial fuzz bench-peers
suite test-tsan
suite test-python
settle
suite test-configs
suite fuzz-smoke
suite bench-smoke
