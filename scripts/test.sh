#!/bin/sh
# Builds conv with ASan+UBSan and warnings as errors, then runs every test.
# This is the README's test command and what CI runs (.ci/run).
set -eu
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake -S . -B build/debug -DCMAKE_BUILD_TYPE=Debug -DCONV_SANITIZE=ON -DCONV_WERROR=ON
cmake --build build/debug -j"$(nproc)"
ctest --test-dir build/debug --output-on-failure -j"$(nproc)"
