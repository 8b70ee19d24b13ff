"""Network egress from blocks.

The worker's network namespace has only loopback; its one way out is the relay on
127.0.0.1:<VIS_EGRESS_PORT> to the host's egress proxy, which evaluates the session's
network policy, resolves names itself and dials only addresses it checked. This module
makes every ordinary client use that way out:

- socket.getaddrinfo(name, ...) asks the proxy (/.vis/resolve): the answer is the
  addresses the host resolved and checked; a name the policy refuses is never looked up
  and raises PermissionError naming the destination and the rule;
- socket.socket.connect/connect_ex of a TCP socket to anything but the relay opens an
  HTTP CONNECT tunnel through the proxy and puts it in place of the socket's descriptor,
  so create_connection, http.client, ssl, asyncio.open_connection... work unchanged;
- proxy-aware clients (urllib, pip, curl in the shell) use HTTP(S)_PROXY, the same proxy.

None of this is a boundary: a guest that bypasses it reaches nothing, because nothing
but the relay is routable from the namespace and the proxy decides every connection.
"""

import errno
import ipaddress
import json
import os
import socket
import urllib.parse

_real_connect = socket.socket.connect
_real_connect_ex = socket.socket.connect_ex
_real_sendto = socket.socket.sendto
_real_sendmsg = socket.socket.sendmsg
_real_getaddrinfo = socket.getaddrinfo
_real_gethostbyname = socket.gethostbyname
_real_gethostbyname_ex = socket.gethostbyname_ex

_PORT = 0
# In a tool jail (VIS_EGRESS_LOCAL=1) loopback is the session's own tool network, where a
# background server of an earlier command listens: `localhost` and loopback addresses
# stay local there. A worker has nothing of its own on loopback: all goes to the proxy.
_LOCAL = False
_LOCAL_NAMES = ("localhost", "localhost.localdomain", "ip6-localhost", "ip6-loopback")
_SERVICES = {"http": 80, "https": 443, "ftp": 21, "ssh": 22, "smtp": 25, "imap": 143, "imaps": 993}
_HANDSHAKE_TIMEOUT = 60.0


def _relay():
    return ("127.0.0.1", _PORT)


def _is_numeric(host) -> bool:
    if isinstance(host, bytes):
        host = host.decode("ascii", "replace")
    try:
        socket.inet_pton(socket.AF_INET6 if ":" in host else socket.AF_INET, host.split("%")[0])
        return True
    except (OSError, ValueError):
        return False


def _port_number(port):
    if port is None or isinstance(port, int):
        return port
    text = port.decode() if isinstance(port, bytes) else str(port)
    if text.isdigit():
        return int(text)
    if text in _SERVICES:
        return _SERVICES[text]
    raise socket.gaierror(socket.EAI_SERVICE, f"vis: unknown service {text!r} (give a port number)")


def _read_head(sock) -> bytes:
    """Bytes up to the end of an HTTP response head, without reading past it."""
    head = b""
    while not head.endswith(b"\r\n\r\n"):
        b = sock.recv(1)
        if not b:
            break
        head += b
        if len(head) > 65536:
            break
    return head


def _status(head: bytes):
    line = head.split(b"\r\n", 1)[0].decode("latin-1")
    parts = line.split(" ", 2)
    code = int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else 0
    length = 0
    for h in head.split(b"\r\n")[1:]:
        k, _, v = h.partition(b":")
        if k.strip().lower() == b"content-length" and v.strip().isdigit():
            length = int(v.strip())
    return code, (parts[2] if len(parts) > 2 else ""), length


def _read_body(sock, length: int) -> str:
    data = b""
    while len(data) < length:
        chunk = sock.recv(length - len(data))
        if not chunk:
            break
        data += chunk
    return data.decode("utf-8", "replace").strip()


def control(endpoint: str, params: dict, timeout: float = _HANDSHAKE_TIMEOUT) -> dict:
    """GET /.vis/<endpoint> on the egress proxy; its JSON answer."""
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        s.settimeout(timeout)
        _real_connect(s, _relay())
        query = urllib.parse.urlencode({k: v for k, v in params.items() if v is not None})
        s.sendall(f"GET /.vis/{endpoint}?{query} HTTP/1.1\r\nHost: vis-egress\r\nConnection: close\r\n\r\n".encode())
        head = _read_head(s)
        code, _, length = _status(head)
        body = _read_body(s, length)
    finally:
        s.close()
    try:
        return json.loads(body)
    except ValueError:
        return {"ok": False, "reason": f"the egress proxy answered {code}: {body[:200]}"}


def _refused(where: str, reason: str) -> PermissionError:
    return PermissionError(errno.EACCES, f"vis: network access to '{where}' refused: {reason}")


def _address(host):
    """The address a host spells, parsed to its bytes (any case, zeros, zone id, inet_aton
    form); None for a name. Only the kernel's own spellings count as local: an IPv4-mapped
    address is its IPv4 address, other IPv6 forms that carry one go to the proxy, which
    judges them (and refuses them when what they carry is refused)."""
    text = str(host).strip().removeprefix("[").removesuffix("]").split("%", 1)[0]
    try:
        ip = ipaddress.ip_address(text)
    except ValueError:
        if ":" in text:
            return None
        try:
            ip = ipaddress.IPv4Address(socket.inet_aton(text.removesuffix(".")))
        except (OSError, ValueError):
            return None
    return ip.ipv4_mapped or ip if ip.version == 6 else ip


def _is_loopback(host) -> bool:
    ip = _address(host)
    return ip is not None and ip.is_loopback


def _is_relay(host) -> bool:
    return str(host).lower() == "localhost" or _address(host) == ipaddress.IPv4Address("127.0.0.1")


