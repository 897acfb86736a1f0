package workspace

import "errors"

// Sentinel errors callers branch on with errors.Is. Returned errors wrap
// them with context.
var (
	// ErrBadTaskID reports a task id that is empty or contains path
	// separators, "..", or other characters not allowed in an id.
	ErrBadTaskID = errors.New("invalid task id")
	// ErrBadID reports an invalid agent, subtask or resource id.
	ErrBadID = errors.New("invalid id")
	// ErrOutside reports a path that leads outside the directory it must
	// stay in (absolute, "..", or through a symlink).
	ErrOutside = errors.New("path outside the workspace")
	// ErrSymlink reports a symlink where the workspace writes or reads a
	// file; it is never followed.
	ErrSymlink = errors.New("refusing to follow a symlink")
	// ErrCorruptState reports a state.json that is unreadable as JSON with
	// no valid backup to restore from. Nothing is overwritten.
	ErrCorruptState = errors.New("state.json is corrupt and no valid backup exists")
	// ErrLocked reports a lock held by someone else; the wrapping error
	// names the holder (pid, host, start).
	ErrLocked = errors.New("locked by another process")
	// ErrStaleSeq reports an assignment whose seq is not greater than the
	// previous one for that agent.
	ErrStaleSeq = errors.New("assignment seq is not greater than the previous one")
	// ErrExists reports a destination that already exists and must not be
	// overwritten.
	ErrExists = errors.New("already exists")
	// ErrBadMarker reports an invalid .done marker or output file.
	ErrBadMarker = errors.New("invalid done marker")
	// ErrBadEvents reports a line in the middle of events.jsonl that is not
	// a valid event.
	ErrBadEvents = errors.New("invalid events.jsonl line")
	// ErrNotFound reports a missing entry (e.g. a friction id).
	ErrNotFound = errors.New("not found")
	// ErrClosed reports use of a closed EventLog or StateStore.
	ErrClosed = errors.New("closed")
)
