# SPDX-License-Identifier: Apache-2.0
"""The Python module on the emulated device, with Debian's python3 and numpy.

Each packet of a capture is compared with what dpkt reads from the same file (pcapfile.py); counts are exact.
"""
import glob
import json
import os
import signal
import subprocess
import sys
import tempfile
import textwrap
import unittest

import numpy as np

import gnio
from pcapfile import read_pcap

DATA = os.environ.get("GNIO_DATA_DIR", os.path.join(os.path.dirname(__file__), "..", "..", "data"))
CAPTURES = sorted(glob.glob(os.path.join(DATA, "captures", "*.pcap")))


def receive_all(spec, **kw):
    """Every packet of every batch until the end: [(length, bytes[snap], timestamp)] and the stats."""
    got = []
    with gnio.Receiver(spec, gpu="cpu", **kw) as rx:
        seqs = []
        for batch in rx.batches(timeout_ms=5000):
            with batch:
                data = np.from_dlpack(batch.data)
                lengths = np.from_dlpack(batch.lengths)
                ts = np.from_dlpack(batch.timestamps)
                queue = np.from_dlpack(batch.queue)
                assert data.shape == (batch.count, batch.snap), data.shape
                assert data.dtype == np.uint8 and lengths.dtype == np.uint32 and ts.dtype == np.uint64
                assert (queue == batch.queue_id).all()
                seqs.append((batch.queue_id, batch.seq))
                for i in range(batch.count):
                    got.append((int(lengths[i]), data[i].tobytes(), int(ts[i]), batch.queue_id))
                del data, lengths, ts, queue
        rx.close()
        stats = rx.stats()
    return got, stats, seqs


class Captures(unittest.TestCase):
    def check_capture(self, path, snap, batch):
        want = read_pcap(path)
        got, stats, seqs = receive_all("pcap:" + path, batch=batch, snap=snap, timeout_ms=0.2)
        self.assertEqual(len(got), len(want), path)
        for i, ((length, data, ts, _q), (wts, wbytes)) in enumerate(zip(got, want)):
            self.assertEqual(length, len(wbytes), "%s packet %d: length" % (path, i))
            keep = min(len(wbytes), snap)
            self.assertEqual(data[:keep], wbytes[:keep], "%s packet %d: bytes" % (path, i))
            self.assertEqual(data[keep:], bytes(snap - keep), "%s packet %d: zero padding" % (path, i))
            self.assertEqual(ts, wts, "%s packet %d: timestamp" % (path, i))
        self.assertEqual(stats["offered"], len(want))
        self.assertEqual(stats["delivered"], len(want))
        self.assertEqual(stats["delivered_bytes"], sum(len(b) for _, b in want))
        self.assertEqual(sum(stats["dropped"].values()), 0)
        self.assertEqual(stats["in_flight"], 0)
        self.assertEqual([s for _, s in seqs], list(range(len(seqs))), "batches in order")
        return stats

    def test_every_packet_of_every_capture_once(self):
        self.assertTrue(CAPTURES, "no captures under " + DATA)
        for path in CAPTURES:
            with self.subTest(capture=os.path.basename(path)):
                stats = self.check_capture(path, snap=2048, batch=8)
                print("%s: %d packets in %d batches" % (os.path.basename(path), stats["delivered"], stats["batches"]))

    def test_snap_cuts_and_pads(self):
        self.check_capture(os.path.join(DATA, "captures", "http.pcap"), snap=60, batch=5)
        self.check_capture(os.path.join(DATA, "captures", "dns.pcap"), snap=1, batch=64)

    def test_synthetic_on_four_queues(self):
        got, stats, seqs = receive_all("synthetic:count=20000,size=64-1500,seed=7,queues=4", queues=4, batch=512,
                                       snap=64)
        self.assertEqual(len(got), 20000)
        self.assertEqual(stats["offered"], 20000)
        self.assertEqual(sum(q["delivered"] for q in stats["per_queue"]), 20000)
        self.assertEqual(len(stats["per_queue"]), 4)
        for q in range(4):
            mine = [s for qq, s in seqs if qq == q]
            self.assertEqual(mine, list(range(len(mine))), "queue %d's batches in order" % q)


