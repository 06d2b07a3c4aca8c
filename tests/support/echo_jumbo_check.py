#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Runs the echo example in pcap mode on a capture of jumbo frames and checks
the capture it wrote against the input, frame for frame and in order, with
an answer built here independently of gnio: MACs, IP addresses and UDP/TCP
ports swapped, an ICMP/ICMPv6 echo request turned into a reply with its
checksum computed from scratch. tshark/capinfos, where installed, confirm
the frame lengths and the reply checksums as an outside reader of the file.
usage: echo_jumbo_check.py ECHO IN.pcap OUT.pcap [echo options...]
Exit: 0 pass, 1 fail, 77 skip (echo found no GPU with --require-gpu)."""
import shutil
import struct
import subprocess
import sys


def read_pcap(path):
    with open(path, "rb") as f:
        blob = f.read()
    magic = struct.unpack_from("<I", blob)[0]
    assert magic in (0xA1B2C3D4, 0xA1B23C4D), f"{path}: not a little-endian pcap (magic {magic:#x})"
    frames, off = [], 24
    while off + 16 <= len(blob):
        caplen, wire = struct.unpack_from("<II", blob, off + 8)
        frames.append((wire, blob[off + 16:off + 16 + caplen]))
        off += 16 + caplen
    return frames


def checksum(data):
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack("!%dH" % (len(data) // 2), data))
    while s > 0xFFFF:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def echoed(req):
    """What echo sends back for req: addresses swapped, echo requests answered."""
    r = bytearray(req)
    r[0:6], r[6:12] = req[6:12], req[0:6]
    ethertype = struct.unpack_from("!H", req, 12)[0]
    if ethertype == 0x0800:
        ihl = (req[14] & 15) * 4
        r[26:30], r[30:34] = req[30:34], req[26:30]
        proto, l4 = req[23], 14 + ihl
        total = struct.unpack_from("!H", req, 16)[0]
        if proto in (6, 17):
            r[l4:l4 + 2], r[l4 + 2:l4 + 4] = req[l4 + 2:l4 + 4], req[l4:l4 + 2]
        elif proto == 1 and req[l4] == 8:
            r[l4] = 0
            r[l4 + 2:l4 + 4] = b"\0\0"
            r[l4 + 2:l4 + 4] = struct.pack("!H", checksum(bytes(r[l4:14 + total])))
    elif ethertype == 0x86DD:
        r[22:38], r[38:54] = req[38:54], req[22:38]
        nh, l4, plen = req[20], 54, struct.unpack_from("!H", req, 18)[0]
        if nh in (6, 17):
            r[l4:l4 + 2], r[l4 + 2:l4 + 4] = req[l4 + 2:l4 + 4], req[l4:l4 + 2]
        elif nh == 58 and req[l4] == 128:
            r[l4] = 129
            r[l4 + 2:l4 + 4] = b"\0\0"
            pseudo = bytes(r[22:54]) + struct.pack("!IxxxB", plen, 58)
            r[l4 + 2:l4 + 4] = struct.pack("!H", checksum(pseudo + bytes(r[l4:l4 + plen])))
    return bytes(r)


def tshark_lines(path, fields):
    cmd = ["tshark", "-n", "-r", path, "-o", "ip.check_checksum:TRUE", "-T", "fields"]
    for f in fields:
        cmd += ["-e", f]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    return [line.split("\t") for line in out.splitlines()]


def main():
    echo, src, dst, opts = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
    run = subprocess.run([echo, "--mode", "pcap", "--in", "pcap:" + src, "--out", "pcap-out:" + dst, "--verify"] + opts,
                         capture_output=True, text=True)
    print(run.stdout + run.stderr, end="")
    if run.returncode == 77:
        return 77
    failures = []
    if run.returncode != 0:
        failures.append(f"echo exited with {run.returncode}")
    want, got = read_pcap(src), read_pcap(dst)
    print(f"input {len(want)} frames of {[w for w, _ in want]} bytes; output {len(got)} of {[w for w, _ in got]}")
    if len(got) != len(want):
        failures.append(f"{len(want)} frames in, {len(got)} out")
    for i, ((_, req), (wire, rep)) in enumerate(zip(want, got)):
        exp = echoed(req)
        if wire != len(exp) or rep != exp:
            first = next((k for k in range(min(len(rep), len(exp))) if rep[k] != exp[k]), min(len(rep), len(exp)))
            failures.append(f"frame {i}: {wire} bytes on the wire, {len(rep)} captured, want {len(exp)}; "
                            f"first difference at byte {first}")
    if shutil.which("tshark"):
        lens = tshark_lines(dst, ["frame.len", "frame.cap_len"])
        if [int(x[0]) for x in lens] != [len(r) for _, r in want] or any(x[0] != x[1] for x in lens):
            failures.append(f"tshark reads frame lengths {lens} in {dst}")
        for i, f in enumerate(tshark_lines(dst, ["icmp.type", "icmp.checksum.status", "icmpv6.type",
                                                 "icmpv6.checksum.status"])):
            f += [""] * (4 - len(f))
            if (f[0] and (f[0] != "0" or f[1] != "1")) or (f[2] and (f[2] != "129" or f[3] != "1")):
                failures.append(f"tshark: frame {i} is not an echo reply with a good checksum: {f}")
    else:
        print("tshark is not installed: the outside reading of the capture is not made")
    if shutil.which("capinfos"):
        info = subprocess.run(["capinfos", "-c", "-M", dst], capture_output=True, text=True).stdout
        print(info.strip().splitlines()[-1])
    for f in failures:
        print("FAIL:", f)
    print("PASS" if not failures else "FAIL")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
