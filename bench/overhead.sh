#!/usr/bin/env bash
# Hivemind's own messages' share of the tokens (issue 24): the demo
# scenario's task run headless by real Claude Code, Codex and Gemini CLIs
# offline against the fake model APIs (bench/overhead/main.go says how
# tokens are attributed). Exits 1 when re-sends and notices cost a worker
# more than 5 % of its tokens. Arguments go to bench/overhead (-agent,
# -workers, -keep, …).
set -euo pipefail
cd "$(dirname "$0")/.."

AGENTS_PREFIX=${AGENTS_PREFIX:-$HOME/.cache/hivemind-agents}
export PATH=$AGENTS_PREFIX/node_modules/.bin:$PATH
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/hivemind" . && go build -o "$tmp/hivemind-hook" ./cmd/hivemind-hook
go build -o "$tmp/overhead" ./bench/overhead
"$tmp/overhead" -hivemind "$tmp/hivemind" "$@"
