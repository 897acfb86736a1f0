package vocab

import (
	"fmt"
	"slices"
	"strings"

	"github.com/hivemind-dev/hivemind/internal/suggest"
)

// Role is what an agent does in a run. The strings are stored (state.json,
// assignments, events) and are the names config and the command line take
// ([roles.<role>], --agent role=…): do not change them.
type Role string

// Roles of agents, in order (see Roles).
const (
	RoleLead     Role = "lead"
	RoleReviewer Role = "reviewer"
	RoleWorker   Role = "worker"
)

var roles = []Role{RoleLead, RoleReviewer, RoleWorker}

// Roles returns every role in order: Lead, Reviewer, Worker.
func Roles() []Role { return slices.Clone(roles) }

// RoleNames returns the role names in order, for messages and config keys.
func RoleNames() []string {
	names := make([]string, len(roles))
	for i, r := range roles {
		names[i] = string(r)
	}
	return names
}

// Known reports whether r is one of the roles.
func (r Role) Known() bool { return slices.Contains(roles, r) }

// rank is r's place in Roles; unknown roles come after every known one.
func (r Role) rank() int {
	if i := slices.Index(roles, r); i >= 0 {
		return i
	}
	return len(roles)
}

// CompareRoles orders roles Lead < Reviewer < Worker < unknown roles
// (alphabetically), for slices.SortFunc.
func CompareRoles(a, b Role) int {
	if d := a.rank() - b.rank(); d != 0 {
		return d
	}
	return strings.Compare(string(a), string(b))
}

// ParseRole returns the role named s, or an error that lists the roles and
// suggests the closest for a typo.
func ParseRole(s string) (Role, error) {
	if r := Role(s); r.Known() {
		return r, nil
	}
	msg := fmt.Sprintf("unknown role %q", s)
	if sg := suggest.Closest(s, roles, 2); sg != "" {
		msg += fmt.Sprintf(" (did you mean %q?)", sg)
	}
	return "", fmt.Errorf("%s; roles: %s", msg, strings.Join(RoleNames(), ", "))
}
