#!/usr/bin/env bash
# Issue 8 throughput comparison, one invocation (driven by `make bench`):
# in-process emulator benchmarks, then the same ~20 MB agent-like workload
# through a PTY to (1) a plain reader, (2) Hivemind's emulator and (3) tmux
# in a detached 120x40 pane, with MB/s and the ratios Hivemind/tmux and
# Hivemind/raw.
#
# Environment: MB (workload MiB, default 20), RUNS (runs per path, median
# reported, default 3), XVT=1 to include the x/vt reference emulator.
set -euo pipefail
cd "$(dirname "$0")/.."

MB=${MB:-20}
RUNS=${RUNS:-3}
xvt_flag=()
bench='Emulator/hivemind|Memory/hivemind|Lines'
if [[ "${XVT:-}" == 1 ]]; then
	xvt_flag=(-xvt)
	bench='Emulator|Memory|Lines'
fi

echo "== machine"
echo "date:   $(date -u +%Y-%m-%dT%H:%MZ)"
echo "kernel: $(uname -srm), $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')"
echo "load:   $(cut -d' ' -f1-3 /proc/loadavg)"
echo "go:     $(go version | cut -d' ' -f3-)"
echo "tmux:   $(tmux -V 2>/dev/null || echo 'not installed')"
echo
echo "== in-process emulator (go test -bench)"
go test -run '^$' -bench "$bench" -benchtime 1x ./ptyagent/screen/ | grep -E '^(Benchmark|ok|FAIL)'
echo
echo "== through a PTY, same run"
go run ./bench/ptybench -mb "$MB" -runs "$RUNS" "${xvt_flag[@]}"
