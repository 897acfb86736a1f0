package engine

import (
	"maps"
	"slices"

	"github.com/hivemind-dev/hivemind/workspace"
	"github.com/hivemind-dev/hivemind/workspace/triggers"
)

// MaxFrictionInFlight bounds the friction files of one agent the watcher
// has reported and the engine has not taken (archived) yet. A flood of
// them (thousands of files) then costs the engine at most this many
// events per agent at a time, interleaved with everything else: a done
// marker written during the flood is not queued behind it. The files
// past the bound wait on disk and are reported as earlier ones are taken.
const MaxFrictionInFlight = 8

// floodGate counts each outbox's friction files in flight and remembers
// the ones kept waiting.
type floodGate struct {
	inFlight map[workspace.AgentID]map[string]bool
	waiting  map[workspace.AgentID]map[string]bool
}

func newFloodGate() floodGate {
	return floodGate{inFlight: map[workspace.AgentID]map[string]bool{}, waiting: map[workspace.AgentID]map[string]bool{}}
}

// gated reports the owner of rel when it is a file the gate bounds.
func gated(rel string) (workspace.AgentID, bool) {
	ref, ok := triggers.Parse(rel)
	return ref.Owner, ok && ref.Kind == triggers.Friction
}

// admit says whether rel may be reported now; a file it refuses waits.
func (g floodGate) admit(rel string) bool {
	owner, ok := gated(rel)
	if !ok {
		return true
	}
	in := g.inFlight[owner]
	if in[rel] || len(in) < MaxFrictionInFlight {
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
	owner, ok := gated(rel)
	if !ok {
		return nil
	}
	delete(g.waiting[owner], rel)
	if !g.inFlight[owner][rel] {
		return nil
	}
	delete(g.inFlight[owner], rel)
	free := MaxFrictionInFlight - len(g.inFlight[owner])
	names := slices.Sorted(maps.Keys(g.waiting[owner]))
	return names[:min(free, len(names))]
}

// keep drops every file not in seen (a rescan) and returns the waiting
// files that may now be reported.
func (g floodGate) keep(seen map[string]bool) []string {
	var out []string
	for _, set := range []map[workspace.AgentID]map[string]bool{g.inFlight, g.waiting} {
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
