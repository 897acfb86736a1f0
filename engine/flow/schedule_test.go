package flow

import (
	"reflect"
	"testing"

	"github.com/hivemind-dev/hivemind/vocab"
)

func st(id string, cp int, deps []string, files ...string) vocab.Subtask {
	return vocab.Subtask{ID: id, Description: id, Checkpoint: cp, Dependencies: deps, Files: files}
}

// schedState is a state with n free workers, the given subtasks and
// statuses (id → status or status@worker).
func schedState(workers int, subs []vocab.Subtask, status map[string]string) *State {
	s := &State{CurrentCheckpoint: 1, Agents: map[vocab.AgentID]vocab.AgentState{}, Subtasks: map[string]vocab.SubtaskState{}}
	for i := 1; i <= workers; i++ {
		s.Agents[vocab.WorkerID(i)] = vocab.AgentState{Role: vocab.RoleWorker}
	}
	s.Plan = &vocab.Plan{Checkpoints: []vocab.Checkpoint{{ID: 1, Name: "a"}, {ID: 2, Name: "b"}}, Subtasks: subs}
	for _, sub := range subs {
		s.Subtasks[sub.ID] = vocab.SubtaskState{Status: vocab.SubtaskPending}
	}
	for id, v := range status {
		s.Subtasks[id] = vocab.SubtaskState{Status: v}
		if v == vocab.SubtaskInProgress {
			ag := s.Agents["worker_1"]
			ag.Pending, ag.Subtask = true, id
			s.Agents["worker_1"] = ag
		}
	}
	return s
}

func TestPlanAssignments(t *testing.T) {
	tests := []struct {
		name    string
		workers int
		subs    []vocab.Subtask
		status  map[string]string
		want    []string // "worker:subtask"
	}{
		{"independent subtasks fill free workers in plan order", 2,
			[]vocab.Subtask{st("a", 1, nil, "CREATE a"), st("b", 1, nil, "CREATE b"), st("c", 1, nil, "CREATE c")}, nil,
			[]string{"worker_1:a", "worker_2:b"}},
		{"dependencies wait", 3,
			[]vocab.Subtask{st("a", 1, nil, "CREATE a"), st("b", 1, []string{"a"}, "CREATE b"), st("c", 1, []string{"b"}, "CREATE c")}, nil,
			[]string{"worker_1:a"}},
		{"done dependencies release", 3,
			[]vocab.Subtask{st("a", 1, nil, "CREATE a"), st("b", 1, []string{"a"}, "CREATE b"), st("c", 1, []string{"a", "b"}, "CREATE c")},
			map[string]string{"a": vocab.SubtaskDone}, []string{"worker_1:b"}},
		{"same file never twice at once", 3,
			[]vocab.Subtask{st("a", 1, nil, "CREATE x.go", "MODIFY y.go"), st("b", 1, nil, "MODIFY y.go"), st("c", 1, nil, "MODIFY ./x.go"), st("d", 1, nil, "CREATE d.go")}, nil,
			[]string{"worker_1:a", "worker_2:d"}},
		{"conflict with a running subtask", 2,
			[]vocab.Subtask{st("a", 1, nil, "MODIFY m.go"), st("b", 1, nil, "MODIFY src/../m.go"), st("c", 1, nil, "CREATE c.go")},
			map[string]string{"a": vocab.SubtaskInProgress}, []string{"worker_2:c"}},
		{"only the current checkpoint", 2,
			[]vocab.Subtask{st("a", 1, nil, "CREATE a"), st("b", 2, nil, "CREATE b")}, nil,
			[]string{"worker_1:a"}},
		{"no free worker", 1,
			[]vocab.Subtask{st("a", 1, nil, "CREATE a"), st("b", 1, nil, "CREATE b")},
			map[string]string{"a": vocab.SubtaskInProgress}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := schedState(tc.workers, tc.subs, tc.status)
			var got []string
			for _, pa := range planAssignments(s, nil) {
				got = append(got, string(pa.Worker)+":"+pa.Subtask.ID)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestFreeWorkersSkipsRestarting(t *testing.T) {
	s := schedState(2, nil, nil)
	s.Timers = map[string]vocab.Timer{"restart:worker_1": {ID: "restart:worker_1"}}
	if got := freeWorkers(s); !reflect.DeepEqual(got, []vocab.AgentID{"worker_2"}) {
		t.Fatalf("free %v", got)
	}
}

func TestSortAgents(t *testing.T) {
	ids := []vocab.AgentID{"worker_10", "reviewer", "worker_2", "lead", "worker_1"}
	vocab.SortAgents(ids)
	if want := []vocab.AgentID{"lead", "reviewer", "worker_1", "worker_2", "worker_10"}; !reflect.DeepEqual(ids, want) {
		t.Fatalf("%v", ids)
	}
}

func TestCheckpointProgress(t *testing.T) {
	subs := []vocab.Subtask{st("a", 1, nil, "CREATE a"), st("b", 2, nil, "CREATE b")}
	s := schedState(1, subs, map[string]string{"a": vocab.SubtaskDone})
	if !checkpointDone(s, 1) || checkpointDone(s, 2) || checkpointDone(s, 3) {
		t.Fatal("checkpointDone")
	}
	if nextCheckpoint(s) != 2 {
		t.Fatalf("next %d", nextCheckpoint(s))
	}
	s.Subtasks["b"] = vocab.SubtaskState{Status: vocab.SubtaskDone}
	if nextCheckpoint(s) != 0 {
		t.Fatalf("next %d after all done", nextCheckpoint(s))
	}
}

func TestFixers(t *testing.T) {
	subs := []vocab.Subtask{st("a", 1, nil, "CREATE src/a.go"), st("b", 1, nil, "CREATE src/b.go"), st("c", 2, nil, "CREATE c.go")}
	s := schedState(3, subs, nil)
	s.Subtasks["a"] = vocab.SubtaskState{Status: vocab.SubtaskDone, Worker: "worker_1"}
	s.Subtasks["b"] = vocab.SubtaskState{Status: vocab.SubtaskDone, Worker: "worker_2"}
	ids, files := fixers(s, 1, []byte("- high: src/b.go:10 leaks a file"))
	if !reflect.DeepEqual(ids, []vocab.AgentID{"worker_2"}) || !reflect.DeepEqual(files["worker_2"], []string{"src/b.go"}) {
		t.Fatalf("named: %v %v", ids, files)
	}
	ids, _ = fixers(s, 1, []byte("- medium: naming is inconsistent"))
	if !reflect.DeepEqual(ids, []vocab.AgentID{"worker_1", "worker_2"}) {
		t.Fatalf("none named → all who worked on the checkpoint: %v", ids)
	}
	ag := s.Agents["worker_2"]
	ag.Pending = true
	s.Agents["worker_2"] = ag
	ids, _ = fixers(s, 1, []byte("src/b.go"))
	if len(ids) != 0 {
		t.Fatalf("busy worker chosen: %v", ids)
	}
}
