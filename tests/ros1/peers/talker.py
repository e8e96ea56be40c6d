#!/usr/bin/python3
"""rospy talker for the ROS 1 tests: waits (at most 15 s) for a subscriber, then publishes
COUNT std_msgs/String messages "PREFIX i" on TOPIC at 50 Hz (after a line "talker: publishing")
and exits. With a fourth argument N, the message definition it sends in its connection header is
String's followed by a comment of N bytes (as large types' definitions are)."""
import sys
import time
import warnings

import rospy
from std_msgs.msg import String


def main() -> int:
    topic, count, prefix = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    cls = String
    if len(sys.argv) > 4:  # the same type and md5sum, a definition of that size
        cls = type("String", (String,), {"_full_text": String._full_text + "\n#" + "x" * int(sys.argv[4])})
    rospy.init_node("rospy_talker", disable_signals=True)
    # queue_size None: publish() writes to each connection itself (rospy's synchronous publisher),
    # so every message is on its socket when the loop ends and the talker may exit at once (with a
    # queue, rospy's per-connection thread writes later and a shutdown drops what it still holds).
    # rospy warns that a queue should be given: not on the output the tests read
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SyntaxWarning)
        pub = rospy.Publisher(topic, cls, queue_size=None)
    end = time.monotonic() + 15
    while pub.get_num_connections() == 0:
        if time.monotonic() > end:
            print("talker: no subscriber", flush=True)
            return 1
        time.sleep(0.02)
    time.sleep(0.2)  # the subscriber's side of the connection settles
    print("talker: publishing", flush=True)
    rate = rospy.Rate(50)
    for i in range(count):
        pub.publish(cls(data=f"{prefix} {i}"))
        rate.sleep()
    print("talker: done", flush=True)
    rospy.signal_shutdown("done")
    return 0


if __name__ == "__main__":
    sys.exit(main())
