# SPDX-License-Identifier: Apache-2.0
"""The Python module on a CUDA GPU: torch.from_dlpack and cupy.from_dlpack on live batches, with the
byte checks done on the GPU against dpkt's reading of the same capture (padded batches with both, flat
batches of whole frames with torch). Exits 77 (skipped) without a CUDA GPU
or without torch and cupy."""
import os
import subprocess
import sys

import gnio  # before torch and cupy: it makes CUDA load kernels eagerly

try:
    import torch
except ImportError:
    torch = None
try:
    import cupy
except ImportError:
    cupy = None

from pcapfile import read_pcap

SKIP = 77
DATA = os.environ.get("GNIO_DATA_DIR", os.path.join(os.path.dirname(__file__), "..", "..", "data"))
SNAP = 256


def expected(path):
    """The capture's packets as the batches hold them: [snap] bytes zero-padded, and the lengths."""
    rows, lengths = [], []
    for _ts, b in read_pcap(path):
        rows.append(b[:SNAP] + bytes(SNAP - min(len(b), SNAP)))
        lengths.append(len(b))
    return b"".join(rows), lengths


def load_kernels(lib):
    """Runs once, before any Receiver opens, every kernel check_with() runs: CUDA cannot load a module
    (torch's context set-up, a CuPy kernel compiled on first use) while gnio's persistent kernel runs."""
    if lib == "torch":
        x = torch.zeros((2, SNAP), dtype=torch.uint8, device="cuda")
        x.clone().cpu()
        torch.zeros(2, dtype=torch.int32, device="cuda").view(torch.uint32).to(torch.int64).cpu()
        # check_flat_torch's: comparisons of uint8 and int64 tensors, int64 differences, uint64 viewed as int64.
        o = torch.zeros(3, dtype=torch.int64, device="cuda")
        torch.equal(o[1:] - o[:-1], o[:2])
        torch.equal(x[0], torch.zeros(SNAP, dtype=torch.uint8).to("cuda"))
        torch.zeros(2, dtype=torch.int64, device="cuda").view(torch.uint64).view(torch.int64).sum().item()
        torch.cuda.synchronize()
    else:
        cupy.asnumpy(cupy.zeros((2, SNAP), dtype=cupy.uint8))
        int(cupy.zeros(2, dtype=cupy.uint32).sum())
        cupy.cuda.get_current_stream().synchronize()


def check_with(lib, path):
    want_bytes, want_lengths = expected(path)
    got_rows, got_lengths = [], []
    with gnio.Receiver("pcap:" + path, gpu="auto", batch=16, snap=SNAP, timeout_ms=0.5) as rx:
        if not rx.device.startswith("cuda"):
            print("SKIP: gpu='auto' opened the emulated device (no CUDA device)")
            sys.exit(SKIP)
        for batch in rx.batches(timeout_ms=5000):
            with batch:
                if lib == "torch":
                    x = torch.from_dlpack(batch.data)
                    n = torch.from_dlpack(batch.lengths)
                    assert x.is_cuda and x.dtype == torch.uint8 and tuple(x.shape) == (batch.count, SNAP)
                    assert n.dtype == torch.uint32
                    # Work on the GPU on the consumer's stream, then to the host for the comparison.
                    got_rows.append(bytes(x.clone().cpu().numpy().tobytes()))
                    got_lengths += [int(v) for v in n.to(torch.int64).cpu().tolist()]
                    del x, n
                else:
                    x = cupy.from_dlpack(batch.data)
                    n = cupy.from_dlpack(batch.lengths)
                    assert x.dtype == cupy.uint8 and x.shape == (batch.count, SNAP)
                    got_rows.append(cupy.asnumpy(x).tobytes())
                    got_lengths += [int(v) for v in cupy.asnumpy(n)]
                    via_cai = cupy.asarray(batch.lengths)  # __cuda_array_interface__ v3
                    assert int(via_cai.sum()) == batch.bytes
                    cupy.cuda.get_current_stream().synchronize()
                    del x, n, via_cai
        s = rx.stats()
    assert got_lengths == want_lengths, "%s: lengths differ" % lib
    assert b"".join(got_rows) == want_bytes, "%s: bytes differ" % lib
    assert s["delivered"] == len(want_lengths) and s["offered"] == len(want_lengths), s
    print("%s: %d packets of %s equal the capture's" % (lib, len(want_lengths), os.path.basename(path)))


