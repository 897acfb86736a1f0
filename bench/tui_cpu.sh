#!/usr/bin/env bash
# Issues 6 and 8 (item 4): CPU of the Hivemind process with its full-screen
# UI in tmux 160x48, 8 agent panes (--workers 6) each fed 20 KB/s of
# agent-like output (the issue-8 workload generator), and idle; then the
# keystroke latency of an attached pane. Prints the figures and whether the
# targets hold (busy <= 15 % of one core, idle <= 1 %).
#
# Environment: BUSY and IDLE (window length, default 20s), RUNS (alternating
# idle/busy windows, median reported, default 1), RATE (bytes/s per pane,
# default 20000), KEYS (latency samples per condition, default 30), FPS
# (TUI frame-rate cap written to the user config; default: hivemind's).
set -euo pipefail
cd "$(dirname "$0")/.."

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/hivemind" .
go build -o "$tmp/tuicpu" ./bench/tuicpu
"$tmp/tuicpu" -hivemind "$tmp/hivemind" \
	-busy "${BUSY:-20s}" -idle "${IDLE:-20s}" -runs "${RUNS:-1}" \
	-rate "${RATE:-20000}" -keys "${KEYS:-30}" -fps "${FPS:-0}"