def receive_flat(spec, **kw):
    """Every packet of every batch of layout='flat' until the end: [(bytes, timestamp, queue)], the batches'
    (queue, seq, count, bytes, reason) and the stats; checks each batch's offsets against its lengths."""
    got, batches = [], []
    with gnio.Receiver(spec, gpu="cpu", layout="flat", **kw) as rx:
        flat_bytes = rx.config["flat_bytes"]
        for batch in rx.batches(timeout_ms=5000):
            with batch:
                data = np.from_dlpack(batch.data)
                offsets = np.from_dlpack(batch.offsets)
                lengths = np.from_dlpack(batch.lengths)
                ts = np.from_dlpack(batch.timestamps)
                assert batch.layout == "flat" and batch.snap is None
                assert data.dtype == np.uint8 and data.shape == (batch.bytes,), data.shape
                assert offsets.dtype == np.uint32 and offsets.shape == (batch.count + 1,), offsets.shape
                assert offsets[0] == 0 and int(offsets[-1]) == batch.bytes <= flat_bytes
                assert (np.diff(offsets.astype(np.int64)) == lengths).all()
                assert not data.flags.writeable and not offsets.flags.writeable
                batches.append((batch.queue_id, batch.seq, batch.count, batch.bytes, batch.reason))
                for i in range(batch.count):
                    got.append((data[offsets[i]:offsets[i + 1]].tobytes(), int(ts[i]), batch.queue_id))
                del data, offsets, lengths, ts
        rx.close()
        stats = rx.stats()
    return got, batches, stats


class Flat(unittest.TestCase):
    def test_every_capture_whole_equals_dpkt(self):
        for path in CAPTURES:
            with self.subTest(capture=os.path.basename(path)):
                want = read_pcap(path)
                got, batches, stats = receive_flat("pcap:" + path, batch=8, timeout_ms=0.2)
                self.assertEqual(len(got), len(want))
                for i, ((data, ts, _q), (wts, wbytes)) in enumerate(zip(got, want)):
                    self.assertEqual(data, wbytes, "%s packet %d: whole bytes" % (path, i))
                    self.assertEqual(ts, wts, "%s packet %d: timestamp" % (path, i))
                self.assertEqual(stats["offered"], len(want))
                self.assertEqual(stats["delivered_bytes"], sum(len(b) for _, b in want))
                self.assertEqual(sum(stats["dropped"].values()), 0)
                self.assertEqual([b[1] for b in batches], list(range(len(batches))), "batches in order")
                print("%s: %d whole packets in %d batches" % (os.path.basename(path), len(got), len(batches)))

    def test_bytes_end_batches_and_oversize_is_counted(self):
        # tls.pcap with 1000 bytes a batch: the longer frames are counted, the others come whole, in order.
        path = os.path.join(DATA, "captures", "tls.pcap")
        want = read_pcap(path)
        fit = [(ts, b) for ts, b in want if len(b) <= 1000]
        self.assertLess(len(fit), len(want), "tls.pcap has frames over 1000 bytes")
        got, batches, stats = receive_flat("pcap:" + path, batch=64, flat_bytes=1000, timeout_ms=50)
        self.assertEqual([(ts, b) for b, ts, _q in got], fit)
        self.assertEqual(stats["dropped"]["flat_oversize"], len(want) - len(fit))
        self.assertEqual(stats["offered"], stats["delivered"] + sum(stats["dropped"].values()))
        self.assertTrue(any(reason == "bytes_full" for *_x, reason in batches), batches)
        # A batch ended by its bytes had no room for the next packet of the capture.
        at = 0
        for _q, _seq, count, nbytes, reason in batches:
            at += count
            if reason == "bytes_full":
                self.assertGreater(nbytes + len(fit[at][1]), 1000)

    def test_synthetic_1500_on_four_queues(self):
        got, batches, stats = receive_flat("synthetic:count=8000,size=1500,seed=7,queues=4", queues=4, batch=256,
                                           flat_bytes=1500 * 100)
        self.assertEqual(len(got), 8000)
        self.assertTrue(all(len(b) == 1500 for b, _ts, _q in got))
        self.assertEqual(stats["offered"], 8000)
        self.assertEqual(stats["delivered_bytes"], 8000 * 1500)
        self.assertTrue(all(count <= 100 for _q, _s, count, _b, _r in batches), "100 frames fill 150000 bytes")
        for q in range(4):
            mine = [s for qq, s, *_x in batches if qq == q]
            self.assertEqual(mine, list(range(len(mine))), "queue %d's batches in order" % q)

    def test_copy_keeps_the_frames(self):
        with gnio.Receiver("pcap:" + os.path.join(DATA, "captures", "dns.pcap"), gpu="cpu", batch=4,
                           layout="flat") as rx:
            with rx.next_batch(5000) as batch:
                first = np.from_dlpack(batch.data).copy()
                offsets = np.from_dlpack(batch.offsets).copy()
                copy = batch.copy()
            self.assertEqual(np.from_dlpack(copy.data).tobytes(), first.tobytes())
            self.assertTrue((np.from_dlpack(copy.offsets) == offsets).all())
            self.assertEqual(copy.layout, "flat")

    def test_offsets_of_a_padded_batch_and_bad_arguments(self):
        with gnio.Receiver("synthetic:count=4,size=64", gpu="cpu", batch=4, snap=16) as rx:
            with rx.next_batch(5000) as batch:
                with self.assertRaises(gnio.Error) as e:
                    batch.offsets
                self.assertEqual(e.exception.code, "NOT_SUPPORTED")
                self.assertIn("layout='flat'", str(e.exception))
        cases = [
            (dict(layout="ragged"), "layout='ragged'"),
            (dict(layout="flat", snap=64), "snap=64"),
            (dict(flat_bytes=4096), "flat_bytes=4096"),
            (dict(layout="flat", flat_bytes=-1), "flat_bytes=-1"),
            (dict(layout="flat", flat_bytes=2**32), "flat_bytes=4294967296"),
            (dict(layout="flat", flat_bytes="big"), "flat_bytes='big'"),
        ]
        for kw, text in cases:
            with self.subTest(**{k: str(v) for k, v in kw.items()}):
                with self.assertRaises(gnio.Error) as e:
                    gnio.Receiver("synthetic:count=1", gpu="cpu", **kw)
                self.assertEqual(e.exception.code, "INVALID_VALUE")
                self.assertIn(text, str(e.exception))


