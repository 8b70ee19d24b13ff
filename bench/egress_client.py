"""Measures one client's view of a TCP destination: connect latency (create_connection
until connected) and the time of a 1 MiB HTTP download (http.client: a CONNECT tunnel in
a session; urllib: the proxy's plain-HTTP path in a session). Run as a block in a
session (through the egress path) and by the host's python directly (the baseline) by
bench/egress.js. Prints one JSON line."""

import http.client
import json
import socket
import sys
import time
import urllib.request


def _pct(samples, q):
    s = sorted(samples)
    return s[min(len(s) - 1, int(q * len(s)))]


def _timed(n, once):
    """Milliseconds of each of n calls."""
    out = []
    for _ in range(n):
        t0 = time.perf_counter()
        once()
        out.append((time.perf_counter() - t0) * 1e3)
    return out


def _stats(samples):
    return {"p50": _pct(samples, 0.5), "p99": _pct(samples, 0.99)}


def measure(host, echo_port, http_port, n, downloads):
    def connect(target):
        socket.create_connection((target, echo_port), timeout=30).close()

    def tunnel_download():
        c = http.client.HTTPConnection(host, http_port, timeout=60)
        c.request("GET", "/bytes/1048576")
        body = c.getresponse().read()
        c.close()
        assert len(body) == 1 << 20, len(body)

    # urllib honours HTTP_PROXY: in a session that is the proxy's plain-HTTP path.
    def urllib_download():
        body = urllib.request.urlopen(f"http://{host}:{http_port}/bytes/1048576", timeout=60).read()
        assert len(body) == 1 << 20, len(body)

    # By the address an earlier lookup gave: the connect alone, no name resolution.
    address = socket.getaddrinfo(host, echo_port, socket.AF_INET, socket.SOCK_STREAM)[0][4][0]
    return {
        "connect_ms": _stats(_timed(n, lambda: connect(host))),
        "connect_address_ms": _stats(_timed(n, lambda: connect(address))),
        "download_1mib_ms": _stats(_timed(downloads, tunnel_download)),
        "download_urllib_ms": _stats(_timed(downloads, urllib_download)),
    }


if __name__ == "__main__":
    host, echo, port, n, d = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
    print(json.dumps(measure(host, echo, port, n, d)))
