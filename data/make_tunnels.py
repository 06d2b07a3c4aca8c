#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Generates the tunnel captures under data/captures/tunnels/ that the kernel
of the machine cannot make (make_tunnels.sh calls it for each), and the
malformed tunnel headers, frame by frame with struct: Ethernet, IPv4/IPv6,
UDP, GRE, MPLS, VXLAN, GENEVE and GTP-U headers with correct lengths and
checksums, around inner DNS queries and responses, an HTTP request over TCP
and ICMP echo requests.

  make_tunnels.py OUT_DIR TYPE...   TYPE: geneve gre ipip mpls gtpu vxlan malformed
"""
import socket
import struct
import sys

MAC_A = bytes.fromhex("020000000a01")
MAC_B = bytes.fromhex("020000000a02")
IN_A = bytes.fromhex("020000000b01")
IN_B = bytes.fromhex("020000000b02")
OUT4 = ("10.99.0.1", "10.99.0.2")
OUT6 = ("fd99::1", "fd99::2")


def csum(data):
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack("!%dH" % (len(data) // 2), data))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return (~s) & 0xFFFF


def a4(x):
    return socket.inet_pton(socket.AF_INET, x)


def a6(x):
    return socket.inet_pton(socket.AF_INET6, x)


def ipv4(src, dst, proto, payload, ident=1):
    h = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(payload), ident, 0x4000, 64, proto, 0, a4(src), a4(dst))
    return h[:10] + struct.pack("!H", csum(h)) + h[12:] + payload


def ipv6(src, dst, nh, payload):
    return struct.pack("!IHBB16s16s", 0x60000000, len(payload), nh, 64, a6(src), a6(dst)) + payload


def pseudo(src, dst, proto, length):
    if ":" in src:
        return a6(src) + a6(dst) + struct.pack("!IxxxB", length, proto)
    return a4(src) + a4(dst) + struct.pack("!xBH", proto, length)


def udp(src, dst, sport, dport, payload):
    h = struct.pack("!HHHH", sport, dport, 8 + len(payload), 0)
    c = csum(pseudo(src, dst, 17, len(h) + len(payload)) + h + payload) or 0xFFFF
    return h[:6] + struct.pack("!H", c) + payload


def tcp(src, dst, sport, dport, seq, ack, flags, payload=b""):
    h = struct.pack("!HHIIBBHHH", sport, dport, seq, ack, 5 << 4, flags, 64240, 0, 0)
    c = csum(pseudo(src, dst, 6, len(h) + len(payload)) + h + payload)
    return h[:16] + struct.pack("!H", c) + h[18:] + payload


def icmp_echo(src, dst, ident, seq):
    data = bytes(range(32))
    if ":" in src:
        h = struct.pack("!BBHHH", 128, 0, 0, ident, seq)
        c = csum(pseudo(src, dst, 58, len(h) + len(data)) + h + data)
        return 58, h[:2] + struct.pack("!H", c) + h[4:] + data
    h = struct.pack("!BBHHH", 8, 0, 0, ident, seq)
    return 1, h[:2] + struct.pack("!H", csum(h + data)) + h[4:] + data


def dns(ident, name, response):
    q = b"".join(bytes([len(l)]) + l.encode() for l in name.split(".")) + b"\0" + struct.pack("!HH", 1, 1)
    if not response:
        return struct.pack("!HHHHHH", ident, 0x0100, 1, 0, 0, 0) + q
    answer = b"\xc0\x0c" + struct.pack("!HHIH", 1, 1, 300, 4) + a4("192.0.2.80")
    return struct.pack("!HHHHHH", ident, 0x8180, 1, 1, 0, 0) + q + answer


def ip_packet(src, dst, proto, payload, ident=1):
    return ipv6(src, dst, proto, payload) if ":" in src else ipv4(src, dst, proto, payload, ident)


def conversation(src, dst, tag):
    """Inner IP packets of one conversation pair: a DNS query and its
    response, a TCP handshake and an HTTP request, an ICMP echo request."""
    name = "tunnel-%s.example" % tag
    ident = 0x1000 + sum(tag.encode())
    out = [
        ip_packet(src, dst, 17, udp(src, dst, 40053, 53, dns(ident, name, False))),
        ip_packet(dst, src, 17, udp(dst, src, 53, 40053, dns(ident, name, True))),
        ip_packet(src, dst, 6, tcp(src, dst, 40080, 80, 1000, 0, 0x02)),
        ip_packet(dst, src, 6, tcp(dst, src, 80, 40080, 5000, 1001, 0x12)),
        ip_packet(src, dst, 6, tcp(src, dst, 40080, 80, 1001, 5001, 0x18,
                                  ("GET /%s HTTP/1.1\r\nHost: www.%s\r\n\r\n" % (tag, name)).encode())),
    ]
    proto, msg = icmp_echo(src, dst, 7, 1)
    out.append(ip_packet(src, dst, proto, msg))
    return out


def eth(dst, src, etype, payload):
    return dst + src + struct.pack("!H", etype) + payload


def ip_etype(pkt):
    return 0x86DD if pkt[0] >> 4 == 6 else 0x0800


def outer_udp(dport, payload, sport=49152, v6=False):
    s, d = OUT6 if v6 else OUT4
    return eth(MAC_B, MAC_A, 0x86DD if v6 else 0x0800, ip_packet(s, d, 17, udp(s, d, sport, dport, payload)))


def outer_ip(proto, payload, v6=False):
    s, d = OUT6 if v6 else OUT4
    return eth(MAC_B, MAC_A, 0x86DD if v6 else 0x0800, ip_packet(s, d, proto, payload))


def inner_eth(pkt):
    return eth(IN_B, IN_A, ip_etype(pkt), pkt)


def vxlan(vni, frame):
    return struct.pack("!BxxxI", 0x08, vni << 8) + frame


def geneve(vni, ptype, payload, options=b""):
    return struct.pack("!BBHI", len(options) // 4, 0, ptype, vni << 8) + options + payload


def gre(ptype, payload, key=None, seq=None, checksum=False):
    flags = (0x8000 if checksum else 0) | (0x2000 if key is not None else 0) | (0x1000 if seq is not None else 0)
    h = struct.pack("!HH", flags, ptype)
    rest = (struct.pack("!I", key) if key is not None else b"") + (struct.pack("!I", seq) if seq is not None else b"")
    if checksum:
        c = csum(h + b"\0\0\0\0" + rest + payload)
        h += struct.pack("!HH", c, 0)
    return h + rest + payload


def mpls(labels, payload):
    out = b""
    for i, label in enumerate(labels):
        out += struct.pack("!I", (label << 12) | ((1 if i == len(labels) - 1 else 0) << 8) | 64)
    return out + payload


def gtpu(teid, payload, mtype=0xFF, seq=None, ext=None):
    """ext: a list of (type, content) extension headers; content + 2 bytes is a multiple of 4."""
    opt = b""
    flags = 0x30
    if seq is not None or ext:
        flags |= (0x02 if seq is not None else 0) | (0x04 if ext else 0)
        opt = struct.pack("!HBB", seq or 0, 0, ext[0][0] if ext else 0)
        for i, (_, content) in enumerate(ext or []):
            nxt = ext[i + 1][0] if i + 1 < len(ext) else 0
            body = content + bytes([nxt])
            opt += bytes([(len(body) + 1) // 4]) + body
    return struct.pack("!BBHI", flags, mtype, len(opt) + len(payload), teid) + opt + payload


# The inner conversations: IPv4 in the first tunnel id, IPv6 in the second.
INNER4 = ("192.168.50.1", "192.168.50.2")
INNER6 = ("fd50::1", "fd50::2")


def frames_vxlan():
    out = [outer_udp(4789, vxlan(100, inner_eth(p)), 49152 + i) for i, p in enumerate(conversation(*INNER4, "vxlan100"))]
    out += [outer_udp(4789, vxlan(200, inner_eth(p)), 50152 + i) for i, p in enumerate(conversation(*INNER6, "vxlan200"))]
    return out


def frames_geneve():
    opt = struct.pack("!HBB", 0x0102, 0x80, 1) + b"\x01\x02\x03\x04"  # one option of 4 data bytes
    out = [outer_udp(6081, geneve(300, 0x6558, inner_eth(p), opt), 49200 + i)
           for i, p in enumerate(conversation(*INNER4, "geneve300"))]
    out += [outer_udp(6081, geneve(301, ip_etype(p), p), 49300 + i) for i, p in enumerate(conversation(*INNER6, "geneve301"))]
    return out


def frames_gre():
    out = [outer_ip(47, gre(ip_etype(p), p, key=1001)) for p in conversation(*INNER4, "gre1001")]
    out += [outer_ip(47, gre(0x6558, inner_eth(p), key=1002, seq=i + 1)) for i, p in enumerate(conversation(*INNER6, "gre1002"))]
    out += [outer_ip(47, gre(ip_etype(p), p, key=1003, checksum=True), v6=True) for p in conversation(*INNER4, "gre1003")[:2]]
    out += [outer_ip(47, gre(ip_etype(p), p)) for p in conversation(*INNER4, "grenokey")[:2]]
    return out


def frames_ipip():
    out = []
    for v6_out, inner, tag in ((False, INNER4, "4in4"), (False, INNER6, "6in4"), (True, INNER4, "4in6"), (True, INNER6, "6in6")):
        for p in conversation(*inner, tag)[:2]:
            out.append(outer_ip(4 if p[0] >> 4 == 4 else 41, p, v6=v6_out))
    return out


def frames_mpls():
    out = [eth(MAC_B, MAC_A, 0x8847, mpls([16], p)) for p in conversation(*INNER4, "mpls16")]
    out += [eth(MAC_B, MAC_A, 0x8847, mpls([17, 1001], p)) for p in conversation(*INNER6, "mpls17")]
    return out


def frames_gtpu():
    ue4, ue6, server4, server6 = "10.45.0.2", "2001:db8:45::2", "198.51.100.10", "2001:db8:100::10"
    out = [outer_udp(2152, gtpu(0x1234ABCD, p), 2152) for p in conversation(ue4, server4, "teid1")]
    # An uplink PDU session container (type 0x85, 3GPP TS 38.415) and a sequence number.
    ext = [(0x85, b"\x10\x09")]
    out += [outer_udp(2152, gtpu(0x00000042, p, seq=i + 1, ext=ext), 2152) for i, p in enumerate(conversation(ue6, server6, "teid2"))]
    out.append(outer_udp(2152, gtpu(0, b"", mtype=1, seq=7), 2152))  # echo request: not a G-PDU
    return out


def frames_malformed():
    """One frame per tunnel reason, in the order of reason.hpp."""
    dns_q = conversation(*INNER4, "bad")[0]
    e = inner_eth(dns_q)
    return [
        eth(MAC_B, MAC_A, 0x8847, struct.pack("!I", (16 << 12) | 64)[:3]),       # mpls_stack_cut
        eth(MAC_B, MAC_A, 0x8847, b"".join(struct.pack("!I", (16 + i) << 12 | 64) for i in range(9)) + dns_q),
        # mpls_stack_too_deep: nine labels, none the bottom of the stack
        outer_ip(47, b"\x20\x00\x08"),                                             # gre_header_cut
        outer_ip(47, struct.pack("!HH", 0x0002, 0x0800) + dns_q),                  # gre_bad_version (2)
        outer_ip(47, struct.pack("!HH", 0x4000, 0x0800) + dns_q),                  # gre_bad_flags (routing)
        outer_udp(4789, b"\x08\x00\x00\x00\x00\x00"),                               # vxlan_header_cut
        outer_udp(4789, struct.pack("!BxxxI", 0x00, 100 << 8) + e),                 # vxlan_bad_flags
        outer_udp(6081, struct.pack("!BBHI", 4, 0, 0x6558, 300 << 8) + b"\0" * 8),  # geneve_header_cut (options)
        outer_udp(6081, struct.pack("!BBHI", 0x40, 0, 0x6558, 300 << 8) + e),       # geneve_bad_version
        outer_udp(2152, b"\x30\xff\x00"),                                           # gtpu_header_cut
        outer_udp(2152, bytes([0x50]) + gtpu(5, dns_q)[1:]),                        # gtpu_bad_version (2)
        outer_udp(2152, gtpu(5, dns_q)[:2] + struct.pack("!H", len(dns_q) + 40) + gtpu(5, dns_q)[4:]),  # gtpu_bad_length
        outer_udp(2152, struct.pack("!BBHI", 0x34, 0xFF, 4 + 4 + len(dns_q), 5) + b"\0\0\0\x85"
                  + b"\x00\x00\x00\x00" + dns_q),                                   # gtpu_ext_length (length 0)
    ]


def write_pcap(path, frames):
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
        for i, fr in enumerate(frames):
            f.write(struct.pack("<IIII", 1700000000 + i, 1000 * i, len(fr), len(fr)) + fr)


def main():
    out = sys.argv[1]
    for t in sys.argv[2:]:
        write_pcap("%s/%s.pcap" % (out, t), globals()["frames_" + t]())


if __name__ == "__main__":
    main()
