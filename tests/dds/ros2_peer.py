"""A ROS 2 peer for the DDS bridge tests: rclpy (Fast DDS) or PyPI cyclonedds, talker or
listener, on the domain and interface the environment gives (ROS_DOMAIN_ID, loopback).

  ros2_peer.py talk   TOPIC TYPE COUNT PERIOD_S PREFIX      (rclpy)
  ros2_peer.py listen TOPIC TYPE COUNT TIMEOUT_S            (rclpy)
  ros2_peer.py listen-seen TOPIC TYPE COUNT TIMEOUT_S       (rclpy: prints `publisher seen` once
      the graph shows a publisher of TOPIC, then listens)
  ros2_peer.py cyclone-talk TOPIC string COUNT PERIOD_S PREFIX  (PyPI cyclonedds, no ROS)
  ros2_peer.py cyclone-listen TOPIC string COUNT TIMEOUT_S       (PyPI cyclonedds, no ROS)
  ros2_peer.py talk-best-effort TOPIC string COUNT PERIOD_S PREFIX  (rclpy, BEST_EFFORT, no waiting)
  ros2_peer.py serve|call|call-all SERVICE setbool COUNT TIMEOUT_S  (rclpy, std_srvs/srv/SetBool;
      call-all: every call in flight at once, the answers printed in call order)
  ros2_peer.py serve-busy SERVICE setbool COUNT TIMEOUT_S  (rclpy: a server whose own client
      calls it with data true all the while, until COUNT calls of others were served)
  ros2_peer.py cyclone-serve|cyclone-call SERVICE setbool COUNT TIMEOUT_S
      (PyPI cyclonedds speaking rmw_cyclonedds's service mapping: a {u64 guid, i64 seq} request
      identity in front of the request's fields, echoed by the reply)
  ros2_peer.py graph TOPIC NODE TIMEOUT_S   (rclpy: waits until the graph shows node /NODE,
      prints `node /NODE` and `subscribes <topic> <types>` for the node's subscriptions, then
      publishes std_msgs/msg/String `graph-seen` on TOPIC every 100 ms until the subscriber has
      left; exit 2 if the node never shows)
A server answers SetBool with success = not data, message "was on|off", prints `served <on|off>`
and exits 0 after COUNT requests; a caller sends COUNT requests (data = i even) and prints
`answer <i> <0|1> <message>` for each, exit 0 when all were answered.
TYPE: string (std_msgs/msg/String), header (std_msgs/msg/Header), point
(geometry_msgs/msg/PointStamped: frame_id PREFIX<i>, stamp i.1000i, point.x = i) or image
(sensor_msgs/msg/Image, 640x480 rgb8, byte j of image i = (31 j + i) mod 256, frame_id PREFIX<i>).
A listener prints one line per message (`got <data>` / `got <frame_id> <sec> <nanosec>` /
`got <frame_id> <sec> <nanosec> x <x>` /
`got <frame_id> <width>x<height> <encoding> <step> <crc32 of data>`) and
exits 0 after COUNT, 2 on timeout. A talker waits for a subscriber, then publishes COUNT
messages `PREFIX <i>` (a Header: frame_id PREFIX<i>, stamp sec=i, nanosec=1000*i) and waits for
them to be acknowledged."""
import os
import sys
import threading
import time



W, H = 640, 480


def image_bytes(i):
    import numpy as np
    return ((np.arange(W * H * 3, dtype=np.uint32) * 31 + i) & 0xFF).astype(np.uint8).tobytes()


def close(node, rc):
    """node destroyed and rclpy shut down, then rc; a shutdown that takes over 15 s ends the
    process with rc (a Fast DDS participant was seen to hang in its shutdown on a loaded machine,
    its work done and told: the result stands, the hang is told on stderr)."""
    import rclpy

    def hung():
        print("rclpy shutdown took over 15 s: the process ends without it", file=sys.stderr, flush=True)
        sys.stdout.flush()
        os._exit(rc)
    t = threading.Timer(15.0, hung)
    t.daemon = True
    t.start()
    node.destroy_node()
    rclpy.shutdown()
    t.cancel()
    return rc


