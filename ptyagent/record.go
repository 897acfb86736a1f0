package ptyagent

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// A running session records what identifies its processes — the agent's
// pid, the environment mark its descendants inherit, the setsid sessions
// seen among them and its cgroup — in a small JSON file (Spec.RecordDir).
// The file is removed when the session ends cleanly. If Hivemind dies
// without cleaning up (SIGKILL, a crash, power loss of the controlling
// terminal), the next run on the same task reaps from these records
// whatever is left (ReapRecorded) before it starts any agent.

// procRecord is one session's record.
type procRecord struct {
	OwnerPID   int    `json:"owner_pid"`
	OwnerStart uint64 `json:"owner_start"`
	Agent      string `json:"agent"`
	PID        int    `json:"pid"`
	Mark       string `json:"mark"`
	Cgroup     string `json:"cgroup,omitempty"`
	// Sessions maps the id of each setsid session seen among the agent's
	// descendants to its leader's start time (so a reused pid is not
	// taken for it).
	Sessions map[string]uint64 `json:"sessions,omitempty"`
}

// maxRecord bounds a record file read back (they are a few hundred bytes).
const maxRecord = 64 << 10

// markRE is the shape of a session mark (newMark): a record naming
// anything else is not trusted.
var markRE = regexp.MustCompile(`^[0-9]+-[0-9a-f]{16}$`)

// writeRecord writes the session's record (atomically), if it keeps one.
func (s *Session) writeRecord() {
	if s.spec.RecordDir == "" {
		return
	}
	s.mu.Lock()
	rec := procRecord{OwnerPID: os.Getpid(), OwnerStart: selfStart(), Agent: string(s.spec.ID), PID: s.pid, Mark: s.mark,
		Sessions: map[string]uint64{}}
	for sid, start := range s.sidStarts {
		rec.Sessions[strconv.Itoa(sid)] = start
	}
	s.mu.Unlock()
	if s.cg != nil {
		rec.Cgroup = s.cg.dir
	}
	b, err := json.Marshal(rec)
	if err != nil {
		return
	}
	if err := os.MkdirAll(s.spec.RecordDir, 0o755); err != nil {
		return
	}
	path := s.recordPath()
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return
	}
	_ = os.Rename(tmp, path)
}

// recordPath is the session's record file, named by the session mark:
// it is written before the process starts, when there is no pid yet.
func (s *Session) recordPath() string {
	return filepath.Join(s.spec.RecordDir, fmt.Sprintf("%s-%s.json", strings.ReplaceAll(string(s.spec.ID), string(filepath.Separator), "_"), s.mark))
}

// removeRecord removes the session's record (nothing of it is left).
func (s *Session) removeRecord() {
	if s.spec.RecordDir != "" {
		_ = os.Remove(s.recordPath())
	}
}

// selfStart is this process's start time (see procInfo.start).
func selfStart() uint64 {
	p, _ := readProc(os.Getpid())
	return p.start
}

// ReapRecorded kills the processes named by the session records in dir
// whose Hivemind is gone (records of a live Hivemind are left alone),
// removes their cgroups and records, and returns how many processes it
// killed. A record is trusted only as far as it can be checked: processes
// are matched by a well-formed session mark in their environment, by a
// recorded setsid session whose leader is the recorded process (same start
// time) or gone, and by membership of a Hivemind session cgroup.
func ReapRecorded(dir string) (int, error) { return reapRecorded(dir, false) }

// ReapedSuffix ends the name of a record the guard has reaped: the guard
// keeps it under that name, because a record also names the session of a
// remote agent, whose mark the next run reaps on its host (internal/app's
// reapPrevious) before its own ReapRecorded removes it.
const ReapedSuffix = ".reaped"

// reapRecorded is ReapRecorded; with keep (the guard) a reaped record is
// renamed with ReapedSuffix rather than removed.
func reapRecorded(dir string, keep bool) (int, error) {
	names, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return 0, err
	}
	if !keep {
		reaped, _ := filepath.Glob(filepath.Join(dir, "*.json"+ReapedSuffix))
		for _, r := range reaped {
			_ = os.Remove(r)
		}
	}
	// A write cut short leaves its temp file; the record it replaced, if
	// any, is still there.
	tmps, _ := filepath.Glob(filepath.Join(dir, "*.json.tmp"))
	for _, t := range tmps {
		_ = os.Remove(t)
	}
	killed := 0
	var errs []error
	for _, name := range names {
		rec, err := readRecord(name)
		if err != nil {
			errs = append(errs, err)
			_ = os.Remove(name)
			continue
		}
		if p, ok := readProc(rec.OwnerPID); ok && !p.zombie && p.start == rec.OwnerStart {
			continue // its Hivemind still runs (this one included)
		}
		killed += reapRecord(rec)
		if keep {
			_ = os.Rename(name, name+ReapedSuffix)
		} else {
			_ = os.Remove(name)
		}
	}
	return killed, errors.Join(errs...)
}

func readRecord(name string) (procRecord, error) {
	var rec procRecord
	f, err := os.Open(name)
	if err != nil {
		return rec, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxRecord+1))
	if err != nil {
		return rec, err
	}
	if len(b) > maxRecord {
		return rec, fmt.Errorf("ptyagent: process record %s is larger than %d bytes; ignored", name, maxRecord)
	}
	if err := json.Unmarshal(b, &rec); err != nil {
		return rec, fmt.Errorf("ptyagent: process record %s: %w", name, err)
	}
	return rec, nil
}

// reapRecord kills what is left of one recorded session and returns how
// many processes it signalled.
func reapRecord(rec procRecord) int {
	procs := listProcs()
	byPID := make(map[int]procInfo, len(procs))
	for _, p := range procs {
		byPID[p.pid] = p
	}
	sids := map[int]bool{}
	for k, start := range rec.Sessions {
		sid, err := strconv.Atoi(k)
		if err != nil || sid <= 1 {
			continue
		}
		if leader, ok := byPID[sid]; ok && leader.start != start {
			continue // the pid was reused: not the recorded session
		}
		sids[sid] = true
	}
	mark := rec.Mark
	if !markRE.MatchString(mark) {
		mark = ""
	}
	victims := map[int]bool{}
	self := os.Getpid()
	for _, p := range procs {
		if p.zombie || p.pid == self {
			continue
		}
		if sids[p.sid] || hasMark(p.pid, mark) {
			victims[p.pid] = true
		}
	}
	cg := openCgroup(rec.Cgroup)
	if cg != nil {
		for _, pid := range cg.procs() {
			victims[pid] = true
		}
	}
	for pid := range victims {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	if cg != nil {
		cg.kill(2 * time.Second)
	}
	return len(victims)
}
