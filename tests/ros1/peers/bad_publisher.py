#!/usr/bin/python3
"""A publisher that misbehaves on the wire, for the bad-input tests of takt's subscriptions.
It registers TOPIC (std_msgs/String) with the master at $ROS_MASTER_URI, answers requestTopic,
and on the TCPROS connection: MODE "huge" sends a valid header then a 4 GiB length prefix;
"truncated" sends half a header and closes its side. Each mode registers under a node name of its
own (/bad_publisher_MODE: rosmaster drops a node's registrations when another registers its name).
"truncated" unregisters before its first half header and answers every connection the same way
until none has come for 2 s: a subscriber whose back-off tries it again before the master's
publisherUpdate tells it the publisher is gone (rosmaster sends those from its own threads, late
on a loaded machine) meets the same truncated header, never a closed port. "huge" exits after one
connection (or 20 s). "gone" holds the first connection without an answer, sends the subscriber's
slave API a publisherUpdate that no longer lists it (the call returns once the subscriber has taken
it in: deterministic, unlike the master's), then answers half a header and closes: a subscriber
must not try again a publisher it has been told is gone; it prints "after the update: N requests,
M connections" (counted for 2 s) and unregisters."""
import socket
import struct
import sys
import threading
import time
import os
import xmlrpc.client
from xmlrpc.server import SimpleXMLRPCServer

MD5 = "992ce8a1687cec8c8bd883ec73ca41d1"


def header(fields: dict) -> bytes:
    body = b"".join(struct.pack("<I", len(f)) + f for f in (f"{k}={v}".encode() for k, v in fields.items()))
    return struct.pack("<I", len(body)) + body


def until_closed(conn: socket.socket) -> None:
    try:
        conn.recv(1)  # until takt closes it
    except OSError:
        pass
    conn.close()


def main() -> int:
    topic, mode = sys.argv[1], sys.argv[2]
    tcp = socket.socket()
    tcp.bind(("127.0.0.1", 0))
    tcp.listen(1)
    tcp.settimeout(20)
    port = tcp.getsockname()[1]
    rpc = SimpleXMLRPCServer(("127.0.0.1", 0), logRequests=False, allow_none=True)
    requests = [0]

    def request_topic(caller, t, protos):
        requests[0] += 1
        return [1, "ready", ["TCPROS", "127.0.0.1", port]]

    rpc.register_function(request_topic, "requestTopic")
    rpc.register_function(lambda caller: [1, "", os.getpid()], "getPid")
    threading.Thread(target=rpc.serve_forever, daemon=True).start()
    uri = f"http://127.0.0.1:{rpc.server_address[1]}/"
    master = xmlrpc.client.ServerProxy(os.environ["ROS_MASTER_URI"])
    name = f"/bad_publisher_{mode}"
    master.registerPublisher(name, topic, "std_msgs/String", uri)
    print("registered", flush=True)
    conn, _ = tcp.accept()
    conn.settimeout(5)
    n = struct.unpack("<I", conn.recv(4, socket.MSG_WAITALL))[0]
    body = conn.recv(n, socket.MSG_WAITALL)
    if mode == "gone":
        fields, i = {}, 0
        while i + 4 <= len(body):
            fl = struct.unpack("<I", body[i:i + 4])[0]
            k, _, v = body[i + 4:i + 4 + fl].decode().partition("=")
            fields[k] = v
            i += 4 + fl
        code, msg, sub_uri = master.lookupNode(name, fields["callerid"])
        assert code == 1, msg
        xmlrpc.client.ServerProxy(sub_uri).publisherUpdate("/master", topic, [])
        seen = requests[0]
        full = header({"callerid": name, "topic": topic, "md5sum": MD5})
        conn.sendall(full[: len(full) // 2])
        conn.shutdown(socket.SHUT_WR)
        until_closed(conn)
        conns, end = 0, time.monotonic() + 2  # the back-off: 100, 200, 400, 800 ms
        try:
            while time.monotonic() < end:
                tcp.settimeout(end - time.monotonic())
                c, _ = tcp.accept()
                conns += 1
                c.close()
        except (socket.timeout, OSError, ValueError):
            pass
        print(f"after the update: {requests[0] - seen} requests, {conns} connections", flush=True)
        master.unregisterPublisher(name, topic, uri)
    elif mode == "huge":
        conn.sendall(header({"callerid": name, "topic": topic, "type": "std_msgs/String",
                             "md5sum": MD5, "latching": "0"}))
        conn.sendall(struct.pack("<I", 0xFFFFFFFF) + b"x" * 16)
        until_closed(conn)
        master.unregisterPublisher(name, topic, uri)
    else:
        master.unregisterPublisher(name, topic, uri)
        full = header({"callerid": name, "topic": topic, "md5sum": MD5})
        tcp.settimeout(2)
        while conn is not None:
            conn.sendall(full[: len(full) // 2])
            conn.shutdown(socket.SHUT_WR)  # the rest never comes
            until_closed(conn)
            try:
                conn, _ = tcp.accept()  # the subscriber trying again before publisherUpdate
                conn.settimeout(5)
                n = struct.unpack("<I", conn.recv(4, socket.MSG_WAITALL))[0]
                conn.recv(n, socket.MSG_WAITALL)
            except (socket.timeout, OSError, struct.error):
                conn = None
    print("done", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
