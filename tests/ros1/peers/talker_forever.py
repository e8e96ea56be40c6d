#!/usr/bin/python3
"""rospy talker for the reconnection tests: registers a std_msgs/String publisher on TOPIC,
prints "registered T" (T: time.monotonic(), the clock takt_time_now reads) once the master has
it, then publishes "PREFIX i" at 50 Hz until it is ended."""
import sys
import time

import rospy
from std_msgs.msg import String


def main() -> int:
    topic, prefix = sys.argv[1], sys.argv[2]
    rospy.init_node("rospy_talker", disable_signals=True)
    pub = rospy.Publisher(topic, String, queue_size=100)
    print(f"registered {time.monotonic():.6f}", flush=True)
    i = 0
    while True:
        pub.publish(String(data=f"{prefix} {i}"))
        i += 1
        time.sleep(0.02)


if __name__ == "__main__":
    sys.exit(main())
