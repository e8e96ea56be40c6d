#!/usr/bin/python3
"""rospy parameter watcher for the ROS 1 tests: reads KEY with get_param_cached (rospy
subscribes to it: subscribeParam, then paramUpdate keeps its cache), prints "value V" whenever
the cached value changes, and exits once it is WANT (or after 20 s: status 1)."""
import sys
import time

import rospy


def main() -> int:
    key, want = sys.argv[1], sys.argv[2]
    rospy.init_node("rospy_param_watch", disable_signals=True)
    last = None
    end = time.monotonic() + 20
    while time.monotonic() < end:
        v = rospy.get_param_cached(key, None)
        if v != last:
            print(f"value {v}", flush=True)
            last = v
            if str(v) == want:
                return 0
        time.sleep(0.05)  # the peer's own loop; takt sends paramUpdate when the value changes
    return 1


if __name__ == "__main__":
    sys.exit(main())
