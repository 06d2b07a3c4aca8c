#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Receive a capture (or any RX spec) as batches and summarise them with NumPy.

    PYTHONPATH=build/python python3 examples/python/receive_numpy.py pcap:data/captures/dns.pcap

On the emulated device (--gpu cpu, or auto without a CUDA GPU) the arrays are in host memory and
numpy.from_dlpack reads them in place; on a GPU use the torch example instead.
"""
import argparse

import numpy as np

import gnio


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("spec", help="RX spec, e.g. pcap:FILE or synthetic:count=100000")
    ap.add_argument("--gpu", default="cpu")
    ap.add_argument("--queues", type=int, default=1)
    ap.add_argument("--batch", type=int, default=1024)
    ap.add_argument("--snap", type=int, default=128)
    a = ap.parse_args()

    sizes = np.zeros(2049, dtype=np.int64)  # packet length histogram, the last bin for >= 2048
    ethertypes = {}
    with gnio.Receiver(a.spec, gpu=a.gpu, queues=a.queues, batch=a.batch, snap=a.snap) as rx:
        for batch in rx.batches(timeout_ms=100):
            with batch:
                data = np.from_dlpack(batch.data)        # uint8 [n, snap], read in place
                lengths = np.from_dlpack(batch.lengths)  # uint32 [n]
                np.add.at(sizes, np.minimum(lengths, 2048), 1)
                if a.snap >= 14:
                    et = (data[:, 12].astype(np.uint16) << 8) | data[:, 13]
                    for value, n in zip(*np.unique(et, return_counts=True)):
                        ethertypes[int(value)] = ethertypes.get(int(value), 0) + int(n)
                del data, lengths  # the buffer goes back once nothing refers to it
        s = rx.stats()
    print("delivered %d packets (%d bytes) in %d batches; dropped %s" %
          (s["delivered"], s["delivered_bytes"], s["batches"], {k: v for k, v in s["dropped"].items() if v}))
    print("ethertypes:", ", ".join("0x%04x=%d" % kv for kv in sorted(ethertypes.items())))
    top = np.argsort(sizes)[::-1][:5]
    print("commonest lengths:", ", ".join("%d B x%d" % (i, sizes[i]) for i in top if sizes[i]))


if __name__ == "__main__":
    main()
