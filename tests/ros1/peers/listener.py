#!/usr/bin/python3
"""rospy listener for the ROS 1 tests: prints "ready" once subscribed, "connected" once a TCPROS
connection to a publisher is up (a publisher's messages before that are not seen: a test waits for
it), then each std_msgs/String received on TOPIC, one a line; exits after COUNT messages (exit 1
after 20 s without them)."""
import sys
import threading

import rospy
from std_msgs.msg import String

from said_once import ConnectedLine


LINE = ConnectedLine("connected")


def main() -> int:
    topic, count = sys.argv[1], int(sys.argv[2])
    done = threading.Event()
    got = []

    def on_msg(msg: String) -> None:
        if len(got) == count:  # after the COUNT-th, until the shutdown takes effect: not printed
            return
        got.append(msg.data)
        with LINE.lock:
            LINE.say_locked()
            print(f"got: {msg.data}", flush=True)
        if len(got) == count:
            done.set()

    rospy.init_node("rospy_listener", disable_signals=True)
    sub = rospy.Subscriber(topic, String, on_msg)
    print("ready", flush=True)
    LINE.watch(sub)
    ok = done.wait(20)
    rospy.signal_shutdown("done")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
