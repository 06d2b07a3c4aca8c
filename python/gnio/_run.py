# SPDX-License-Identifier: Apache-2.0
"""gnio.run_packet_processing: the reference application, run by the `gnio` CLI.

It runs `gnio run packet-processing ... --json FILE` as a child process (the CLI built beside this package,
or the installed one; GNIO_CLI overrides) and returns the report it wrote: the same dict as the CLI's.
"""
import json
import os
import subprocess
import tempfile

from ._gnio import _raise


def _cli():
    path = os.environ.get("GNIO_CLI")
    if path:
        return path
    from ._paths import CLI
    return CLI


def run_packet_processing(rx, gpu="auto", queues=1, tx=None, count=None, duration=None, extra=(), timeout=None):
    """Runs `gnio run packet-processing --rx RX --gpu GPU --queues N [--tx TX] [--count N] [--duration S]
    [extra...]` and returns its JSON report as a dict (docs/REPORT.md).

    Raises gnio.Error with the CLI's message when it fails (code INVALID_VALUE for a usage error).
    """
    args = [_cli(), "run", "packet-processing", "--rx", rx, "--gpu", gpu, "--queues", str(queues), "--quiet"]
    if tx:
        args += ["--tx", tx]
    if count is not None:
        args += ["--count", str(count)]
    if duration is not None:
        args += ["--duration", str(duration)]
    args += list(extra)
    with tempfile.TemporaryDirectory(prefix="gnio-run-") as tmp:
        out = os.path.join(tmp, "report.json")
        try:
            done = subprocess.run(args + ["--json", out], capture_output=True, text=True, timeout=timeout)
        except FileNotFoundError:
            _raise("NOT_FOUND", "the gnio CLI is not at " + args[0] + "; build it (target gnio_cli) or set GNIO_CLI")
        if not os.path.exists(out):
            lines = (done.stderr or done.stdout).strip().splitlines()
            msg = lines[-1] if lines else "exit status %d" % done.returncode
            code = "INVALID_VALUE" if done.returncode == 2 or "error:" in msg.lower() else "IO_ERROR"
            for name in ("NOT_SUPPORTED", "INVALID_VALUE", "BAD_STATE", "DRIVER", "NO_MEMORY", "IO_ERROR",
                         "NOT_FOUND", "TIMEOUT", "AGAIN"):
                if name in (done.stderr or ""):
                    code = name
                    break
            _raise(code, "gnio run packet-processing failed: " + msg)
        with open(out) as f:
            return json.load(f)
