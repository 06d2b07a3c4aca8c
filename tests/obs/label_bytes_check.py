#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Runs label_bytes (argv[1]) and reads its exposition with prometheus_client's
text parser: tests/support/check_exposition.py must accept it, and every
`value` label must read back as the bytes in its `bytes_hex` label written by
gnio's rule (printable ASCII kept but `\\` as `\\\\`, well-formed UTF-8 kept
but C1 controls, every other byte as `\\xNN`), which is reimplemented here
on Python's own strict UTF-8 decoder. Exits 1 on the first difference."""
import pathlib
import subprocess
import sys

from prometheus_client.parser import text_string_to_metric_families

CHECK = pathlib.Path(__file__).resolve().parent.parent / "support" / "check_exposition.py"


def escaped(data: bytes) -> str:
    out, i = [], 0
    while i < len(data):
        c = data[i]
        if 0x20 <= c <= 0x7E:
            out.append("\\\\" if c == 0x5C else chr(c))
            i += 1
            continue
        for n in (2, 3, 4):
            try:
                ch = data[i:i + n].decode("utf-8")
            except UnicodeDecodeError:
                continue
            if len(ch) == 1 and ord(ch) > 0x9F:
                out.append(ch)
                i += n
                break
        else:
            out.append(f"\\x{c:02x}")
            i += 1
    return "".join(out)


def unescaped(text: str) -> bytes:
    out, i = bytearray(), 0
    while i < len(text):
        if text.startswith("\\\\", i):
            out.append(0x5C)
            i += 2
        elif text.startswith("\\x", i):
            out.append(int(text[i + 2:i + 4], 16))
            i += 4
        else:
            out += text[i].encode("utf-8")
            i += 1
    return bytes(out)


def main() -> int:
    raw = subprocess.run([sys.argv[1]], check=True, stdout=subprocess.PIPE).stdout
    checked = subprocess.run([str(CHECK)], input=raw, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if checked.returncode != 0:
        print(f"check_exposition.py rejected the exposition: {checked.stderr.decode(errors='replace')}",
              file=sys.stderr)
        return 1
    samples = [s for f in text_string_to_metric_families(raw.decode("utf-8")) for s in f.samples]
    if len(samples) != 256 + 1 + 10 + 500:
        print(f"{len(samples)} samples read back, 767 written", file=sys.stderr)
        return 1
    for s in samples:
        original = bytes.fromhex(s.labels["bytes_hex"])
        want = escaped(original)
        if s.labels["value"] != want:
            print(f"bytes {original!r}: value {s.labels['value']!r}, want {want!r}", file=sys.stderr)
            return 1
        if unescaped(s.labels["value"]) != original:
            print(f"bytes {original!r}: value {s.labels['value']!r} does not read back", file=sys.stderr)
            return 1
    print(f"{checked.stdout.decode().strip()}; {len(samples)} label values of any bytes read back")
    return 0


if __name__ == "__main__":
    sys.exit(main())
