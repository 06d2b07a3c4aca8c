#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Batch receive from Python against the same from C++, in one run: gnio.Receiver's loop with nothing,
with torch.from_dlpack / cupy.from_dlpack / numpy.from_dlpack of every batch, against batch_bench
(gnio::BatchReceiver's next()/release() loop). Prints the machine and a markdown table with each row's
ratio to the C++ row.

    PYTHONPATH=build/python bench/python/batch_bench.py --cpp build/bench/batch_bench --gpu auto
"""
import argparse
import json
import subprocess
import sys
import time

import gnio  # before torch and cupy: CUDA must load kernels eagerly next to a persistent kernel


def python_row(args, consumer):
    """Packets per second over a window that opens at the first batch, as batch_bench measures it."""
    packets = batches = 0
    with gnio.Receiver(args.spec, gpu=args.gpu, batch=args.batch, snap=args.snap, queues=args.queues) as rx:
        device = rx.device
        t0 = end = None
        for batch in rx.batches(timeout_ms=1000):
            with batch:
                now = time.perf_counter()
                if t0 is None:
                    t0, end = now, now + args.seconds
                else:
                    if consumer:
                        consumer(batch)
                    packets += batch.count
                    batches += 1
            if now >= end:
                break
        secs = time.perf_counter() - t0
    return {"packets": packets, "batches": batches, "seconds": secs, "mpps": packets / secs / 1e6, "device": device}


def consumers(gpu):
    """The DLPack consumers available here; each one takes the data and lengths of a batch."""
    out = [("gnio.Receiver, batches released untouched", None)]
    if gpu != "cpu":
        try:
            import torch
            torch.zeros(1, device="cuda").sum().item()  # the context and its kernels, before any Receiver opens
            out.append(("gnio.Receiver + torch.from_dlpack(data, lengths)",
                        lambda b: (torch.from_dlpack(b.data), torch.from_dlpack(b.lengths))))
        except ImportError:
            pass
        try:
            import cupy
            cupy.zeros(1).sum().item()
            out.append(("gnio.Receiver + cupy.from_dlpack(data, lengths)",
                        lambda b: (cupy.from_dlpack(b.data), cupy.from_dlpack(b.lengths))))
        except ImportError:
            pass
    else:
        import numpy
        out.append(("gnio.Receiver + numpy.from_dlpack(data, lengths)",
                    lambda b: (numpy.from_dlpack(b.data), numpy.from_dlpack(b.lengths))))
    return out


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
    p.add_argument("--spec", default="mem:count=0,frames=1024,flows=1024,size=64,ring=8192", help="RX spec")
    p.add_argument("--gpu", default="auto", help="auto, a PCIe bus id, or cpu")
    p.add_argument("--batch", type=int, default=4096)
    p.add_argument("--snap", type=int, default=64)
    p.add_argument("--queues", type=int, default=1)
    p.add_argument("--seconds", type=float, default=1.0, help="measured window per row")
    args = p.parse_args()

    cpp = subprocess.run([args.cpp, "--spec", args.spec, "--gpu", args.gpu, "--batch", str(args.batch),
                          "--snap", str(args.snap), "--queues", str(args.queues), "--seconds", str(args.seconds)],
                         capture_output=True, text=True, timeout=120 + 2 * args.seconds)
    if cpp.returncode != 0:
        sys.exit("batch_bench failed (exit %d): %s" % (cpp.returncode, cpp.stderr.strip()))
    base = json.loads(cpp.stdout.strip().splitlines()[-1])
    rows = [("gnio::BatchReceiver (C++), batches released untouched", base)]
    for name, fn in consumers(args.gpu):
        rows.append((name, python_row(args, fn)))

    print("machine: %s" % machine(args.gpu))
    print("spec %s, batch %d, snap %d, queues %d, %.1f s a row" % (args.spec, args.batch, args.snap, args.queues,
                                                                  args.seconds))
    print()
    print("| variant | batches | packets | Mpps | ratio to C++ |")
    print("|---|---|---|---|---|")
    for name, r in rows:
        ratio = r["mpps"] / base["mpps"] if base["mpps"] > 0 else 0.0
        print("| %s | %d | %d | %.2f | %.3f |" % (name, r["batches"], r["packets"], r["mpps"], ratio))


if __name__ == "__main__":
    main()
