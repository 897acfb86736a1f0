package ptyagent

import (
	"strings"
	"testing"
)

// A Spec whose kind nobody registered is refused: it never runs with
// another kind's rules.
func TestUnknownKindRefused(t *testing.T) {
	_, err := Start(Spec{ID: "lead", Argv: []string{"true"}, Kind: "opencodex"})
	if err == nil || !strings.Contains(err.Error(), `unknown profile kind "opencodex"`) {
		t.Fatalf("Start with an unknown kind: %v", err)
	}
	for _, k := range []ProfileKind{ProfileClaude, ProfileCodex, ProfileGemini, ProfileSim, ProfileCustom} {
		if b, ok := KindBehavior(k); !ok || b.Submit.Confirm == "" || b.Ready.Mode == "" {
			t.Errorf("kind %s: %+v registered %v", k, b, ok)
		}
	}
}
