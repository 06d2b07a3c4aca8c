# SPDX-License-Identifier: Apache-2.0
"""gnio from Python: received packets as DLPack arrays (PyTorch, CuPy, NumPy).

    import gnio, numpy as np
    with gnio.Receiver("pcap:data/captures/dns.pcap", gpu="cpu", batch=64, snap=128) as rx:
        for batch in rx.batches(timeout_ms=100):
            with batch:
                x = np.from_dlpack(batch.data)       # uint8 [n, snap]
                n = np.from_dlpack(batch.lengths)    # uint32 [n]
        print(rx.stats())

See docs/PYTHON.md for the lifetime and stream rules.
"""
import json as _json
import os as _os

# A persistent kernel and lazy kernel loading deadlock: the first launch of a
# PyTorch or CuPy kernel waits for every running kernel of the context. The
# driver reads this once, when CUDA is first initialised in the process, so
# it only takes effect where gnio is imported before CUDA is used.
_os.environ.setdefault("CUDA_MODULE_LOADING", "EAGER")

from ._gnio import Array, Batch, Error
from ._receiver import Receiver
from ._run import run_packet_processing

__all__ = ["Array", "Batch", "Error", "Receiver", "caps", "doctor", "run_packet_processing"]


def caps(nic="", gpu="auto"):
    """The capability report of `gnio caps` (NIC and CUDA axes) as a dict.

    nic: a queue spec ("" leaves the NIC axis not queried); gpu: "auto", "cpu" or a bus id.
    """
    return _json.loads(_gnio_module()._caps_json(nic, gpu))


def doctor(nic="", gpu="auto", ring_bytes=0):
    """The environment checks of `gnio doctor --json` as a dict (schema_version, checks, summary, exit_code)."""
    return _json.loads(_gnio_module()._doctor_json(nic, gpu, int(ring_bytes)))


def _gnio_module():
    from . import _gnio
    return _gnio
