"""The connections a driver opens, counted on the client's side from the kernel's socket tables (Linux: the
sock_diag netlink interface, which an unprivileged process may read), so that the Conns column has figures where
no server of ours counts them (`--target`), and whatever language or library the row is in.

For one run of a driver, toward the addresses and ports its URLs name (its destinations):

- **TCP**: every socket connected or connecting to a destination while the driver ran: the ones destroyed
  meanwhile (the kernel's destroy notifications, to which the counter subscribes before the driver starts) and the
  ones still in the tables when it has exited (a dump), less those that were there before it (a dump). Each socket
  is known by its cookie, the kernel's id of it; nothing is sampled, so a connection opened and closed in a
  millisecond is counted as one kept for the whole run. A failed attempt (refused) is a socket too, and counted.
- **QUIC**: the UDP sockets connected to a destination, counted the same way (libcurl's ngtcp2 and qh3 connect one
  per QUIC connection), and with `http3`, the unconnected UDP sockets the driver's process holds: quinn (under
  reqwest, pyqwest, impit) sends each client's QUIC connections from one socket of its own, connected to nothing, so
  the kernel cannot tell where it sends; those are found by looking at the process's open files every POLL_S while
  it runs, each counted as one connection (a client has one per origin; impit's holds a second, idle one, counted
  when seen). A client made and dropped between two looks would be missed, so with a new client per request
  (`--connection new`) they are not looked for, and a run over HTTP/3 in which no QUIC socket was found has no count
  (None), never 0.

The kernel notifies a socket a little after it left the tables, from a work queue: the counter waits for the
notifications of the sockets it saw closing, and counts none received before the driver started (the runner's
own request just before it, whose notification may come late). The count is of sockets toward the destinations
from this machine: another program connecting to the same address and port during the run would be counted too
(the runner itself sends nothing while a driver runs). Elsewhere than Linux, or where the interface is missing,
counts are None and the column shows "-"."""

from __future__ import annotations

import errno
import ipaddress
import os
import select
import socket
import struct
import threading
import time
import urllib.parse
from collections.abc import Iterable
from dataclasses import dataclass

#: how often the driver's open files are looked at for unconnected UDP sockets (HTTP/3 only; a stat, and a listing
#: only when the number of open files changed, or FULL_S after the last one: a socket opened as another file closed
#: leaves the number unchanged, and a loaded machine makes that likelier by spacing the looks)
POLL_S = 0.002
FULL_S = 0.01
#: after the driver exited: how long the notifications must stay quiet before the count is taken (the kernel sends
#: them from a work queue, a little after the socket is gone from the tables)
QUIET_S = 0.02
_DRAIN_MAX_S = 1.0

_NETLINK_SOCK_DIAG = 4
_SOCK_DIAG_BY_FAMILY = 20
_NLMSG_ERROR, _NLMSG_DONE = 2, 3
_DUMP = 0x301  # NLM_F_REQUEST | NLM_F_DUMP
_SOL_NETLINK, _NETLINK_ADD_MEMBERSHIP = 270, 1
_DESTROY_GROUPS = (1, 2, 3, 4)  # SKNLGRP_INET_TCP_DESTROY, INET_UDP, INET6_TCP, INET6_UDP
_INET_DIAG_PROTOCOL = 10
_TCP_TIME_WAIT = 6
_TIMEWAIT_TIMER = 3  # idiag_timer of the kernel's timewait stand-ins (TIME_WAIT, and orphans in FIN_WAIT2)
_ALL_STATES = 0xFFFFFFFF
_HEADER = struct.Struct("=IHHII")  # nlmsghdr: length, type, flags, sequence, port id
_REQUEST = struct.Struct("=BBBxI48x")  # inet_diag_req_v2: family, protocol, extensions, states, an empty sockid
_MESSAGE_SIZE = 72  # inet_diag_msg
_TCP, _UDP = socket.IPPROTO_TCP, socket.IPPROTO_UDP

Address = tuple[str, int]


