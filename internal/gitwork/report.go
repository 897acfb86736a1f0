package gitwork

import (
	"fmt"
	"strings"
)

// This file renders what a checkpoint merge leaves for the agents to read
// (the Reviewer reads the diff and the check; a conflicting worker reads
// its conflict report) and for the event log.

// ProjectRel turns repository-relative paths into project-relative ones
// (they differ when the project is a subdirectory of the repository).
func (r *Repo) ProjectRel(files []string) []string {
	out := make([]string, 0, len(files))
	for _, f := range files {
		out = append(out, strings.TrimPrefix(f, r.prefix))
	}
	return out
}

// DiffReport is the checkpoint's diff as the Reviewer reads it.
func (res MergeResult) DiffReport() string {
	if res.Diff == "" {
		return "(no changes in this checkpoint)\n"
	}
	return res.Diff
}

// CheckReport is the check command's outcome as the Reviewer reads it.
func (res MergeResult) CheckReport(command string) string {
	return fmt.Sprintf("$ %s\nexit ok: %v\n\n%s", command, res.CheckOK, res.CheckOutput)
}

// StatSummary is the last line of the merge's --stat ("3 files changed, …").
func (res MergeResult) StatSummary() string {
	s := strings.TrimRight(res.Stat, "\n")
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	return strings.TrimSpace(s)
}

// ConflictReport is what the worker of c reads to fix its conflict at a
// checkpoint: who it conflicts with, the files with conflict markers in
// its worktree (files, project-relative) and the hunks.
func ConflictReport(checkpoint int, c Conflict, files []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Merge conflict at checkpoint %d: %s\n\n", checkpoint, c.Worker)
	if len(c.With) > 0 {
		fmt.Fprintf(&b, "Conflicts with: %s\n", strings.Join(c.With, ", "))
	}
	fmt.Fprintf(&b, "Files with conflict markers in %s's worktree: %s\n\n", c.Worker, strings.Join(files, ", "))
	b.WriteString(c.Hunks)
	return b.String()
}
