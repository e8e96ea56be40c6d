"""ros1: the rospy side of `takt bench ros1`, the same commands as takt-bench-ros1:
    rospy_bench.py pub MASTER TOPIC SIZE COUNT PERIOD_US [stream]
    rospy_bench.py sub MASTER TOPIC COUNT TIMEOUT_S [MAX_BYTES]   (MAX_BYTES: ignored)
Run with Debian's Python (/usr/bin/python3, which has rospy). The first 8 data bytes carry the
publish time (CLOCK_MONOTONIC ns, little-endian), taken just before Publisher.publish; the
subscriber's callback (rospy runs it on the connection's receive thread) records the time since
it first thing, over a tcp_nodelay connection."""

import json
import os
import sys
import threading
import time


def usage():
    sys.stderr.write("usage: rospy_bench.py pub MASTER TOPIC SIZE COUNT PERIOD_US [stream]\n"
                     "       rospy_bench.py sub MASTER TOPIC COUNT TIMEOUT_S [MAX_BYTES]\n")
    return 2


def sleep_until(t_ns):
    while True:
        left = t_ns - time.monotonic_ns()
        if left <= 0:
            return
        time.sleep(left / 1e9)


def run_pub(master, topic, size, count, period_us, stream):
    os.environ["ROS_MASTER_URI"] = master
    import rospy
    from std_msgs.msg import UInt8MultiArray
    rospy.init_node("rospy_bench_pub", disable_signals=True)
    pub = rospy.Publisher(topic, UInt8MultiArray, queue_size=100)
    if not stream:
        give_up = time.monotonic() + 30
        while pub.get_num_connections() == 0 and time.monotonic() < give_up:
            time.sleep(0.01)
        if pub.get_num_connections() == 0:
            sys.stderr.write("rospy_bench: no subscriber within 30 s\n")
            return 1
        time.sleep(0.3)
    payload = bytearray(i & 0xFF for i in range(size))
    msg = UInt8MultiArray()
    nxt = time.monotonic_ns()
    for _ in range(count):
        nxt += period_us * 1000
        sleep_until(nxt)
        payload[0:8] = time.monotonic_ns().to_bytes(8, "little")
        msg.data = bytes(payload)
        pub.publish(msg)
    if not stream:
        time.sleep(1.0)  # rospy's queue_size publisher writes from its own thread
    print(json.dumps({"published": count}))
    rospy.signal_shutdown("done")
    return 0


def run_sub(master, topic, count, timeout_s):
    os.environ["ROS_MASTER_URI"] = master
    import rospy
    from std_msgs.msg import UInt8MultiArray
    start = time.monotonic_ns()
    samples = []
    first = [-1]
    done = threading.Event()

    def cb(m):
        now = time.monotonic_ns()  # the first thing the callback does
        if len(m.data) < 8 or len(samples) >= count:
            return
        if not samples:
            first[0] = now - start
        samples.append(now - int.from_bytes(m.data[0:8], "little"))
        if len(samples) == count:
            done.set()

    rospy.init_node("rospy_bench_sub", disable_signals=True)
    sub = rospy.Subscriber(topic, UInt8MultiArray, cb, queue_size=4, tcp_nodelay=True)
    done.wait(timeout_s - (time.monotonic_ns() - start) / 1e9)
    sub.unregister()
    print(json.dumps({"received": len(samples), "first_ns": first[0], "samples_ns": samples}))
    rospy.signal_shutdown("done")
    return 0


def main(argv):
    if len(argv) in (7, 8) and argv[1] == "pub":
        size, count, period = int(argv[4]), int(argv[5]), int(argv[6])
        stream = len(argv) == 8 and argv[7] == "stream"
        if size < 8 or count < 1 or period < 1 or (len(argv) == 8 and not stream):
            return usage()
        return run_pub(argv[2], argv[3], size, count, period, stream)
    if len(argv) in (6, 7) and argv[1] == "sub":
        count, timeout = int(argv[4]), int(argv[5])
        if count < 1 or timeout < 1:
            return usage()
        return run_sub(argv[2], argv[3], count, timeout)
    return usage()


if __name__ == "__main__":
    sys.exit(main(sys.argv))
