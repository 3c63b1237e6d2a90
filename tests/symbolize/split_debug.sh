# Shell functions shared by the build scripts of test programs whose debug
# info is split off and served by build-id (tests/symbolize/build.sh,
# tests/unwind/build.sh). Sourced, not run:  . tests/symbolize/split_debug.sh
#
#   sd_prepare OUTDIR   empties OUTDIR/{unstripped,bin,debug,debuginfod-root,
#                       debug-dir} and OUTDIR/buildids; sets OUT (absolute
#                       OUTDIR) and U (OUT/unstripped), where the caller links
#   sd_rustc_ok         0 when rustc runs (pointing rustup's proxy at its
#                       toolchains under a private HOME if needed: RUSTUP_HOME
#                       exported, so call it in the build script's own shell,
#                       not in $(...)), else 1 with the reason in SD_WHY
#   sd_split NAME...    for each U/NAME: OUT/debug/NAME.debug (objcopy
#                       --only-keep-debug), OUT/bin/NAME (strip --strip-all +
#                       .gnu_debuglink), copies in OUT/debuginfod-root/{bin,debug}
#                       (executables backdated), OUT/debug-dir/.build-id/XX/REST.debug,
#                       "NAME BUILD-ID" appended to OUT/buildids; exits 1 when a
#                       build-id is missing or differs, or strip left symbols
#   sd_segments NAME... prints each one's build-id and text PT_LOAD
#
# POSIX sh; binutils (objcopy, strip, readelf).

sd_prepare() {
	mkdir -p "$1"
	OUT=$(cd "$1" && pwd)
	U=$OUT/unstripped
	rm -rf "$U" "$OUT/bin" "$OUT/debug" "$OUT/debuginfod-root" "$OUT/debug-dir"
	mkdir -p "$U" "$OUT/bin" "$OUT/debug" "$OUT/debuginfod-root/bin" "$OUT/debuginfod-root/debug"
	: >"$OUT/buildids"
}

# rustup's rustc is a proxy that finds its toolchains under $RUSTUP_HOME, by
# default ~/.rustup of the user who installed it: under a private HOME (as the
# tests run) it finds none. The installation beside the proxy's .cargo/bin is
# the one PATH meant, so that is where it is pointed if it does not run as is.
sd_rustc_ok() {
	if ! command -v rustc >/dev/null 2>&1; then
		SD_WHY="rustc not found (Debian package rustc)"
		return 1
	fi
	if ! rustc --version >/dev/null 2>&1 && [ -z "${RUSTUP_HOME:-}" ]; then
		sd_proxy=$(command -v rustc)
		sd_root=$(dirname "$(dirname "$(dirname "$sd_proxy")")")
		if [ "$(basename "$(dirname "$(dirname "$sd_proxy")")")" = .cargo ] && [ -d "$sd_root/.rustup" ]; then
			export RUSTUP_HOME="$sd_root/.rustup"
		fi
	fi
	if ! rustc --version >/dev/null 2>&1; then
		SD_WHY="rustc does not run here ($(rustc --version 2>&1 | head -1))"
		return 1
	fi
	return 0
}

sd_buildid() { readelf -n "$1" 2>/dev/null | sed -n 's/^.*Build ID: *\([0-9a-f]*\).*/\1/p' | head -1; }

sd_split() {
	for sd_n in "$@"; do
		objcopy --only-keep-debug "$U/$sd_n" "$OUT/debug/$sd_n.debug"
		cp "$U/$sd_n" "$OUT/bin/$sd_n"
		# --strip-all drops .symtab and the DWARF; .dynsym (exported names only)
		# stays, and so do .eh_frame and .eh_frame_hdr (allocated sections).
		# Works for Go and Rust binaries too: Go keeps what its runtime needs
		# (.gopclntab) in allocated sections, which strip never removes.
		strip --strip-all "$OUT/bin/$sd_n"
		objcopy --add-gnu-debuglink="$OUT/debug/$sd_n.debug" "$OUT/bin/$sd_n"
		chmod 0644 "$OUT/debug/$sd_n.debug"
		cp "$OUT/bin/$sd_n" "$OUT/debuginfod-root/bin/$sd_n"
		cp "$OUT/debug/$sd_n.debug" "$OUT/debuginfod-root/debug/$sd_n.debug"
		sd_id=$(sd_buildid "$OUT/bin/$sd_n")
		sd_dbg=$(sd_buildid "$OUT/debug/$sd_n.debug")
		if [ -z "$sd_id" ] || [ "$sd_id" != "$sd_dbg" ]; then
			echo "split_debug.sh: $sd_n: build-id '$sd_id' of the binary != '$sd_dbg' of its .debug" >&2
			exit 1
		fi
		if readelf -SW "$OUT/bin/$sd_n" | grep -q -e ' \.symtab ' -e ' \.debug_info '; then
			echo "split_debug.sh: $sd_n: still has .symtab or .debug_info after strip" >&2
			exit 1
		fi
		sd_dir=$OUT/debug-dir/.build-id/$(echo "$sd_id" | cut -c1-2)
		mkdir -p "$sd_dir"
		cp "$OUT/debug/$sd_n.debug" "$sd_dir/$(echo "$sd_id" | cut -c3-).debug"
		echo "$sd_n $sd_id" >>"$OUT/buildids"
	done
	# debuginfod answers /buildid/ID/debuginfo with the NEWEST (by mtime, whole
	# seconds) of the files it classified as debuginfo for that id, and it counts
	# any file with a section named .debug_* as debuginfo. A stripped Rust
	# binary keeps an allocated .debug_gdb_scripts section (strip cannot drop
	# it), so it competes with its .debug file and would win a tie. Backdating
	# the executables' copies makes the real .debug file the answer for every
	# id; serve_debuginfod.sh checks that byte for byte.
	touch -d "@$(($(date +%s) - 3600))" "$OUT"/debuginfod-root/bin/*
}

sd_segments() {
	for sd_n in "$@"; do
		sd_id=$(awk -v n="$sd_n" '$1 == n { print $2 }' "$OUT/buildids")
		# (the flags column is "R E" or "RWE": one or two fields)
		sd_seg=$(readelf -lW "$OUT/bin/$sd_n" | awk '$1 == "LOAD" && !done && ($7 ~ /E/ || $8 == "E") {
			printf "p_offset=%s p_vaddr=%s", $2, $3; done = 1 }')
		printf '%-10s build-id %-40s text %s\n' "$sd_n" "$sd_id" "$sd_seg"
	done
}
