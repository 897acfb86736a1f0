# Common commands, one word each.
GO       ?= go
FUZZX ?= 6

.PHONY: test test-long lint bench fuzz demo build chaos real-agents overhead

# hivemind --version prints VERSION (the checkout's git describe).
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null)

build:
	$(GO) build -ldflags "-X github.com/hivemind-dev/hivemind/internal/cli.version=$(VERSION)" -o hivemind . && $(GO) build -o hivemind-hook ./cmd/hivemind-hook

# README's test command (the end-to-end package alone takes more than go
# test's default 10 min timeout on a loaded 2-core machine).
test:
	$(GO) test -race -timeout 30m ./...

# Nightly: the suite with the exhaustive forms of the sampled tests
# (testkit.Long: every width of the TUI's width sweep, ...).
test-long:
	HIVEMIND_TEST_LONG=1 $(GO) test -race -timeout 60m ./...

# golangci-lint (pinned, run through the module proxy, so CI installs
# nothing; .golangci.yml) adds errcheck, gochecksumtype (every switch over
# a //sumtype:decl interface, flow.Event and flow.Effect in engine/flow,
# lists every member or has a default) and exhaustive (the same for
# Phase, Health, ProfileKind and RecordType).
GOLANGCI = github.com/golangci/golangci-lint/v2/cmd/golangci-lint@v2.15.0

lint:
	@unformatted=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$unformatted" ]; then echo "gofmt would change:"; echo "$$unformatted"; exit 1; fi
	$(GO) vet ./...
	staticcheck ./...
	$(GO) run $(GOLANGCI) run ./...
	# The pure state machine (engine/flow) imports no I/O and reads no clock.
	$(GO) test -count=1 -run '^TestPurePackage' ./engine/flow

# Fuzz targets: package:Target:executions (go test -fuzz runs one target at
# a time). Each runs FUZZX times its count of executions, about 5 s each
# here at FUZZX=1 (CI's short form): a count, not -fuzztime's duration, whose
# deadline races Go 1.26's fuzzing coordinator into a spurious "context
# deadline exceeded" failure with no failing input (go.dev/issue/75804,
# fixed in Go 1.27; seen in .ci/run on FuzzScreenWrite).
FUZZ_TARGETS = ./workspace:FuzzLoadState:500 ./workspace:FuzzReadEvents:100000 ./engine/flow:FuzzParsePlan:100000 ./ptyagent/screen:FuzzScreenWrite:20000

fuzz:
	@set -e; for t in $(FUZZ_TARGETS); do \
		pkg=$${t%%:*}; rest=$${t#*:}; name=$${rest%%:*}; n=$$(( $${rest##*:} * $(FUZZX) )); \
		echo "fuzz $$pkg $$name ($${n} executions)"; \
		$(GO) test -run '^$$' -fuzz "^$$name$$" -fuzztime $${n}x -fuzzminimizetime 5s $$pkg; \
	done

# The product benchmark (bench/product.sh: the built binary, real PTYs and
# agent processes, against tmux and raw PTY reads; README's figures come
# from it), after the component benchmarks that find causes: the emulator
# and the TUI model in-process, and the emulator vs tmux through one PTY.
bench:
	$(GO) test -run '^$$' -bench . -benchtime 3x ./ptyagent/screen/ ./tui/
	$(GO) test -run '^$$' -bench 'PTYToScreen|TrickleCPU' -benchtime 3x ./ptyagent/
	bash bench/compare.sh
	bash bench/product.sh

demo:
	$(GO) run . demo

# Hivemind's own messages' share of the tokens (bench/overhead): the demo
# task, twice (each CLI a worker once), by real Claude Code, Codex and
# Gemini offline against the fake APIs; fails when re-sends and notices
# cost a worker more than 5 % of its tokens. About 2.5 min here. The CLIs
# from make real-agents (AGENTS_PREFIX).
overhead:
	AGENTS_PREFIX=$(AGENTS_PREFIX) bash bench/overhead.sh

# Fault-injection suite: hostile scripted agents (the e2e test binary run
# as a custom agent) end to end through the built binary, headless; each
# case asserts a bounded, clear outcome and that nothing is lost
# (e2e/chaos_test.go). CI runs the short form, in seconds: make chaos SHORT=1
chaos:
	$(GO) test -race -count=1 $(if $(SHORT),-short) -run '^TestChaos' ./e2e/

# The real agent CLIs installed under AGENTS_PREFIX (every registered
# profile but the globally installed Claude Code: ptyagent/profiles,
# printed by its pinned command) from npm against the fake APIs (the
# profiles through ptyagent's Manager, a typed turn in a PTY, whole teams).
# Tested versions by default; try the newest with
#   make real-agents LATEST=1 AGENTS_PREFIX=/tmp/hm-agents-latest
AGENTS_PREFIX  ?= $(HOME)/.cache/hivemind-agents
real-agents:
	npm install --prefix $(AGENTS_PREFIX) --no-fund --no-audit $$($(GO) run ./ptyagent/profiles/pinned $(if $(LATEST),-latest) | awk '$$3 == "prefix" {print $$2}')
	PATH=$(AGENTS_PREFIX)/node_modules/.bin:$$PATH $(GO) test -race -count=1 -run 'TestReal[A-Z][a-z]+$$' ./ptyagent/...
	HIVEMIND_TEST_LONG=1 PATH=$(AGENTS_PREFIX)/node_modules/.bin:$$PATH $(GO) test -race -count=1 -run 'Test[A-Z][a-z]+(TypedTurn|TeamComplete|ReviewerCannotEditSource)$$|TestMixedTeam' ./e2e/
