package workspace

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

// Agent ids: the Lead and the Reviewer are named by their role, workers
// are worker_1 … worker_N.
const (
	AgentLead     = string(RoleLead)
	AgentReviewer = string(RoleReviewer)
	workerPrefix  = "worker_"
)

// WorkerID is the id of the n-th worker (from 1).
func WorkerID(n int) string { return workerPrefix + strconv.Itoa(n) }

// workerNum is the number of a worker id (worker_3 → 3).
func workerNum(id string) (int, bool) {
	s, ok := strings.CutPrefix(id, workerPrefix)
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(s)
	return n, err == nil
}

// RoleOf is the role of an agent id ("" for an id of no role).
func RoleOf(id string) Role {
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
func SortAgents(ids []string) {
	slices.SortFunc(ids, func(a, b string) int {
		// RoleOf is "" for an id of no role, which sorts after every role.
		if d := CompareRoles(RoleOf(a), RoleOf(b)); d != 0 {
			return d
		}
		na, _ := workerNum(a)
		nb, _ := workerNum(b)
		if na != nb {
			return na - nb
		}
		return strings.Compare(a, b)
	})
}

// AgentIDs returns the ids of s's agents in SortAgents order.
func (s State) AgentIDs() []string {
	ids := make([]string, 0, len(s.Agents))
	for id := range s.Agents {
		ids = append(ids, id)
	}
	SortAgents(ids)
	return ids
}

// AgentRole is the role of agent id: as s records it, else from the id
// ("" for an id of no role).
func (s State) AgentRole(id string) Role {
	if r := s.Agents[id].Role; r != "" {
		return r
	}
	return RoleOf(id)
}
