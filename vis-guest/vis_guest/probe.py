"""network_probe: how the session's network policy judges a request.

Apart from net.py, which imports socket (with selectors, urllib.parse and ipaddress behind it,
about 1 MB of an idle worker) and is loaded only in a worker whose network is on: with the
network off there is no proxy to ask, and nothing here needs a socket."""

import sys


def network_probe(url_or_host_port: str, method: str = "GET") -> None:
    """Shows how this session's network policy judges a request, sending nothing to it.

    network_probe("https://api.example.com/v1"), network_probe("example.com:22"),
    network_probe("http://example.com/upload", method="POST"). Prints the target, each
    allow/deny rule's verdict, and the final decision with its reason. A refused
    connection will be refused the same way: change the request, not the retry count."""
    target = str(url_or_host_port)
    print(f"target: {target} ({method.upper()})" if target.startswith("http://") else f"target: {target}")
    net = sys.modules.get("vis_guest.net")
    if net is None or not net._PORT:
        print("  network access is off for this session: no rule is consulted")
        print("decision: refused")
        return None
    answer = net.control("probe", {"target": target, "method": method})
    if "trace" not in answer:
        print(f"decision: cannot evaluate: {answer.get('reason')}")
        return None
    kind = "tunnel (CONNECT/raw TCP: method and path not visible)" if answer.get("tunnel") else "plain HTTP"
    print(f"  host {answer.get('host')} port {answer.get('port')}, {kind}")
    for rule in answer["trace"]:
        print(f"  {rule['list']:5} {rule['entry']}: {rule['verdict']}")
    if not answer["trace"]:
        print("  (no rules: the allow list is empty, so every public destination)")
    if answer.get("addresses"):
        print(f"  resolves to {', '.join(answer['addresses'])}")
    print(f"decision: {'allowed' if answer.get('allowed') else 'refused'}: {answer.get('reason')}")
    return None
