# SPDX-License-Identifier: Apache-2.0
"""A pcap reader of the tests' own (struct only), independent of gnio's: (timestamp_ns, bytes) per record."""
import struct


def read_pcap(path):
    with open(path, "rb") as f:
        blob = f.read()
    magic = struct.unpack("<I", blob[:4])[0]
    if magic in (0xA1B2C3D4, 0xA1B23C4D):
        endian = "<"
    else:
        endian = ">"
        magic = struct.unpack(">I", blob[:4])[0]
    nano = magic == 0xA1B23C4D
    linktype = struct.unpack(endian + "I", blob[20:24])[0]
    assert linktype == 1, "the tests read Ethernet captures only (linktype %d)" % linktype
    out, at = [], 24
    while at + 16 <= len(blob):
        sec, frac, incl, _orig = struct.unpack(endian + "IIII", blob[at:at + 16])
        at += 16
        ns = sec * 1_000_000_000 + (frac if nano else frac * 1000)
        out.append((ns, blob[at:at + incl]))
        at += incl
    return out
