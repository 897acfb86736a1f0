package tui

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/exp/golden"

	"github.com/hivemind-dev/hivemind/vocab"
)

func testKnowledge() []KnowledgeItem {
	at := testNow.Add(-time.Minute)
	return []KnowledgeItem{
		{Kind: vocab.KindTerm, ID: "checkpoint", Title: "checkpoint", Text: "a reviewed milestone of the plan", By: "worker_2", At: at, Revisions: 1},
		{Kind: vocab.KindDecision, ID: "D2", Title: "Errors are wrapped with the operation that failed",
			Text: "Every returned error is wrapped as fmt.Errorf(\"<package>: <operation>: %w\", err), so callers can use errors.Is/As and a log line says where it failed.",
			By:   "worker_1", At: at.Add(-time.Minute)},
		{Kind: vocab.KindConstraint, ID: "C1", Title: "No cgo", Text: "No cgo", By: "user", At: at.Add(-2 * time.Minute)},
		{Kind: vocab.KindDecision, ID: "D1", Title: "One owner per file while subtasks run in parallel",
			Text: "Parallel subtasks never touch the same file.", By: "lead", At: at.Add(-3 * time.Minute)},
	}
}

// TestGoldenKnowledgePanel: the panel (key x) with entries and empty, and
// the help that lists its key.
func TestGoldenKnowledgePanel(t *testing.T) {
	cases := map[string]func(*harness){
		"panel": func(h *harness) {
			h.send(SnapshotMsg{State: testState(4), Knowledge: testKnowledge()})
			h.key("x")
		},
		"empty": func(h *harness) { h.key("x") },
		"overflow": func(h *harness) {
			var many []KnowledgeItem
			for range 8 {
				many = append(many, testKnowledge()...)
			}
			h.send(SnapshotMsg{State: testState(4), Knowledge: many})
			h.key("x")
		},
	}
	for name, act := range cases {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t, 4, 120, 30)
			act(h)
			checkFrame(t, h.view(), 120, 30)
			golden.RequireEqual(t, h.plain())
		})
	}
}

func TestKnowledgePanelToggles(t *testing.T) {
	h := newHarness(t, 4, 120, 30)
	h.send(SnapshotMsg{State: testState(4), Knowledge: testKnowledge()})
	if strings.Contains(h.plain(), "shared knowledge") {
		t.Fatal("panel shown before x")
	}
	h.key("x")
	if !strings.Contains(h.plain(), "Errors are wrapped") || !strings.Contains(h.plain(), "worker_1") {
		t.Fatalf("panel lacks the newest entries and authors:\n%s", h.plain())
	}
	// A snapshot without a knowledge list keeps the entries.
	h.send(SnapshotMsg{State: testState(4)})
	if !strings.Contains(h.plain(), "Errors are wrapped") {
		t.Fatal("entries dropped by a snapshot without knowledge")
	}
	h.key("esc")
	if strings.Contains(h.plain(), "shared knowledge (x hides)") {
		t.Fatal("esc did not close the panel")
	}
	h.key("x")
	h.key("x")
	if strings.Contains(h.plain(), "shared knowledge (x hides)") {
		t.Fatal("x did not toggle the panel off")
	}
	h.key("?")
	if !strings.Contains(h.plain(), "shared knowledge") {
		t.Fatalf("help does not list x:\n%s", h.plain())
	}
}

// TestKnowledgePanelWidthSweep: every line exactly the width at every size
// TestWidthSweep renders (sweepSizes).
func TestKnowledgePanelWidthSweep(t *testing.T) {
	h := newHarness(t, 3, 80, 24)
	h.send(SnapshotMsg{State: testState(3), Knowledge: testKnowledge()})
	h.key("x")
	for _, sz := range sweepSizes(rand.New(rand.NewPCG(26, 9))) {
		h.send(tea.WindowSizeMsg{Width: sz[0], Height: sz[1]})
		checkFrame(t, h.view(), sz[0], sz[1])
	}
}