def check_flat_torch(path):
    """layout='flat' with torch: each batch's frames, lengths (from the offsets) and timestamps compared
    on the GPU with dpkt's reading of the capture."""
    want = read_pcap(path)
    at = batches = 0
    with gnio.Receiver("pcap:" + path, gpu="auto", batch=16, layout="flat", flat_bytes=4096, timeout_ms=0.5) as rx:
        for batch in rx.batches(timeout_ms=5000):
            with batch:
                x = torch.from_dlpack(batch.data)
                off = torch.from_dlpack(batch.offsets)
                ts = torch.from_dlpack(batch.timestamps)
                assert x.is_cuda and x.dtype == torch.uint8 and tuple(x.shape) == (batch.bytes,), x.shape
                assert off.is_cuda and off.dtype == torch.uint32 and tuple(off.shape) == (batch.count + 1,)
                mine = want[at:at + batch.count]
                frames = torch.frombuffer(bytearray(b"".join(b for _, b in mine)), dtype=torch.uint8).to("cuda")
                lengths = torch.tensor([len(b) for _, b in mine], dtype=torch.int64, device="cuda")
                stamps = torch.tensor([t for t, _ in mine], dtype=torch.int64, device="cuda")
                o = off.to(torch.int64)
                assert torch.equal(x, frames), "flat batch %d: bytes differ" % batches
                assert torch.equal(o[1:] - o[:-1], lengths) and int(o[0]) == 0, "flat batch %d: offsets" % batches
                assert torch.equal(ts.view(torch.int64), stamps), "flat batch %d: timestamps" % batches
                at += batch.count
                batches += 1
                del x, off, ts, o
        s = rx.stats()
    assert at == len(want) and s["delivered"] == len(want) and s["offered"] == len(want), (at, s)
    print("torch flat: %d whole packets of %s in %d batches equal the capture's" %
          (len(want), os.path.basename(path), batches))


LAZY_PROBE = """
import os, sys
import torch
import gnio
try:
    gnio.Receiver("pcap:" + sys.argv[1], gpu="auto", batch=16, snap=64)
except gnio.Error as e:
    print(e.code)
    sys.exit(0)
print("opened")
"""


def check_lazy_loading_refused(path):
    """torch first under CUDA_MODULE_LOADING=LAZY: the Receiver refuses instead of hanging later."""
    env = dict(os.environ, CUDA_MODULE_LOADING="LAZY")
    out = subprocess.run([sys.executable, "-c", LAZY_PROBE, path], env=env, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == "NOT_SUPPORTED", (out.returncode, out.stdout, out.stderr)
    print("lazy loading: refused with NOT_SUPPORTED")


def main():
    libs = [name for name, mod in (("torch", torch), ("cupy", cupy)) if mod is not None]
    if not libs:
        print("SKIP: neither torch nor cupy is installed")
        return SKIP
    if torch is not None and not torch.cuda.is_available():
        print("SKIP: no CUDA device")
        return SKIP
    assert os.environ.get("CUDA_MODULE_LOADING") == "EAGER", os.environ.get("CUDA_MODULE_LOADING")
    for lib in libs:
        load_kernels(lib)
    for lib in libs:
        for name in ("dns.pcap", "http.pcap"):
            check_with(lib, os.path.join(DATA, "captures", name))
    if torch is not None:
        for name in ("tls.pcap", "vlan.pcap"):
            check_flat_torch(os.path.join(DATA, "captures", name))
        check_lazy_loading_refused(os.path.join(DATA, "captures", "dns.pcap"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
