"""The plain Python peer bench/peers.js races vis against: the staged python3 answering JSON
lines, one reply per request, with nothing between the socket and the interpreter. Run
`peer_worker.py socket` it talks over fd 3 (a socketpair Node made); run `peer_worker.py stdio`
it talks over stdin/stdout (how python-shell drives a script).

Requests: {"op": "exec", "code": ...} compiles and runs the code in one namespace;
{"op": "echo", "value": s} answers str(s); {"op": "hostcalls", "n": n} makes n calls to the
host ({"call": "ping"} out, one line back) and answers each one's time in ns, measured here as
vis measures its host calls inside Python."""

import json
import socket
import sys
import time


def _channel(kind):
    if kind == "socket":
        sock = socket.socket(fileno=3)
        return sock.makefile("rb"), sock.sendall
    out = sys.stdout.buffer

    def send(data):
        out.write(data)
        out.flush()

    return sys.stdin.buffer, send


def main():
    reader, send = _channel(sys.argv[1] if len(sys.argv) > 1 else "stdio")
    namespace = {}
    for line in reader:
        req = json.loads(line)
        op = req.get("op")
        if op == "exec":
            exec(req["code"], namespace)
            reply = {"ok": True}
        elif op == "echo":
            reply = {"value": str(req["value"])}
        elif op == "hostcalls":
            times = []
            for _ in range(req["n"]):
                t = time.perf_counter_ns()
                send(b'{"call": "ping"}\n')
                json.loads(reader.readline())
                times.append(time.perf_counter_ns() - t)
            reply = {"ns": times}
        else:
            reply = {"error": f"unknown op {op!r}"}
        send(json.dumps(reply).encode() + b"\n")


if __name__ == "__main__":
    main()
