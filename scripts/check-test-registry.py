#!/usr/bin/env python3
"""Checks that CTest runs every Catch2 test case once and nothing else.

catch_discover_tests turns each test case into a CTest entry that runs `EXE "<name>"`. When that name
does not survive the trip (CMake splits at ';', Catch2 reads ',' and '[' as syntax), the entry runs no
test case and, without `-w NoTests`, passes. This script asks each test executable which cases it
has (with the spec CMake discovered them with, from test-registry.txt), asks Catch2 which case each
CTest entry's argument selects, and fails unless every entry selects exactly one case and every case
has exactly one entry.

It also lists each executable with both specs test-registry.txt names (with ../shared/fixtures and
without), whichever is in force: neither may select a hidden ([.]) test case, and the one without
fixtures must select the one with fixtures' cases less those tagged [fixtures]. So a build that
has the fixtures (CI's) catches a spec that would register something else where they are absent
(a user's clone; issue 50: Catch2 2 lists hidden cases under any filter, ~[fixtures] included).

usage: check-test-registry.py BUILD_DIR
"""
import json
import subprocess
import sys
from collections import defaultdict
from pathlib import Path


def names(exe, spec_args):
    """Test case names Catch2 selects with spec_args (empty: all of them)."""
    out = subprocess.run([exe, *spec_args, "--list-test-names-only"], capture_output=True, text=True,
                         timeout=60, check=False).stdout
    return [line for line in out.splitlines() if line.strip()]


def listed(exe, spec):
    """Test case names a test spec from test-registry.txt selects ("": Catch2's default list)."""
    return names(exe, [spec] if spec else [])


def spec_problems(target, exe, with_fixtures, without_fixtures):
    """What is wrong with the two specs' selections (see the module's doc)."""
    hidden = set(names(exe, ["[.]"]))
    fixtures = set(names(exe, ["[fixtures]"]))
    with_set, without_set = set(listed(exe, with_fixtures)), set(listed(exe, without_fixtures))
    problems = [f"{target}: {which} ({spec!r}) selects hidden test case {case!r}"
                for which, spec, cases in (("with fixtures", with_fixtures, with_set),
                                           ("without fixtures", without_fixtures, without_set))
                for case in sorted(cases & hidden)]
    for case in sorted(without_set ^ (with_set - fixtures)):
        if case in fixtures:
            why = "is tagged [fixtures] but registered without fixtures"
        elif case in without_set:
            why = "is registered without fixtures only"
        else:
            why = "is registered with fixtures only, though not tagged [fixtures]"
        problems.append(f"{target}: test case {case!r} {why}")
    return problems


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    build = Path(sys.argv[1])
    registry = build / "test-registry.txt"
    if not registry.exists():
        print(f"check-test-registry: {registry} missing: configure {build} with PERFSIM_TESTS=ON first",
              file=sys.stderr)
        return 2
    shown = subprocess.run(["ctest", "--test-dir", str(build), "--show-only=json-v1"], capture_output=True,
                           text=True, check=True).stdout
    entries = defaultdict(list)  # target -> [(ctest name, args after the executable)]
    unbuilt = set()  # targets CTest has no command for: their executables are not built yet
    for t in json.loads(shown)["tests"]:
        target = t["name"].split(":", 1)[0]
        if "command" not in t:
            unbuilt.add(target.split("_NOT_BUILT")[0])  # catch_discover_tests' placeholder name
            continue
        entries[target].append((t["name"], t["command"][1:]))
    if unbuilt:
        print(f"check-test-registry: not built, so not checked: {', '.join(sorted(unbuilt))} "
              f"(build every test target first)", file=sys.stderr)
        return 1

    problems, cases_total = [], 0
    for line in registry.read_text().splitlines():
        fields = line.split("\t")
        if len(fields) != 5:
            print(f"check-test-registry: {registry}: {line!r} is not 5 fields (configure {build} again)",
                  file=sys.stderr)
            return 2
        target, exe, spec, with_fixtures, without_fixtures = fields
        problems += spec_problems(target, exe, with_fixtures, without_fixtures)
        if spec not in (with_fixtures, without_fixtures):
            problems.append(f"{target}: registered with {spec!r}, neither spec of test-registry.txt")
        expected = listed(exe, spec)
        cases_total += len(expected)
        if not expected:
            problems.append(f"{target}: the executable lists no test case")
        selected = defaultdict(int)
        for ctest_name, args in entries.get(target, []):
            # args: the test spec, then the EXTRA_ARGS; only the spec selects.
            picked = names(exe, args[:1])
            if len(picked) != 1:
                problems.append(f"{ctest_name!r}: its argument {args[:1]!r} selects {len(picked)} test cases")
            for p in picked:
                selected[p] += 1
        for case in expected:
            if selected[case] != 1:
                problems.append(f"{target}: test case {case!r} is run by {selected[case]} CTest entries")
    entries_total = sum(len(v) for v in entries.values())
    for p in problems:
        print("check-test-registry: " + p, file=sys.stderr)
    print(f"check-test-registry: {entries_total} CTest entries, {cases_total} test cases"
          f"{'' if not problems else f', {len(problems)} problems'}")
    return 1 if problems or entries_total != cases_total else 0


if __name__ == "__main__":
    sys.exit(main())