def make(kind, prefix, i):
    if kind == "image":
        m = Image()
        m.header.frame_id = f"{prefix}{i}"
        m.height, m.width, m.encoding, m.step = H, W, "rgb8", W * 3
        m.data = image_bytes(i)
        return m
    if kind == "string":
        m = String()
        m.data = f"{prefix} {i}"
        return m
    if kind == "point":
        m = PointStamped()
        m.header.frame_id = f"{prefix}{i}"
        m.header.stamp.sec, m.header.stamp.nanosec = i, 1000 * i
        m.point.x = float(i)
        return m
    m = Header()
    m.frame_id = f"{prefix}{i}"
    m.stamp.sec = i
    m.stamp.nanosec = 1000 * i
    return m


def show(kind, m):
    if kind == "image":
        import zlib
        return f"got {m.header.frame_id} {m.width}x{m.height} {m.encoding} {m.step} {zlib.crc32(bytes(m.data)):08x}"
    if kind == "string":
        return f"got {m.data}"
    if kind == "point":
        return f"got {m.header.frame_id} {m.header.stamp.sec} {m.header.stamp.nanosec} x {m.point.x:g}"
    return f"got {m.frame_id} {m.stamp.sec} {m.stamp.nanosec}"


def cyclone_talk(topic, count, period, prefix):
    """A bare Cyclone DDS writer (the PyPI cyclonedds package and its own libddsc) of ROS 2's
    std_msgs/String as rmw_cyclonedds names it: rt/TOPIC, std_msgs::msg::dds_::String_, XCDR1."""
    import os
    from dataclasses import dataclass

    from cyclonedds.core import Policy, Qos
    from cyclonedds.domain import DomainParticipant
    from cyclonedds.idl import IdlStruct
    from cyclonedds.pub import DataWriter
    from cyclonedds.topic import Topic
    from cyclonedds.util import duration

    @dataclass
    class String_(IdlStruct, typename="std_msgs::msg::dds_::String_"):
        data: str

    dp = DomainParticipant(int(os.environ["ROS_DOMAIN_ID"]))
    qos = Qos(Policy.Reliability.Reliable(duration(milliseconds=100)), Policy.History.KeepLast(count + 10),
              Policy.Durability.Volatile, Policy.DataRepresentation(use_cdrv0_representation=True))
    tp = Topic(dp, f"rt/{topic}", String_, qos=qos)
    dw = DataWriter(dp, tp, qos=qos)
    deadline = time.monotonic() + 20
    while not dw.get_matched_subscriptions() and time.monotonic() < deadline:
        time.sleep(0.05)
    if not dw.get_matched_subscriptions():
        print("no subscriber matched", flush=True)
        return 2
    print("matched", flush=True)
    time.sleep(0.5)
    for i in range(count):
        dw.write(String_(data=f"{prefix} {i}"))
        time.sleep(period)
    time.sleep(1.0)  # reliable: let the last ones be acknowledged before the participant goes
    print("sent", count, flush=True)
    return 0


def cyclone_listen(topic, count, timeout):
    """A bare Cyclone DDS reader (PyPI cyclonedds) of std_msgs::msg::dds_::String_ on rt/TOPIC:
    prints `got <data>` per sample, exit 0 after COUNT, 2 on timeout. It reads what takt writes,
    origin stamp included after the payload."""
    import os
    from dataclasses import dataclass

    from cyclonedds.core import Policy, Qos
    from cyclonedds.domain import DomainParticipant
    from cyclonedds.idl import IdlStruct
    from cyclonedds.internal import InvalidSample
    from cyclonedds.sub import DataReader
    from cyclonedds.topic import Topic
    from cyclonedds.util import duration

    @dataclass
    class String_(IdlStruct, typename="std_msgs::msg::dds_::String_"):
        data: str

    dp = DomainParticipant(int(os.environ["ROS_DOMAIN_ID"]))
    qos = Qos(Policy.Reliability.Reliable(duration(milliseconds=100)), Policy.History.KeepLast(count + 10),
              Policy.Durability.Volatile, Policy.DataRepresentation(use_cdrv0_representation=True))
    tp = Topic(dp, f"rt/{topic}", String_, qos=qos)
    dr = DataReader(dp, tp, qos=qos)
    print("listening", flush=True)
    got = 0
    deadline = time.monotonic() + timeout
    while got < count and time.monotonic() < deadline:
        for s in dr.take(N=16):
            if isinstance(s, InvalidSample):
                continue
            print(f"got {s.data}", flush=True)
            got += 1
        time.sleep(0.01)
    return 0 if got >= count else 2


