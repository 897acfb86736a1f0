package roles

import (
	"path/filepath"
	"testing"

	"github.com/hivemind-dev/hivemind/vocab"
	"github.com/hivemind-dev/hivemind/workspace/triggers"
)

// Each row of the trigger table: the policy of every role that writes it
// allows it in the agent's own outbox, and no policy allows it anywhere
// else — not in another agent's outbox, not at the task root, and not to
// a role that does not write it.
func TestPoliciesFollowTriggerTable(t *testing.T) {
	f := newFixture(t)
	T := f.task
	ids := map[vocab.Role]vocab.AgentID{vocab.RoleLead: "lead", vocab.RoleReviewer: "reviewer", vocab.RoleWorker: "worker_1"}
	for _, spec := range triggers.Table() {
		for _, role := range vocab.Roles() {
			pol := DefaultPolicy(role)
			pol.Agent = ids[role]
			own := filepath.Join(T, filepath.FromSlash(triggers.Path(pol.Agent, spec.Kind, "y")))
			allow, why := Decide(pol, T, f.project, "Write", map[string]any{"file_path": own})
			if want := spec.WrittenBy(role); allow != want {
				t.Errorf("%s writing %s in its outbox: allowed %v, want %v (%s)", role, spec.Kind, allow, want, why)
			}
			for _, other := range []string{
				triggers.Path("worker_2", spec.Kind, "y"), // another agent's outbox
				spec.Kind.Name("y"),                       // the task root
			} {
				if spec.ByUser() && other == spec.Kind.Name("y") {
					continue
				}
				if allow, _ := Decide(pol, T, f.project, "Write", map[string]any{"file_path": filepath.Join(T, filepath.FromSlash(other))}); allow {
					t.Errorf("%s may write %s", role, other)
				}
			}
		}
	}
}