@dataclass(frozen=True)
class _Socket:
    cookie: int
    protocol: int
    state: int
    timer: int
    local: Address
    remote: Address  # ("", 0) when connected to nothing
    inode: int

    @property
    def pair(self) -> tuple[Address, Address]:
        return self.local, self.remote

    @property
    def stand_in(self) -> bool:
        """The timewait socket the kernel keeps for a TCP socket it closed (in TIME_WAIT, or FIN_WAIT2 for one its
        process closed first): it has a cookie of its own, and the socket it replaced is notified when freed."""
        return self.state == _TCP_TIME_WAIT or self.timer == _TIMEWAIT_TIMER


def destinations(urls: Iterable[str]) -> set[Address]:
    """The (address, port) pairs the URLs' hosts resolve to, where the drivers connect (IPv4 as dotted quads,
    IPv6 compressed); a host that does not resolve adds nothing."""
    out: set[Address] = set()
    for url in urls:
        parts = urllib.parse.urlsplit(url)
        if not parts.hostname:
            continue
        try:
            port = parts.port or (443 if parts.scheme.lower() == "https" else 80)
            infos = socket.getaddrinfo(parts.hostname, port, proto=socket.IPPROTO_TCP)
        except (OSError, ValueError):
            continue
        out.update((_plain(str(info[4][0])), port) for info in infos)
    return out


def _plain(address: str) -> str:
    """An address as destinations() writes it: IPv4-mapped IPv6 (a dual-stack socket's view) as IPv4."""
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        return str(ip.ipv4_mapped)
    return str(ip)


def _parse(data: bytes, offset: int, length: int, protocol: int) -> _Socket:
    family, state, timer = data[offset + 16], data[offset + 17], data[offset + 18]
    sport, dport = struct.unpack_from(">HH", data, offset + 20)
    size = 4 if family == socket.AF_INET else 16
    src, dst = data[offset + 24 : offset + 24 + size], data[offset + 40 : offset + 40 + size]
    low, high = struct.unpack_from("=II", data, offset + 60)
    inode = struct.unpack_from("=I", data, offset + 84)[0]
    at = offset + 16 + _MESSAGE_SIZE
    while at + 4 <= offset + length:  # the attributes: a destroy notification says its protocol in one
        size, kind = struct.unpack_from("=HH", data, at)
        if size < 4:
            break
        if kind == _INET_DIAG_PROTOCOL:
            protocol = data[at + 4]
        at += (size + 3) & ~3
    local = (_plain(socket.inet_ntop(family, src)), sport)
    remote = (_plain(socket.inet_ntop(family, dst)), dport) if dport else ("", 0)
    return _Socket(low | high << 32, protocol, state, timer, local, remote, inode)


def _messages(data: bytes, protocol: int = 0, ports: frozenset[int] | None = None) -> Iterable[_Socket | None]:
    """The sockets of a netlink datagram (those whose remote port is in `ports`, when given); None for its end
    (NLMSG_DONE). OSError for an error message."""
    offset = 0
    while offset + _HEADER.size <= len(data):
        length, kind = _HEADER.unpack_from(data, offset)[:2]
        if length < _HEADER.size:
            return
        if kind == _NLMSG_DONE:
            yield None
            return
        if kind == _NLMSG_ERROR:
            code = -struct.unpack_from("=i", data, offset + _HEADER.size)[0]
            raise OSError(code, os.strerror(code))
        if kind == _SOCK_DIAG_BY_FAMILY and length >= _HEADER.size + _MESSAGE_SIZE:
            if ports is None or struct.unpack_from(">H", data, offset + 22)[0] in ports:
                yield _parse(data, offset, length, protocol)
        offset += (length + 3) & ~3


def _dump(protocol: int, ports: frozenset[int] | None = None) -> list[_Socket]:
    """Every socket of `protocol` in the network namespace (with a remote port in `ports`, when given), in any
    state, both families."""
    found: list[_Socket] = []
    with socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, _NETLINK_SOCK_DIAG) as nl:
        for seq, family in enumerate((socket.AF_INET, socket.AF_INET6), 1):
            header = _HEADER.pack(_HEADER.size + _REQUEST.size, _SOCK_DIAG_BY_FAMILY, _DUMP, seq, 0)
            nl.send(header + _REQUEST.pack(family, protocol, 0, _ALL_STATES))
            done = False
            while not done:
                for s in _messages(nl.recv(1 << 20), protocol, ports):
                    if s is None:
                        done = True
                    else:
                        found.append(s)
    return found


