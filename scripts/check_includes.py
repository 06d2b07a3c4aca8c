#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Checks that every #include "..." of the tree follows the layers.

Usage: check_includes.py [SOURCE_DIR]   (default: the parent of scripts/)

Every quoted include of src/, include/, apps/, examples/, bench/, tests/ and
fuzz/ is resolved to a file of the tree (next to the including file first,
then the include roots the CMake targets use), and the edge between the two
folders is looked up in ALLOWED below. Each include the table does not allow
is printed as

    FILE:LINE: FROM -> TO (#include "PATH"): RULE

and the script exits 1 if there is any. docs/ARCHITECTURE.md copies the
table; this file is the one that counts. Python 3 standard library only.
"""

import os
import re
import sys

# Folders, matched longest prefix first. A path under src/backends/<name>/
# is the driver <name> (see DRIVER below).
FOLDERS = [
    "include/gnio/dev",     # device API, header-only, __host__ __device__
    "include/gnio",         # public host API (the installed headers)
    "src/core",             # log, status, text escaping, stop signal, host threads
    "src/gpu",              # the GPU context (layer 2)
    "src/backends",         # the driver table and the Backend interface
    "src/engine",           # RX and TX engines, queue state
    "src/eth",              # Ethernet queues (layer 1)
    "src/gpu_queue",        # GPU-visible queue handles (layer 3)
    "src/kernel",           # persistent kernels (layer 4)
    "src/caps",             # capability discovery
    "src/doctor",           # gnio doctor / diagnose
    "src/metrics",          # Prometheus exposition and /metrics server
    "src/filter",           # tcpdump filters: compiled by libpcap, validated
    "src/export",           # IPFIX export and the event stream's sink
    "src/batch",            # the batch receiver (packets gathered into batches on the GPU)
    "python",               # the Python module, over the public API only
    "apps/packet_processing",  # the reference application (gnio_pp)
    "apps/gnio",            # the gnio CLI
    "examples/common",      # the examples' shared teaching code
    "examples",             # one folder per example
    "bench",                # benchmarks
    "tests",                # tests and their helpers (tests/support/)
    "fuzz",                 # fuzz targets
]
DRIVER = "src/backends/<driver>"

ALL = "*"  # every header of the target folder

# The allowed edges: ALLOWED[X][Y] says that folder X may include folder Y,
# either any header of it (ALL) or only the named headers (its interface).
# A folder always includes its own headers. Lower layers never include
# higher ones; library folders reach each other through interface headers;
# everything above the library (apps, examples) reaches it through
# include/gnio only. Tests, benchmarks and fuzz targets are white-box: they
# may include any header of the library's folders.
LIBRARY = ["include/gnio/dev", "include/gnio", "src/core", "src/gpu", "src/backends",
           DRIVER, "src/engine", "src/eth", "src/gpu_queue", "src/kernel", "src/caps",
           "src/doctor", "src/metrics", "src/filter", "src/export", "src/batch"]
PUBLIC = {"include/gnio/dev": ALL, "include/gnio": ALL}

ALLOWED = {
    "include/gnio/dev": {},
    "include/gnio": {"include/gnio/dev": ALL},
    "src/core": dict(PUBLIC),
    "src/gpu": {**PUBLIC, "src/core": ALL},
    # The driver table reaches a driver only through its report (caps.hpp,
    # the table's describe column); a driver never includes another driver.
    "src/backends": {**PUBLIC, "src/core": ALL, DRIVER: {"caps.hpp"}},
    # A driver's doctor checks (its doctor.cpp) implement the doctor's check
    # interface: the one edge from a driver up, to that interface only.
    DRIVER: {**PUBLIC, "src/core": ALL, "src/backends": ALL, "src/doctor": {"checks.hpp", "util.hpp"}},
    "src/engine": {**PUBLIC, "src/core": ALL, "src/gpu": ALL,
                   "src/backends": {"backend.hpp"}},
    "src/eth": {**PUBLIC, "src/core": ALL, "src/gpu": {"gpu_impl.hpp"},
                "src/engine": {"queue_state.hpp", "rx_engine.hpp", "tx_engine.hpp"}},
    "src/gpu_queue": {**PUBLIC, "src/core": ALL, "src/gpu": {"gpu_impl.hpp"},
                      "src/engine": {"queue_state.hpp", "rx_engine.hpp", "tx_engine.hpp"}},
    "src/kernel": {**PUBLIC, "src/core": ALL, "src/gpu": {"gpu_impl.hpp", "cuda_util.hpp"}},
    "src/caps": {**PUBLIC, "src/core": ALL, "src/gpu": {"gpu_impl.hpp", "cuda_util.hpp"},
                 "src/backends": {"backend.hpp", "spec.hpp"}},
    "src/doctor": {**PUBLIC, "src/core": ALL, "src/backends": {"backend.hpp", "spec.hpp"}},
    "src/metrics": {**PUBLIC, "src/core": ALL},
    "src/filter": {**PUBLIC, "src/core": ALL},
    "src/export": {**PUBLIC, "src/core": ALL},
    "src/batch": dict(PUBLIC),
    "python": dict(PUBLIC),
    "apps/packet_processing": dict(PUBLIC),
    "apps/gnio": {**PUBLIC, "apps/packet_processing": ALL},
    "examples/common": dict(PUBLIC),
    "examples": {**PUBLIC, "examples/common": ALL},
    "bench": {**{f: ALL for f in LIBRARY}, "apps/packet_processing": ALL, "tests": ALL},
    # Tests may test the examples' own code (the example classifier on
    # adversarial frames), never use examples/common as their helpers.
    "tests": {**{f: ALL for f in LIBRARY}, "apps/packet_processing": ALL, "examples": ALL},
    "fuzz": {**{f: ALL for f in LIBRARY}, "apps/packet_processing": ALL},
}

SCANNED = ["src", "include", "apps", "examples", "bench", "tests", "fuzz", "python"]
# Where a path that is not next to the including file is looked for: the
# include directories the CMake targets declare.
ROOTS = ["include", "src", "apps", "tests/support", "tests/net", "tests/engine_tx",
         "examples", "bench"]
EXTENSIONS = (".h", ".hh", ".hpp", ".cuh", ".inc", ".c", ".cc", ".cpp", ".cu", ".in")
INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"')


def folder_of(rel):
    """The folder (a key of ALLOWED) a tree-relative path belongs to."""
    parts = rel.split("/")
    if len(parts) > 3 and parts[0] == "src" and parts[1] == "backends":
        return DRIVER, "/".join(parts[:3])
    for f in FOLDERS:
        if rel == f or rel.startswith(f + "/"):
            return f, f
    return None, None


def resolve(root, including_rel, path):
    here = os.path.dirname(including_rel)
    for base in [here] + ROOTS:
        cand = os.path.normpath(os.path.join(base, path))
        if cand.startswith(".."):
            continue
        if os.path.isfile(os.path.join(root, cand)):
            return cand.replace(os.sep, "/")
    return None


# The layers, lowest first, for the messages only (ALLOWED decides).
LAYERS = [["include/gnio/dev"], ["include/gnio"], ["src/core"],
          ["src/gpu", "src/backends", DRIVER, "src/filter"], ["src/engine"],
          ["src/eth", "src/kernel"], ["src/gpu_queue"],
          ["src/caps", "src/doctor", "src/metrics", "src/export"],
          ["apps/packet_processing", "examples/common"], ["apps/gnio", "examples"],
          ["bench", "tests", "fuzz"]]
RANK = {f: i for i, layer in enumerate(LAYERS) for f in layer}


def rule_text(src_folder, dst_folder, allowed):
    if allowed is None and RANK.get(src_folder, 0) < RANK.get(dst_folder, 0):
        return (f"a lower layer never includes a higher one ({src_folder} is below "
                f"{dst_folder})")
    if allowed is None and dst_folder.startswith("examples") and src_folder in ("tests", "bench", "fuzz"):
        return "examples are teaching code: test helpers live in tests/support/"
    if allowed is None:
        if src_folder.startswith(("apps/", "examples")) and dst_folder.startswith(("src/", "apps/", "examples", "bench", "tests")):
            return (f"{src_folder} reaches the library through include/gnio only"
                    if dst_folder.startswith("src/") else
                    f"{src_folder} may not include {dst_folder}")
        if src_folder.startswith(("include/", "src/")) and not dst_folder.startswith(("include/", "src/")):
            return "the library never includes applications, examples, tests or benchmarks"
        if src_folder == "include/gnio" and dst_folder.startswith("src/"):
            return "public headers include public headers only"
        return f"{src_folder} may not include {dst_folder} (no such edge in the table)"
    names = ", ".join(sorted(allowed))
    return f"{src_folder} reaches {dst_folder} through its interface only ({names})"


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                           os.path.join(os.path.dirname(__file__), ".."))
    violations, unresolved, checked = [], [], 0
    for top in SCANNED:
        for dirpath, dirnames, filenames in os.walk(os.path.join(root, top)):
            dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
            for name in sorted(filenames):
                if not name.endswith(EXTENSIONS):
                    continue
                full = os.path.join(dirpath, name)
                rel = os.path.relpath(full, root).replace(os.sep, "/")
                src_folder, src_unit = folder_of(rel)
                if src_folder is None:
                    continue
                try:
                    with open(full, encoding="utf-8", errors="replace") as f:
                        lines = f.readlines()
                except OSError as e:
                    print(f"{rel}: cannot read: {e}", file=sys.stderr)
                    continue
                for lineno, line in enumerate(lines, 1):
                    m = INCLUDE.match(line)
                    if not m:
                        continue
                    path = m.group(1)
                    target = resolve(root, rel, path)
                    if target is None:
                        unresolved.append(f"{rel}:{lineno}: #include \"{path}\"")
                        continue
                    checked += 1
                    dst_folder, dst_unit = folder_of(target)
                    if dst_folder is None or dst_unit == src_unit:
                        continue
                    if src_folder == DRIVER and dst_folder == DRIVER:
                        violations.append((rel, lineno, src_unit, dst_unit, path,
                                           "a driver never includes another driver"))
                        continue
                    allowed = ALLOWED.get(src_folder, {}).get(dst_folder)
                    if allowed == ALL:
                        continue
                    if allowed is not None and os.path.basename(target) in allowed:
                        continue
                    violations.append((rel, lineno, src_unit, dst_unit, path,
                                       rule_text(src_folder, dst_folder, allowed)))
    for rel, lineno, src_unit, dst_unit, path, why in violations:
        print(f"{rel}:{lineno}: {src_unit} -> {dst_unit} (#include \"{path}\"): {why}")
    for u in unresolved:
        print(f"note: not in the tree (generated or system), not checked: {u}", file=sys.stderr)
    print(f"{checked} includes checked, {len(violations)} break the layers", file=sys.stderr)
    return 1 if violations else 0


if __name__ == "__main__":
    sys.exit(main())
