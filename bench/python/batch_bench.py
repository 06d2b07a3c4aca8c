#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Batch receive from Python against the same from C++, in one run: gnio.Receiver's loop with nothing,
with torch.from_dlpack / cupy.from_dlpack / numpy.from_dlpack of every batch, against batch_bench
(gnio::BatchReceiver's next()/release() loop). Prints the machine and two markdown tables, each row with
its ratio to the C++ row of the same table: throughput (a source as fast as it goes) and latency (a paced
source that stamps each frame as it makes it: the age of each batch's newest packet when the loop got it;
the Python side's age minus the C++ side's is what the hand-off to Python adds).

    PYTHONPATH=build/python bench/python/batch_bench.py --cpp build/bench/batch_bench --gpu auto

1500 B frames, whole, with offsets (layout flat):

    PYTHONPATH=build/python bench/python/batch_bench.py --cpp build/bench/batch_bench --layout flat \
        --spec mem:count=0,frames=1024,flows=1024,size=1500,ring=8192 \
        --latency-spec synthetic:count=0,flows=1024,size=1500,pps=200000
"""
import argparse
import json
import subprocess
import sys
import time

import gnio  # before torch and cupy: CUDA must load kernels eagerly next to a persistent kernel


def percentile(values, p):
    if not values:
        return 0.0
    v = sorted(values)
    return v[min(len(v) - 1, int(p * len(v)))]


def python_row(args, spec, consumer):
    """Packets per second over a window that opens at the first batch, and the age of each batch's newest
    packet when the loop body got it, as batch_bench measures them."""
    packets = batches = nbytes = 0
    ages = []
    layout = dict(layout="flat", flat_bytes=args.flat_bytes) if args.layout == "flat" else dict(snap=args.snap)
    with gnio.Receiver(spec, gpu=args.gpu, batch=args.batch, queues=args.queues, timeout_ms=args.timeout_us / 1000.0,
                       **layout) as rx:
        t0 = end = None
        for batch in rx.batches(timeout_ms=1000):
            with batch:
                newest = consumer(batch) if consumer else None
                seen = time.time_ns()
                now = time.perf_counter()
                if t0 is None:
                    t0, end = now, now + args.seconds
                else:
                    packets += batch.count
                    nbytes += batch.bytes
                    batches += 1
                    if newest and seen >= newest:
                        ages.append((seen - newest) / 1e3)
            if now >= end:
                break
        secs = time.perf_counter() - t0
    return {"packets": packets, "batches": batches, "seconds": secs, "mpps": packets / secs / 1e6,
            "gbps": nbytes * 8 / secs / 1e9,
            "age_p50_us": percentile(ages, 0.50) if ages else None,
            "age_p99_us": percentile(ages, 0.99) if ages else None}


def consumers(gpu, layout):
    """The DLPack consumers available here: each takes a batch's data, lengths (and with the flat layout
    its offsets) and timestamps and returns the newest packet's timestamp (one 8-byte read, as batch_bench's)."""
    def arrays(b):
        return (b.data, b.lengths, b.offsets) if layout == "flat" else (b.data, b.lengths)
    names = "data, lengths, offsets, timestamps" if layout == "flat" else "data, lengths, timestamps"
    out = [("gnio.Receiver, batches released untouched", None)]
    if gpu != "cpu":
        try:
            import torch
            torch.zeros(1, device="cuda").sum().item()  # the context and its kernels, before any Receiver opens

            def with_torch(b):
                [torch.from_dlpack(a) for a in arrays(b)]
                return int(torch.from_dlpack(b.timestamps)[b.count - 1].item())
            out.append(("gnio.Receiver + torch.from_dlpack(%s)" % names, with_torch))
        except ImportError:
            pass
        try:
            import cupy
            cupy.zeros(1).sum().item()

            def with_cupy(b):
                [cupy.from_dlpack(a) for a in arrays(b)]
                return int(cupy.from_dlpack(b.timestamps)[b.count - 1])
            out.append(("gnio.Receiver + cupy.from_dlpack(%s)" % names, with_cupy))
        except ImportError:
            pass
    else:
        import numpy

        def with_numpy(b):
            [numpy.from_dlpack(a) for a in arrays(b)]
            return int(numpy.from_dlpack(b.timestamps)[b.count - 1])
        out.append(("gnio.Receiver + numpy.from_dlpack(%s)" % names, with_numpy))
    return out


def cpp_row(args, spec):
    cmd = [args.cpp, "--spec", spec, "--gpu", args.gpu, "--batch", str(args.batch), "--snap", str(args.snap),
           "--queues", str(args.queues), "--seconds", str(args.seconds), "--timeout-us", str(args.timeout_us),
           "--layout", args.layout, "--flat-bytes", str(args.flat_bytes)]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=120 + 2 * args.seconds)
    if out.returncode != 0:
        sys.exit("batch_bench failed (exit %d): %s" % (out.returncode, out.stderr.strip()))
    return json.loads(out.stdout.strip().splitlines()[-1])


def table(title, spec, args):
    base = cpp_row(args, spec)
    rows = [("gnio::BatchReceiver (C++), newest timestamp read", base)]
    for name, fn in consumers(args.gpu, args.layout):
        rows.append((name, python_row(args, spec, fn)))
    print()
    shape = ("snap %d" % args.snap if args.layout == "padded" else
             "layout flat, flat_bytes %s" % (args.flat_bytes or "batch * 1536"))
    print("%s: spec %s, batch %d, %s, queues %d, batch timeout %g us, %.1f s a row" %
          (title, spec, args.batch, shape, args.queues, args.timeout_us, args.seconds))
    print()
    print("| variant | batches | packets | Mpps | Gbit/s | ratio to C++ | newest packet's age p50 / p99 (us) |")
    print("|---|---|---|---|---|---|---|")
    for name, r in rows:
        ratio = r["mpps"] / base["mpps"] if base["mpps"] > 0 else 0.0
        age = "-" if r["age_p50_us"] is None else "%.1f / %.1f" % (r["age_p50_us"], r["age_p99_us"])
        print("| %s | %d | %d | %.2f | %.2f | %.3f | %s |" % (name, r["batches"], r["packets"], r["mpps"], r["gbps"],
                                                         ratio, age))


def machine(gpu):
    if gpu == "cpu":
        import os
        import platform
        return "emulated device; %s, %d cores" % (platform.processor() or platform.machine(), os.cpu_count())
    try:
        gpu = subprocess.run(["nvidia-smi", "--query-gpu=name,pci.bus_id", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=30).stdout.strip().splitlines()
    except (OSError, subprocess.SubprocessError):
        gpu = []
    return "; ".join(gpu) or "no nvidia-smi"


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--cpp", required=True, help="the batch_bench binary of the same build")
    p.add_argument("--spec", default="mem:count=0,frames=1024,flows=1024,size=64,ring=8192",
                   help="RX spec of the throughput table (as fast as the source goes)")
    p.add_argument("--latency-spec", default="synthetic:count=0,flows=1024,size=64,pps=200000",
                   help="RX spec of the latency table (paced, stamped as made; '' skips the table)")
    p.add_argument("--gpu", default="auto", help="auto, a PCIe bus id, or cpu")
    p.add_argument("--batch", type=int, default=4096)
    p.add_argument("--snap", type=int, default=64, help="bytes kept per packet (layout padded)")
    p.add_argument("--layout", choices=("padded", "flat"), default="padded",
                   help="padded: snap bytes a packet, zero-padded; flat: whole frames back to back with offsets")
    p.add_argument("--flat-bytes", type=int, default=0, help="bytes of a flat batch (0: batch * 1536)")
    p.add_argument("--queues", type=int, default=1)
    p.add_argument("--timeout-us", type=float, default=1000.0, help="a partly filled batch is handed over after this")
    p.add_argument("--seconds", type=float, default=1.0, help="measured window per row")
    args = p.parse_args()

    print("machine: %s" % machine(args.gpu))
    table("throughput", args.spec, args)
    if args.latency_spec:
        table("latency", args.latency_spec, args)


if __name__ == "__main__":
    main()
