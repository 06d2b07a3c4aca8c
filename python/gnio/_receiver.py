# SPDX-License-Identifier: Apache-2.0
"""gnio.Receiver: a context manager around the extension's batch receiver."""
import operator

from . import _gnio
from ._gnio import _Receiver


def _byte_count(name, value):
    try:
        n = operator.index(value)
    except TypeError:
        n = -1
    if not 0 <= n < 2**32:
        _gnio._raise("INVALID_VALUE", "%s=%r is not a byte count; pass an integer in 0..4294967295" % (name, value))
    return n


class Receiver:
    """Receives from `spec` on `gpu` ("auto": the first CUDA GPU, else the emulated device; "cpu": the
    emulated device): a persistent kernel gathers the packets of `queues` RX queues into batches of up to
    `batch` packets, `snap` bytes each (zero-padded), in a pool of `buffers` buffers (0: four per queue) in
    GPU memory.

    A batch is handed over when full or when its first packet waited `timeout_ms`. `when_full` says what
    the kernel does while every buffer of its queue is held: "wait" leaves packets in the ring (a capture or
    generator is held back), "drop" counts them as dropped (pool_full); "auto" drops on a wire, waits
    otherwise.

    `layout="flat"` keeps whole frames instead: batch.data is uint8 [bytes], the frames back to back, and
    batch.offsets uint32 [n + 1] says where each starts (packet i is data[offsets[i]:offsets[i + 1]]).
    A batch is then also handed over when its `flat_bytes` (0: batch * 1536, at least the longest frame)
    have no room for the next packet; a frame longer than flat_bytes is dropped as flat_oversize.
    `snap` belongs to the padded layout (default 256 there).
    """

    def __init__(self, spec, gpu="auto", queues=1, batch=4096, snap=None, buffers=0, timeout_ms=1.0,
                 when_full="auto", burst=256, rss_hash=True, ring="gpu", layout="padded", flat_bytes=0):
        if layout == "flat" and snap is not None:
            _gnio._raise("INVALID_VALUE", "snap=%r applies to layout='padded'; layout='flat' keeps whole frames: "
                         "leave snap out and size each batch's bytes with flat_bytes" % (snap,))
        if layout != "flat" and flat_bytes:
            _gnio._raise("INVALID_VALUE", "flat_bytes=%r applies to layout='flat' only; pass layout='flat' or "
                         "leave flat_bytes out" % (flat_bytes,))
        snap = 256 if snap is None else _byte_count("snap", snap)
        self._rx = _Receiver(spec, gpu, int(queues), int(batch), snap, int(buffers), float(timeout_ms), when_full,
                             int(burst), bool(rss_hash), ring, layout, _byte_count("flat_bytes", flat_bytes))

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def next_batch(self, timeout_ms=100):
        """The next batch, or None when none came within timeout_ms or the source has ended (see .ended)."""
        kind, batch = self._rx.next(float(timeout_ms))
        self._ended = kind == "end"
        return batch

    @property
    def ended(self):
        """True once next_batch() found that the source ended and every packet was handed over."""
        return getattr(self, "_ended", False)

    def batches(self, timeout_ms=100):
        """Yields batches until the source ends (a capture, a counted generator) or forever on a wire.

        Waits without the GIL, timeout_ms at a time; Ctrl-C raises KeyboardInterrupt out of the loop,
        and leaving the `with Receiver` then drains and stops the kernel.
        """
        while True:
            kind, batch = self._rx.next(float(timeout_ms))
            if kind == "batch":
                yield batch
            elif kind == "end":
                self._ended = True
                return

    def stats(self):
        """Counts: offered, delivered, delivered_bytes, batches, dropped by reason, in_flight, per_queue,
        buffers, held. After close(), offered == delivered + sum(dropped.values())."""
        return self._rx.stats()

    def close(self, drain_ms=2000):
        """Stops the source, lets the kernel empty the rings (batches nobody took count as dropped:
        closed) and stops it. Batches still held stay readable until released. Idempotent."""
        self._rx.close(float(drain_ms))

    @property
    def closed(self):
        return self._rx.closed

    @property
    def config(self):
        """The settings as resolved (queues, buffers, when_full, the GPU's name)."""
        return self._rx.config

    @property
    def device(self):
        """"cpu" on the emulated device, "cuda:N" on a GPU: where the arrays live."""
        return self._rx.device
