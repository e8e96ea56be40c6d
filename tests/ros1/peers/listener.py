#!/usr/bin/python3
"""rospy listener for the ROS 1 tests: prints "ready" once subscribed, "connected" once a TCPROS
connection to a publisher is up (a publisher's messages before that are not seen: a test waits for
it), then each std_msgs/String received on TOPIC, one a line; exits after COUNT messages (exit 1
after 20 s without them)."""
import sys
import threading
import time

import rospy
from std_msgs.msg import String


PRINT = threading.Lock()  # a line of its own each: print writes the text and the newline apart
said = [False]  # "connected" printed (before any message's line)


def connected() -> None:
    """Print "connected" once (PRINT held)."""
    if not said[0]:
        said[0] = True
        print("connected", flush=True)


def say_connected(sub) -> None:
    """Print "connected" once sub has a publisher's connection (rospy tells no event: looked at
    every 10 ms, for 20 s at most), or before the first message if that comes first."""
    end = time.monotonic() + 20
    while sub.get_num_connections() == 0 and time.monotonic() < end:
        time.sleep(0.01)
    if sub.get_num_connections() > 0:
        with PRINT:
            connected()


def main() -> int:
    topic, count = sys.argv[1], int(sys.argv[2])
    done = threading.Event()
    got = []

    def on_msg(msg: String) -> None:
        if len(got) == count:  # after the COUNT-th, until the shutdown takes effect: not printed
            return
        got.append(msg.data)
        with PRINT:
            connected()
            print(f"got: {msg.data}", flush=True)
        if len(got) == count:
            done.set()

    rospy.init_node("rospy_listener", disable_signals=True)
    sub = rospy.Subscriber(topic, String, on_msg)
    print("ready", flush=True)
    threading.Thread(target=say_connected, args=(sub,), daemon=True).start()
    ok = done.wait(20)
    rospy.signal_shutdown("done")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
