#!/usr/bin/python3
"""geometry_msgs/PointStamped peer for the ROS 1 tests.
  stamped.py pub TOPIC SEC NSEC COUNT: waits (at most 15 s) for a subscriber, publishes COUNT
      messages stamped SEC.NSEC (frame_id rospy<i>, point.x = i), then exits.
  stamped.py echo TOPIC COUNT: prints "stamped: subscribed", "stamped: connected" once a
      publisher's TCPROS connection is up, then "stamp SEC NSEC x X" for COUNT messages, and
      exits."""
import sys
import threading
import time

import rospy
from geometry_msgs.msg import PointStamped

from said_once import ConnectedLine


def main() -> int:
    mode, topic = sys.argv[1], sys.argv[2]
    rospy.init_node(f"rospy_stamped_{mode}", disable_signals=True)
    if mode == "pub":
        sec, nsec, count = int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
        pub = rospy.Publisher(topic, PointStamped, queue_size=100)
        end = time.monotonic() + 15
        while pub.get_num_connections() == 0:
            if time.monotonic() > end:
                print("stamped: no subscriber", flush=True)
                return 1
            time.sleep(0.02)
        time.sleep(0.2)
        for i in range(count):
            m = PointStamped()
            m.header.stamp = rospy.Time(sec, nsec)
            m.header.frame_id = f"rospy{i}"
            m.point.x = float(i)
            pub.publish(m)
            time.sleep(0.02)
        time.sleep(0.5)
        print("stamped: done", flush=True)
        return 0
    count = int(sys.argv[3])
    got = []
    done = threading.Event()

    line = ConnectedLine("stamped: connected")

    def on(m):
        got.append(m)
        with line.lock:
            line.say_locked()
            print(f"stamp {m.header.stamp.secs} {m.header.stamp.nsecs} x {m.point.x:g}", flush=True)
        if len(got) >= count:
            done.set()

    sub = rospy.Subscriber(topic, PointStamped, on)
    print("stamped: subscribed", flush=True)

    line.watch(sub)
    ok = done.wait(30)
    rospy.signal_shutdown("done")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
