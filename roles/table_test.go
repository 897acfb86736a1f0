package roles_test

import (
	"testing"

	"github.com/charmbracelet/x/exp/golden"

	"github.com/hivemind-dev/hivemind/internal/config"
	"github.com/hivemind-dev/hivemind/roles"
	// The registered CLIs' enforcement lines, as in the binary.
	_ "github.com/hivemind-dev/hivemind/ptyagent/profiles"
)

func TestTable(t *testing.T) {
	cfg := config.Default()
	rc := cfg.Roles["reviewer"]
	rc.Model = "opus"
	rc.ExtraArgs = []string{"--verbose"}
	cfg.Roles["reviewer"] = rc
	golden.RequireEqual(t, roles.Table(cfg))
}
