# Common commands, one word each.
GO       ?= go
FUZZTIME ?= 30s

.PHONY: test lint bench fuzz demo build

build:
	$(GO) build -o hivemind . && $(GO) build -o hivemind-hook ./cmd/hivemind-hook

test:
	$(GO) test -race ./...

lint:
	gofmt -l $$(git ls-files '*.go')
	$(GO) vet ./...
	staticcheck ./...

# Fuzz targets: package:Target pairs (go test -fuzz runs one target at a time).
FUZZ_TARGETS = ./workspace:FuzzLoadState ./workspace:FuzzReadEvents ./engine:FuzzParsePlan ./ptyagent/screen:FuzzScreenWrite

fuzz:
	@set -e; for t in $(FUZZ_TARGETS); do \
		pkg=$${t%%:*}; name=$${t##*:}; \
		echo "fuzz $$pkg $$name ($(FUZZTIME))"; \
		$(GO) test -run '^$$' -fuzz "^$$name$$" -fuzztime $(FUZZTIME) -fuzzminimizetime 5s $$pkg; \
	done

bench:
	bash bench/compare.sh

demo:
	$(GO) run . demo
