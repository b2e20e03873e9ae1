#!/bin/sh
# Install the Debian packages uxdp builds and tests with, if any are missing.
# Idempotent: does nothing (and needs no network) when all are present.
# As non-root it only reports what is missing.
set -eu

PKGS="build-essential cmake pkg-config git
      libcmocka-dev liburcu-dev libbpf-dev libxdp-dev libpcap-dev libjansson-dev libdpdk-dev dpdk-dev
      linux-libc-dev clang clang-19 libclang-rt-14-dev llvm iproute2 valgrind
      tshark gnuplot-nox"

missing=""
for p in $PKGS; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null |
	     grep -q "install ok installed"; then
		missing="$missing $p"
	fi
done

if [ -z "$missing" ]; then
	echo "deps: all packages present"
	exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
	echo "deps: missing Debian packages:$missing" >&2
	echo "deps: run as root (or: sudo apt-get install$missing)" >&2
	exit 1
fi

echo "deps: installing:$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing
