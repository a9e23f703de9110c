#!/usr/bin/python3
"""Offline checks of deploy/: the Kubernetes manifests parse (python3-yaml), the StatefulSet's
replicas equal its SHARDS, FLEET_RANGE is the fleet file's addresses, the fleet's hosts fit the
range, each shard's block (perfsim serve --shard K/N: contiguous blocks) is what `perfsim serve
--list-hosts --shard K/N` prints for the first and last shard, and the Dockerfile installs only
packages `scripts/install-deps.sh --serve` names (build stage), among them the package of every pkg-config
module the product's CMakeLists ask for (dpkg -S of its .pc file), installs what perfsim loads at
run time (gss-ntlmssp, libssl3), and is Debian 12 based.

Usage: check_deploy.py --repo DIR --perfsim EXE
Prints one line per check; exit status 0 when all pass, 1 otherwise.
"""
import argparse
import ipaddress
import json
import os
import re
import subprocess
import sys
import tempfile
import tomllib

import yaml

failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)


def docs(path):
    with open(path) as f:
        return [d for d in yaml.safe_load_all(f) if d]


def env_of(container):
    return {e["name"]: e.get("value") for e in container.get("env", [])}


def pkgconfig_packages(repo):
    """{pkg-config module: the Debian package whose .pc file it is} for every module the product's
    CMakeLists (not tests', benches' or fuzzers') ask for."""
    modules = set()
    for root, dirs, files in os.walk(repo):
        rel = os.path.relpath(root, repo)
        if rel == ".":
            dirs[:] = [d for d in dirs if not d.startswith(("build", ".", "tests", "bench", "fuzz"))]
        if "CMakeLists.txt" in files:
            with open(os.path.join(root, "CMakeLists.txt")) as f:
                for args in re.findall(r"pkg_check_modules\(\w+([^)]*)\)", f.read()):
                    modules |= {w for w in args.split() if w not in ("REQUIRED", "IMPORTED_TARGET", "QUIET")}
    found = {}
    for m in sorted(modules):
        pcdir = subprocess.run(["pkg-config", "--variable=pcfiledir", m], capture_output=True, text=True).stdout.strip()
        owner = subprocess.run(["dpkg", "-S", os.path.join(pcdir, m + ".pc")], capture_output=True, text=True).stdout
        found[m] = owner.split(":")[0] if owner else f"(no package owns {m}.pc)"
    return found


def depends_closure(packages):
    """The packages apt installs for `packages`: themselves and their Depends, recursively."""
    out = subprocess.run(["apt-cache", "depends", "--recurse", "--no-recommends", "--no-suggests", "--no-conflicts",
                          "--no-breaks", "--no-replaces", "--no-enhances", *sorted(packages)],
                         capture_output=True, text=True, timeout=120).stdout
    return {line.split(":")[0] for line in out.splitlines() if line and not line.startswith(" ")}


