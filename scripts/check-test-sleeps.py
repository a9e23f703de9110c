#!/usr/bin/env python3
"""Lists every sleep of more than 100 ms in the tests (issue 55): a sleep that stands in for
waiting on a condition is a race, since on a loaded CI machine the condition may come later.
A test waits for the condition itself, with a deadline. A longer sleep that is the point of the
test (a client that must stay silent past an idle timeout, a process kept alive for a while) says
so with a `sleep-ok:` comment on its line or the line above, and is not listed.

Usage: check-test-sleeps.py [ROOT]   exits 1 when an unmarked sleep is found, 2 on a usage error."""
import pathlib
import re
import sys

LIMIT_S = 0.1
PATTERNS = [
    # C++: sleep_for(std::chrono::milliseconds(N)), sleep_for(milliseconds(N)), sleep_for(std::chrono::seconds(N)), N ms literals
    (re.compile(r"sleep_for\(\s*(?:std::)?(?:chrono::)?milliseconds\((\d+)\)"), 1e-3),
    (re.compile(r"sleep_for\(\s*(?:std::)?(?:chrono::)?seconds\((\d+)\)"), 1.0),
    (re.compile(r"sleep_for\(\s*(\d+)ms\s*\)"), 1e-3),
    (re.compile(r"sleep_for\(\s*(\d+)s\s*\)"), 1.0),
    (re.compile(r"\busleep\((\d+)\)"), 1e-6),
    # Python: time.sleep(X)
    (re.compile(r"\btime\.sleep\(\s*([0-9.]+)\s*\)"), 1.0),
    # Shell (in scripts and in command strings tests build): sleep N
    (re.compile(r"(?:^|[;&|(\s\"'])sleep\s+([0-9.]+)\b"), 1.0),
]
SUFFIXES = {".cpp", ".h", ".py", ".sh"}


def unmarked_sleeps(root: pathlib.Path):
    for path in sorted(root.rglob("*")):
        if path.suffix not in SUFFIXES or not path.is_file():
            continue
        lines = path.read_text(errors="replace").splitlines()
        for i, line in enumerate(lines):
            for pattern, unit in PATTERNS:
                for m in pattern.finditer(line):
                    seconds = float(m.group(1)) * unit
                    if seconds <= LIMIT_S:
                        continue
                    marked = "sleep-ok:" in line or (i > 0 and "sleep-ok:" in lines[i - 1])
                    if not marked:
                        yield path, i + 1, seconds, line.strip()


def main(argv):
    if len(argv) > 2:
        print("usage: check-test-sleeps.py [ROOT]  (ROOT: the tests folder, default tests/)", file=sys.stderr)
        return 2
    root = pathlib.Path(argv[1]) if len(argv) == 2 else pathlib.Path(__file__).resolve().parent.parent / "tests"
    found = list(unmarked_sleeps(root))
    for path, line, seconds, text in found:
        print(f"{path}:{line}: a {seconds:g} s sleep without a sleep-ok: reason: {text}")
    if found:
        print(f"check-test-sleeps: {len(found)} sleep(s) over {LIMIT_S * 1000:.0f} ms; wait for the condition with a "
              "deadline instead, or say why the sleep is the point with a `sleep-ok:` comment", file=sys.stderr)
        return 1
    print("check-test-sleeps: no unmarked sleep over 100 ms")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
