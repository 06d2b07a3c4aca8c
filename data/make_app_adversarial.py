#!/usr/bin/env python3
"""Writes the hand-made captures of data/captures/:

adversarial.pcap: frames that lie or are cut, one reason each, in the order
of FRAMES below (the app test expects these reasons frame by frame).

vlan.pcap (only with --vlan-from, where the kernel cannot make VLAN devices):
the frames of real captures re-tagged, alternately with one 802.1Q tag (id
100) and a QinQ pair (802.1ad 200, then 802.1Q 300). Tags do not enter any
checksum, so every checksum stays what the real program sent.

Only the standard library: pcap files are written with struct.
"""
import argparse
import struct

ETH = bytes.fromhex("020000000001" "020000000002")
SRC4, DST4 = bytes([10, 77, 0, 2]), bytes([10, 77, 0, 1])
SRC6 = bytes.fromhex("fd770000000000000000000000000002")
DST6 = bytes.fromhex("fd770000000000000000000000000001")


def csum(data):
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack("!%dH" % (len(data) // 2), data))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return (~s) & 0xFFFF


def ipv4(proto, payload, ihl=5, total=None, version=4, options=b"", frag=0):
    total = 20 + len(options) + len(payload) if total is None else total
    h = struct.pack("!BBHHHBBH4s4s", (version << 4) | ihl, 0, total, 1, frag, 64, proto, 0, SRC4, DST4) + options
    h = h[:10] + struct.pack("!H", csum(h)) + h[12:]
    return ETH + b"\x08\x00" + h + payload


def l4sum4(proto, seg):
    return csum(SRC4 + DST4 + struct.pack("!BBH", 0, proto, len(seg)) + seg)


def l4sum6(proto, seg):
    return csum(SRC6 + DST6 + struct.pack("!IxxxB", len(seg), proto) + seg)


def udp(sport, dport, data, length=None, v6=False):
    length = 8 + len(data) if length is None else length
    seg = struct.pack("!HHHH", sport, dport, length, 0) + data
    c = (l4sum6 if v6 else l4sum4)(17, seg[:length] if length <= len(seg) else seg) or 0xFFFF
    return seg[:6] + struct.pack("!H", c) + seg[8:]


def tcp(sport, dport, data=b"", offset=5, options=b"", flags=0x18):
    seg = struct.pack("!HHIIBBHHH", sport, dport, 1, 1, offset << 4, flags, 65535, 0, 0) + options + data
    c = l4sum4(6, seg)
    return seg[:16] + struct.pack("!H", c) + seg[18:]


def ipv6(next_header, payload, plen=None):
    plen = len(payload) if plen is None else plen
    return ETH + b"\x86\xdd" + struct.pack("!IHBB16s16s", 0x60000000, plen, next_header, 64, SRC6, DST6) + payload


def dns_query(name, qtype=1):
    q = b"".join(bytes([len(x)]) + x.encode() for x in name.split(".")) + b"\0"
    return struct.pack("!HHHHHH", 0x1234, 0x0100, 1, 0, 0, 0) + q + struct.pack("!HH", qtype, 1)


def icmp_echo(data=b"gnio"):
    m = struct.pack("!BBHHH", 8, 0, 0, 7, 1) + data
    return m[:2] + struct.pack("!H", csum(m)) + m[4:]


# (name, frame, bytes kept in the capture or None for all). The names are
# the malformed/truncated reasons gnio reports for them.
def frames():
    udp_ok = udp(40000, 9, b"x" * 16)
    ext_chain = (bytes([60, 0]) + b"\x01\x04\0\0\0\0"      # hop-by-hop -> destination options
                 + bytes([43, 0]) + b"\x01\x04\0\0\0\0"    # destination options -> routing
                 + bytes([44, 0, 0, 0]) + b"\0\0\0\0"      # routing (type 0, segments left 0) -> fragment
                 + bytes([17, 0, 0, 0]) + b"\0\0\0\x01")   # fragment (offset 0, last) -> UDP
    udp6 = udp(40000, 9, b"y" * 8, v6=True)
    return [
        ("frame_short", ETH[:10], None),
        ("ipv4_header_cut", ipv4(17, udp_ok)[:14 + 12], None),
        ("ipv4_bad_ihl", ipv4(17, udp_ok, ihl=3), None),
        ("ipv4_bad_version", ipv4(17, udp_ok, version=5), None),
        ("ipv4_bad_total_length", ipv4(17, udp_ok, total=16), None),
        ("ipv6_header_cut", ipv6(17, udp6)[:14 + 30], None),
        ("ipv6_ext_cut", ipv6(0, ext_chain + udp6), 14 + 40 + 12),
        ("ipv6_ext_overflow", ipv6(0, b"\x11\x08" + b"\0" * 6, plen=8), None),
        ("tcp_bad_offset", ipv4(6, tcp(40000, 80, offset=3)), None),
        ("tcp_option_length", ipv4(6, tcp(40000, 80, offset=6, options=b"\x08\x00\x00\x00")), None),
        ("tcp_header_cut", ipv4(6, tcp(40000, 80, b"GET / HTTP/1.1\r\n\r\n")), 14 + 20 + 12),
        ("udp_length_over_payload", ipv4(17, udp(40000, 53, dns_query("a.gnio.test"), length=200)), None),
        ("udp_length_under_header", ipv4(17, udp(40000, 9, b"zz", length=4)), None),
        ("icmp_short", ipv4(1, struct.pack("!BBH", 8, 0, 0xF7FF)), None),
        ("dns_header_cut", ipv4(17, udp(40000, 53, b"\x12\x34\x01\x00")), None),
        ("dns_name_overflow", ipv4(17, udp(40000, 53, dns_query("a.gnio.test")[:12] + b"\x3fabc")), None),
        ("datagram_cut", ipv4(1, icmp_echo(b"p" * 64)), 14 + 20 + 20),
        ("arp_cut", ETH + b"\x08\x06" + b"\x00\x01\x08\x00\x06\x04\x00\x01", None),
        ("ok_ipv6_ext_chain", ipv6(0, ext_chain + udp6), None),
    ]


def write_pcap(path, records):
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
        for i, (frame, caplen) in enumerate(records):
            kept = frame if caplen is None else frame[:caplen]
            f.write(struct.pack("<IIII", 1796300000 + i, 0, len(kept), len(frame)))
            f.write(kept)


def read_pcap(path):
    with open(path, "rb") as f:
        data = f.read()
    magic = struct.unpack("<I", data[:4])[0]
    endian = "<" if magic in (0xA1B2C3D4, 0xA1B23C4D) else ">"
    off, out = 24, []
    while off + 16 <= len(data):
        _, _, caplen, wirelen = struct.unpack(endian + "IIII", data[off:off + 16])
        out.append(data[off + 16:off + 16 + caplen])
        off += 16 + caplen
    return out


def retag(frames_in):
    out = []
    for i, f in enumerate(frames_in):
        tags = b"\x81\x00\x00\x64" if i % 2 == 0 else b"\x88\xa8\x00\xc8" b"\x81\x00\x01\x2c"
        out.append((f[:12] + tags + f[12:], None))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="captures", help="folder to write into")
    ap.add_argument("--vlan-from", nargs="*", default=[], help="real captures to re-tag into vlan.pcap")
    a = ap.parse_args()
    write_pcap(a.out + "/adversarial.pcap", [(f, c) for _, f, c in frames()])
    print("adversarial.pcap:", len(frames()), "frames")
    if a.vlan_from:
        tagged = retag([f for p in a.vlan_from for f in read_pcap(p)])
        write_pcap(a.out + "/vlan.pcap", tagged)
        print("vlan.pcap:", len(tagged), "frames")


if __name__ == "__main__":
    main()
