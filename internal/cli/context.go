package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/hivemind-dev/hivemind/internal/app"
	"github.com/hivemind-dev/hivemind/workspace"
)

// cmdContext prints the shared knowledge (`hivemind context [--json]`; it
// only reads, and creates nothing) or removes one entry (`hivemind context
// rm ID`).
func cmdContext(o options, stdout io.Writer) error {
	args := o.args[1:]
	root, err := o.WorkspaceRoot()
	if err != nil {
		return err
	}
	switch {
	case len(args) == 0:
		if _, err := os.Stat(root); err != nil {
			return fmt.Errorf("no Hivemind workspace at %s (run a task first)", root)
		}
		kn, dir, err := workspace.ReadKnowledge(root)
		if err != nil {
			return err
		}
		if o.JSON {
			b, err := json.MarshalIndent(kn, "", "  ")
			if err != nil {
				return err
			}
			_, err = fmt.Fprintf(stdout, "%s\n", b)
			return err
		}
		_, err = io.WriteString(stdout, renderKnowledge(kn, dir))
		return err
	case (args[0] == "rm" || args[0] == "remove") && len(args) == 2:
		return contextRemove(root, args[1], stdout)
	}
	return fmt.Errorf("%w: hivemind context [--json] | hivemind context rm ID", app.ErrUsage)
}

// contextRemove removes one entry. Removing is a user action, never an
// agent's; it takes the workspace lock, so it is refused while a hivemind
// runs on this workspace (that engine is the shared knowledge's writer).
func contextRemove(root, id string, stdout io.Writer) error {
	if _, err := os.Stat(root); err != nil {
		return fmt.Errorf("no Hivemind workspace at %s", root)
	}
	lock, _, err := workspace.AcquireWorkspaceLock(root)
	if err != nil {
		if errors.Is(err, workspace.ErrLocked) {
			return fmt.Errorf("hivemind is running on this workspace, and it owns the shared knowledge: quit it first, then run `hivemind context rm %s` again (%w)", id, err)
		}
		return err
	}
	defer lock.Release()
	store, err := workspace.OpenKnowledge(root)
	if err != nil {
		return err
	}
	it, err := store.Remove(id, "user")
	if err != nil {
		if errors.Is(err, workspace.ErrNotFound) {
			return fmt.Errorf("no decision, constraint or term %q (see `hivemind context`)", id)
		}
		return err
	}
	_, err = fmt.Fprintf(stdout, "removed %s %s: %s\n", it.Kind, it.ID, it.Title)
	return err
}

// renderKnowledge renders the three lists for people.
func renderKnowledge(kn workspace.Knowledge, dir string) string {
	var b strings.Builder
	when := func(t time.Time) string { return t.Local().Format("2006-01-02 15:04") }
	fmt.Fprintf(&b, "Shared knowledge (%s)\n", dir)
	fmt.Fprintf(&b, "\nDecisions (%d)\n", len(kn.Decisions))
	if len(kn.Decisions) == 0 {
		b.WriteString("  none yet\n")
	}
	for _, d := range kn.Decisions {
		fmt.Fprintf(&b, "  %-4s %s\n", d.ID, d.Title)
		fmt.Fprintf(&b, "       %s · %s · task %s\n", d.DecidedBy, when(d.DecidedAt), orDash(d.TaskID))
		indentLines(&b, d.Rationale)
	}
	fmt.Fprintf(&b, "\nConstraints (%d)\n", len(kn.Constraints))
	if len(kn.Constraints) == 0 {
		b.WriteString("  none yet\n")
	}
	for _, c := range kn.Constraints {
		fmt.Fprintf(&b, "  %-4s %s\n", c.ID, c.Name)
		fmt.Fprintf(&b, "       %s · %s\n", c.AddedBy, when(c.AddedAt))
		if c.Description != c.Name {
			indentLines(&b, c.Description)
		}
	}
	fmt.Fprintf(&b, "\nGlossary (%d)\n", len(kn.Glossary))
	if len(kn.Glossary) == 0 {
		b.WriteString("  none yet\n")
	}
	for _, g := range kn.Glossary {
		fmt.Fprintf(&b, "  %s\n", g.Term)
		rev := ""
		if n := len(g.History); n > 0 {
			rev = fmt.Sprintf(" · %d earlier definition(s)", n)
		}
		fmt.Fprintf(&b, "       %s · %s%s\n", g.AddedBy, when(g.AddedAt), rev)
		indentLines(&b, g.Definition)
	}
	b.WriteString("\nRemove an entry: hivemind context rm ID (a decision D<n>, a constraint C<n>, or a term)\n")
	return b.String()
}

func indentLines(b *strings.Builder, text string) {
	for _, l := range strings.Split(strings.TrimSpace(text), "\n") {
		fmt.Fprintf(b, "       %s\n", strings.TrimRight(l, " \t"))
	}
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
