#!/bin/sh
# Builds conv with ASan+UBSan and warnings as errors and runs every test;
# then a plain build runs the unit tests and conv on the fixtures under
# valgrind (CTest label "valgrind": memcheck cannot run on ASan binaries;
# built without link-time optimization, which halves that build; memcheck
# checks the same code either way).
# This is the README's test command and what CI runs (.ci/run).
set -eu
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake -S . -B build/debug -DCMAKE_BUILD_TYPE=Debug -DCONV_SANITIZE=ON -DCONV_WERROR=ON
cmake --build build/debug -j"$(nproc)"
ctest --test-dir build/debug --output-on-failure -j"$(nproc)"
cmake -S . -B build/valgrind -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCONV_WERROR=ON -DCONV_LTO=OFF
cmake --build build/valgrind -j"$(nproc)"
ctest --test-dir build/valgrind --output-on-failure -L valgrind
