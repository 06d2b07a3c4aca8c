#!/usr/bin/env python3
"""Writes data/jumbo/echo.pcap: frames longer than a standard TX staging
slot (9000-byte and 64 KiB jumbo frames, IPv4 and IPv6, ICMP echo requests
and UDP) between 10.77.0.2 / fd77::2 (02:00:00:00:00:02) and 10.77.0.1 /
fd77::1 (02:00:00:00:00:01), with valid checksums, written byte by byte
with Python's struct (see README.md, section jumbo/). The echo example and
`gnio run --tx` must send every one of them back."""
import os
import struct

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "jumbo")
LINKTYPE_ETHERNET = 1
ETH_IPV4, ETH_IPV6 = 0x0800, 0x86DD
TS_SEC = 1796234182  # the epoch second of data/sample.pcap
CLIENT_MAC, SERVER_MAC = bytes.fromhex("020000000002"), bytes.fromhex("020000000001")
CLIENT4, SERVER4 = bytes([10, 77, 0, 2]), bytes([10, 77, 0, 1])
CLIENT6, SERVER6 = bytes.fromhex("fd77" + "00" * 13 + "02"), bytes.fromhex("fd77" + "00" * 13 + "01")


def checksum(data):
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack("!%dH" % (len(data) // 2), data))
    while s > 0xFFFF:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def fill(n, seed):
    return bytes((seed * 31 + i * 7 + (i >> 8)) & 0xFF for i in range(n))


def ipv4(proto, body, ident):
    hdr = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(body), ident, 0, 64, proto, 0, CLIENT4, SERVER4)
    return hdr[:10] + struct.pack("!H", checksum(hdr)) + hdr[12:] + body


def ipv6(next_header, body):
    return struct.pack("!IHBB16s16s", 0x60000000, len(body), next_header, 64, CLIENT6, SERVER6) + body


def udp(payload, pseudo):
    u = struct.pack("!HHHH", 4000, 5000, 8 + len(payload), 0) + payload
    return u[:6] + struct.pack("!H", checksum(pseudo + u) or 0xFFFF) + u[8:]


def pseudo4(length, proto):
    return CLIENT4 + SERVER4 + struct.pack("!xBH", proto, length)


def pseudo6(length, next_header):
    return CLIENT6 + SERVER6 + struct.pack("!IxxxB", length, next_header)


def icmp_echo(frame_len, seq):
    """An IPv4 ICMP echo request to 10.77.0.1 in a frame of frame_len bytes."""
    data = fill(frame_len - 14 - 20 - 8, seq)
    msg = struct.pack("!BBHHH", 8, 0, 0, 0x77, seq) + data
    msg = msg[:2] + struct.pack("!H", checksum(msg)) + msg[4:]
    return ethernet(ETH_IPV4, ipv4(1, msg, seq))


def icmpv6_echo(frame_len, seq):
    """An ICMPv6 echo request to fd77::1 in a frame of frame_len bytes."""
    data = fill(frame_len - 14 - 40 - 8, seq)
    msg = struct.pack("!BBHHH", 128, 0, 0, 0x77, seq) + data
    msg = msg[:2] + struct.pack("!H", checksum(pseudo6(len(msg), 58) + msg)) + msg[4:]
    return ethernet(ETH_IPV6, ipv6(58, msg))


def udp4(frame_len, seq):
    payload = fill(frame_len - 14 - 20 - 8, seq)
    return ethernet(ETH_IPV4, ipv4(17, udp(payload, pseudo4(8 + len(payload), 17)), seq))


def udp6(frame_len, seq):
    payload = fill(frame_len - 14 - 40 - 8, seq)
    return ethernet(ETH_IPV6, ipv6(17, udp(payload, pseudo6(8 + len(payload), 17))))


def ethernet(ethertype, body):
    return SERVER_MAC + CLIENT_MAC + struct.pack("!H", ethertype) + body


def write(name, frames):
    out = [struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 262144, LINKTYPE_ETHERNET)]
    for i, f in enumerate(frames):
        out.append(struct.pack("<IIII", TS_SEC, 1000 * i, len(f), len(f)) + f)
    with open(os.path.join(OUT, name), "wb") as fh:
        fh.write(b"".join(out))


def main():
    os.makedirs(OUT, exist_ok=True)
    frames = [
        udp4(60, 1),            # a small frame first: the queue still sends those
        icmp_echo(9000, 2),     # jumbo: 9000-byte frames, IPv4 and IPv6
        icmpv6_echo(9000, 3),
        udp4(9000, 4),
        icmp_echo(65536, 5),    # 64 KiB: IPv4 total length 65522
        udp6(65536, 6),         # 64 KiB: IPv6 payload length 65482
    ]
    assert [len(f) for f in frames] == [60, 9000, 9000, 9000, 65536, 65536]
    write("echo.pcap", frames)


if __name__ == "__main__":
    main()