def getaddrinfo(host, port, family=0, type=0, proto=0, flags=0):
    if host is None or _is_numeric(host) or flags & socket.AI_NUMERICHOST:
        return _real_getaddrinfo(host, port, family, type, proto, flags)
    name = host.decode("idna") if isinstance(host, bytes) else str(host)
    if _LOCAL and name.lower().rstrip(".") in _LOCAL_NAMES:
        return _real_getaddrinfo(host, port, family, type, proto, flags)
    number = _port_number(port)
    answer = control("resolve", {"host": name, "port": number or None})
    if not answer.get("ok"):
        where = f"{name}:{number}" if number else name
        raise _refused(where, answer.get("reason", "refused by the egress proxy"))
    out = []
    for address in answer.get("addresses", []):
        try:
            out.extend(_real_getaddrinfo(address, number, family, type, proto, flags | socket.AI_NUMERICHOST))
        except socket.gaierror:
            continue  # another family than the one asked for
    if not out:
        raise socket.gaierror(socket.EAI_ADDRFAMILY, f"vis: {name} has no address of the requested family")
    return out


def gethostbyname(host):
    if _is_numeric(host):
        return _real_gethostbyname(host)
    return getaddrinfo(host, None, socket.AF_INET, socket.SOCK_STREAM)[0][4][0]


def gethostbyname_ex(host):
    if _is_numeric(host):
        return _real_gethostbyname_ex(host)
    addresses = [a[4][0] for a in getaddrinfo(host, None, socket.AF_INET, socket.SOCK_STREAM)]
    return host, [], addresses


def _tunnel_target(sock, address):
    """(host, port) when this connect must go through the proxy; None to connect as asked."""
    if sock.family not in (socket.AF_INET, socket.AF_INET6) or not isinstance(address, tuple) or len(address) < 2:
        return None
    host, port = address[0], address[1]
    if isinstance(host, bytes):
        host = host.decode("idna")
    if port == _PORT and _is_relay(host):
        return None
    if _LOCAL and (_is_loopback(str(host)) or str(host).lower() in _LOCAL_NAMES):
        return None
    return str(host), int(port)


def _open_tunnel(host: str, port: int, timeout):
    t = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        t.settimeout(timeout if timeout else _HANDSHAKE_TIMEOUT)
        _real_connect(t, _relay())
        shown = f"[{host}]" if ":" in host else host
        t.sendall(f"CONNECT {shown}:{port} HTTP/1.1\r\nHost: {shown}:{port}\r\n\r\n".encode())
        code, text, length = _status(_read_head(t))
        if code == 200:
            return t
        body = _read_body(t, length)
    except BaseException:
        t.close()
        raise
    t.close()
    where = f"{host}:{port}"
    if code == 403:
        reason = body.removeprefix("vis egress refused: ") or text
        raise _refused(where, reason)
    raise ConnectionRefusedError(
        errno.ECONNREFUSED, f"vis: {where}: {body or text or 'the egress proxy gave no answer'}"
    )


def _udp_refused(target) -> PermissionError:
    return _refused(f"{target[0]}:{target[1]}", "only TCP leaves the sandbox (through the egress proxy); UDP does not")


def _datagram_target(sock, address):
    """(host, port) of a datagram that would leave the sandbox; None for loopback or non-inet."""
    if sock.type != socket.SOCK_DGRAM:
        return None
    target = _tunnel_target(sock, address)
    if target is None or _is_loopback(target[0]) or target[0].lower() in _LOCAL_NAMES:
        return None
    return target


def sendto(self, data, *args):
    # Unshimmed, a datagram off the sandbox fails with ENETUNREACH (or a name with a failed
    # lookup): say why instead. Loopback UDP (a guest's own local service) stays as it is.
    target = _datagram_target(self, args[-1]) if args else None
    if target is not None:
        raise _udp_refused(target)
    return _real_sendto(self, data, *args)


def sendmsg(self, buffers, *args):
    target = _datagram_target(self, args[2]) if len(args) >= 3 else None
    if target is not None:
        raise _udp_refused(target)
    return _real_sendmsg(self, buffers, *args)


def connect(self, address):
    target = _tunnel_target(self, address)
    if target is None:
        return _real_connect(self, address)
    if self.type != socket.SOCK_STREAM:
        raise _udp_refused(target)
    timeout = self.gettimeout()
    tunnel = _open_tunnel(*target, timeout)
    try:
        # The tunnel takes the socket's place: same object, the proxy's connection beneath.
        os.dup2(tunnel.fileno(), self.fileno(), inheritable=False)
    finally:
        tunnel.close()
    self.settimeout(timeout)  # the new descriptor gets the socket's blocking mode


def connect_ex(self, address):
    if _tunnel_target(self, address) is None:
        return _real_connect_ex(self, address)
    try:
        connect(self, address)
    except OSError as e:
        return e.errno or errno.ECONNREFUSED
    return 0


def install() -> bool:
    """Routes the guest's sockets through the egress proxy; False when the network is off."""
    global _PORT, _LOCAL
    port = os.environ.get("VIS_EGRESS_PORT")
    if not port or not port.isdigit():
        return False
    _PORT = int(port)
    _LOCAL = os.environ.get("VIS_EGRESS_LOCAL") == "1"
    socket.getaddrinfo = getaddrinfo
    socket.gethostbyname = gethostbyname
    socket.gethostbyname_ex = gethostbyname_ex
    socket.socket.connect = connect
    socket.socket.connect_ex = connect_ex
    socket.socket.sendto = sendto
    socket.socket.sendmsg = sendmsg
    return True