def answer_of(data):
    return (not data), ("was on" if data else "was off")


def rclpy_service(mode, name, count, timeout):
    import rclpy
    from std_srvs.srv import SetBool
    rclpy.init()
    node = rclpy.create_node(f"takt_peer_{mode}".replace("-", "_"))
    rc = 0
    if mode == "serve-busy":
        # a server whose own client keeps calling it (data always true, one call in flight, at
        # most one every 5 ms): its replies reach every client's reply reader, takt's too, which
        # must take only its own. (Unpaced, ~2,200 replies a second: the server's reply writer
        # keeps 10 (ROS 2's service depth), so a caller slowed down (ThreadSanitizer, a loaded
        # machine) that has not taken its reply within ~5 ms loses it, as an rclpy caller
        # would: once seen in CI, both of takt's calls expired. That tests the load, not the
        # mapping.)
        served = [0]

        def cb_busy(req, resp):
            resp.success, resp.message = answer_of(req.data)
            served[0] += 1
            return resp
        node.create_service(SetBool, name, cb_busy)
        own = node.create_client(SetBool, name)
        print("serving", flush=True)
        own_sent, fut, next_call = 0, None, 0.0
        deadline = time.monotonic() + timeout
        while served[0] - own_sent < count and time.monotonic() < deadline:
            if (fut is None or fut.done()) and time.monotonic() >= next_call:
                req = SetBool.Request()
                req.data = True
                fut = own.call_async(req)
                own_sent += 1
                next_call = time.monotonic() + 0.005
            rclpy.spin_once(node, timeout_sec=0.005)
        end = time.monotonic() + 0.5  # the last replies leave
        while time.monotonic() < end:
            rclpy.spin_once(node, timeout_sec=0.1)
        others = served[0] - own_sent
        print(f"served {others} calls of others beside {own_sent} of its own", flush=True)
        rc = 0 if others >= count else 2
    elif mode == "serve":
        served = []

        def cb(req, resp):
            resp.success, resp.message = answer_of(req.data)
            served.append(req.data)
            print(f"served {'on' if req.data else 'off'}", flush=True)
            return resp
        node.create_service(SetBool, name, cb)
        print("serving", flush=True)
        deadline = time.monotonic() + timeout
        while len(served) < count and time.monotonic() < deadline:
            rclpy.spin_once(node, timeout_sec=0.1)
        end = time.monotonic() + 0.5  # the last reply leaves
        while time.monotonic() < end:
            rclpy.spin_once(node, timeout_sec=0.1)
        rc = 0 if len(served) == count else 2
    else:
        cli = node.create_client(SetBool, name)
        if not cli.wait_for_service(timeout_sec=20):
            print("no service", flush=True)
            rc = 2
        else:
            time.sleep(0.5)

            def call(i):
                req = SetBool.Request()
                req.data = i % 2 == 0
                return cli.call_async(req)
            if mode == "call-all":  # every call in flight at once
                futs = [call(i) for i in range(count)]
                deadline = time.monotonic() + timeout
                while not all(f.done() for f in futs) and time.monotonic() < deadline:
                    rclpy.spin_once(node, timeout_sec=0.1)
            else:  # one at a time
                futs = []
                for i in range(count):
                    futs.append(call(i))
                    rclpy.spin_until_future_complete(node, futs[-1], timeout_sec=timeout)
                    if not futs[-1].done():
                        break
            for i, fut in enumerate(futs):  # the answers in call order
                if not fut.done():
                    print(f"no answer {i}", flush=True)
                    rc = 2
                    break
                r = fut.result()
                print(f"answer {i} {int(r.success)} {r.message}", flush=True)
            if len(futs) < count and rc == 0:
                rc = 2
    return close(node, rc)


