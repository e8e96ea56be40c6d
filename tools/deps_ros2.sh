#!/usr/bin/env bash
# The ROS 2 peers of the DDS tests, idempotently: a Python 3.12 virtual environment in .venv-ros2
# with rclpy (ROS 2 Kilted wheels from PyPI, on Fast DDS: the rmw must be installed by name) and
# the message wheels whose share/<pkg>/msg folders `takt msggen --ros2` reads, plus PyPI's
# cyclonedds (its own libddsc and CLI). tools/deps.sh runs it; PYTHON312 overrides the
# interpreter. Without Python 3.12 it says so and the DDS peer tests are not registered.
set -euo pipefail
cd "$(dirname "$0")/.."

PY312=${PYTHON312:-}
if [ -z "$PY312" ]; then
  for c in /root/.pyenv/versions/3.12.*/bin/python3 "$(command -v python3.12 || true)"; do
    if [ -n "$c" ] && [ -x "$c" ]; then PY312=$c; break; fi
  done
fi
if [ -z "$PY312" ]; then
  echo "deps-ros2: no Python 3.12 found (set PYTHON312): the ROS 2 peer tests are skipped at configure time" >&2
  exit 0
fi
ROS2_PKGS=(ros-rclpy ros-rmw-fastrtps-cpp ros-std-msgs ros-std-srvs ros-geometry-msgs ros-sensor-msgs
           ros-builtin-interfaces cyclonedds)
stamp=.venv-ros2/.takt-deps
want="$(printf '%s\n' "${ROS2_PKGS[@]}" | sha256sum | cut -c1-16)"
if [ ! -x .venv-ros2/bin/python ] || [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  echo "deps-ros2: preparing .venv-ros2 (Python 3.12: ${ROS2_PKGS[*]})"
  [ -x .venv-ros2/bin/python ] || "$PY312" -m venv .venv-ros2
  .venv-ros2/bin/python -m pip install -q --disable-pip-version-check "${ROS2_PKGS[@]}"
  echo "$want" > "$stamp"
fi
