"""rclpy -> rclpy one-way latency (publish -> callback start), the ROS 2 reference of `takt bench
dds`; runs in the ROS 2 venv (.venv-ros2: rclpy on Fast DDS).

  rclpy_oneway.py sub COUNT SIZE...            prints {"rows": [{"size": S, "samples": [ns...]}]}
  rclpy_oneway.py pub COUNT PERIOD_S SIZE...

Topics `bench_rclpy_<size>` of std_msgs/msg/UInt8MultiArray with SIZE bytes of data, reliable,
keep-last 8; the first 8 bytes carry time.monotonic_ns() at the publish (CLOCK_MONOTONIC, as
takt's clock), the subscriber's callback records monotonic_ns() - that at its start."""
import json
import struct
import sys
import time

import rclpy
from rclpy.qos import HistoryPolicy, QoSProfile, ReliabilityPolicy
from std_msgs.msg import UInt8MultiArray


def main() -> int:
    mode, count = sys.argv[1], int(sys.argv[2])
    sizes = [int(s) for s in sys.argv[4 if mode == "pub" else 3:]]
    qos = QoSProfile(depth=8, reliability=ReliabilityPolicy.RELIABLE, history=HistoryPolicy.KEEP_LAST)
    rclpy.init()
    node = rclpy.create_node(f"bench_rclpy_{mode}")
    rc = 0
    if mode == "sub":
        got = {s: [] for s in sizes}

        def on(size):
            def cb(m):
                now = time.monotonic_ns()
                got[size].append(now - struct.unpack_from("<q", bytes(m.data[:8]))[0])
            return cb
        subs = [node.create_subscription(UInt8MultiArray, f"bench_rclpy_{s}", on(s), qos) for s in sizes]
        deadline = time.monotonic() + 60
        while any(len(v) < count for v in got.values()) and time.monotonic() < deadline:
            rclpy.spin_once(node, timeout_sec=0.05)
        rc = 0 if all(len(v) >= count for v in got.values()) else 3
        print(json.dumps({"rows": [{"size": s, "samples": got[s][:count]} for s in sizes]}), flush=True)
        del subs
    else:
        period = float(sys.argv[3])
        pubs = {s: node.create_publisher(UInt8MultiArray, f"bench_rclpy_{s}", qos) for s in sizes}
        deadline = time.monotonic() + 30
        while any(p.get_subscription_count() == 0 for p in pubs.values()) and time.monotonic() < deadline:
            rclpy.spin_once(node, timeout_sec=0.05)
        time.sleep(0.3)
        for s in sizes:
            m = UInt8MultiArray()
            body = bytearray(s)
            for _ in range(count):
                time.sleep(period)
                struct.pack_into("<q", body, 0, time.monotonic_ns())
                m.data = bytes(body)
                pubs[s].publish(m)
        end = time.monotonic() + 10  # at most 10 s in all for the last acknowledgements
        for p in pubs.values():
            p.wait_for_all_acked(rclpy.duration.Duration(seconds=max(0.0, end - time.monotonic())))
    node.destroy_node()
    rclpy.shutdown()
    return rc


if __name__ == "__main__":
    sys.exit(main())
