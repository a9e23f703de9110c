#!/usr/bin/python3
"""Reads a JUnit XML file as a CI consumer does and prints what the test needs, as JSON:
{"reader", "tests", "failures", "cases": [{"classname", "name", "failed", "message", "out", "err"}]} (message: the
<failure>'s, "" when it passed).
With python3-junitparser installed it is the reader; else xml.etree, checking the shape the JUnit
schema gives (testsuites > testsuite > testcase > failure | error | skipped | system-out |
system-err, with the attributes CI tools read), and exits 1 naming what does not fit."""
import json
import sys
import xml.etree.ElementTree as ET

CASE_CHILDREN = {"failure", "error", "skipped", "system-out", "system-err"}


def bad(why):
    print(f"not JUnit: {why}", file=sys.stderr)
    sys.exit(1)


def with_etree(path):
    root = ET.parse(path).getroot()
    if root.tag != "testsuites":
        bad(f"root <{root.tag}>")
    out = {"reader": "xml.etree", "cases": []}
    suites = root.findall("testsuite")
    if len(suites) != 1 or len(root) != 1:
        bad("expected one <testsuite>")
    suite = suites[0]
    for attr in ("name", "tests", "failures", "errors", "time"):
        if suite.get(attr) is None:
            bad(f"<testsuite> without {attr}")
    for case in suite:
        if case.tag != "testcase":
            bad(f"<{case.tag}> in <testsuite>")
        for attr in ("classname", "name", "time"):
            if case.get(attr) is None:
                bad(f"<testcase> without {attr}")
        float(case.get("time"))
        kids = {k.tag for k in case}
        if not kids <= CASE_CHILDREN:
            bad(f"<testcase> holds {kids - CASE_CHILDREN}")
        failure = case.find("failure")
        if failure is not None and failure.get("message") is None:
            bad("<failure> without message")
        sout, serr = case.find("system-out"), case.find("system-err")
        out_text = (sout.text or "") if sout is not None else ""
        err_text = (serr.text or "") if serr is not None else ""
        out["cases"].append({"classname": case.get("classname"), "name": case.get("name"),
                             "failed": failure is not None,
                             "message": failure.get("message") if failure is not None else "",
                             "out": out_text, "err": err_text})
    if int(suite.get("tests")) != len(out["cases"]):
        bad("tests does not count the testcases")
    out["tests"] = int(suite.get("tests"))
    out["failures"] = int(suite.get("failures"))
    return out


def with_junitparser(path, junitparser):
    xml = junitparser.JUnitXml.fromfile(path)
    out = {"reader": "junitparser", "cases": [], "tests": 0, "failures": 0}
    for suite in xml:
        out["tests"] += suite.tests
        out["failures"] += suite.failures
        for case in suite:
            failures = [r for r in case.result if isinstance(r, junitparser.Failure)]
            out["cases"].append({"classname": case.classname, "name": case.name, "failed": bool(failures),
                                 "message": failures[0].message if failures else "",
                                 "out": case.system_out or "", "err": case.system_err or ""})
    return out


def main():
    try:
        import junitparser
    except ImportError:
        junitparser = None
    path = sys.argv[1]
    print(json.dumps(with_junitparser(path, junitparser) if junitparser else with_etree(path)))


if __name__ == "__main__":
    main()
