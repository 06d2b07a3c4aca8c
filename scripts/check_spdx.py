#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Every source, build and script file of the tree names its license in an
SPDX-License-Identifier line near its top (README.md, "License"). Prints each
file that does not and exits 1 if there is any. Usage: check_spdx.py ROOT"""

import os
import subprocess
import sys

SOURCES = (".cpp", ".hpp", ".cu", ".cuh", ".h", ".c", ".cc", ".cpp.in", ".py", ".sh", ".cmake")
SKIPPED = ("data/", "fuzz/corpus/", "tests/fuzz/regressions/")


def wants_spdx(path):
    name = os.path.basename(path)
    if path.startswith(SKIPPED):
        return False
    return path.endswith(SOURCES) or name == "CMakeLists.txt" or path == ".ci/run" or \
        (path.startswith("scripts/") and "." not in name)


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "."
    listed = subprocess.run(["git", "-C", root, "ls-files"], capture_output=True, text=True)
    if listed.returncode != 0:
        # Not a git checkout (an exported tree): every file under root.
        paths = [os.path.relpath(os.path.join(d, f), root) for d, _, fs in os.walk(root) for f in fs]
    else:
        paths = listed.stdout.split()
    missing = []
    for p in sorted(paths):
        if not wants_spdx(p) or not os.path.isfile(os.path.join(root, p)):
            continue
        with open(os.path.join(root, p), "rb") as f:
            if b"SPDX-License-Identifier:" not in f.read(400):
                missing.append(p)
    for p in missing:
        print(f"{p}: no SPDX-License-Identifier line in its first lines; add "
              "'// SPDX-License-Identifier: Apache-2.0' (or '#' for scripts and CMake)")
    print(f"{len(missing)} file(s) without an SPDX line")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