def cyclone_service(mode, name, count, timeout):
    """rmw_cyclonedds's service mapping from a bare Cyclone DDS participant."""
    import os
    from dataclasses import dataclass

    from cyclonedds.core import Policy, Qos
    from cyclonedds.domain import DomainParticipant
    from cyclonedds.idl import IdlStruct
    from cyclonedds.idl.types import int64, uint64
    from cyclonedds.internal import InvalidSample
    from cyclonedds.pub import DataWriter
    from cyclonedds.sub import DataReader
    from cyclonedds.topic import Topic
    from cyclonedds.util import duration

    @dataclass
    class SetBool_Request_(IdlStruct, typename="std_srvs::srv::dds_::SetBool_Request_"):
        guid: uint64
        seq: int64
        data: bool

    @dataclass
    class SetBool_Response_(IdlStruct, typename="std_srvs::srv::dds_::SetBool_Response_"):
        guid: uint64
        seq: int64
        success: bool
        message: str

    dp = DomainParticipant(int(os.environ["ROS_DOMAIN_ID"]))
    qos = Qos(Policy.Reliability.Reliable(duration(milliseconds=100)), Policy.History.KeepLast(10),
              Policy.Durability.Volatile, Policy.DataRepresentation(use_cdrv0_representation=True))
    rq = Topic(dp, f"rq/{name}Request", SetBool_Request_, qos=qos)
    rr = Topic(dp, f"rr/{name}Reply", SetBool_Response_, qos=qos)
    deadline = time.monotonic() + timeout
    if mode == "cyclone-serve":
        rd, wr = DataReader(dp, rq, qos=qos), DataWriter(dp, rr, qos=qos)
        print("serving", flush=True)
        served = 0
        while served < count and time.monotonic() < deadline:
            for q in rd.take(N=10):
                if isinstance(q, InvalidSample):  # an instance state change, no data
                    continue
                ok, msg = answer_of(q.data)
                wr.write(SetBool_Response_(guid=q.guid, seq=q.seq, success=ok, message=msg))
                served += 1
                print(f"served {'on' if q.data else 'off'}", flush=True)
            time.sleep(0.01)
        time.sleep(1.0)  # the last replies are acknowledged
        return 0 if served == count else 2
    wr, rd = DataWriter(dp, rq, qos=qos), DataReader(dp, rr, qos=qos)
    while (not wr.get_matched_subscriptions() or not rd.get_matched_publications()) and time.monotonic() < deadline:
        time.sleep(0.05)
    if not wr.get_matched_subscriptions() or not rd.get_matched_publications():
        print("no service", flush=True)
        return 2
    time.sleep(0.5)
    guid = 0x74616B7470656572  # this caller's id; replies for another are not ours
    # all requests at once: the server has them in flight together, replies are matched by seq
    for i in range(count):
        wr.write(SetBool_Request_(guid=guid, seq=1000 + i, data=(i % 2 == 0)))
    got = {}
    while len(got) < count and time.monotonic() < deadline:
        for r in rd.take(N=10):
            if isinstance(r, InvalidSample):
                continue
            if r.guid == guid and 1000 <= r.seq < 1000 + count:
                got[r.seq - 1000] = r
        time.sleep(0.01)
    for i in sorted(got):
        print(f"answer {i} {int(got[i].success)} {got[i].message}", flush=True)
    return 0 if len(got) == count else 2


