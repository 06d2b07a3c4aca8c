# SPDX-License-Identifier: Apache-2.0
"""The captures as dpkt (Debian python3-dpkt) reads them, independently of gnio: (timestamp_ns, bytes)
per record."""
from decimal import Decimal

import dpkt


def read_pcap(path):
    with open(path, "rb") as f:
        reader = dpkt.pcap.Reader(f)
        assert reader.datalink() == dpkt.pcap.DLT_EN10MB, "the tests read Ethernet captures only"
        out = []
        for ts, buf in reader:
            # Nanosecond captures come as an exact Decimal; microsecond ones as a float, exact to the µs.
            ns = int(ts * Decimal(10**9)) if isinstance(ts, Decimal) else round(ts * 1e6) * 1000
            out.append((ns, bytes(buf)))
    return out
