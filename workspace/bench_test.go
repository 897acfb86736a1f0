package workspace

import (
	"strconv"
	"testing"

	"github.com/hivemind-dev/hivemind/vocab"
)

// BenchmarkStateSave measures one state.json Save: validate the current
// file, hard-link it as a backup (fsync backups/), prune to 10, write the
// temp file, fsync it, rename, fsync the task directory.
func BenchmarkStateSave(b *testing.B) {
	w, err := Open(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	td, err := w.CreateTask(vocab.Task{Description: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	s, _, _, err := OpenStateStore(td)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	st := sampleState(td.ID(), vocab.PhaseExecuting, 1)
	for i := range 8 {
		id := "st_" + strconv.Itoa(i)
		st.Subtasks[id] = vocab.SubtaskState{Status: vocab.SubtaskPending}
	}
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		st.Seq = i
		if err := s.Save(st); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkWriteFileAtomic measures the bare atomic write (temp, write,
// fsync, rename, fsync dir) of a 1 KiB file.
func BenchmarkWriteFileAtomic(b *testing.B) {
	p := b.TempDir() + "/f.json"
	data := make([]byte, 1024)
	for b.Loop() {
		if err := WriteFileAtomic(p, data, 0o644); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEventAppend measures one fsync'd event append from one
// goroutine; events/s is reported.
func BenchmarkEventAppend(b *testing.B) {
	benchAppend(b, false)
}

// BenchmarkEventAppendParallel appends from GOMAXPROCS goroutines sharing
// one log.
func BenchmarkEventAppendParallel(b *testing.B) {
	benchAppend(b, true)
}

func benchAppend(b *testing.B, parallel bool) {
	w, err := Open(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	td, err := w.CreateTask(vocab.Task{Description: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	l, err := OpenEventLog(td)
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	r := vocab.EventRecord{Type: "subtask_done", Agent: "worker_1", Details: map[string]any{"subtask": "st_1", "file": "outputs/st_1.md"}}
	b.ResetTimer()
	if parallel {
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if err := l.Append(r); err != nil {
					b.Error(err)
					return
				}
			}
		})
	} else {
		for b.Loop() {
			if err := l.Append(r); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
}
