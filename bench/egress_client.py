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


def measure(host, echo_port, http_port, n, downloads):
    connects = []
    for _ in range(n):
        t0 = time.perf_counter()
        s = socket.create_connection((host, echo_port), timeout=30)
        connects.append((time.perf_counter() - t0) * 1e3)
        s.close()
    # By the address an earlier lookup gave: the connect alone, no name resolution.
    address = socket.getaddrinfo(host, echo_port, socket.AF_INET, socket.SOCK_STREAM)[0][4][0]
    by_address = []
    for _ in range(n):
        t0 = time.perf_counter()
        s = socket.create_connection((address, echo_port), timeout=30)
        by_address.append((time.perf_counter() - t0) * 1e3)
        s.close()
    mib = []
    for _ in range(downloads):
        t0 = time.perf_counter()
        c = http.client.HTTPConnection(host, http_port, timeout=60)
        c.request("GET", "/bytes/1048576")
        body = c.getresponse().read()
        c.close()
        assert len(body) == 1 << 20, len(body)
        mib.append((time.perf_counter() - t0) * 1e3)
    # urllib honours HTTP_PROXY: in a session that is the proxy's plain-HTTP path.
    via_urllib = []
    for _ in range(downloads):
        t0 = time.perf_counter()
        body = urllib.request.urlopen(f"http://{host}:{http_port}/bytes/1048576", timeout=60).read()
        assert len(body) == 1 << 20, len(body)
        via_urllib.append((time.perf_counter() - t0) * 1e3)
    return {
        "connect_ms": {"p50": _pct(connects, 0.5), "p99": _pct(connects, 0.99)},
        "connect_address_ms": {"p50": _pct(by_address, 0.5), "p99": _pct(by_address, 0.99)},
        "download_1mib_ms": {"p50": _pct(mib, 0.5), "p99": _pct(mib, 0.99)},
        "download_urllib_ms": {"p50": _pct(via_urllib, 0.5), "p99": _pct(via_urllib, 0.99)},
    }


if __name__ == "__main__":
    host, echo, port, n, d = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
    print(json.dumps(measure(host, echo, port, n, d)))
