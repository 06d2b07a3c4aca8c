#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Checks a Prometheus text exposition read from stdin, as promtool's
`check metrics` does, without a Prometheus server: prometheus_client's own
parser must accept every line, and every family must have HELP and TYPE,
counters a `_total` suffix, names and label names the allowed characters.
Prints what it found and exits 1 on the first problem."""
import re
import sys

from prometheus_client.parser import text_string_to_metric_families

NAME = re.compile(r"^[a-zA-Z_:][a-zA-Z0-9_:]*$")
LABEL = re.compile(r"^[a-zA-Z_][a-zA-Z0-9_]*$")


def main() -> int:
    text = sys.stdin.read()
    if not text.endswith("\n"):
        print("exposition: the text does not end in a newline", file=sys.stderr)
        return 1
    helped = set(re.findall(r"^# HELP (\S+) ", text, re.M))
    typed = dict(re.findall(r"^# TYPE (\S+) (\S+)$", text, re.M))
    families = samples = 0
    try:
        for family in text_string_to_metric_families(text):
            families += 1
            name = family.name
            if not NAME.match(name):
                raise ValueError(f"family name {name!r} has characters Prometheus does not allow")
            exposed = name + "_total" if family.type == "counter" else name
            if exposed not in helped and name not in helped:
                raise ValueError(f"family {exposed} has no HELP line")
            if exposed not in typed and name not in typed:
                raise ValueError(f"family {exposed} has no TYPE line")
            if family.type == "counter" and exposed not in typed:
                raise ValueError(f"counter {name} is not named with the _total suffix")
            for s in family.samples:
                samples += 1
                for label in s.labels:
                    if not LABEL.match(label):
                        raise ValueError(f"sample {s.name} has a label name {label!r} Prometheus does not allow")
    except ValueError as e:
        print(f"exposition rejected: {e}", file=sys.stderr)
        return 1
    if families == 0:
        print("exposition: no metric family in the text", file=sys.stderr)
        return 1
    print(f"exposition ok: {families} families, {samples} samples")
    return 0


if __name__ == "__main__":
    sys.exit(main())
