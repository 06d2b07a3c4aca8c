#!/usr/bin/env python3
"""Generates the UDP and TCP part of data/sample.pcap over the loopback
interface: echo servers on 127.0.0.1 and ::1 and clients that talk to them.
Run by make_sample.sh inside a private network namespace."""
import socket
import threading

UDP_PORT = 5300
TCP_PORT = 5400


def udp_echo_server(family, addr, ready):
    s = socket.socket(family, socket.SOCK_DGRAM)
    s.bind((addr, UDP_PORT))
    ready.set()
    while True:
        data, peer = s.recvfrom(65535)
        if data == b"quit":
            break
        s.sendto(data, peer)
    s.close()


def tcp_echo_server(family, addr, connections, ready):
    s = socket.socket(family, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((addr, TCP_PORT))
    s.listen()
    ready.set()
    for _ in range(connections):
        c, _ = s.accept()
        c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        while True:
            data = c.recv(65535)
            if not data:
                break
            c.sendall(data)
        c.close()
    s.close()


def start(target, *args):
    ready = threading.Event()
    t = threading.Thread(target=target, args=(*args, ready))
    t.start()
    ready.wait()
    return t


def udp_client(family, addr, sizes, ip_options=None):
    s = socket.socket(family, socket.SOCK_DGRAM)
    if ip_options is not None:
        s.setsockopt(socket.IPPROTO_IP, socket.IP_OPTIONS, ip_options)
    for i, size in enumerate(sizes):
        payload = bytes((i + k) & 0xFF for k in range(size))
        s.sendto(payload, (addr, UDP_PORT))
        assert s.recvfrom(65535)[0] == payload
    s.close()


def tcp_client(family, addr, sizes):
    s = socket.socket(family, socket.SOCK_STREAM)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    s.connect((addr, TCP_PORT))
    for i, size in enumerate(sizes):
        payload = bytes((7 * i + k) & 0xFF for k in range(size))
        s.sendall(payload)
        got = b""
        while len(got) < size:
            got += s.recv(65535)
        assert got == payload
    s.close()


def main():
    servers = [
        start(udp_echo_server, socket.AF_INET, "127.0.0.1"),
        start(udp_echo_server, socket.AF_INET6, "::1"),
        start(tcp_echo_server, socket.AF_INET, "127.0.0.1", 3),
        start(tcp_echo_server, socket.AF_INET6, "::1", 2),
    ]
    udp_client(socket.AF_INET, "127.0.0.1", [16, 64, 200, 512, 1000, 1400] * 4)
    udp_client(socket.AF_INET6, "::1", [16, 100, 700, 1200] * 3)
    # NOP, NOP, NOP, end-of-options: a 24-byte IPv4 header (IHL 6).
    udp_client(socket.AF_INET, "127.0.0.1", [32, 300], ip_options=b"\x01\x01\x01\x00")
    # Larger than the 1500-byte MTU: sent as IPv4 / IPv6 fragments.
    udp_client(socket.AF_INET, "127.0.0.1", [3000])
    udp_client(socket.AF_INET6, "::1", [3000])
    for sizes in ([10, 300, 1200], [1, 2000], [500, 500, 500, 500]):
        tcp_client(socket.AF_INET, "127.0.0.1", sizes)
    for sizes in ([64, 1000], [2500]):
        tcp_client(socket.AF_INET6, "::1", sizes)
    quit_udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    quit_udp.sendto(b"quit", ("127.0.0.1", UDP_PORT))
    quit_udp6 = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
    quit_udp6.sendto(b"quit", ("::1", UDP_PORT))
    for t in servers:
        t.join()


if __name__ == "__main__":
    main()
