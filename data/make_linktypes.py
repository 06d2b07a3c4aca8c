#!/usr/bin/env python3
"""Writes the captures in data/linktypes/: frames of every size the pcap
backend must deliver and every link type it turns into Ethernet, written
byte by byte with Python's struct (see README.md, section linktypes/)."""
import os
import struct

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "linktypes")

# Link types (the numbers in a pcap file header).
LINKTYPE_NULL = 0
LINKTYPE_ETHERNET = 1
LINKTYPE_RAW = 101
LINKTYPE_LOOP = 108
LINKTYPE_LINUX_SLL = 113
LINKTYPE_IEEE802_11_RADIOTAP = 127
LINKTYPE_IPV4 = 228
LINKTYPE_IPV6 = 229
LINKTYPE_LINUX_SLL2 = 276

ETH_IPV4, ETH_IPV6, ETH_ARP, ETH_VLAN = 0x0800, 0x86DD, 0x0806, 0x8100
TS_SEC = 1796234182  # the epoch second of data/sample.pcap


def checksum(data):
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack("!%dH" % (len(data) // 2), data))
    while s > 0xFFFF:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def fill(n, seed):
    return bytes((seed + i) & 0xFF for i in range(n))


def ipv4_udp(payload_len, seed=0, total_len=None):
    """An IPv4/UDP packet 10.0.0.1:4000 -> 10.0.0.2:5000+seed."""
    payload = fill(payload_len, seed)
    udp_len = 8 + payload_len
    udp = struct.pack("!HHHH", 4000, 5000 + seed, udp_len if udp_len <= 0xFFFF else 0, 0) + payload
    length = 20 + len(udp) if total_len is None else total_len
    hdr = struct.pack("!BBHHHBBH4s4s", 0x45, 0, length, seed, 0, 64, 17, 0, bytes([10, 0, 0, 1]), bytes([10, 0, 0, 2]))
    hdr = hdr[:10] + struct.pack("!H", checksum(hdr)) + hdr[12:]
    return hdr + udp


def ipv6_udp(payload_len, seed=0):
    """An IPv6/UDP packet fd00::1:4000 -> fd00::2:5000+seed, with a valid checksum."""
    src, dst = bytes.fromhex("fd00" + "00" * 13 + "01"), bytes.fromhex("fd00" + "00" * 13 + "02")
    payload = fill(payload_len, seed)
    udp_len = 8 + payload_len
    pseudo = src + dst + struct.pack("!IxxxB", udp_len, 17)
    udp = struct.pack("!HHHH", 4000, 5000 + seed, udp_len, 0) + payload
    udp = udp[:6] + struct.pack("!H", checksum(pseudo + udp) or 0xFFFF) + udp[8:]
    return struct.pack("!IHBB16s16s", 0x60000000, udp_len, 17, 64, src, dst) + udp


def ipv6_jumbogram(payload_len):
    """An IPv6 jumbogram (RFC 2675): payload length 0 and a hop-by-hop Jumbo
    Payload option with the real length, as BIG TCP/GRO hand to a capture."""
    src, dst = bytes.fromhex("fd00" + "00" * 13 + "01"), bytes.fromhex("fd00" + "00" * 13 + "02")
    udp = struct.pack("!HHHH", 4000, 5000, 0, 0) + fill(payload_len, 7)
    hop_by_hop = struct.pack("!BBBBI", 17, 0, 0xC2, 4, 8 + len(udp))
    return struct.pack("!IHBB16s16s", 0x60000000, 0, 0, 64, src, dst) + hop_by_hop + udp


def arp_request():
    return struct.pack("!HHBBH6s4s6s4s", 1, ETH_IPV4, 6, 4, 1, bytes.fromhex("020000000001"), bytes([10, 0, 0, 1]),
                       bytes(6), bytes([10, 0, 0, 2]))


def stp_llc():
    """An 802.2 LLC frame body (DSAP/SSAP 0x42: spanning tree), 38 bytes."""
    return bytes([0x42, 0x42, 0x03]) + bytes(35)


def vlan(vid, ethertype, body):
    return struct.pack("!HH", vid, ethertype) + body


def ethernet(ethertype, body):
    return bytes.fromhex("020000000002") + bytes.fromhex("020000000001") + struct.pack("!H", ethertype) + body


MAC1 = bytes.fromhex("020000000001")
SLL_HOST, SLL_BROADCAST, SLL_MULTICAST, SLL_OUTGOING = 0, 1, 2, 4
ARPHRD_ETHER, ARPHRD_LOOPBACK, ARPHRD_NETLINK = 1, 772, 824


def sll(pkttype, protocol, body, hatype=ARPHRD_ETHER, addr=MAC1):
    return struct.pack("!HHH8sH", pkttype, hatype, len(addr), addr.ljust(8, b"\0"), protocol) + body


def sll2(pkttype, protocol, body, hatype=ARPHRD_ETHER, addr=MAC1, ifindex=2):
    return struct.pack("!HHIHBB8s", protocol, 0, ifindex, hatype, pkttype, len(addr), addr.ljust(8, b"\0")) + body


def write(name, linktype, records, snaplen=262144, big_endian=False):
    """records: frame bytes, or (bytes, wire length) for a frame cut at capture,
    or (bytes, wire length, caplen in the record header) for a lying header."""
    order = ">" if big_endian else "<"
    out = [struct.pack(order + "IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, snaplen, linktype)]
    for i, r in enumerate(records):
        data, wire, caplen = (r, len(r), len(r)) if isinstance(r, bytes) else (r + (len(r[0]),))[:3]
        out.append(struct.pack(order + "IIII", TS_SEC, 1000 * i, caplen, wire) + data)
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(b"".join(out))


def main():
    os.makedirs(OUT, exist_ok=True)

    # Frames beyond 9216 bytes, up to a 64 KiB loopback frame and an IPv6
    # jumbogram, a zero-length record and a frame cut by the capture's snaplen.
    write("jumbo.pcap", LINKTYPE_ETHERNET, [
        ethernet(ETH_IPV4, ipv4_udp(18)),                          # 60
        ethernet(ETH_IPV4, ipv4_udp(9217 - 42, 1)),                # 9217: one byte over 9216
        b"",                                                       # zero-length record
        ethernet(ETH_IPV4, ipv4_udp(65535 - 28, 2)),               # 65549: IPv4 at 65535, loopback MTU
        ethernet(ETH_IPV6, ipv6_jumbogram(66000)),                 # 66070: IPv6 jumbogram
        (ethernet(ETH_IPV4, ipv4_udp(4000 - 42, 3))[:1000], 4000),  # captured with snaplen 1000
    ])

    # A record longer than the file's snaplen (128), then a record cut short
    # by the end of the file: libpcap reads the long record's first 128
    # bytes and skips the rest; the error names the last record's offset.
    long_frame = ethernet(ETH_IPV4, ipv4_udp(300 - 42, 1))
    last = ethernet(ETH_IPV4, ipv4_udp(200 - 42, 3))
    write("snaplen_cut.pcap", LINKTYPE_ETHERNET, [
        ethernet(ETH_IPV4, ipv4_udp(18)),       # record 0 at 24, 60 bytes
        long_frame,                             # record 1 at 100, 300 bytes > snaplen
        ethernet(ETH_IPV4, ipv4_udp(98 - 42, 2)),  # record 2 at 416, 98 bytes
        (last[:50], 200, 200),                  # record 3 at 530: header says 200, file ends after 50
    ], snaplen=128)

    common = [
        (SLL_HOST, ETH_IPV4, ipv4_udp(100), {}),
        (SLL_OUTGOING, ETH_IPV6, ipv6_udp(100, 1), {}),
        (SLL_BROADCAST, ETH_ARP, arp_request(), {}),
        (SLL_MULTICAST, 0x0004, stp_llc(), {}),                   # 802.2 LLC: no EtherType
        (SLL_HOST, ETH_VLAN, vlan(100, ETH_IPV4, ipv4_udp(40, 2)), {}),
        (SLL_HOST, ETH_IPV4, ipv4_udp(30, 3), {"hatype": ARPHRD_LOOPBACK, "addr": bytes(6)}),
        (SLL_HOST, 0, bytes(20), {"hatype": ARPHRD_NETLINK, "addr": b""}),  # netlink: malformed
    ]
    write("sll.pcap", LINKTYPE_LINUX_SLL,
          [sll(t, p, b, **kw) for t, p, b, kw in common] + [bytes(10), b""])  # short: malformed; empty
    write("sll2.pcap", LINKTYPE_LINUX_SLL2,
          [sll2(t, p, b, **kw) for t, p, b, kw in common] + [bytes(12), b""])

    # BSD loopback: a 4-byte address family; NULL in the writer's byte order
    # (both files), LOOP in network order. AF_INET6 is 24, 28 or 30 by OS.
    def null_records(pack):
        return [pack(2) + ipv4_udp(64), pack(24) + ipv6_udp(64, 1), pack(28) + ipv6_udp(32, 2),
                pack(30) + ipv6_udp(16, 3), pack(7) + ipv4_udp(8)]  # family 7: malformed
    write("null-le.pcap", LINKTYPE_NULL, null_records(lambda af: struct.pack("<I", af)))
    write("null-be.pcap", LINKTYPE_NULL, null_records(lambda af: struct.pack(">I", af)), big_endian=True)
    write("loop.pcap", LINKTYPE_LOOP, [struct.pack(">I", 2) + ipv4_udp(64), struct.pack(">I", 24) + ipv6_udp(64, 1),
                                        struct.pack(">I", 99) + ipv4_udp(8)])

    # Raw IP: RAW takes either version; IPV4 and IPV6 only their own.
    write("raw.pcap", LINKTYPE_RAW, [ipv4_udp(64), ipv6_udp(64, 1), bytes([0x50]) + bytes(39)])  # version 5: malformed
    write("ipv4.pcap", LINKTYPE_IPV4, [ipv4_udp(64), ipv4_udp(1400, 1), ipv6_udp(10, 2)])  # IPv6 here: malformed
    write("ipv6.pcap", LINKTYPE_IPV6, [ipv6_udp(64), ipv6_udp(1400, 1)])

    # A link type gnio refuses: Wi-Fi in monitor mode (radiotap + 802.11).
    radiotap = struct.pack("<BBHI", 0, 0, 8, 0)
    beacon = bytes([0x80, 0]) + bytes(2) + b"\xff" * 6 + MAC1 + MAC1 + bytes(2)
    write("radiotap.pcap", LINKTYPE_IEEE802_11_RADIOTAP, [radiotap + beacon])


if __name__ == "__main__":
    main()
