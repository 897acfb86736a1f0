package workspace

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/hivemind-dev/hivemind/vocab"
)

// ResourceLockTimeout is how long LockResource waits when ctx has no
// deadline.
const ResourceLockTimeout = 30 * time.Second

// lockInfo is the content of a lock file: who holds it.
type lockInfo struct {
	PID   int       `json:"pid"`
	Host  string    `json:"host"`
	Start time.Time `json:"start"`
	Owner string    `json:"owner,omitempty"`
}

func (li lockInfo) String() string {
	s := fmt.Sprintf("pid %d on host %s since %s", li.PID, li.Host, li.Start.Format(time.RFC3339))
	if li.Owner != "" {
		s = li.Owner + " (" + s + ")"
	}
	return s
}

func hostname() string {
	h, err := os.Hostname()
	if err != nil {
		return "unknown"
	}
	return h
}

// Lock is the workspace lock: one engine per workspace. It is an flock(2)
// on <root>/hivemind.lock, which the kernel releases when the holder dies,
// and the file names the holder (pid, host, start) for error messages.
type Lock struct {
	mu   sync.Mutex
	f    *os.File
	path string
	Info lockInfo
}

// Path returns the lock file path.
func (l *Lock) Path() string { return l.path }

// AcquireWorkspaceLock takes the workspace lock of root (created if
// needed). If another live process holds it the error wraps ErrLocked and
// names its pid, host and start time. A lock file left by a process that
// died without releasing (the flock is free but the file still names a
// holder on this host) is taken over and tookOverStale is true; the caller
// should log that as an event. A leftover lock naming another host is not
// taken over (its process cannot be checked from here).
func AcquireWorkspaceLock(root string) (l *Lock, tookOverStale bool, err error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, false, fmt.Errorf("workspace: lock %s: %w", root, err)
	}
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return nil, false, fmt.Errorf("workspace: lock %s: %w", abs, err)
	}
	path := filepath.Join(abs, vocab.LockFile)
	host := hostname()
	f, err := tryLockFile(path)
	// A holder killed with SIGKILL can keep the flock a moment after it is
	// gone, through a child it forked that had not yet exec'd (that child
	// dies with it, by Pdeathsig): when the named holder no longer runs on
	// this host, wait a bounded time for the kernel to let the lock go.
	for wait, give := 10*time.Millisecond, time.Now().Add(staleLockRelease); errors.Is(err, ErrLocked) && holderGone(path, host) && time.Now().Before(give); wait = min(2*wait, 200*time.Millisecond) {
		time.Sleep(wait)
		f, err = tryLockFile(path)
	}
	var le *LockedError
	if errors.As(err, &le) {
		return nil, false, le // it names the holder and the lock file: nothing to add
	}
	if err != nil {
		return nil, false, fmt.Errorf("workspace: lock %s: %w", abs, err)
	}
	prev, _ := readLockInfo(f)
	if prev.PID != 0 {
		if prev.Host != "" && prev.Host != host {
			_ = unlockFileKeep(f)
			return nil, false, &LockedError{Holder: prev.String(), LockFile: path,
				Note: "another host: remove the lock file if that process is gone"}
		}
		tookOverStale = true
	}
	info := lockInfo{PID: os.Getpid(), Host: host, Start: time.Now().UTC()}
	if err := writeLockInfo(f, info); err != nil {
		_ = unlockFile(f)
		return nil, false, fmt.Errorf("workspace: lock %s: %w", abs, err)
	}
	return &Lock{f: f, path: path, Info: info}, tookOverStale, nil
}

// staleLockRelease bounds how long AcquireWorkspaceLock waits for the
// lock of a holder that is gone to be released by the kernel.
const staleLockRelease = 5 * time.Second

// holderGone reports whether the lock file at path names a process of this
// host that no longer runs (absent, or a zombie no one has waited for).
func holderGone(path, host string) bool {
	f, err := openLockFile(path)
	if err != nil {
		return false
	}
	defer f.Close()
	li, err := readLockInfo(f)
	if err != nil || li.PID <= 0 || li.Host != host {
		return false
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", li.PID))
	if err != nil {
		return syscall.Kill(li.PID, 0) == syscall.ESRCH
	}
	// The state follows the command name's closing parenthesis.
	i := strings.LastIndexByte(string(stat), ')')
	return i >= 0 && i+2 < len(stat) && stat[i+2] == 'Z'
}

// Release releases the lock (idempotent). The lock file stays, emptied: a
// removed lock file would let two processes lock different inodes.
func (l *Lock) Release() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return nil
	}
	err := unlockFile(l.f)
	l.f = nil
	if err != nil {
		return fmt.Errorf("workspace: release lock %s: %w", l.path, err)
	}
	return nil
}

// openLockFile opens (creating) a lock file without following symlinks.
func openLockFile(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0o644)
	if err != nil {
		if errors.Is(err, syscall.ELOOP) {
			return nil, fmt.Errorf("%s: %w", path, ErrSymlink)
		}
		return nil, err
	}
	return f, nil
}

