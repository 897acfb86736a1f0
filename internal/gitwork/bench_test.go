package gitwork

import (
	"fmt"
	"path/filepath"
	"testing"
)

// The costs the runner and the TUI pay per call, on a small repository.

func BenchmarkCommitSubtask(b *testing.B) {
	p := newProject(b)
	r, dirs := startTask(b, p, Options{}, "worker_1")
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		write(b, filepath.Join(dirs["worker_1"], "f.txt"), fmt.Sprint(i))
		if sha, err := r.CommitSubtask("worker_1", "st_1", "bench"); err != nil || sha == "" {
			b.Fatal(sha, err)
		}
	}
}

func BenchmarkChangedFiles(b *testing.B) {
	p := newProject(b)
	r, dirs := startTask(b, p, Options{}, "worker_1")
	write(b, filepath.Join(dirs["worker_1"], "f.txt"), "x")
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if n, err := r.ChangedFiles("worker_1"); err != nil || n != 1 {
			b.Fatal(n, err)
		}
	}
}

// BenchmarkMergeCheckpoint: two workers each commit one file, then the
// checkpoint merges both and fast-forwards both worktrees (no check).
func BenchmarkMergeCheckpoint(b *testing.B) {
	p := newProject(b)
	r, dirs := startTask(b, p, Options{}, "worker_1", "worker_2")
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		write(b, filepath.Join(dirs["worker_1"], "one.txt"), fmt.Sprint(i))
		write(b, filepath.Join(dirs["worker_2"], "two.txt"), fmt.Sprint(i))
		if _, err := r.CommitSubtask("worker_1", "st_1", "one"); err != nil {
			b.Fatal(err)
		}
		if _, err := r.CommitSubtask("worker_2", "st_2", "two"); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if res, err := r.MergeCheckpoint(i+1, []string{"worker_1", "worker_2"}); err != nil || !res.Merged {
			b.Fatal(res, err)
		}
	}
}
