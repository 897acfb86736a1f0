#!/usr/bin/env bash
# The product benchmark (issue 14): the built hivemind binary, real PTYs and
# real agent processes, against tmux and raw PTY reads in the same run. The
# figures in README.md and docs/PERFORMANCE.md come from its output.
#
# Environment: RUNS (interleaved throughput runs, default 3), MB (workload
# MiB per agent, default 8), N (throughput agent counts, default 1,3,8),
# SCALE (scale agent counts, default 1,4,8,16,32; empty skips), BUSY and
# IDLE (scale windows, default 10s), KEYS (keystroke samples, default 20),
# ATTACH (agents of the attach section, default 8; 0 skips), ATTACHES
# (attach samples, default 10), PATHS (throughput paths, default every one:
# raw,tmux,headless,ui,attached, and server,web,webstall when chromium is
# installed).
set -euo pipefail
cd "$(dirname "$0")/.."

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/hivemind" .
go build -o "$tmp/product" ./bench/product
"$tmp/product" -hivemind "$tmp/hivemind" -runs "${RUNS:-3}" -mb "${MB:-8}" \
	-n "${N-1,3,8}" ${PATHS:+-paths "$PATHS"} -scale "${SCALE-1,4,8,16,32}" \
	-busy "${BUSY:-10s}" -idle "${IDLE:-10s}" -keys "${KEYS:-20}" \
	-attach "${ATTACH-8}" -attaches "${ATTACHES:-10}"
