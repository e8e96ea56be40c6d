#!/usr/bin/env bash
# Install what takt needs on Debian 12, idempotently: Debian packages (only the missing ones)
# and a Python virtual environment in .venv with the takt package and its test/plot extras.
set -euo pipefail
cd "$(dirname "$0")/.."

PKGS=(cmake ninja-build gcc g++ make pkg-config libyaml-dev libgtest-dev python3 python3-venv util-linux rt-tests stress-ng locales
      iceoryx libiceoryx-binding-c-dev
      ros-std-msgs ros-geometry-msgs ros-sensor-msgs ros-std-srvs
      python3-genmsg python3-genpy python3-rospy python3-geometry-msgs python3-sensor-msgs python3-std-srvs
      python3-rosmaster python3-rostopic python3-rosnode python3-rosservice python3-rosparam python3-std-msgs
      libroscpp-dev libstd-msgs-dev libgeometry-msgs-dev libsensor-msgs-dev libstd-srvs-dev libboost-dev libmessage-filters-dev
      libmessage-filters-dev
      ros-nav-msgs ros-actionlib-msgs ros-trajectory-msgs ros-visualization-msgs ros-diagnostic-msgs
      python3-nav-msgs libnav-msgs-dev libactionlib-msgs-dev libtrajectory-msgs-dev
      libvisualization-msgs-dev libdiagnostic-msgs-dev
      ros-rosgraph-msgs python3-gencpp
      clang libclang-rt-14-dev
      cyclonedds-dev cyclonedds-tools iproute2
      gcc-arm-none-eabi libnewlib-arm-none-eabi qemu-system-arm)
missing=()
for p in "${PKGS[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "deps: installing Debian packages: ${missing[*]}"
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null; then SUDO=sudo; else
      echo "deps: need root (or sudo) to install: ${missing[*]}" >&2; exit 1
    fi
  fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# The ROS 2 peers' environment (tools/deps_ros2.sh) is prepared meanwhile: the two pip installs
# are mostly downloads and unpacking.
tools/deps_ros2.sh &
ros2=$!
# (iceoryx2's C binding, a comparison in `takt bench shm`, is built by that benchmark when it
# first runs in full: tools/deps_iceoryx2.sh, cargo, about a minute)

PY=${PYTHON:-python3}
stamp=.venv/.takt-deps
want="$(sha256sum python/pyproject.toml | cut -c1-16)"
if [ ! -x .venv/bin/python ] || [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  echo "deps: preparing .venv"
  [ -x .venv/bin/python ] || "$PY" -m venv .venv
  .venv/bin/python -m pip install -q --disable-pip-version-check -e "python[dev,plot]"
  echo "$want" > "$stamp"
fi

# The ROS 2 peers of the DDS tests (rclpy and cyclonedds from PyPI, Python 3.12).
wait "$ros2"
