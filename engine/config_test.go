package engine

import (
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/hivemind-dev/hivemind/internal/config"
	"github.com/hivemind-dev/hivemind/vocab"
)

// defaultConfig is the machine's config from internal/config's defaults,
// as the program builds it.
func defaultConfig() Config { return NewConfig(config.Default()) }

var testMachine = Machine{Cfg: defaultConfig()}

const testProject = "/proj"

// validPlan: checkpoint 1 has st_1 (a.go) and st_2 (b.go); checkpoint 2
// has st_3 (MODIFY a.go, after st_1). The machine's own tests
// (engine/flow) have the same plan; the runner's need one to reach
// executing through Step.
var validPlan = planMD(`{"summary": "build it",
 "checkpoints": [{"id": 1, "name": "core"}, {"id": 2, "name": "polish"}],
 "subtasks": [
  {"id": "st_1", "description": "write a", "checkpoint": 1, "dependencies": [], "files": ["CREATE a.go"]},
  {"id": "st_2", "description": "write b", "checkpoint": 1, "dependencies": [], "files": ["CREATE b.go"]},
  {"id": "st_3", "description": "polish a", "checkpoint": 2, "dependencies": ["st_1"], "files": ["MODIFY a.go"]}
 ]}`)

// planMD wraps a json plan in a plan.md.
func planMD(js string) []byte {
	return []byte("# Plan\n\nSome prose.\n\n```json\n" + js + "\n```\n")
}

// Every config value reaches the state machine unchanged, 0 included
// where 0 is legal, and nothing fills in a default on the way (issue 16:
// max_retries = 0 once became 3).
func TestNewConfigKeepsEveryValue(t *testing.T) {
	c := config.Default()
	c.Workers = 7
	c.QuietPeriodMS = 10
	c.MaxRevisionCycles = 1
	c.MaxRetries = 0
	c.BackoffSeconds = []int{0, 2}
	c.HangSeconds = 1
	c.AgentTimeoutSeconds = 2
	c.StallSeconds = 10
	c.BudgetUSD = 0.5
	c.BudgetTokens = 9000
	rc := c.Roles[vocab.RoleWorker]
	rc.BudgetTokens = 4000
	c.Roles[vocab.RoleWorker] = rc
	want := Config{
		Workers:           7,
		QuietPeriod:       10 * time.Millisecond,
		MaxRevisionCycles: 1,
		MaxRetries:        0,
		Backoff:           []time.Duration{0, 2 * time.Second},
		HangTimeout:       time.Second,
		AgentTimeout:      2 * time.Second,
		StallTimeout:      10 * time.Second,
		BudgetUSD:         0.5,
		BudgetTokens:      9000,
		RoleBudgetTokens:  map[vocab.Role]int64{vocab.RoleWorker: 4000},
		Accounts:          map[vocab.AgentID]string{"lead": "claude", "reviewer": "claude"},
	}
	for n := 1; n <= 7; n++ {
		want.Accounts[vocab.WorkerID(n)] = "claude"
	}
	got := NewConfig(c)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("NewConfig\n got %+v\nwant %+v", got, want)
	}
	// Every field of Config is either filled here or one of the run's
	// settings (git): a new field must be added to NewConfig and to this
	// test.
	gitFields := []string{"Git", "Check"}
	ct := reflect.TypeFor[Config]()
	for i := range ct.NumField() {
		f := ct.Field(i)
		if slices.Contains(gitFields, f.Name) {
			continue
		}
		if reflect.ValueOf(want).Field(i).IsZero() && f.Name != "MaxRetries" {
			t.Errorf("Config.%s is not covered by this test", f.Name)
		}
	}
	// The machine uses them as they are.
	m := Machine{Cfg: got}
	if !reflect.DeepEqual(m.Cfg, want) {
		t.Fatalf("machine config %+v", m.Cfg)
	}
	// Each worker's account is its own CLI: a Gemini worker_2 is held with
	// the Gemini agents, not with the Claude workers of its role.
	c = c.WithAgents(config.AgentFlag{PerRole: map[vocab.Role]string{"reviewer": "codex"},
		PerWorker: map[vocab.AgentID]string{"worker_1": "codex", "worker_2": "gemini"}})
	acc := NewConfig(c).Accounts
	for id, want := range map[vocab.AgentID]string{"lead": "claude", "reviewer": "codex", "worker_1": "codex", "worker_2": "gemini", "worker_3": "claude"} {
		if acc[id] != want {
			t.Errorf("account of %s: %q, want %q", id, acc[id], want)
		}
	}
}
