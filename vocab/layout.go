package vocab

import (
	"path/filepath"
	"strconv"
	"strings"
)

// Names of the files and directories of the layout.
const (
	DirName        = ".hivemind"
	TasksDir       = "tasks"
	FrictionFile   = "friction.json"
	ConfigFile     = "config.toml"
	RolesDir       = "roles"
	LockFile       = "hivemind.lock"
	TaskFile       = "task.json"
	TaskMarkdown   = "task.md"
	StateFile      = "state.json"
	EventsFile     = "events.jsonl"
	AssignmentsDir = "assignments"
	OutputsDir     = "outputs"
	ReviewsDir     = "reviews"
	FrictionDir    = "friction"
	LogsDir        = "logs"
	AgentLogsDir   = "logs/agents"
	HeartbeatsDir  = "heartbeats"
	BackupsDir     = "backups"
	LocksDir       = "locks"
	// ProcsDir holds the running agents' process records (ptyagent), so
	// a run after a crash reaps what the crashed one left.
	ProcsDir = "procs"
	// OutboxesDir holds one outbox per agent, agents/<agent_id>/: the only
	// place in the task directory that agent may write (its trigger files,
	// outputs, done markers, friction and knowledge notes). The engine
	// takes a trigger from the outbox of the agent that must write it.
	OutboxesDir = "agents"
)

// ValidID reports whether s is usable as a task, agent or subtask id (and
// thus as a file name): letters, digits, '.', '_', '-', starting with a
// letter or digit, no "..", at most 128 bytes. (A loop, not a regexp: the
// {0,127} program cost ~0.5 ms to compile, and this package stays free of
// sync for the pure state machine.)
func ValidID(s string) bool {
	if s == "" || len(s) > 128 || strings.Contains(s, "..") {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		alnum := 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
		if !alnum && (i == 0 || c != '.' && c != '_' && c != '-') {
			return false
		}
	}
	return true
}

// OutboxRel returns the outbox of agent relative to the task directory:
// agents/<agent>.
func OutboxRel(agent AgentID) string { return filepath.Join(OutboxesDir, string(agent)) }

// AssignmentRel returns the path, relative to the task directory, of
// agent's assignment number seq: assignments/<agent>-<seq>.json, the file
// the message that sends it names. It is written once and never changed,
// so every message names exactly the content it was sent with. Seq 0
// names assignments/<agent>.json, a copy of the agent's newest assignment
// (for people, and what the messages of a task started before versioned
// assignments name).
func AssignmentRel(agent AgentID, seq int) string {
	name := string(agent)
	if seq > 0 {
		name += "-" + strconv.Itoa(seq)
	}
	return filepath.Join(AssignmentsDir, name+".json")
}

// AssignmentOf returns the agent and seq an assignment file's name (the
// base of an AssignmentRel path) stands for: worker_1-7.json is
// worker_1's assignment 7, worker_1.json its newest (seq 0).
func AssignmentOf(name string) (AgentID, int, bool) {
	name, ok := strings.CutSuffix(name, ".json")
	if !ok {
		return "", 0, false
	}
	seq := 0
	if i := strings.LastIndexByte(name, '-'); i > 0 {
		if n, err := strconv.Atoi(name[i+1:]); err == nil && n > 0 && strconv.Itoa(n) == name[i+1:] {
			name, seq = name[:i], n
		}
	}
	return AgentID(name), seq, ValidID(name)
}
