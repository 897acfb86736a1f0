#!/usr/bin/env bash
# Instructions the emulator (ptyagent/screen) spends on one pass over the
# seeded 20 MB workload, counted by callgrind: repeatable on a loaded
# machine, unlike time. Prints Ir(one pass) − Ir(none) and the digest of
# the emulator's final state (screen, scrollback, cursor, title, modes),
# which a change that only makes the emulator faster must leave alone.
#
# Usage: bash bench/callgrind.sh [OUTDIR]   (callgrind.out.0/.1 kept there
# for callgrind_annotate)
set -euo pipefail
cd "$(dirname "$0")/.."
command -v valgrind >/dev/null || { echo "valgrind is not installed" >&2; exit 1; }
out=${1:-$(mktemp -d)}
mkdir -p "$out"
go build -o "$out/emudigest" ./bench/emudigest
for r in 0 1; do
	GOGC=off GOMAXPROCS=1 GODEBUG=asyncpreemptoff=1 valgrind --tool=callgrind \
		--callgrind-out-file="$out/callgrind.out.$r" "$out/emudigest" $r >"$out/callgrind.$r.log" 2>&1
done
a=$(grep -oP 'Collected : \K[0-9]+' "$out/callgrind.0.log")
b=$(grep -oP 'Collected : \K[0-9]+' "$out/callgrind.1.log")
echo "emulator instructions per pass: $((b - a)) (Ir $b with one pass, $a without)"
"$out/emudigest" 1 digest
