#!/usr/bin/env python3
"""Writes the captures in data/adversarial/: frames whose headers are cut,
lie about their lengths or carry checksums in unusual states, for the header
parser's tests (tests/backends/test_adversarial.cpp compares the parser with
tshark on them). Deterministic: the same bytes on every run. See README.md."""
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "adversarial")

MAC = bytes.fromhex("020000000002") + bytes.fromhex("020000000001")
V4_SRC, V4_DST = bytes([192, 0, 2, 1]), bytes([198, 51, 100, 7])
V6_SRC = bytes.fromhex("20010db8000000000000000000000001")
V6_DST = bytes.fromhex("20010db8000000000000000000000002")
V6_HOP = bytes.fromhex("20010db80000000000000000000000aa")
# Ethernet padding that would be counted as DNS (port 53) or HTTP ("GET ")
# by a parser that reads past the IP datagram's end.
POISON = (b"\x00\x35\x00\x35GET " * 8)


def csum_sum(data, initial=0):
    """The folded 16-bit ones' complement sum (RFC 1071), not inverted."""
    if len(data) % 2:
        data += b"\x00"
    s = initial + sum(struct.unpack("!%dH" % (len(data) // 2), data))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return s


def checksum(data, initial=0):
    return (~csum_sum(data, initial)) & 0xFFFF


def pseudo_sum(src, dst, proto, length):
    return csum_sum(src + dst + struct.pack("!HH", proto, length) if len(src) == 4
                    else src + dst + struct.pack("!IxxxB", length, proto))


def ipv4(proto, l4, total=None, options=b"", ttl=64, frag=0x4000, fix=True):
    ihl = (20 + len(options)) // 4
    total = 20 + len(options) + len(l4) if total is None else total
    h = bytearray(struct.pack("!BBHHHBBH4s4s", 0x40 | ihl, 0, total, 0x1234, frag, ttl, proto, 0, V4_SRC, V4_DST))
    h += options
    if fix:
        h[10:12] = struct.pack("!H", checksum(bytes(h)))
    return MAC + b"\x08\x00" + bytes(h) + l4


def ipv6(next_header, rest, payload_len=None, dst=V6_DST):
    plen = len(rest) if payload_len is None else payload_len
    return MAC + b"\x86\xdd" + struct.pack("!IHBB", 0x60000000, plen, next_header, 64) + V6_SRC + dst + rest


def udp(sport, dport, payload, src, dst, length=None, csum="good"):
    length = 8 + len(payload) if length is None else length
    h = bytearray(struct.pack("!HHHH", sport, dport, length, 0) + payload)
    covered = bytes(h[:length]) if length <= len(h) else bytes(h)
    ph = pseudo_sum(src, dst, 17, length)
    if csum == "good":
        c = checksum(covered, ph) or 0xFFFF
    elif csum == "partial":
        c = ph
    elif csum == "bad":
        c = (checksum(covered, ph) ^ 0x0101) or 1
    else:
        c = 0
    h[6:8] = struct.pack("!H", c)
    return bytes(h)


def tcp(sport, dport, payload, src, dst, options=b"", csum="good"):
    off = (20 + len(options)) // 4
    h = bytearray(struct.pack("!HHIIBBHHH", sport, dport, 1000, 2000, off << 4, 0x18, 512, 0, 0) + options + payload)
    ph = pseudo_sum(src, dst, 6, len(h))
    c = {"good": checksum(bytes(h), ph), "partial": ph, "bad": checksum(bytes(h), ph) ^ 0x0202}[csum]
    h[16:18] = struct.pack("!H", c)
    return bytes(h)


def icmp_echo(body, v6=False, src=V6_SRC, final_dst=V6_DST, type_=None):
    t = type_ if type_ is not None else (128 if v6 else 8)
    h = bytearray(bytes([t, 0, 0, 0]) + body)
    ph = pseudo_sum(src, final_dst, 58, len(h)) if v6 else 0
    h[2:4] = struct.pack("!H", checksum(bytes(h), ph))
    return bytes(h)


def write_pcap(name, frames):
    """frames: (bytes, caplen or None). Microsecond pcap, link type Ethernet."""
    out = bytearray(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
    for i, (frame, caplen) in enumerate(frames):
        cap = len(frame) if caplen is None else caplen
        out += struct.pack("<IIII", 1800000000, i, cap, len(frame)) + frame[:cap]
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(out)
    print(f"{name}: {len(frames)} frames, {len(out)} bytes")


def padded(frame):
    """An Ethernet frame padded to the 60-byte minimum with POISON bytes."""
    return frame + POISON[:max(0, 60 - len(frame))]


def templates():
    """(name, frame, l3 offset, IP version) of whole, valid packets."""
    hbh = bytes([60, 0, 1, 4, 0, 0, 0, 0])   # hop-by-hop, next: destination options
    dopt = bytes([6, 0, 1, 4, 0, 0, 0, 0])   # destination options, next: TCP
    frag = bytes([17, 0, 0x00, 0x01, 0, 0, 0, 9])  # first fragment, more follow, next: UDP
    http = b"GET / HTTP/1.1\r\n"
    v6_tcp = tcp(40000, 80, http, V6_SRC, V6_DST)
    qinq = bytes.fromhex("88a80064") + bytes.fromhex("81000065")
    v4_udp = ipv4(17, udp(5353, 53, b"\x12\x34\x01\x00" * 3, V4_SRC, V4_DST))
    return [
        ("ipv4_udp", v4_udp, 14, 4),
        ("ipv4_options_tcp", ipv4(6, tcp(40000, 80, http, V4_SRC, V4_DST, options=b"\x02\x04\x05\xb4"),
                                  options=b"\x01\x01\x01\x00"), 14, 4),
        ("ipv4_icmp_echo", ipv4(1, icmp_echo(b"\x00\x07\x00\x01" + b"ping")), 14, 4),
        ("ipv6_udp", ipv6(17, udp(5353, 53, b"\x12\x34\x01\x00" * 3, V6_SRC, V6_DST)), 14, 6),
        ("ipv6_ext_tcp", ipv6(0, hbh + dopt + v6_tcp), 14, 6),
        ("ipv6_icmpv6_echo", ipv6(58, icmp_echo(b"\x00\x07\x00\x01" + b"ping", v6=True)), 14, 6),
        ("qinq_ipv4_udp", v4_udp[:12] + qinq + v4_udp[12:], 22, 4),
        ("ipv6_first_fragment_udp", ipv6(44, frag + udp(5353, 53, b"\x12\x34" * 4, V6_SRC, V6_DST, length=1000)),
         14, 6),
    ]


def with_ip_length(frame, l3, version, datagram_len):
    """The frame with the IP datagram shortened to `datagram_len` bytes by its
    length field (IPv4 header checksum kept valid), then Ethernet-padded."""
    f = bytearray(frame[:l3 + datagram_len])
    if version == 4:
        f[l3 + 2:l3 + 4] = struct.pack("!H", datagram_len)
        f[l3 + 10:l3 + 12] = b"\x00\x00"
        ihl = (f[l3] & 0x0F) * 4
        f[l3 + 10:l3 + 12] = struct.pack("!H", checksum(bytes(f[l3:l3 + ihl])))
    else:
        f[l3 + 4:l3 + 6] = struct.pack("!H", datagram_len - 40)
    return padded(bytes(f))


def cuts():
    """Every template cut at every byte offset, twice: by the capture (caplen
    < frame length) and by the IP length field (padding after the datagram)."""
    by_capture, by_length = [], []
    for _name, frame, l3, version in templates():
        for k in range(len(frame)):
            by_capture.append((frame, k))
        ihl = 20 + 4 * ((frame[l3] & 0x0F) - 5) if version == 4 else 40
        for k in range(l3 + ihl, len(frame)):
            by_length.append((with_ip_length(frame, l3, version, k - l3), None))
    write_pcap("cut_by_capture.pcap", by_capture)
    write_pcap("cut_by_length.pcap", by_length)


def udp_lengths():
    """UDP length field against the IP payload: equal, larger (malformed),
    under 8 (malformed), smaller (bytes after the UDP datagram: the
    checksum covers only the UDP length)."""
    payload = b"abcdefghijkl"
    frames = []
    for src, dst, wrap in ((V4_SRC, V4_DST, lambda l4: ipv4(17, l4)), (V6_SRC, V6_DST, lambda l4: ipv6(17, l4))):
        frames.append(wrap(udp(1000, 2000, payload, src, dst)))                      # equal
        frames.append(wrap(udp(1000, 2000, payload, src, dst, length=8 + len(payload) + 4)))  # larger
        frames.append(wrap(udp(1000, 2000, payload, src, dst, length=7)))            # under 8
        frames.append(wrap(udp(1000, 2000, payload, src, dst, length=8 + 4)))        # smaller, good over 12 bytes
        # Smaller, with a checksum over the whole IP payload: bad by RFC 768.
        whole = bytearray(udp(1000, 2000, payload, src, dst))
        whole[4:6] = struct.pack("!H", 12)
        frames.append(wrap(bytes(whole)))
    write_pcap("udp_length.pcap", [(padded(f), None) for f in frames])


def checksum_states():
    """Good, bad and partial (pseudo-header sum only) UDP/TCP checksums over
    IPv4 and IPv6, a zero IPv4 UDP checksum, IPv4 header checksums good and
    bad in front of a cut TCP header."""
    frames = []
    for state in ("good", "bad", "partial"):
        frames.append(ipv4(17, udp(1000, 2000, b"data" * 5, V4_SRC, V4_DST, csum=state)))
        frames.append(ipv6(17, udp(1000, 2000, b"data" * 5, V6_SRC, V6_DST, csum=state)))
        frames.append(ipv4(6, tcp(1000, 80, b"data" * 5, V4_SRC, V4_DST, csum=state)))
        frames.append(ipv6(6, tcp(1000, 80, b"data" * 5, V6_SRC, V6_DST, csum=state)))
    frames.append(ipv4(17, udp(1000, 2000, b"data", V4_SRC, V4_DST, csum="zero")))
    # A TCP header of 3 bytes: the IPv4 header checksum is still checked.
    frames.append(ipv4(6, b"\x9c\x40\x00"))
    bad_ip = bytearray(ipv4(6, b"\x9c\x40\x00"))
    bad_ip[14 + 10] ^= 0x40
    frames.append(bytes(bad_ip))
    write_pcap("checksums.pcap", [(padded(f), None) for f in frames])


def echo():
    """ICMP/ICMPv6 echo requests: whole, shorter than 8 bytes (4, 6, 7), and
    IPv6 ones behind a routing header (segments left 0 and 1; the checksum
    uses the final destination, RFC 8200 8.1)."""
    frames = []
    for n in (4, 6, 7, 8):
        body = b"\x00\x07\x00\x01"[: n - 4]
        frames.append(ipv4(1, icmp_echo(body)))
        frames.append(ipv6(58, icmp_echo(body, v6=True)))
    body = b"\x00\x07\x00\x01ping"
    # Type 0 routing header with one address: (next, len 2, type 0, segments left, reserved, address).
    # The address still to visit is the IPv6 destination while segments are
    # left; at the final destination the header holds the hop visited.
    for left in (0, 1):
        rh = bytes([58, 2, 0, left, 0, 0, 0, 0]) + (V6_HOP if left == 0 else V6_DST)
        dst = V6_DST if left == 0 else V6_HOP
        frames.append(ipv6(43, rh + icmp_echo(body, v6=True, final_dst=V6_DST), dst=dst))
    write_pcap("echo.pcap", [(padded(f), None) for f in frames])


def main():
    os.makedirs(OUT, exist_ok=True)
    cuts()
    udp_lengths()
    checksum_states()
    echo()


if __name__ == "__main__":
    main()
