#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Receive packets into GPU memory and run a small PyTorch model on every batch, with no copy.

    PYTHONPATH=build/python python3 examples/python/receive_torch.py synthetic:count=1000000 --gpu auto

The model is a byte-histogram classifier: each packet's first `snap` bytes become a 256-bin histogram,
a linear layer scores it. It is untrained (random weights): the point is the data path, a tensor of
received packets on cuda:N made by torch.from_dlpack from the batch's own memory.
"""
import argparse
import time

import gnio  # before torch: gnio makes CUDA load kernels eagerly (see docs/PYTHON.md)

import torch


def classify(model, x, n, snap):
    """Class scores of a batch: x uint8 [k, snap] packets, n uint32 [k] lengths."""
    n = n.to(torch.int64)
    hist = torch.zeros(x.shape[0], 256, device=x.device)
    hist.scatter_add_(1, x.to(torch.int64), torch.ones_like(x, dtype=torch.float32))
    keep = torch.clamp(n, max=snap).to(torch.float32).unsqueeze(1)
    hist[:, 0] -= snap - keep.squeeze(1)   # the zero padding is not packet bytes
    return model(hist / keep.clamp(min=1))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("spec")
    ap.add_argument("--gpu", default="auto")
    ap.add_argument("--queues", type=int, default=1)
    ap.add_argument("--batch", type=int, default=4096)
    ap.add_argument("--snap", type=int, default=256)
    a = ap.parse_args()

    device = torch.device("cpu" if a.gpu.startswith("cpu") or not torch.cuda.is_available() else "cuda")
    model = torch.nn.Linear(256, 4).to(device)
    classes = torch.zeros(4, dtype=torch.int64, device=device)
    with torch.no_grad():
        # Once on zeros before the Receiver opens: CUDA cannot load torch's kernels or set up cuBLAS
        # while gnio's persistent kernel runs.
        classify(model, torch.zeros(2, a.snap, dtype=torch.uint8, device=device),
                 torch.zeros(2, dtype=torch.int32, device=device), a.snap).argmax(1).bincount(minlength=4)
        with gnio.Receiver(a.spec, gpu=a.gpu, queues=a.queues, batch=a.batch, snap=a.snap) as rx:
            if torch.device(rx.device).type != device.type:
                raise SystemExit("gnio opened %s but torch set up %s; pass --gpu cpu or a GPU" % (rx.device, device))
            start = time.monotonic()
            for batch in rx.batches(timeout_ms=100):
                with batch:
                    # __dlpack__ gets torch's current stream: the buffer goes back only after the work
                    # queued on it below has finished.
                    x = torch.from_dlpack(batch.data)                         # uint8 [n, snap]
                    n = torch.from_dlpack(batch.lengths)                      # uint32 [n]
                    scores = classify(model, x, n, a.snap)
                    classes += torch.bincount(scores.argmax(1), minlength=4)
                    del x, n, scores
            elapsed = time.monotonic() - start
            s = rx.stats()
    print("%d packets in %d batches on %s in %.2f s; classes %s; dropped %s" %
          (s["delivered"], s["batches"], rx.device, elapsed, classes.tolist(),
           {k: v for k, v in s["dropped"].items() if v}))


if __name__ == "__main__":
    main()
