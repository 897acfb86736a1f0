package gitwork

import (
	"slices"
	"testing"
)

// What a merge leaves for the agents: the conflict report names the other
// side and the files project-relative; an empty diff says so; the stat
// summary is its last line.
func TestReports(t *testing.T) {
	r := &Repo{prefix: "sub/"}
	if got := r.ProjectRel([]string{"sub/a.go", "b.go"}); !slices.Equal(got, []string{"a.go", "b.go"}) {
		t.Errorf("ProjectRel %q", got)
	}
	c := Conflict{Worker: "worker_2", With: []string{"worker_1"}, Hunks: "<<<<<<< ours\n"}
	want := "# Merge conflict at checkpoint 3: worker_2\n\nConflicts with: worker_1\n" +
		"Files with conflict markers in worker_2's worktree: a.go, b.go\n\n<<<<<<< ours\n"
	if got := ConflictReport(3, c, []string{"a.go", "b.go"}); got != want {
		t.Errorf("ConflictReport\n%q\nwant\n%q", got, want)
	}
	res := MergeResult{Stat: " a.go | 2 +-\n 1 file changed, 1 insertion(+), 1 deletion(-)\n", CheckOK: true, CheckOutput: "PASS\n"}
	if got := res.StatSummary(); got != "1 file changed, 1 insertion(+), 1 deletion(-)" {
		t.Errorf("StatSummary %q", got)
	}
	if got := res.DiffReport(); got != "(no changes in this checkpoint)\n" {
		t.Errorf("DiffReport of no diff %q", got)
	}
	if got := res.CheckReport("go test ./..."); got != "$ go test ./...\nexit ok: true\n\nPASS\n" {
		t.Errorf("CheckReport %q", got)
	}
}
