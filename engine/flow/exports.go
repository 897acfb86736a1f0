package flow

import "time"

// What the runner (package engine) uses of the machine's internals, kept
// under their own names inside this package.

// Stamp fills an event's zero time with now: the runner's clock, read
// outside the machine.
func Stamp(e Event, now time.Time) Event { return stamp(e, now) }

// IsMergeFix reports whether a fix id names a merge-conflict fix.
func IsMergeFix(id string) bool { return isMergeFix(id) }

// FirstLine is s's first line, at most 100 runes.
func FirstLine(s string) string { return firstLine(s) }
