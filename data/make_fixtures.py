#!/usr/bin/env python3
"""Writes the broken pcap files in data/corrupt/ from data/sample.pcap.
Each one exercises one error path of the pcap backend; see README.md."""
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
SAMPLE = os.path.join(HERE, "sample.pcap")
OUT = os.path.join(HERE, "corrupt")
FILE_HEADER = 24
RECORD_HEADER = 16
LINKTYPE_RAW = 101  # bare IPv4/IPv6 packets, no Ethernet header


def records(blob):
    """Yields (offset, header bytes, frame bytes) for each record."""
    off = FILE_HEADER
    while off < len(blob):
        caplen = struct.unpack_from("<I", blob, off + 8)[0]
        yield off, blob[off:off + RECORD_HEADER], blob[off + RECORD_HEADER:off + RECORD_HEADER + caplen]
        off += RECORD_HEADER + caplen


def write(name, data):
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(data)


def main():
    with open(SAMPLE, "rb") as f:
        blob = f.read()
    assert struct.unpack_from("<I", blob)[0] == 0xA1B23C4D, "expected a little-endian nanosecond pcap"
    recs = list(records(blob))
    os.makedirs(OUT, exist_ok=True)

    # The first 10 records whole, then record 10 (0-based) cut in the middle
    # of its frame bytes.
    off, hdr, frame = recs[10]
    write("truncated.pcap", blob[:off + RECORD_HEADER + len(frame) // 2])
    print(f"truncated.pcap: record 10 starts at byte offset {off}, frame cut after {len(frame) // 2} of {len(frame)} bytes")

    # A file header only 10 bytes long.
    write("short_header.pcap", blob[:10])

    # The first 3 records behind a magic number that is no pcap/pcapng one.
    end = recs[3][0]
    write("bad_magic.pcap", struct.pack("<I", 0xDEADBEEF) + blob[4:end])

    # The first 4 records with their 14-byte Ethernet header stripped, in a
    # file whose link type says raw IP.
    header = bytearray(blob[:FILE_HEADER])
    struct.pack_into("<I", header, 20, LINKTYPE_RAW)
    body = b""
    for _, hdr, frame in recs[:4]:
        ts_sec, ts_nsec, caplen, length = struct.unpack("<IIII", hdr)
        body += struct.pack("<IIII", ts_sec, ts_nsec, caplen - 14, length - 14) + frame[14:]
    write("raw_linktype.pcap", bytes(header) + body)


if __name__ == "__main__":
    main()
