#!/bin/sh
# Installs what conv needs to build and test on Debian 12, from Debian's
# packages only. Idempotent: packages already there are left alone, and the
# package lists are refreshed only when something is missing.
set -eu

# build: the libraries conv links; tests: perf to record, clang for the fuzz
# target, debuginfod (real server), lld and Go for the symbolization test
# programs, a JDK for the JIT test (and later jfr), Chromium for the flame
# graph's browser test, libc6-dbg for names_perf's libc names from the
# debug file (its variant without it hides /usr/lib/debug), GNU parallel for
# the README's archive recipe (parallel_recipe), python3-yaml to read the
# Kubernetes manifest in doc/ (k8s_manifest).
PKGS="build-essential cmake pkg-config git
libelf-dev libdw-dev libcurl4-openssl-dev libzstd-dev libxxhash-dev libtraceevent-dev zlib1g-dev libdeflate-dev
libiberty-dev libcmocka-dev
python3 clang lld linux-perf elfutils binutils debuginfod golang-go
golang-github-google-pprof-dev protobuf-compiler openjdk-17-jdk-headless valgrind chromium libc6-dbg parallel python3-yaml"

missing=""
for p in $PKGS; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed"; then
		missing="$missing $p"
	fi
done
[ -z "$missing" ] && exit 0

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
	SUDO="sudo"
fi
echo "installing:$missing" >&2
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
