package app

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hivemind-dev/hivemind/internal/claudetest"
	"github.com/hivemind-dev/hivemind/internal/config"
	"github.com/hivemind-dev/hivemind/internal/preflight"
	"github.com/hivemind-dev/hivemind/internal/remote"
	"github.com/hivemind-dev/hivemind/internal/sshtest"
)

// A host is checked like a local agent, on the host: Hivemind's helper for
// this build (missing beside hivemind: a failure with the build command;
// present: a run copies it), and for Claude Code workers Claude's first
// run there (never run, then onboarded with the work dir trusted).
func TestHostReadiness(t *testing.T) {
	s := sshtest.Start(t, sshtest.Options{})
	cfg := config.Default()
	cfg.Agent = "claude"
	cfg.Hosts["box"] = config.Host{SSH: s.Alias, SSHOptions: []string{"-F", s.Config}, Dir: "~/hm"}
	h := RemoteHost(cfg, "box")
	rep, err := remote.Check(t.Context(), h)
	if err != nil {
		t.Fatalf("check: %v", err)
	}
	bin := t.TempDir()
	helperSelf = func() (string, error) { return filepath.Join(bin, "hivemind"), nil }
	t.Cleanup(func() { helperSelf = os.Executable })
	find := func(rs []preflight.Result, check string) preflight.Result {
		t.Helper()
		for _, r := range rs {
			if r.Check == "box: "+check {
				return r
			}
		}
		t.Fatalf("no %q among %+v", check, rs)
		return preflight.Result{}
	}

	rs := hostReadiness(t.Context(), cfg, h, rep)
	if r := find(rs, "hivemind hook"); r.Status != preflight.Fail || !strings.Contains(r.Msg, "go build -o") {
		t.Errorf("no helper beside hivemind: %v", r)
	}
	if r := find(rs, "claude first run"); r.Status != preflight.Fail || !strings.Contains(r.Msg, "never run there") ||
		!strings.Contains(r.Fix, "run `claude` once on box") {
		t.Errorf("claude never run on the host: %v", r)
	}

	if err := os.WriteFile(filepath.Join(bin, remote.HelperName), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := claudetest.WriteConfig(s.Home, rep.Dir); err != nil {
		t.Fatal(err)
	}
	rs = hostReadiness(t.Context(), cfg, h, rep)
	if r := find(rs, "hivemind hook"); r.Status != preflight.OK || !strings.Contains(r.Msg, "not installed yet: a run copies it") {
		t.Errorf("helper beside hivemind, not on the host: %v", r)
	}
	if r := find(rs, "claude first run"); r.Status != preflight.OK || !strings.Contains(r.Msg, "onboarding done, "+rep.Dir+" trusted") {
		t.Errorf("claude ready on the host: %v", r)
	}

	cfg.Agent = "sim" // no Claude: no Claude check
	for _, r := range hostReadiness(t.Context(), cfg, h, rep) {
		if strings.Contains(r.Check, "claude") {
			t.Errorf("a Claude check for sim workers: %v", r)
		}
	}
}