class ConnectionCounter:
    """`start()` before a driver starts, `watch(pid)` once it runs, `stop()` when it has exited: {"tcp": n,
    "quic": m}, or None where the kernel's tables cannot be read or a count is not known."""

    def __init__(self, to: set[Address], http3: bool = False, per_client: bool = True):
        self.to = to
        self.http3 = http3
        self.per_client = per_client  # clients live for the run (not --connection new): quinn's sockets are seen
        self._ports = frozenset(port for _, port in to)
        self._baseline: set[int] = set()  # the cookies of the sockets there before the driver
        self._earlier: set[int] = set()  # those counted for an earlier run of this counter (notified late)
        self._closed_before: set[tuple[Address, Address]] = set()  # the stand-ins among them (see start())
        self._listener: socket.socket | None = None
        self._wake: tuple[socket.socket, socket.socket] | None = None  # stop() ends the reader's wait through it
        self._received: list[bytes] = []
        self._reader: threading.Thread | None = None
        self._poller: threading.Thread | None = None
        self._stopping = threading.Event()
        self._inodes: set[int] = set()  # the sockets seen in the driver's open files
        self._endpoints: dict[int, int] = {}  # its unconnected UDP sockets: cookie -> inode
        self._broken = False
        self._from = 0  # the first notification received once the driver started

    def _toward(self) -> list[_Socket]:
        """The sockets toward the destinations now, in every state."""
        return [s for p in (_TCP, _UDP) for s in _dump(p, self._ports) if s.remote in self.to]

    def start(self) -> None:
        self.stop()
        self._received, self._inodes, self._endpoints = [], set(), {}
        self._broken = False
        self._stopping.clear()
        self._from = 0
        try:
            listener = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, _NETLINK_SOCK_DIAG)
            listener.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
            listener.bind((0, 0))
            for group in _DESTROY_GROUPS:
                listener.setsockopt(_SOL_NETLINK, _NETLINK_ADD_MEMBERSHIP, group)
        except (OSError, AttributeError):  # not Linux, or no sock_diag here
            self._broken = True
            return
        self._listener, self._wake = listener, socket.socketpair()
        self._reader = threading.Thread(target=self._read, name="connection-counter", daemon=True)
        self._reader.start()
        # the notifications first, then what is there: a socket there now is known by its cookie when it goes.
        # The kernel notifies a socket a little after it left the tables (from a work queue), so a socket closed
        # just before (the runner's own request) may be notified once the driver has started: those received
        # before it started are not counted (watch()), nor, once, one for the addresses of a TIME_WAIT there now
        # (the stand-in the kernel keeps for a socket it closed, with a cookie of its own)
        try:
            before = self._toward()
        except OSError:
            self._broken = True
            return
        self._baseline = {s.cookie for s in before}
        self._closed_before = {s.pair for s in before if s.stand_in}
        self._drain(set(), set())

    def _read(self) -> None:
        """Keeps every notification as it comes (parsed at the end): the thread blocks in recv, and does nothing
        else while a driver measures."""
        assert self._listener is not None and self._wake is not None
        listener, wake = self._listener, self._wake[0]
        while True:
            ready, _, _ = select.select([listener, wake], [], [])
            if wake in ready:
                return
            try:
                self._received.append(listener.recv(65536))
            except OSError as exc:
                if exc.errno != errno.ENOBUFS:
                    raise
                self._broken = True  # notifications were lost: the count is not known

    def watch(self, pid: int) -> None:
        """The driver has started (as process `pid`): count from now on, and look for its unconnected UDP sockets
        while it runs (HTTP/3, with clients that live for the run)."""
        self._from = len(self._received)
        if not self.http3 or not self.per_client or self._broken:
            return
        self._poller = threading.Thread(target=self._poll, args=(pid,), name="connection-poller", daemon=True)
        self._poller.start()

    def _poll(self, pid: int) -> None:
        folder = f"/proc/{pid}/fd"
        last, listed = -1, 0.0
        while not self._stopping.wait(POLL_S):
            try:
                size = os.stat(folder).st_size  # the number of open files (Linux 6.2 on; 0 before: list each time)
                if size and size == last and time.monotonic() - listed < FULL_S:
                    continue
                last, listed = size, time.monotonic()
                files = os.listdir(folder)
            except OSError:  # the driver has exited
                return
            fresh = set()
            for fd in files:
                try:
                    link = os.readlink(f"{folder}/{fd}")
                except OSError:  # closed since the listing
                    continue
                if link.startswith("socket:[") and (inode := int(link[8:-1])) not in self._inodes:
                    fresh.add(inode)
            if fresh:
                try:
                    for s in _dump(_UDP, frozenset({0})):
                        if s.inode in fresh:
                            self._endpoints[s.cookie] = s.inode
                            # (one not found is looked for again at the next listing: a UDP socket listed between
                            # its socket() and its bind() is in no table yet, and was missed once under load)
                            self._inodes.add(s.inode)
                except OSError:
                    self._broken = True
                    return

    def stop(self) -> dict[str, int] | None:
        """The counts of the run (None if started on no Linux, or when some were lost); stops watching."""
        self._stopping.set()
        if self._poller is not None:
            self._poller.join(5)
            self._poller = None
        listener, self._listener = self._listener, None
        if listener is None:
            return None
        try:
            final = self._toward()
            # the sockets still closing are notified once freed (a TIME_WAIT stand-in's socket, already gone from the
            # tables, by its addresses; one whose process closed it, by its cookie): wait for those
            fresh = [s for s in final if s.cookie not in self._baseline]
            self._drain(
                {s.pair for s in fresh if s.stand_in},
                {s.cookie for s in fresh if not s.stand_in and not s.inode},
            )
        except OSError:
            final, self._broken = [], True
        finally:
            if self._wake is not None:
                self._wake[1].send(b"x")
            if self._reader is not None:
                self._reader.join(5)
                self._reader = None
            for closing in (listener, *(self._wake or ())):
                closing.close()
            self._wake = None
        if self._broken:
            return None
        seen: dict[int, int] = {}
        closed_before = set(self._closed_before)
        for s in self._gone():
            if s.cookie in self._baseline or s.cookie in self._earlier:
                continue
            if s.pair in closed_before:  # the socket a stand-in there before stood in for
                closed_before.discard(s.pair)
                continue
            seen[s.cookie] = s.protocol
        # those still there (not the stand-ins: the sockets they replaced were notified)
        seen |= {s.cookie: s.protocol for s in final if s.cookie not in self._baseline and not s.stand_in}
        self._earlier |= seen.keys()
        tcp = sum(1 for p in seen.values() if p == _TCP)
        quic = len({c for c, p in seen.items() if p == _UDP} | set(self._endpoints))
        if self.http3 and not quic:  # over HTTP/3 some QUIC socket was there: not found is not known, never 0
            return None
        return {"tcp": tcp, "quic": quic}

    def _gone(self) -> list[_Socket]:
        """The sockets toward the destinations destroyed since the driver started, as notified so far."""
        found = (s for data in self._received[self._from :] for s in _messages(data, 0, self._ports))
        return [s for s in found if s is not None and s.remote in self.to]

    def _drain(self, pairs: set[tuple[Address, Address]], cookies: set[int]) -> None:
        """Wait (at most _DRAIN_MAX_S) until the sockets of `pairs` and `cookies` were notified, and then the
        notifications have been quiet for QUIET_S: the kernel notifies a socket a little after it left the tables."""
        deadline = time.monotonic() + _DRAIN_MAX_S
        count = -1
        while time.monotonic() < deadline:
            if count == len(self._received):
                gone = self._gone()
                if not pairs - {s.pair for s in gone} and not cookies - {s.cookie for s in gone}:
                    return
            count = len(self._received)
            time.sleep(QUIET_S)
