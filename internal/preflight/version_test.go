package preflight

import (
	"context"
	"strings"
	"testing"
)

// The version check says whether the CLI is the version Hivemind was
// tested with, and names both when it is not; a Node.js older than the
// CLI needs fails with the fix.
func TestVersionTestedWith(t *testing.T) {
	for _, tc := range []struct {
		name, out, node string
		status          Status
		msg             string
		nodeStatus      Status
	}{
		{"tested", "2.1.197 (Claude Code)\n", "v20.1.0\n", OK, "2.1.197 (Claude Code); tested with 2.1.197", OK},
		{"newer", "2.1.332 (Claude Code)\n", "v20.1.0\n", Warn, "tested with 2.1.197; you have 2.1.332", OK},
		{"old node", "2.1.197 (Claude Code)\n", "v16.3.0\n", OK, "tested with 2.1.197", Fail},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := healthyClaude()
			w.path["node"] = "/usr/bin/node"
			w.outputs["/usr/bin/claude --version"] = fakeOut{out: tc.out}
			w.outputs["/usr/bin/node --version"] = fakeOut{out: tc.node}
			cli := *testClaude
			cli.Tested, cli.Node = "2.1.197", 18
			a := claudeAgent
			a.CLI = &cli
			rs := Run(context.Background(), w.env_(), []Agent{a})
			v := find(t, rs, "claude version")
			if v.Status != tc.status || !strings.Contains(v.Msg, tc.msg) {
				t.Errorf("version: %v, want %v %q", v, tc.status, tc.msg)
			}
			if tc.status == Warn && !strings.Contains(v.Fix, "@anthropic-ai/claude-code@2.1.197") {
				t.Errorf("fix does not name the tested version: %q", v.Fix)
			}
			n := find(t, rs, "claude runtime")
			if n.Status != tc.nodeStatus || !strings.Contains(n.Msg, "needs ≥ 18") {
				t.Errorf("runtime: %v, want %v", n, tc.nodeStatus)
			}
		})
	}
}
