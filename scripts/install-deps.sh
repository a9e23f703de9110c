#!/usr/bin/env bash
# Installs the Debian 12 packages perfsim builds and tests with. Idempotent: packages already present
# are skipped, so a second run does nothing. Works as root or through sudo.
set -euo pipefail

PACKAGES=(
  build-essential cmake ninja-build pkg-config git mold
  libboost-dev liblz4-dev libzstd-dev libisal-dev catch2 libcli11-dev nlohmann-json3-dev libtomlplusplus-dev libfmt-dev
  samba-dev libtalloc-dev
  gss-ntlmssp libkrb5-dev libssl-dev  # rpc/auth: NTLMSSP through GSSAPI, NTLM2 session security over OpenSSL
  python3 python3-samba python3-impacket tshark samba smbclient
  samba-testsuite  # ndrdump and smbtorture: tests/wire checks our stubs and winreg with them
  iproute2 passwd strace clang-format
  nmap  # tests/smb identity_test: nmap's SMB scripts (smb-os-discovery, smb-protocols) as a client nobody here wrote
  fakeroot  # tests/cli: dpkg installs the Debian package into a scratch root without being root
  prometheus  # promtool: tests/journal checks the metrics format with it
  clang libclang-rt-14-dev
  prometheus chromium libjs-chart.js
  # perfsim-record.exe (windows_recorder/): the cross compiler (posix threads: std::thread) and
  # wine64 to test it (tests/windows_recorder); 20 packages, 1,064 MiB installed, 52 s (downloads included) on
  # the 2-core development machine, 2026-11-26.
  g++-mingw-w64-x86-64-posix wine64 wine
)

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