class Accounting(unittest.TestCase):
    def test_held_batches_count_pool_full(self):
        with gnio.Receiver("synthetic:count=5000,size=64", gpu="cpu", batch=100, buffers=2, snap=64,
                           when_full="drop") as rx:
            held = [rx.next_batch(5000), rx.next_batch(5000)]
            self.assertTrue(all(b is not None for b in held))
            for _ in range(1000):
                s = rx.stats()
                if s["delivered"] + s["dropped"]["pool_full"] == 5000:
                    break
                rx.next_batch(10)  # nothing comes: both buffers are held
            self.assertEqual(s["held"], 2)
            self.assertEqual(s["delivered"], 200)
            self.assertEqual(s["dropped"]["pool_full"], 4800)
            rx.close()
            s = rx.stats()
            self.assertEqual(s["offered"], 5000)
            self.assertEqual(s["offered"], s["delivered"] + sum(s["dropped"].values()))
            self.assertEqual(s["in_flight"], 0)
            self.assertEqual(int(np.from_dlpack(held[0].lengths)[0]), 64, "held buffers stay readable after close")
            for b in held:
                b.release()

    def test_releasing_out_of_order_loses_nothing(self):
        total = 0
        with gnio.Receiver("synthetic:count=3000,size=64-200,seed=2", gpu="cpu", batch=50, buffers=3, snap=32) as rx:
            self.assertEqual(rx.config["when_full"], "wait")
            pending = []
            for batch in rx.batches(timeout_ms=5000):
                total += batch.count
                pending.append(batch)
                if len(pending) == 2:
                    pending[1].release()
                    pending[0].release()
                    pending = []
            for b in pending:
                b.release()
        self.assertEqual(total, 3000)


