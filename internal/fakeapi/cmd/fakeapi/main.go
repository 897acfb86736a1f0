// Command fakeapi runs the scripted fake Messages API on its own, to try
// Hivemind with real Claude Code offline by hand:
//
//	go run ./internal/fakeapi/cmd/fakeapi -home /tmp/hm-home -project /path/to/project
//
// It writes a test HOME that skips every Claude Code dialog (when -home is
// given), prints the environment to export, serves until interrupted, then
// prints a summary of the requests it answered.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/hivemind-dev/hivemind/internal/claudetest"
	"github.com/hivemind-dev/hivemind/internal/fakeapi"
)

func main() {
	home := flag.String("home", "", "write a test HOME here (.claude.json, .claude/settings.json)")
	project := flag.String("project", "", "project directory the test HOME trusts")
	reject := flag.Int("reject-plans", 1, "plan reviews that end in feedback before an approval")
	issues := flag.Int("checkpoint-issues", 1, "checkpoint reviews that report issues before approvals")
	friction := flag.Bool("friction", false, "worker_1 logs one friction file")
	forbidden := flag.Bool("forbidden-write", false, "the reviewer tries to write a source file in its first plan review")
	delay := flag.Duration("chunk-delay", 0, "pause between streamed SSE events (slow streaming)")
	limitAgent := flag.String("rate-limit-agent", "", "answer this agent's requests with 429 …")
	limitFor := flag.Duration("rate-limit-for", 10*time.Second, "… for this long from its first request")
	flag.Parse()

	sc := fakeapi.DefaultScript()
	sc.Scenario.RejectPlans, sc.Scenario.CheckpointIssues = *reject, *issues
	sc.Scenario.WriteFriction, sc.Scenario.ForbiddenWrite = *friction, *forbidden
	sc.ChunkDelay = *delay
	if *limitAgent != "" {
		sc.Errors = append(sc.Errors, fakeapi.ErrorRule{Agent: *limitAgent, Status: 429, For: *limitFor, RetryAfter: time.Second})
	}
	api := fakeapi.New(sc)
	defer api.Close()

	if *home != "" {
		err := os.MkdirAll(*home, 0o755)
		if err == nil {
			err = claudetest.WriteConfig(*home, *project)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "fakeapi:", err)
			os.Exit(1)
		}
		fmt.Printf("export HOME=%s\n", *home)
	}
	fmt.Printf("export ANTHROPIC_BASE_URL=%s ANTHROPIC_API_KEY=%s\n", api.URL(), claudetest.APIKey)
	fmt.Println("export CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 DISABLE_TELEMETRY=1 DISABLE_AUTOUPDATER=1")
	if os.Geteuid() == 0 {
		fmt.Println("export IS_SANDBOX=1")
	}
	fmt.Fprintln(os.Stderr, "fakeapi: serving; Ctrl-C to stop")

	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	<-sigs
	byAgent := map[string]int{}
	for _, r := range api.Requests() {
		if r.Kind == "messages" {
			byAgent[r.Agent]++
		}
	}
	fmt.Fprintf(os.Stderr, "fakeapi: %d requests; model requests by agent: %v\n", len(api.Requests()), byAgent)
}