// LockedError is a lock held by another live process: who holds it and
// where the lock file is, said once. It is ErrLocked (errors.Is).
type LockedError struct {
	Holder   string // "pid 4242 on host devbox since …"
	LockFile string
	Note     string // what to do, when it is not "wait for it"
}

func (e *LockedError) Error() string {
	s := e.Holder + " (lock file " + e.LockFile
	if e.Note != "" {
		s += "; " + e.Note
	}
	return s + ")"
}

// Is makes a LockedError ErrLocked.
func (e *LockedError) Is(target error) bool { return target == ErrLocked }

// tryLockFile opens path and takes an exclusive flock without waiting. If
// it is held, the error wraps ErrLocked and names the holder.
func tryLockFile(path string) (*os.File, error) {
	f, err := openLockFile(path)
	if err != nil {
		return nil, err
	}
	if err := flockNB(f); err != nil {
		info, _ := readLockInfo(f)
		_ = f.Close()
		if errors.Is(err, ErrLocked) {
			return nil, &LockedError{Holder: info.String(), LockFile: path}
		}
		return nil, err
	}
	return f, nil
}

// flockNB tries LOCK_EX|LOCK_NB; a held lock is ErrLocked.
func flockNB(f *os.File) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		switch {
		case err == nil:
			return nil
		case errors.Is(err, syscall.EINTR):
			continue
		case errors.Is(err, syscall.EWOULDBLOCK):
			return ErrLocked
		default:
			return fmt.Errorf("flock %s: %w", f.Name(), err)
		}
	}
}

func readLockInfo(f *os.File) (lockInfo, error) {
	var li lockInfo
	buf := make([]byte, 4096)
	n, err := f.ReadAt(buf, 0)
	if n == 0 {
		return li, err
	}
	err = json.Unmarshal([]byte(strings.TrimSpace(string(buf[:n]))), &li)
	return li, err
}

func writeLockInfo(f *os.File, li lockInfo) error {
	data, err := json.Marshal(li)
	if err != nil {
		return err
	}
	if err := f.Truncate(0); err != nil {
		return err
	}
	if _, err := f.WriteAt(append(data, '\n'), 0); err != nil {
		return err
	}
	return f.Sync()
}

// unlockFile empties a held lock file, unlocks and closes it.
func unlockFile(f *os.File) error {
	err := f.Truncate(0)
	if uerr := unlockFileKeep(f); err == nil {
		err = uerr
	}
	return err
}

// unlockFileKeep unlocks and closes without touching the content.
func unlockFileKeep(f *os.File) error {
	err := syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// LockResource takes the per-resource lock of this task (the design's
// `with workspace.lock(task, "state.json", agent)`), waiting until it is
// free or ctx is done; with no deadline on ctx it waits at most
// ResourceLockTimeout. Call unlock on every path (defer); it is idempotent.
//
// The lock is an flock(2) on locks/<resource>.lock: a holder that dies is
// released by the kernel at once (a stale lock never blocks anyone), and
// the file names the holder (owner, pid, start) for the timeout error,
// which wraps ErrLocked and ctx's error. A live holder is never robbed: a
// waiter that times out gets an error instead, so two holders can never
// run at once.
func (t *TaskDir) LockResource(ctx context.Context, resource, owner string) (unlock func(), err error) {
	if !filepath.IsLocal(resource) || strings.ContainsAny(resource, "\x00\n") {
		return nil, fmt.Errorf("workspace: lock resource %q: %w", resource, ErrBadID)
	}
	name := strings.ReplaceAll(filepath.Clean(resource), string(filepath.Separator), "__") + ".lock"
	path, err := t.Path(filepath.Join(vocab.LocksDir, name))
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("workspace: lock resource %s: %w", resource, err)
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, ResourceLockTimeout)
		defer cancel()
	}
	f, err := openLockFile(path)
	if err != nil {
		return nil, fmt.Errorf("workspace: lock resource %s: %w", resource, err)
	}
	// flock has no timed wait; poll with a short, growing backoff.
	wait := time.Millisecond
	var timer *time.Timer
	for {
		err := flockNB(f)
		if err == nil {
			break
		}
		if !errors.Is(err, ErrLocked) {
			_ = f.Close()
			return nil, fmt.Errorf("workspace: lock resource %s: %w", resource, err)
		}
		if timer == nil {
			timer = time.NewTimer(wait)
		} else {
			timer.Reset(wait)
		}
		select {
		case <-ctx.Done():
			info, _ := readLockInfo(f)
			_ = f.Close()
			timer.Stop()
			return nil, fmt.Errorf("workspace: lock resource %s of task %s for %s: %w: held by %s: %w", resource, t.id, owner, ErrLocked, info, ctx.Err())
		case <-timer.C:
		}
		if wait < 50*time.Millisecond {
			wait *= 2
		}
	}
	if timer != nil {
		timer.Stop()
	}
	_ = writeLockInfo(f, lockInfo{PID: os.Getpid(), Host: hostname(), Start: time.Now().UTC(), Owner: owner})
	var once sync.Once
	return func() {
		once.Do(func() { _ = unlockFile(f) })
	}, nil
}

// flockWait takes an exclusive flock, waiting as long as it takes (used for
// short critical sections only).
func flockWait(f *os.File) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}
