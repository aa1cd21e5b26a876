#!/usr/bin/env python3
"""The checks that keep the house (tools/test's first stage).

Fails, naming each file, on:
  time    a real-time read (absl::Now, the std::chrono clocks, clock_gettime,
          gettimeofday, time(nullptr)) in library code: outside common/clock,
          the binaries' mains (*_main.cc), tests (*_test.cc, tests/), benches
          (*_bench.cc) and test environments (*_test_env.cc, *_test_server.cc).
          Code takes a Clock (common/clock.h), or `absl::Time now`.
  sleep   a sleep (absl::SleepFor, sleep_for, usleep, sleep) in a unit test
          (a *_test.cc beside its code; tests/ holds the end-to-end tests,
          which poll real processes with a deadline). Unit tests advance a
          FakeClock or wait for a positive signal.
  readme  a folder README.md over 40 lines (STYLE asks 10-30; reference
          material belongs in docs/).
  size    a source file (.cc .h .py .sh) over 800 lines.
  once    absl::call_once or absl::once_flag: a thread that waits in it is
          released inside Debian's uninstrumented Abseil, so tsan reports the
          once-built value as a race (CI's tsan stage did). std::call_once
          waits in pthread_once, which tsan sees.

tools/house_allowlist.txt names each exception and why: "RULE PATH  # why".
An entry whose file no longer breaks its rule fails too, so the list only
shrinks. Run: tools/check_house.py [--root DIR]
"""
import argparse
import os
import re
import subprocess
import sys

TIME_RE = re.compile(
    r"absl::Now\(\)|absl::GetCurrentTimeNanos\(\)|"
    r"(system_clock|steady_clock|high_resolution_clock)::now\(\)|"
    r"\bclock_gettime\s*\(|\bgettimeofday\s*\(|\btime\(\s*(nullptr|NULL|0)\s*\)")
SLEEP_RE = re.compile(r"absl::SleepFor\s*\(|\bsleep_for\s*\(|\busleep\s*\(|"
                      r"(?<![\w:.])sleep\s*\(")
ONCE_RE = re.compile(r"absl::(call_once|once_flag)\b")
MAX_README_LINES = 40
MAX_FILE_LINES = 800
SOURCE_SUFFIXES = (".cc", ".h", ".py", ".sh")


def code_lines(text):
    """Yields (number, line) of C++ text with // comments cut."""
    for number, line in enumerate(text.splitlines(), 1):
        yield number, line.split("//", 1)[0]


def time_exempt(path):
    name = os.path.basename(path)
    return (path.startswith("common/clock") or path.startswith("tests/") or
            name.endswith(("_main.cc", "_test.cc", "_bench.cc",
                           "_test_env.cc", "_test_env.h",
                           "_test_server.cc", "_test_server.h")))


def violations(root, files):
    """Yields (rule, path, detail) for every broken rule."""
    for path in files:
        full = os.path.join(root, path)
        if not os.path.isfile(full):
            continue
        with open(full, errors="replace") as f:
            text = f.read()
        lines = text.count("\n")
        if os.path.basename(path) == "README.md" and path != "README.md":
            if lines > MAX_README_LINES:
                yield "readme", path, f"{lines} lines (at most {MAX_README_LINES})"
            continue
        if path.endswith(SOURCE_SUFFIXES) and lines > MAX_FILE_LINES:
            yield "size", path, f"{lines} lines (at most {MAX_FILE_LINES})"
        if not path.endswith((".cc", ".h")):
            continue
        for number, line in code_lines(text):
            if ONCE_RE.search(line):
                yield "once", path, f"line {number}: {line.strip()}"
                break
        if not time_exempt(path):
            for number, line in code_lines(text):
                if TIME_RE.search(line):
                    yield "time", path, f"line {number}: {line.strip()}"
                    break
        if path.endswith("_test.cc") and not path.startswith("tests/"):
            for number, line in code_lines(text):
                if SLEEP_RE.search(line):
                    yield "sleep", path, f"line {number}: {line.strip()}"
                    break


def read_allowlist(path):
    allowed = {}
    problems = []
    with open(path) as f:
        for number, raw in enumerate(f, 1):
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            entry, _, why = line.partition("#")
            fields = entry.split()
            if len(fields) != 2 or not why.strip():
                problems.append(f"{path}:{number}: want 'RULE PATH  # why'")
                continue
            allowed[(fields[0], fields[1])] = why.strip()
    return allowed, problems


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--root", default=os.path.join(
        os.path.dirname(os.path.abspath(__file__)), ".."))
    args = parser.parse_args()
    root = os.path.abspath(args.root)
    files = subprocess.run(
        ["git", "ls-files", "-co", "--exclude-standard"], cwd=root,
        check=True, capture_output=True, text=True).stdout.split()
    allowed, problems = read_allowlist(
        os.path.join(root, "tools/house_allowlist.txt"))
    found = set()
    for rule, path, detail in violations(root, sorted(set(files))):
        found.add((rule, path))
        if (rule, path) not in allowed:
            problems.append(f"{rule}: {path}: {detail}")
    for rule, path in sorted(set(allowed) - found):
        problems.append(f"{rule}: {path} is allow-listed but keeps the rule "
                        "now: take it off tools/house_allowlist.txt")
    for p in problems:
        print(p)
    print(f"check_house: {len(problems)} problem(s), "
          f"{len(allowed)} allow-listed exception(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
