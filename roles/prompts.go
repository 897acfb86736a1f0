package roles

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/hivemind-dev/hivemind/vocab"
)

//go:embed lead.md reviewer.md worker.md
var embedded embed.FS

// ErrUnknownRole is returned for a role other than lead, reviewer, worker.
var ErrUnknownRole = errors.New("roles: unknown role")

// Prompt returns the role prompt of role and where it came from. The first
// that exists wins: <projectRolesDir>/<role>.md (the project's
// .hivemind/roles), <userRolesDir>/<role>.md ($XDG_CONFIG_HOME/hivemind/roles),
// then the built-in prompt (source "embedded"). Either folder may be "". An
// override that exists but cannot be read, or is empty, is an error: a
// silently ignored override would be worse.
func Prompt(role vocab.Role, projectRolesDir, userRolesDir string) (text string, source string, err error) {
	if !role.Known() {
		return "", "", fmt.Errorf("%w %q (want lead, reviewer or worker)", ErrUnknownRole, role)
	}
	name := string(role) + ".md"
	for _, dir := range []string{projectRolesDir, userRolesDir} {
		if dir == "" {
			continue
		}
		p := filepath.Join(dir, name)
		b, err := os.ReadFile(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return "", "", fmt.Errorf("roles: read prompt override: %w", err)
		}
		if strings.TrimSpace(string(b)) == "" {
			return "", "", fmt.Errorf("roles: prompt override %s is empty", p)
		}
		return string(b), p, nil
	}
	b, err := embedded.ReadFile(name)
	if err != nil {
		return "", "", fmt.Errorf("roles: embedded prompt: %w", err)
	}
	return string(b), "embedded", nil
}

// EmbeddedPrompt returns the built-in prompt of role.
func EmbeddedPrompt(role vocab.Role) (string, error) {
	text, _, err := Prompt(role, "", "")
	return text, err
}