def listed(perfsim, fleet, shard):
    r = subprocess.run([perfsim, "serve", "--list-hosts", "--json", "--allow-remote", "--fleet", fleet, "--shard", shard],
                       capture_output=True, text=True, timeout=300)
    if r.returncode != 0:
        raise RuntimeError(f"perfsim serve --list-hosts --shard {shard}: {r.stderr}")
    return [json.loads(line) for line in r.stdout.splitlines()]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--repo", required=True)
    p.add_argument("--perfsim", required=True)
    args = p.parse_args()
    k8s = os.path.join(args.repo, "deploy", "k8s")
    objects = {}
    for name in sorted(os.listdir(k8s)):
        if name.endswith(".yaml"):
            for d in docs(os.path.join(k8s, name)):
                objects[(d["kind"], d["metadata"]["name"])] = d
    sts = objects[("StatefulSet", "perfsim-fleet")]
    cm = objects[("ConfigMap", "perfsim-fleet")]
    check(("Service", "perfsim-fleet") in objects and objects[("Service", "perfsim-fleet")]["spec"]["clusterIP"] == "None",
          "a headless Service names the StatefulSet's pods")
    check(sts["spec"]["serviceName"] == "perfsim-fleet", "the StatefulSet's serviceName is that Service")
    c = sts["spec"]["template"]["spec"]["containers"][0]
    env = env_of(c)
    replicas = sts["spec"]["replicas"]
    check(int(env["SHARDS"]) == replicas, f"SHARDS ({env['SHARDS']}) equals replicas ({replicas})")
    annotations = sts["spec"]["template"]["metadata"]["annotations"]
    check(annotations.get("k8s.v1.cni.cncf.io/networks") in
          {n for (kind, n) in objects if kind == "NetworkAttachmentDefinition"},
          "the pods' Multus network is a NetworkAttachmentDefinition of deploy/k8s")
    check(annotations.get("prometheus.io/path") == "/metrics", "/metrics is scraped")
    check(sts["spec"]["template"]["metadata"]["labels"] == sts["spec"]["selector"]["matchLabels"],
          "the selector matches the pod labels")
    volume = sts["spec"]["template"]["spec"]["volumes"][0]
    check(volume["configMap"]["name"] == "perfsim-fleet", "the fleet comes from the ConfigMap")

    fleet = tomllib.loads(cm["data"]["fleet.toml"])
    host = fleet["host"][0]
    check(host["addresses"] == env["FLEET_RANGE"], "FLEET_RANGE is the fleet's addresses")
    net = ipaddress.ip_network(host["addresses"])
    count = host["count"]
    check(count <= net.num_addresses - 2, f"{count} hosts fit in {net}")
    first = int(net.network_address) + 1
    # The shard arithmetic perfsim uses: shard k holds hosts [count*k//n, count*(k+1)//n).
    blocks = [(count * k // replicas, count * (k + 1) // replicas) for k in range(replicas)]
    check(blocks[0][0] == 0 and blocks[-1][1] == count and all(a[1] == b[0] for a, b in zip(blocks, blocks[1:])),
          "the shards' blocks are disjoint and cover the fleet")
    check(max(b - a for a, b in blocks) - min(b - a for a, b in blocks) <= 1, "shard sizes differ by one at most")

    # perfsim itself agrees, for the first and the last shard (the capture path made local).
    text = cm["data"]["fleet.toml"].replace("/opt/perfsim/share/perfsim/captures", os.path.join(os.path.abspath(args.repo), "captures"))
    with tempfile.NamedTemporaryFile("w", suffix=".toml", delete=False) as f:
        f.write(text)
    try:
        for k in (0, replicas - 1):
            hosts = listed(args.perfsim, f.name, f"{k}/{replicas}")
            a, b = blocks[k]
            want_first = f"{ipaddress.ip_address(first + a)}:{host['port']}"
            want_last = f"{ipaddress.ip_address(first + b - 1)}:{host['port']}"
            check(len(hosts) == b - a and hosts[0]["listen"] == want_first and hosts[-1]["listen"] == want_last,
                  f"shard {k}/{replicas}: {b - a} hosts {want_first} .. {want_last} "
                  f"(perfsim: {len(hosts)}, {hosts[0]['listen']} .. {hosts[-1]['listen']})")
            check(hosts[0]["host"] == host["name"].replace("{n}", f"{a + 1:04d}"),
                  f"shard {k}: its first host is named as in the whole fleet ({hosts[0]['host']})")
    finally:
        os.unlink(f.name)

    with open(os.path.join(args.repo, "deploy", "Dockerfile")) as f:
        dockerfile = f.read()
    check(all(line.split()[1].startswith("debian:12") for line in dockerfile.splitlines() if line.startswith("FROM ")),
          "every stage is Debian 12")
    with open(os.path.join(args.repo, "scripts", "install-deps.sh")) as f:
        deps = set(re.findall(r"[a-z0-9][a-z0-9.+-]+", f.read().split("SERVE_PACKAGES=(")[1].split(")")[0]))
    build_stage = dockerfile.split("FROM debian:12\n")[0]
    installed = set(re.findall(r"\b(lib[a-z0-9.+-]+|zlib1g-dev|build-essential|cmake|ninja-build|pkg-config|samba-dev)\b",
                               build_stage.split("install -y -qq --no-install-recommends")[1].split("&&")[0]))
    check(installed <= deps, f"the build stage installs only install-deps.sh --serve's packages ({sorted(installed - deps)})")
    closure = depends_closure(installed)
    for module, package in pkgconfig_packages(args.repo).items():
        check(package in closure, f"the build stage installs {package} (pkg-config {module}), or a package that needs it")
    runtime_stage = dockerfile.split("FROM debian:12\n")[-1]
    for package in ("gss-ntlmssp", "libssl3"):  # loaded at run time (GSSAPI mechanism, OpenSSL's legacy provider)
        check(re.search(rf"\b{re.escape(package)}\b", runtime_stage) is not None, f"the image installs {package}")
    check("perfsim-shard" in dockerfile and os.access(os.path.join(k8s, "entrypoint.sh"), os.X_OK),
          "the image carries the shard entrypoint")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
