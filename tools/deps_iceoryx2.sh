#!/usr/bin/env bash
# iceoryx2's C binding for `takt bench shm` (bench/shm/iceoryx2): the crates.io crate
# iceoryx2-ffi 0.4.1, built with cargo into bench/shm/iceoryx2/target (a static library and the
# C header its build script writes). Optional: without cargo, or when crates.io cannot be
# reached, this says so and the benchmark runs without its iceoryx2 rows. Idempotent: nothing is
# done when the library is newer than the crate's lock file. The first full `takt bench shm` runs
# it (`make deps` does not: nothing else uses iceoryx2).
set -uo pipefail
cd "$(dirname "$0")/../bench/shm/iceoryx2"
lib=target/release/libiceoryx2_ffi_static.a
if [ -f "$lib" ] && [ "$lib" -nt Cargo.lock ] && [ "$lib" -nt Cargo.toml ]; then
  exit 0
fi
if ! command -v cargo >/dev/null; then
  echo "deps: no cargo: takt bench shm runs without its iceoryx2 rows"
  exit 0
fi
echo "deps: building iceoryx2's C binding (crates.io iceoryx2-ffi 0.4.1, about a minute)"
if ! cargo build --release --locked --quiet >target-build.log 2>&1; then
  echo "deps: iceoryx2's C binding did not build (bench/shm/iceoryx2/target-build.log):" \
       "takt bench shm runs without its iceoryx2 rows"
  tail -3 target-build.log | sed 's/^/deps:   /'
  exit 0
fi
rm -f target-build.log
touch "$lib"  # cargo leaves an up-to-date library as it was