def graph(topic, name, timeout):
    import rclpy
    from std_msgs.msg import String
    rclpy.init()
    node = rclpy.create_node("takt_peer_graph")
    deadline = time.monotonic() + timeout
    seen = False
    while time.monotonic() < deadline:
        rclpy.spin_once(node, timeout_sec=0.1)
        if (name, "/") in node.get_node_names_and_namespaces():
            seen = True
            break
    rc = 2
    if seen:
        print(f"node /{name}", flush=True)
        subs = []
        while time.monotonic() < deadline and not subs:  # the endpoints follow the node's entry
            subs = node.get_subscriber_names_and_types_by_node(name, "/")
            rclpy.spin_once(node, timeout_sec=0.1)
        for t, types in sorted(subs):
            print(f"subscribes {t} {','.join(types)}", flush=True)
        for line in endpoint_nodes(node, name, [], [t for t, _ in subs], deadline):
            print(line, flush=True)
        pub = node.create_publisher(String, topic, 10)
        while pub.get_subscription_count() == 0 and time.monotonic() < deadline:
            rclpy.spin_once(node, timeout_sec=0.05)
        msg = String()
        msg.data = "graph-seen"
        # a reliable volatile writer's first sample reaches only readers that had matched it
        # when it was written, and this writer matching takt's reader says nothing of takt's
        # reader matching this writer (discovery is not symmetric in time; a sanitized takt
        # process takes seconds). So publish again every 100 ms until takt's listener, which
        # exits on its first message, is gone from the graph.
        while pub.get_subscription_count() > 0 and time.monotonic() < deadline:
            pub.publish(msg)
            rclpy.spin_once(node, timeout_sec=0.1)
        rc = 0
    else:
        print("names seen:", node.get_node_names_and_namespaces(), flush=True)
    return close(node, rc)


def node_entry(name, want_pubs, want_subs, timeout):
    """Wait until the ROS 2 graph has node /name with at least want_pubs publishers and want_subs
    subscribers (ros_discovery_info: the node's entry names its endpoints); print them."""
    import rclpy
    rclpy.init()
    node = rclpy.create_node("takt_peer_node_entry")
    deadline = time.monotonic() + timeout
    pubs, subs = [], []
    while time.monotonic() < deadline:
        rclpy.spin_once(node, timeout_sec=0.1)
        if (name, "/") not in node.get_node_names_and_namespaces():
            continue
        pubs = node.get_publisher_names_and_types_by_node(name, "/")
        subs = node.get_subscriber_names_and_types_by_node(name, "/")
        if len(pubs) >= want_pubs and len(subs) >= want_subs:
            break
    seen = (name, "/") in node.get_node_names_and_namespaces()
    print(f"node /{name}" if seen else f"names seen: {node.get_node_names_and_namespaces()}", flush=True)
    for t, types in sorted(pubs):
        print(f"publishes {t} {','.join(types)}", flush=True)
    for t, types in sorted(subs):
        print(f"subscribes {t} {','.join(types)}", flush=True)
    # each endpoint as `ros2 topic info -v` names it: by the node whose entry lists its gid, found
    # through its participant's gid (else "_CREATED_BY_BARE_DDS_APP_")
    named = endpoint_nodes(node, name, [t for t, _ in pubs], [t for t, _ in subs], deadline)
    for line in named:
        print(line, flush=True)
    return close(node, 0 if seen and len(pubs) >= want_pubs and len(subs) >= want_subs else 2)


def endpoint_nodes(node, name, pub_topics, sub_topics, deadline):
    """For each topic, the nodes rclpy's graph names as its publishers (subscribers) of it, as
    lines "publisher of /t: /n1 /n2"; waits (to deadline) until /name is among them."""
    import rclpy
    lines = []
    while True:
        lines, done = [], True
        for kind, topics, get in (("publisher", pub_topics, node.get_publishers_info_by_topic),
                                  ("subscriber", sub_topics, node.get_subscriptions_info_by_topic)):
            for t in sorted(topics):
                names = sorted({i.node_name if i.node_name == "_CREATED_BY_BARE_DDS_APP_"
                                else f"{i.node_namespace.rstrip('/')}/{i.node_name}" for i in get(t)})
                done = done and f"/{name}" in names
                lines.append(f"{kind} of {t}: {' '.join(names)}")
        if done or time.monotonic() >= deadline:
            return lines
        rclpy.spin_once(node, timeout_sec=0.1)


