package ptyagent

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hivemind-dev/hivemind/internal/sandbox"
	"github.com/hivemind-dev/hivemind/vocab"
)

// A confined agent keeps its pid, its terminal and its hooks (the relay is
// a unix socket outside its scope), while its writes outside the scope,
// and its children's, fail with EACCES.
func TestSandboxedSession(t *testing.T) {
	if !sandbox.Available() {
		t.Skip("this kernel has no Landlock (ABI 0): write scopes cannot be tested here")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	own, other := t.TempDir(), t.TempDir()
	var rec recorder
	spec := helperSpec("sim", "sim", "HM_WORK_MS=50")
	spec.Kind = ProfileSim
	spec.Sandbox = Sandbox{Helper: exe, Writable: []string{own}}
	shell := Spec{ID: "sh", Argv: []string{"sh", "-c", "echo in > " + own + "/f && echo OWN-OK; " +
		"sh -c 'echo out > " + other + "/f' || echo OTHER-REFUSED; exec cat"}, Cols: 200, Rows: 10,
		Sandbox: Sandbox{Helper: exe, Writable: []string{own}}}
	m := newTestManager(t, &rec, map[vocab.AgentID]Spec{"sim": spec, "sh": shell})
	for _, id := range []vocab.AgentID{"sim", "sh"} {
		if err := m.Start(id, "worker", false); err != nil {
			t.Fatal(err)
		}
	}
	if err := m.Inject("sim", 1, "hello from the sandbox test"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 20*time.Second, "delivery confirmed by the confined agent's hook", func() bool { return rec.count(delivered(1)) == 1 })
	s, _ := m.Session("sh")
	waitFor(t, 10*time.Second, "shell output", func() bool { return strings.Contains(s.Text(), "OTHER-REFUSED") })
	txt := s.Text()
	if !strings.Contains(txt, "OWN-OK") || !strings.Contains(txt, "Permission denied") {
		t.Errorf("screen:\n%s", txt)
	}
	if _, err := os.Stat(filepath.Join(other, "f")); err == nil {
		t.Error("the confined shell's child wrote outside its scope")
	}
}
