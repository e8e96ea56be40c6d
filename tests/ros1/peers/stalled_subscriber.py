#!/usr/bin/python3
"""A subscriber that stops reading, for the publisher's full-queue test: asks NODE_URI for TOPIC
(requestTopic), sends a correct TCPROS header, reads the answer, prints "connected" and then
never reads again (until killed, or 60 s)."""
import socket
import struct
import sys
import time
import xmlrpc.client


def header(fields: dict) -> bytes:
    body = b"".join(struct.pack("<I", len(f)) + f for f in (f"{k}={v}".encode() for k, v in fields.items()))
    return struct.pack("<I", len(body)) + body


def main() -> int:
    node_uri, topic, md5 = sys.argv[1], sys.argv[2], sys.argv[3]
    code, _, proto = xmlrpc.client.ServerProxy(node_uri).requestTopic("/stalled", topic, [["TCPROS"]])
    if code != 1:
        return 1
    s = socket.create_connection((proto[1], proto[2]))
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.sendall(header({"callerid": "/stalled", "topic": topic, "md5sum": md5, "type": "std_msgs/String"}))
    n = struct.unpack("<I", s.recv(4, socket.MSG_WAITALL))[0]
    s.recv(n, socket.MSG_WAITALL)
    print("connected", flush=True)
    time.sleep(60)
    return 0


if __name__ == "__main__":
    sys.exit(main())
