package vocab

import (
	"reflect"
	"slices"
	"testing"
)

func TestParseRole(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    Role
		wantErr string
	}{
		{"lead", RoleLead, ""},
		{"reviewer", RoleReviewer, ""},
		{"worker", RoleWorker, ""},
		{"reveiwer", "", `unknown role "reveiwer" (did you mean "reviewer"?); roles: lead, reviewer, worker`}, //nolint:misspell // the typo is the input
		{"workers", "", `unknown role "workers" (did you mean "worker"?); roles: lead, reviewer, worker`},
		{"Lead", "", `unknown role "Lead" (did you mean "lead"?); roles: lead, reviewer, worker`},
		{"planner", "", `unknown role "planner"; roles: lead, reviewer, worker`},
		{"", "", `unknown role ""; roles: lead, reviewer, worker`},
	} {
		got, err := ParseRole(tc.in)
		if got != tc.want || (err == nil) != (tc.wantErr == "") || (err != nil && err.Error() != tc.wantErr) {
			t.Errorf("ParseRole(%q) = %q, %v; want %q, %s", tc.in, got, err, tc.want, tc.wantErr)
		}
	}
}

func TestRoleOrder(t *testing.T) {
	rs := []Role{"zeta", RoleWorker, "", RoleLead, "alpha", RoleReviewer}
	slices.SortFunc(rs, CompareRoles)
	if want := []Role{RoleLead, RoleReviewer, RoleWorker, "", "alpha", "zeta"}; !reflect.DeepEqual(rs, want) {
		t.Errorf("sorted %q, want %q", rs, want)
	}
	if !slices.IsSortedFunc(Roles(), CompareRoles) || len(Roles()) != 3 {
		t.Errorf("Roles() = %q, not in order", Roles())
	}
}

func TestRoleOfAndSortAgents(t *testing.T) {
	for id, want := range map[AgentID]Role{
		"lead": RoleLead, "reviewer": RoleReviewer, "worker_1": RoleWorker, "worker_12": RoleWorker,
		"worker_": "", "worker": "", "workerX": "", "human": "",
	} {
		if got := RoleOf(id); got != want {
			t.Errorf("RoleOf(%q) = %q, want %q", id, got, want)
		}
	}
	ids := []AgentID{"zed", "worker_10", "reviewer", "worker_2", "abe", "lead", "worker_1"}
	SortAgents(ids)
	if want := []AgentID{"lead", "reviewer", "worker_1", "worker_2", "worker_10", "abe", "zed"}; !reflect.DeepEqual(ids, want) {
		t.Errorf("SortAgents: %q, want %q", ids, want)
	}
	s0 := State{Agents: map[AgentID]AgentState{"worker_10": {}, "worker_2": {}, "reviewer": {}, "zeta": {}, "lead": {}, "worker_1": {}}}
	if got, want := s0.AgentIDs(), []AgentID{"lead", "reviewer", "worker_1", "worker_2", "worker_10", "zeta"}; !reflect.DeepEqual(got, want) {
		t.Errorf("AgentIDs: %q, want %q", got, want)
	}
	if ids := (State{}).AgentIDs(); ids == nil || len(ids) != 0 {
		t.Errorf("AgentIDs of no agents: %#v, want empty, not nil (it is encoded)", ids)
	}
	// The recorded role wins over the id's.
	s := State{Agents: map[AgentID]AgentState{"helper": {Role: RoleReviewer}, "worker_1": {}}}
	if s.AgentRole("helper") != RoleReviewer || s.AgentRole("worker_1") != RoleWorker || s.AgentRole("ghost") != "" {
		t.Errorf("AgentRole: %q %q %q", s.AgentRole("helper"), s.AgentRole("worker_1"), s.AgentRole("ghost"))
	}
}