def main():
    mode, topic, kind = sys.argv[1], sys.argv[2], sys.argv[3]
    if mode == "node":  # node NAME PUBS SUBS TIMEOUT
        sys.exit(node_entry(topic, int(kind), int(sys.argv[4]), float(sys.argv[5])))
    if mode == "graph":
        sys.exit(graph(topic, kind, float(sys.argv[4])))
    count = int(sys.argv[4])
    if mode in ("serve", "serve-busy", "call", "call-all"):
        sys.exit(rclpy_service(mode, topic, count, float(sys.argv[5])))
    if mode in ("cyclone-serve", "cyclone-call"):
        sys.exit(cyclone_service(mode, topic, count, float(sys.argv[5])))
    if mode == "cyclone-talk":
        sys.exit(cyclone_talk(topic, count, float(sys.argv[5]), sys.argv[6]))
    if mode == "cyclone-listen":
        sys.exit(cyclone_listen(topic, count, float(sys.argv[5])))
    global rclpy, String, Header, Image, PointStamped
    import rclpy
    from geometry_msgs.msg import PointStamped
    from rclpy.qos import QoSProfile, ReliabilityPolicy, HistoryPolicy, DurabilityPolicy
    from sensor_msgs.msg import Image
    from std_msgs.msg import Header, String
    cls = {"string": String, "header": Header, "image": Image, "point": PointStamped}[kind]
    # images: transient-local (a latched topic) on both sides, so a reader that synchronises with
    # the writer after the first fragmented sample was sent still gets it from the history
    durability = DurabilityPolicy.TRANSIENT_LOCAL if kind == "image" else DurabilityPolicy.VOLATILE
    qos = QoSProfile(depth=count + 10, reliability=ReliabilityPolicy.RELIABLE,
                     history=HistoryPolicy.KEEP_LAST, durability=durability)
    rclpy.init()
    node = rclpy.create_node(f"takt_peer_{mode}".replace("-", "_"))
    rc = 0
    if mode == "talk-best-effort":  # publishes whether or not anyone matches
        period, prefix = float(sys.argv[5]), sys.argv[6]
        be = QoSProfile(depth=10, reliability=ReliabilityPolicy.BEST_EFFORT,
                        history=HistoryPolicy.KEEP_LAST, durability=DurabilityPolicy.VOLATILE)
        pub = node.create_publisher(cls, topic, be)
        for i in range(count):
            pub.publish(make(kind, prefix, i))
            rclpy.spin_once(node, timeout_sec=period)
        print("sent", count, flush=True)
    elif mode == "talk":
        period, prefix = float(sys.argv[5]), sys.argv[6]
        pub = node.create_publisher(cls, topic, qos)
        deadline = time.monotonic() + 20
        while pub.get_subscription_count() == 0 and time.monotonic() < deadline:
            rclpy.spin_once(node, timeout_sec=0.05)
        if pub.get_subscription_count() == 0:
            print("no subscriber matched", flush=True)
            rc = 2
        else:
            print("matched", flush=True)
            time.sleep(0.5)
            for i in range(count):
                pub.publish(make(kind, prefix, i))
                time.sleep(period)
            pub.wait_for_all_acked(rclpy.duration.Duration(seconds=5))
            print("sent", count, flush=True)
    else:
        timeout = float(sys.argv[5])
        got = []
        node.create_subscription(cls, topic, lambda m: (got.append(m), print(show(kind, m), flush=True)), qos)
        print("listening", flush=True)
        deadline = time.monotonic() + timeout
        if mode == "listen-seen":  # until the graph shows a publisher (then it has matched)
            while node.count_publishers(topic) == 0 and time.monotonic() < deadline:
                rclpy.spin_once(node, timeout_sec=0.05)
            print("publisher seen" if node.count_publishers(topic) else "no publisher", flush=True)
        while len(got) < count and time.monotonic() < deadline:
            rclpy.spin_once(node, timeout_sec=0.1)
        rc = 0 if len(got) >= count else 2
        # anything beyond COUNT within a short grace is printed too (duplicates show)
        end = time.monotonic() + 0.5
        while rc == 0 and time.monotonic() < end:
            rclpy.spin_once(node, timeout_sec=0.1)
    sys.exit(close(node, rc))


if __name__ == "__main__":
    main()
