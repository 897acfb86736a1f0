package roles

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/charmbracelet/x/exp/golden"
	"github.com/hivemind-dev/hivemind/internal/config"
	"github.com/hivemind-dev/hivemind/vocab"
)

// TestClaudeToolFlags pins the Claude Code flags each role gets: the tool
// lists and the full argument list with the default role config.
func TestClaudeToolFlags(t *testing.T) {
	cfg := config.Default()
	for _, role := range vocab.Roles() {
		t.Run(string(role), func(t *testing.T) {
			p := DefaultPolicy(role)
			allowed, disallowed := ClaudeToolFlags(p)
			var b strings.Builder
			fmt.Fprintf(&b, "allowed:    %s\n", strings.Join(allowed, " "))
			fmt.Fprintf(&b, "disallowed: %s\n", strings.Join(disallowed, " "))
			args, err := json.MarshalIndent(ClaudeArgs(p, cfg.Role(role), "<"+string(role)+" prompt>"), "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			b.WriteString("args: " + string(args) + "\n")
			golden.RequireEqual(t, b.String())
		})
	}
}

func TestClaudeToolFlagsInvariants(t *testing.T) {
	for _, role := range vocab.Roles() {
		allowed, disallowed := ClaudeToolFlags(DefaultPolicy(role))
		for _, a := range allowed {
			for _, d := range disallowed {
				if a == d {
					t.Errorf("%s: %s both allowed and disallowed", role, a)
				}
			}
		}
	}
	_, dis := ClaudeToolFlags(DefaultPolicy("reviewer"))
	for _, want := range []string{"Bash", "Edit", "NotebookEdit"} {
		if !strings.Contains(" "+strings.Join(dis, " ")+" ", " "+want+" ") {
			t.Errorf("reviewer: %s not disallowed: %v", want, dis)
		}
	}
	al, dis := ClaudeToolFlags(DefaultPolicy("worker"))
	if len(dis) != 0 || !strings.Contains(strings.Join(al, ","), "Bash") {
		t.Errorf("worker: allowed %v disallowed %v", al, dis)
	}
}

func TestClaudeArgsConfig(t *testing.T) {
	rc := config.RoleConfig{Model: "opus", PermissionMode: "default", ExtraArgs: []string{"--verbose"}}
	got := strings.Join(ClaudeArgs(DefaultPolicy("reviewer"), rc, ""), " ")
	want := "--model opus --permission-mode default --allowedTools Read,Glob,Grep,TodoWrite,Write,WebFetch,WebSearch " +
		"--disallowedTools Edit,NotebookEdit,Bash,Task,Agent --verbose"
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

func TestDefaultPolicyUnknownRole(t *testing.T) {
	p := DefaultPolicy("intruder")
	if p.Tools.Write || p.Tools.Edit || p.Tools.Bash != BashNone {
		t.Errorf("unknown role must be read-only: %+v", p.Tools)
	}
	if ok, _ := Decide(p, "/w/tasks/t", "/p", "Write", map[string]any{"file_path": "/w/tasks/t/plan.md"}); ok {
		t.Error("unknown role could write")
	}
}
