package remote

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hivemind-dev/hivemind/internal/sshtest"
)

// Claude Code's first run on a host is read from its ~/.claude.json:
// missing, not onboarded, onboarded without the work dir trusted, and
// trusted through a parent of the work dir; a file that is no JSON is
// named.
func TestCheckClaude(t *testing.T) {
	s := sshtest.Start(t, sshtest.Options{})
	h := host(s, s.Alias)
	work := s.Home + "/work/project"
	file := filepath.Join(s.Home, ".claude.json")
	write := func(body string) {
		t.Helper()
		if err := os.WriteFile(file, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(file, s.UID, s.GID); err != nil && !os.IsPermission(err) {
			t.Fatal(err)
		}
	}
	st, err := CheckClaude(ctx(t), h, work)
	if err != nil || st.Found || st.Path != file {
		t.Fatalf("no config: %+v, %v", st, err)
	}
	write(`{"numStartups": 1}`)
	if st, err = CheckClaude(ctx(t), h, work); err != nil || !st.Found || st.Onboarded {
		t.Fatalf("not onboarded: %+v, %v", st, err)
	}
	write(`{"hasCompletedOnboarding": true, "projects": {"/elsewhere": {"hasTrustDialogAccepted": true}, "` + s.Home + `/work": {"hasTrustDialogAccepted": false}}}`)
	if st, err = CheckClaude(ctx(t), h, work); err != nil || !st.Onboarded || st.Trusted != "" {
		t.Fatalf("onboarded, not trusted: %+v, %v", st, err)
	}
	write(`{"hasCompletedOnboarding": true, "projects": {"` + s.Home + `": {"hasTrustDialogAccepted": true}}}`)
	if st, err = CheckClaude(ctx(t), h, work); err != nil || st.Trusted != s.Home {
		t.Fatalf("trusted through the parent %s: %+v, %v", s.Home, st, err)
	}
	write(`{"hasCompletedOnboarding": tr`)
	if _, err = CheckClaude(ctx(t), h, work); err == nil || !strings.Contains(err.Error(), "not valid JSON") {
		t.Fatalf("a cut file: %v", err)
	}
}

// HelperInstalled says whether this build is installed, and changes
// nothing on the host.
func TestHelperInstalled(t *testing.T) {
	s := sshtest.Start(t, sshtest.Options{})
	h := host(s, s.Alias)
	inst, present, err := HelperInstalled(ctx(t), h, helperBin)
	if err != nil || present || inst.Version == "" {
		t.Fatalf("before install: %+v %v %v", inst, present, err)
	}
	if _, err := os.Stat(filepath.Join(s.Home, ".cache", "hivemind", "helper")); err == nil {
		t.Fatal("the check created the helper directory")
	}
	if _, err := Install(ctx(t), h, helperBin); err != nil {
		t.Fatal(err)
	}
	again, present, err := HelperInstalled(ctx(t), h, helperBin)
	if err != nil || !present || again.Version != inst.Version || again.Path != inst.Path {
		t.Fatalf("after install: %+v %v %v (want %+v)", again, present, err, inst)
	}
}
