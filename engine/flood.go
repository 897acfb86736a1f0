package engine

import (
	"maps"
	"slices"

	"github.com/hivemind-dev/hivemind/vocab"
	"github.com/hivemind-dev/hivemind/workspace/triggers"
)

// MaxFrictionInFlight bounds the friction files of one agent the watcher
// has reported and the engine has not taken (archived) yet. A flood of
// them (thousands of files) then costs the engine at most this many
// events per agent at a time, interleaved with everything else: a done
// marker written during the flood is not queued behind it. The files
// past the bound wait on disk and are reported as earlier ones are taken.
const MaxFrictionInFlight = 8

// MaxNotesInFlight is MaxFrictionInFlight for one agent's shared-knowledge
// inbox notes.
const MaxNotesInFlight = 8

// floodGate counts each writer's files in flight (reported, not yet taken)
// and remembers the ones kept waiting.
type floodGate struct {
	limit    int
	owner    func(rel string) (vocab.AgentID, bool) // the writer of a file the gate bounds
	inFlight map[vocab.AgentID]map[string]bool
	waiting  map[vocab.AgentID]map[string]bool
}

func newFloodGate() floodGate { return newGate(MaxFrictionInFlight, frictionOwner) }

func newGate(limit int, owner func(string) (vocab.AgentID, bool)) floodGate {
	return floodGate{limit: limit, owner: owner, inFlight: map[vocab.AgentID]map[string]bool{}, waiting: map[vocab.AgentID]map[string]bool{}}
}

// frictionOwner is the outbox owner of a friction file.
func frictionOwner(rel string) (vocab.AgentID, bool) {
	ref, ok := triggers.Parse(rel)
	return ref.Owner, ok && ref.Kind == triggers.Friction
}

// full reports whether rel would wait: its writer has the most in flight
// and rel is not one of them.
func (g floodGate) full(rel string) bool {
	owner, ok := g.owner(rel)
	return ok && !g.inFlight[owner][rel] && len(g.inFlight[owner]) >= g.limit
}

// admit says whether rel may be reported now; a file it refuses waits.
func (g floodGate) admit(rel string) bool {
	owner, ok := g.owner(rel)
	if !ok {
		return true
	}
	in := g.inFlight[owner]
	if in[rel] || len(in) < g.limit {
		if in == nil {
			in = map[string]bool{}
			g.inFlight[owner] = in
		}
		in[rel] = true
		delete(g.waiting[owner], rel)
		return true
	}
	if g.waiting[owner] == nil {
		g.waiting[owner] = map[string]bool{}
	}
	g.waiting[owner][rel] = true
	return false
}

// release frees rel (gone from disk) and returns the waiting files of its
// outbox that may now be reported, oldest name first.
func (g floodGate) release(rel string) []string {
	owner, ok := g.owner(rel)
	if !ok {
		return nil
	}
	delete(g.waiting[owner], rel)
	if !g.inFlight[owner][rel] {
		return nil
	}
	delete(g.inFlight[owner], rel)
	free := g.limit - len(g.inFlight[owner])
	names := slices.Sorted(maps.Keys(g.waiting[owner]))
	return names[:min(free, len(names))]
}

// keep drops every file not in seen (a rescan) and returns the waiting
// files that may now be reported.
func (g floodGate) keep(seen map[string]bool) []string {
	var out []string
	for _, set := range []map[vocab.AgentID]map[string]bool{g.inFlight, g.waiting} {
		for _, files := range set {
			for rel := range files {
				if !seen[rel] {
					out = append(out, g.release(rel)...)
					delete(files, rel)
				}
			}
		}
	}
	return out
}
