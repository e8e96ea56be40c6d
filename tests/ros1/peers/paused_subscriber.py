#!/usr/bin/python3
"""A subscriber that stops reading and starts again, for the publisher's send path tests: asks
NODE_URI (or the node of that name, looked up on $ROS_MASTER_URI) for TOPIC (requestTopic), sends a correct TCPROS header, reads the answer, prints
"connected" and reads nothing until SIGUSR1. Then it reads every frame until none has come for
two seconds, checks each (a std_msgs/String "SEQ:FILL" where SEQ is 8 digits and FILL repeats
the letter chr(97 + SEQ % 26); sequence numbers strictly increasing) and prints "frames: N",
"runs: A-B,C-D,..." (the runs of consecutive sequence numbers) and "bad: WHY" for a wrong frame."""
import os
import signal
import socket
import struct
import sys
import time
import xmlrpc.client


def header(fields: dict) -> bytes:
    body = b"".join(struct.pack("<I", len(f)) + f for f in (f"{k}={v}".encode() for k, v in fields.items()))
    return struct.pack("<I", len(body)) + body


def read_exact(s: socket.socket, n: int) -> bytes:
    out = bytearray()
    while len(out) < n:
        chunk = s.recv(n - len(out))
        if not chunk:
            raise EOFError
        out += chunk
    return bytes(out)


def check(body: bytes, last: int) -> tuple[int, str]:
    if len(body) < 4 or struct.unpack("<I", body[:4])[0] != len(body) - 4:
        return -1, f"string length {len(body)} does not match its frame"
    text = body[4:]
    if len(text) < 9 or text[8:9] != b":" or not text[:8].isdigit():
        return -1, f"no sequence number in {text[:16]!r}"
    seq = int(text[:8])
    fill = text[9:]
    if fill != bytes([97 + seq % 26]) * len(fill):
        return -1, f"frame {seq}: its bytes are mixed with another frame's"
    if seq <= last:
        return -1, f"frame {seq} after {last}: out of order"
    return seq, ""


def main() -> int:
    node_uri, topic, md5 = sys.argv[1], sys.argv[2], sys.argv[3]
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR1})
    if node_uri.startswith("/"):  # a node name: its URI from the master (ROS_MASTER_URI)
        master = xmlrpc.client.ServerProxy(os.environ["ROS_MASTER_URI"])
        for _ in range(200):
            code, _, uri = master.lookupNode("/paused", node_uri)
            if code == 1:
                node_uri = uri
                break
            time.sleep(0.05)
        if node_uri.startswith("/"):
            print(f"no node {node_uri} on the master", flush=True)
            return 1
    # the node is known to the master from its first registration (/rosout, its logger services),
    # which may come before it advertises TOPIC: ask again until it publishes it (10 s)
    for _ in range(200):
        code, status, proto = xmlrpc.client.ServerProxy(node_uri).requestTopic("/paused", topic, [["TCPROS"]])
        if code == 1:
            break
        time.sleep(0.05)
    if code != 1:
        print(f"requestTopic {topic} at {node_uri}: {status}", flush=True)
        return 1
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    # a fixed receive buffer: the socket buffers hold a bounded amount while it does not read, and
    # its window is wide enough to read at speed once it does
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 65536)
    s.connect((proto[1], proto[2]))
    s.sendall(header({"callerid": "/paused", "topic": topic, "md5sum": md5, "type": "std_msgs/String"}))
    n = struct.unpack("<I", read_exact(s, 4))[0]
    read_exact(s, n)
    print("connected", flush=True)
    signal.sigwait({signal.SIGUSR1})
    s.settimeout(2.0)
    seqs: list[int] = []
    last = -1
    try:
        while True:
            n = struct.unpack("<I", read_exact(s, 4))[0]
            seq, why = check(read_exact(s, n), last)
            if why:
                print(f"bad: {why}", flush=True)
                return 1
            seqs.append(seq)
            last = seq
    except (socket.timeout, EOFError):
        pass
    runs = []
    for q in seqs:
        if runs and runs[-1][1] == q - 1:
            runs[-1][1] = q
        else:
            runs.append([q, q])
    print(f"frames: {len(seqs)}", flush=True)
    print("runs: " + ",".join(f"{a}-{b}" for a, b in runs), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
