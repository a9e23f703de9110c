#!/usr/bin/env bash
# Installs the Debian 12 packages perfsim builds and tests with. Idempotent: packages already present
# are skipped, so a second run does nothing. Works as root or through sudo.
#   install-deps.sh           everything scripts/test.sh needs (CI, developers)
#   install-deps.sh --serve   only what building and running `perfsim serve` needs (the README's first
#                             command): no test tools, no Wine or mingw (1 GiB), no Chromium
set -euo pipefail

usage() { echo "usage: install-deps.sh [--serve]" >&2; exit 2; }
serve_only=0
case "${1:-}" in
  "") ;;
  --serve) serve_only=1 ;;
  *) echo "install-deps.sh: unknown argument '$1'; write --serve or nothing" >&2; usage ;;
esac

# Building perfsim and running it: libraries the configure requires (CMakeLists.txt, rpc/, recorder/),
# the NTLMSSP mechanism serve authenticates with, smbd for `serve --smb`, Chart.js for the dashboard.
SERVE_PACKAGES=(
  build-essential cmake ninja-build pkg-config mold
  libboost-dev liblz4-dev libzstd-dev libisal-dev libcli11-dev nlohmann-json3-dev libtomlplusplus-dev libfmt-dev
  samba-dev libtalloc-dev
  gss-ntlmssp libkrb5-dev  # rpc/auth: the client side of NTLMSSP through GSSAPI
  libssl-dev zlib1g-dev    # rpc/ntlm_crypto: the acceptor and session security over OpenSSL and CRC-32
  libre2-dev  # redact --redact /REGEX/ (captures/redact.cpp): RE2 runs in linear time, std::regex backtracks
  samba libjs-chart.js
)
# The suite, the sanitizer and fuzz builds, and the tools the tests start (tests/README.md).
TEST_PACKAGES=(
  git catch2
  python3 python3-samba python3-impacket tshark smbclient
  samba-testsuite  # ndrdump and smbtorture: tests/wire checks our stubs and winreg with them
  iproute2 passwd strace clang-format
  nmap  # tests/smb identity_test: nmap's SMB scripts (smb-os-discovery, smb-protocols) as a client nobody here wrote
  fakeroot  # tests/cli: dpkg installs the Debian package into a scratch root without being root
  prometheus  # promtool checks the metrics format; bench/prometheus scrapes with the server
  clang libclang-rt-14-dev
  chromium
  # perfsim-record.exe (windows_recorder/): the cross compiler (posix threads: std::thread) and
  # wine64 to test it (tests/windows_recorder); 20 packages, 1,064 MiB installed, 52 s (downloads included) on
  # the 2-core development machine, 2026-11-26.
  g++-mingw-w64-x86-64-posix wine64 wine
)
PACKAGES=("${SERVE_PACKAGES[@]}")
[ "$serve_only" -eq 1 ] || PACKAGES+=("${TEST_PACKAGES[@]}")

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#PACKAGES[@]} packages present"
  exit 0
fi

SUDO=()
if [ "$(id -u)" -ne 0 ]; then SUDO=(sudo -E); fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
# tshark asks whether non-root users may capture; answer no without a prompt.
echo "wireshark-common wireshark-common/install-setuid boolean false" | "${SUDO[@]}" debconf-set-selections || true
"${SUDO[@]}" apt-get update -qq
"${SUDO[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
