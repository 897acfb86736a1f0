package vocab

import (
	"slices"
	"strconv"
	"strings"
)

// Health is an agent's state as seen from outside: reported by the agent
// layer (ptyagent), kept in state.json (AgentState.Status) and shown by the
// TUI. The strings are stored: do not change them.
type Health string

// Health states. HealthRestarting is the engine's own: it is restarting
// the agent, and the exit that follows is not a failure.
const (
	HealthStarting          Health = "starting"
	HealthReady             Health = "ready"
	HealthBusy              Health = "busy"
	HealthIdle              Health = "idle"
	HealthWaitingPermission Health = "waiting_permission"
	HealthRateLimited       Health = "rate_limited"
	HealthHangWarning       Health = "hang_warning"
	HealthHung              Health = "hung"
	HealthExited            Health = "exited"
	HealthRestarting        Health = "restarting"
)

// Injectable reports whether a message may be typed into an agent in this
// state.
func (h Health) Injectable() bool { return h == HealthReady || h == HealthIdle }

// AgentID names one agent of a run: the Lead and the Reviewer are named by
// their role, workers are worker_1 … worker_N. The strings are stored
// (state.json, assignment and log file names, events): do not change them.
type AgentID string

// Agent ids of the Lead and the Reviewer.
const (
	AgentLead     = AgentID(RoleLead)
	AgentReviewer = AgentID(RoleReviewer)
	workerPrefix  = "worker_"
)

// WorkerID is the id of the n-th worker (from 1).
func WorkerID(n int) AgentID { return AgentID(workerPrefix + strconv.Itoa(n)) }

// WorkerNum is the number of a worker id as WorkerID writes it
// (worker_3 → 3); false for any other id ("worker_03", "lead").
func WorkerNum(id AgentID) (int, bool) {
	n, ok := workerNum(id)
	return n, ok && n >= 1 && WorkerID(n) == id
}

// workerNum is the number of a worker id (worker_3 → 3).
func workerNum(id AgentID) (int, bool) {
	s, ok := strings.CutPrefix(string(id), workerPrefix)
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(s)
	return n, err == nil
}

// RoleOf is the role of an agent id ("" for an id of no role).
func RoleOf(id AgentID) Role {
	switch id {
	case AgentLead, AgentReviewer:
		return Role(id)
	}
	if _, ok := workerNum(id); ok {
		return RoleWorker
	}
	return ""
}

// SortAgents sorts agent ids as every view lists them: by role (lead,
// reviewer, workers by number), then any others alphabetically.
func SortAgents(ids []AgentID) {
	slices.SortFunc(ids, func(a, b AgentID) int {
		// RoleOf is "" for an id of no role, which sorts after every role.
		if d := CompareRoles(RoleOf(a), RoleOf(b)); d != 0 {
			return d
		}
		na, _ := workerNum(a)
		nb, _ := workerNum(b)
		if na != nb {
			return na - nb
		}
		return strings.Compare(string(a), string(b))
	})
}

// AgentIDs returns the ids of s's agents in SortAgents order.
func (s State) AgentIDs() []AgentID {
	ids := make([]AgentID, 0, len(s.Agents))
	for id := range s.Agents {
		ids = append(ids, id)
	}
	SortAgents(ids)
	return ids
}

// AgentRole is the role of agent id: as s records it, else from the id
// ("" for an id of no role).
func (s State) AgentRole(id AgentID) Role {
	if r := s.Agents[id].Role; r != "" {
		return r
	}
	return RoleOf(id)
}

// JoinAgents lists ids for a message: "worker_1, worker_2".
func JoinAgents(ids []AgentID) string {
	var b strings.Builder
	for i, id := range ids {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(string(id))
	}
	return b.String()
}