class Lifetime(unittest.TestCase):
    def test_tensor_outlives_with_and_holds_the_buffer(self):
        with gnio.Receiver("pcap:" + os.path.join(DATA, "captures", "dns.pcap"), gpu="cpu", batch=4, buffers=2,
                           snap=64) as rx:
            batch = rx.next_batch(5000)
            with batch:
                x = np.from_dlpack(batch.data)
                copy = batch.copy()
                first = x.copy()
            self.assertTrue(batch.released)
            with self.assertRaises(gnio.Error) as e:
                batch.data
            self.assertEqual(e.exception.code, "BAD_STATE")
            self.assertEqual(rx.stats()["held"], 1, "the tensor keeps its buffer")
            self.assertTrue((x == first).all())
            del x
            self.assertEqual(rx.stats()["held"], 0, "the buffer goes back with the last tensor")
            self.assertTrue((np.from_dlpack(copy.data) == first).all(), "copy() is memory of its own")
            self.assertEqual(int(np.from_dlpack(copy.lengths).sum()), copy.bytes)

    def test_views_are_read_only_and_host_arrays(self):
        with gnio.Receiver("synthetic:count=10,size=64", gpu="cpu", batch=10, snap=16) as rx:
            with rx.next_batch(5000) as batch:
                self.assertEqual(batch.data.__dlpack_device__(), (1, 0))  # kDLCPU
                a = np.asarray(batch.data)
                self.assertFalse(a.flags.writeable)
                self.assertFalse(hasattr(batch.data, "__cuda_array_interface__"))
                with self.assertRaises(ValueError):
                    batch.data.__dlpack__(stream=7)
                del a


class Errors(unittest.TestCase):
    def test_bad_arguments_carry_codes(self):
        cases = [
            (dict(spec="synthetic:count=1", snap=0), "INVALID_VALUE", "snap=0"),
            (dict(spec="synthetic:count=1", batch=0), "INVALID_VALUE", "batch=0"),
            (dict(spec="synthetic:count=1", queues=3), "INVALID_VALUE", "queues=3"),
            (dict(spec="synthetic:count=1", when_full="later"), "INVALID_VALUE", "when_full"),
            (dict(spec="nosuchdriver:x"), None, "nosuchdriver"),
            (dict(spec="pcap:/nonexistent/file.pcap"), None, "/nonexistent/file.pcap"),
        ]
        for kw, code, text in cases:
            with self.subTest(**{k: str(v) for k, v in kw.items()}):
                with self.assertRaises(gnio.Error) as e:
                    gnio.Receiver(gpu="cpu", **kw)
                if code:
                    self.assertEqual(e.exception.code, code)
                self.assertRegex(e.exception.code, "^[A-Z_]+$")
                self.assertIn(text, str(e.exception))
                self.assertEqual(e.exception.message, str(e.exception))


class Services(unittest.TestCase):
    def test_caps_and_doctor_are_dicts(self):
        c = gnio.caps(nic="synthetic:count=1", gpu="cpu")
        self.assertIsInstance(c, dict)
        self.assertIn("features", c)
        self.assertIn("schema_version", c)
        d = gnio.doctor(nic="synthetic:count=1", gpu="cpu")
        self.assertEqual(d["schema_version"], 1)
        self.assertTrue(d["checks"])
        self.assertIn(d["exit_code"], (0, 1))

    def test_run_packet_processing_equals_the_cli(self):
        rx = "pcap:" + os.path.join(DATA, "captures", "dns.pcap")
        report = gnio.run_packet_processing(rx, gpu="cpu")
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "r.json")
            subprocess.run([os.environ["GNIO_CLI"], "run", "packet-processing", "--rx", rx, "--gpu", "cpu",
                            "--quiet", "--json", out], check=True, capture_output=True)
            with open(out) as f:
                cli = json.load(f)
        for key in ("schema", "schema_version", "protocols", "dns", "http", "tls", "checksums", "drops",
                    "malformed", "flows"):
            self.assertEqual(report[key], cli[key], key)
        with self.assertRaises(gnio.Error):
            gnio.run_packet_processing("nosuchdriver:x", gpu="cpu")


class Interrupt(unittest.TestCase):
    def test_ctrl_c_stops_and_drains(self):
        code = textwrap.dedent("""
            import gnio, sys
            with gnio.Receiver("synthetic:size=64", gpu="cpu", batch=64, snap=16) as rx:
                try:
                    for batch in rx.batches(timeout_ms=100):
                        with batch:
                            print("batch", flush=True)
                except KeyboardInterrupt:
                    print("interrupted", flush=True)
            s = rx.stats()
            print("accounted", s["offered"] == s["delivered"] + sum(s["dropped"].values()), s["in_flight"],
                  s["delivered"] > 0, flush=True)
        """)
        p = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True, env=os.environ)
        self.assertEqual(p.stdout.readline().strip(), "batch")
        p.send_signal(signal.SIGINT)
        out, _ = p.communicate(timeout=60)
        self.assertEqual(p.returncode, 0, out)
        self.assertIn("interrupted", out)
        self.assertIn("accounted True 0 True", out)


if __name__ == "__main__":
    unittest.main(verbosity=2)
