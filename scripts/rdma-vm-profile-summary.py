#!/usr/bin/env python3
"""Summarizes scripts/rdma-vm-profile.sh's recordings: emulated CPU time per call (or per MiB) by kind of work.

usage: rdma-vm-profile-summary.py OUT_DIR HZ

Reads OUT_DIR/<name>-dso.txt ("perf report -n --sort comm,dso") and OUT_DIR/<name>.txt (the run's own output).
perftest runs were recorded whole, twice (<test>-<iterations>-dso.txt); their cost per iteration is the difference
of the two recordings over the difference of their iterations, so set-up drops out. RdmaPerfMain's recordings hold only measured calls.
"""
import os
import re
import sys

KINDS = ["JIT compilers", "Java code", "JVM runtime", "kernel and rxe", "native libraries", "other threads",
         "profiler", "idle"]


def kind(comm, dso):
    if comm.startswith(("C1 CompilerThre", "C2 CompilerThre")):
        return "JIT compilers"
    if comm == "swapper":
        return "idle"
    if comm in ("perf", "perf-exec"):
        return "profiler"
    app = comm == "java" or comm.startswith(("rdmarpc-", "ib_"))
    if not app:
        return "other threads"
    if dso.startswith("[JIT]"):
        return "Java code"
    if dso == "libjvm.so":
        return "JVM runtime"
    if dso.startswith("[") and dso != "[vdso]":
        return "kernel and rxe"
    return "native libraries"


def samples(path):
    by_kind = dict.fromkeys(KINDS, 0)
    with open(path) as f:
        for line in f:
            cols = re.split(r"\s{2,}", line.strip())
            if len(cols) < 4 or not cols[0].endswith("%"):
                continue
            by_kind[kind(cols[2], cols[3])] += int(cols[1])
    return by_kind


def figure_and_units(text):
    """The run's figure line and how many units (calls, or MiB) its measured loop moved."""
    for line in text.splitlines():
        if (not line.startswith("rdmarpc-perf:") or " transport " in line or "warm-up" in line
                or "measured from" in line):
            continue
        # a throughput figure is the median of several measured windows, all of them recorded
        windows = re.search(r"\(median of ([^)]*)\)", line)
        windows = len(windows.group(1).split(",")) if windows else 1
        m = re.search(r"unary (\d+) MiB attachments: .* over (\d+) calls", line)
        if m:
            return line, int(m.group(1)) * int(m.group(2)) * windows, "MiB"
        m = re.search(r"over (\d+) (calls|messages)", line)
        if m:
            per = "MiB" if "1 MiB" in line else "call"
            return line, int(m.group(1)) * windows, per
    return None, 0, "call"


def row(name, figure, unit, per_unit_ms):
    total = sum(per_unit_ms.values())
    parts = ", ".join(f"{k} {v:.2f}" for k, v in per_unit_ms.items() if v >= 0.005 * max(total, 1e-9))
    print(f"=== {name}: {figure}")
    print(f"    emulated CPU per {unit}: {total:.2f} ms = {parts}")


def main():
    out, hz = sys.argv[1], float(sys.argv[2])
    ms = 1000.0 / hz
    for test, unit in (("ib_read_bw", "MiB"), ("ib_read_bw_t1", "MiB"), ("ib_send_lat", "round trip")):
        counts = sorted(int(m.group(1)) for m in (re.match(test + r"-(\d+)-dso\.txt$", f) for f in os.listdir(out)) if m)
        if len(counts) != 2:
            print(f"=== {test}: not recorded twice")
            continue
        a, b = (samples(os.path.join(out, f"{test}-{n}-dso.txt")) for n in counts)
        with open(os.path.join(out, f"{test}-{counts[1]}.txt")) as f:
            result = [l.strip() for l in f if re.match(r"^\s*\d+\s+\d+\s+[\d.]+", l)]
        per = {k: (b[k] - a[k]) * ms / (counts[1] - counts[0]) for k in KINDS}
        row(test, " ".join(result[-1].split()) if result else "no result line", unit, per)
    for fname in sorted(os.listdir(out)):
        if not fname.endswith("-dso.txt") or fname.startswith("ib_"):
            continue
        name = fname[: -len("-dso.txt")]
        with open(os.path.join(out, name + ".txt")) as f:
            text = f.read()
        figure, units, unit = figure_and_units(text)
        warm = [l.split(": ", 1)[1] for l in text.splitlines() if "warm-up of" in l]
        if not units:
            print(f"=== {name}: no figure (see {name}.txt)")
            continue
        per = {k: v * ms / units for k, v in samples(os.path.join(out, fname)).items()}
        row(name, figure.split(": ", 1)[1] + (f" [{warm[0]}]" if warm else ""), unit, per)
        with open(os.path.join(out, name + "-sym.txt")) as f:
            for line in f.readlines()[:8]:
                print("      " + " ".join(line.split())[:150])


if __name__ == "__main__":
    main()
