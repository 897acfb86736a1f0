package engine

import "time"

// quietTracker decides when a file an agent writes is complete: once its
// version (watchSig: size, mtime, inode, content) has stayed the same for
// the quiet period, or at once when its writer's turn ended. It remembers
// the version last reported for each path, so each distinct content is
// reported once, and it wakes its owner only when a file can have become
// complete: a file its owner holds back (visibly unfinished) is not looked
// at again before the hold ends or the file changes.
//
// The period is taken as given (internal/config owns its default and its
// minimum); 0 makes every file complete as soon as it is seen.
//
// It is not safe for concurrent use: Watcher's lives on its Run goroutine;
// knowledgeWatcher guards its with a mutex, so that the runner can flush
// synchronously.
type quietTracker struct {
	quiet time.Duration
	files map[string]*quietFile
}

// quietFile is what the tracker knows of one path.
type quietFile struct {
	sig      watchSig
	since    time.Time // when sig was first seen
	first    time.Time // when this writing episode began (the first version after a reported one)
	emitted  watchSig  // the last reported version (zero: none)
	held     bool      // its owner holds the current version back
	heldTill time.Time // … until then (zero: until the file changes)
}

func newQuietTracker(quiet time.Duration) *quietTracker {
	return &quietTracker{quiet: max(quiet, 0), files: map[string]*quietFile{}}
}

// see records that path holds version sig at now and returns its record.
func (t *quietTracker) see(path string, sig watchSig, now time.Time) *quietFile {
	f := t.files[path]
	switch {
	case f == nil:
		f = &quietFile{sig: sig, since: now, first: now}
		t.files[path] = f
	case f.sig != sig:
		if f.reported() {
			// A new version after a reported one: a new writing episode.
			f.first = now
		}
		f.sig, f.since, f.held, f.heldTill = sig, now, false, time.Time{}
	}
	return f
}

// ready reports whether f's current version is complete at now and not
// reported yet: unchanged for the quiet period, or turnEnded.
func (t *quietTracker) ready(f *quietFile, now time.Time, turnEnded bool) bool {
	return !f.reported() && (turnEnded || now.Sub(f.since) >= t.quiet)
}

// reportedAs reports whether version sig of path was reported already.
func (t *quietTracker) reportedAs(path string, sig watchSig) bool {
	f := t.files[path]
	return f != nil && f.emitted == sig
}

// forget drops path: it vanished (archived), so a file coming back under
// its name is new.
func (t *quietTracker) forget(path string) { delete(t.files, path) }

// keep forgets every path not in seen.
func (t *quietTracker) keep(seen map[string]bool) {
	for p := range t.files {
		if !seen[p] {
			delete(t.files, p)
		}
	}
}

// next is when the owner must look at its files again for one to have
// become complete (zero: no file can by time alone).
func (t *quietTracker) next() time.Time {
	var next time.Time
	for _, f := range t.files {
		if w := t.wake(f); !w.IsZero() && (next.IsZero() || w.Before(next)) {
			next = w
		}
	}
	return next
}

// due lists the paths to look at again at now.
func (t *quietTracker) due(now time.Time) []string {
	var paths []string
	for p, f := range t.files {
		if w := t.wake(f); !w.IsZero() && !now.Before(w) {
			paths = append(paths, p)
		}
	}
	return paths
}

// wake is when f next needs a look (zero: not by time alone).
func (t *quietTracker) wake(f *quietFile) time.Time {
	switch {
	case f.reported():
		return time.Time{}
	case f.held:
		return f.heldTill
	}
	return f.since.Add(t.quiet)
}

// reported reports whether the current version was reported.
func (f *quietFile) reported() bool { return f.emitted == f.sig }

// report marks the current version reported.
func (f *quietFile) report() { f.emitted, f.held = f.sig, false }

// hold keeps the current version back until the given time (zero: until
// the file changes); a turn ending still makes it ready.
func (f *quietFile) hold(until time.Time) { f.held, f.heldTill = true, until }
