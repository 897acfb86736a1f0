package workspace

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hivemind-dev/hivemind/vocab"
)

func TestWorkspaceLockInProcess(t *testing.T) {
	root := filepath.Join(t.TempDir(), ".hivemind")
	l, stale, err := AcquireWorkspaceLock(root)
	if err != nil || stale {
		t.Fatalf("first acquire: stale=%v err=%v", stale, err)
	}
	_, _, err = AcquireWorkspaceLock(root)
	if !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), "pid "+strconv.Itoa(os.Getpid())) {
		t.Fatalf("second acquire err = %v; want ErrLocked naming our pid", err)
	}
	// Said once: the holder, the lock file, nothing repeated.
	if msg := err.Error(); strings.Count(msg, root) != 1 || strings.Count(msg, "lock") != 2 || strings.Contains(msg, "locked by another process") {
		t.Errorf("the lock error repeats itself: %q", msg)
	}
	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
	if err := l.Release(); err != nil {
		t.Errorf("second Release: %v", err)
	}
	// A released lock is free and not stale.
	l2, stale, err := AcquireWorkspaceLock(root)
	if err != nil || stale {
		t.Fatalf("reacquire: stale=%v err=%v", stale, err)
	}
	l2.Release()
}

// TestWorkspaceLockOtherProcess: a second hivemind gets ErrLocked naming
// the holder's pid; when the holder is killed (-9) the lock is stale and
// taken over.
func TestWorkspaceLockOtherProcess(t *testing.T) {
	root := t.TempDir()
	h := startHelper(t, "hold-lock", "WS_ROOT="+root)
	h.waitReady(t)
	pid := h.cmd.Process.Pid
	_, _, err := AcquireWorkspaceLock(root)
	if !errors.Is(err, ErrLocked) {
		t.Fatalf("err = %v, want ErrLocked", err)
	}
	host, _ := os.Hostname()
	for _, want := range []string{"pid " + strconv.Itoa(pid), host, "since"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %q", err, want)
		}
	}
	h.kill(t)
	l, stale, err := AcquireWorkspaceLock(root)
	if err != nil || !stale {
		t.Fatalf("after kill -9: stale=%v err=%v; want takeover", stale, err)
	}
	defer l.Release()
	if l.Info.PID != os.Getpid() {
		t.Errorf("lock info %+v", l.Info)
	}
	data, _ := os.ReadFile(filepath.Join(root, vocab.LockFile))
	var li lockInfo
	if err := json.Unmarshal(data, &li); err != nil || li.PID != os.Getpid() {
		t.Errorf("lock file %q", data)
	}
}

// TestWorkspaceLockHolderJustDied: a holder killed with SIGKILL can keep
// the flock a moment longer through a child forked but not yet exec'd.
// When the lock file names a process of this host that is gone, Acquire
// waits (bounded) for the kernel to release the lock; when it names one
// that runs, it fails at once.
func TestWorkspaceLockHolderJustDied(t *testing.T) {
	host, _ := os.Hostname()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skip("no `true` binary:", err)
	}
	for _, tc := range []struct {
		name string
		pid  int
	}{{"holder gone", cmd.Process.Pid}, {"holder runs", os.Getpid()}} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			path := filepath.Join(root, vocab.LockFile)
			content := `{"pid":` + strconv.Itoa(tc.pid) + `,"host":"` + host + `","start":"2026-01-01T00:00:00Z"}`
			if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
			// The lingering holder: another open file description.
			f, err := tryLockFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if tc.pid == os.Getpid() {
				_, _, err := AcquireWorkspaceLock(root)
				f.Close()
				if !errors.Is(err, ErrLocked) {
					t.Fatalf("err = %v; want ErrLocked at once for a live holder", err)
				}
				return
			}
			released := make(chan struct{})
			go func() {
				defer close(released)
				// Let Acquire find the lock held first (on a loaded machine
				// it may not, and then it simply takes a free lock).
				time.Sleep(100 * time.Millisecond)
				f.Close()
			}()
			l, stale, err := AcquireWorkspaceLock(root)
			<-released
			if err != nil || !stale {
				t.Fatalf("stale=%v err=%v; want the lock once the kernel lets it go", stale, err)
			}
			l.Release()
		})
	}
}

func TestWorkspaceLockStaleFile(t *testing.T) {
	host, _ := os.Hostname()
	// A pid that surely is dead: a child we started and reaped.
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skip("no `true` binary:", err)
	}
	deadPID := cmd.Process.Pid
	tests := []struct {
		name      string
		content   string
		wantStale bool
		wantErr   error
	}{
		{"empty file", "", false, nil},
		{"garbage", "not json", false, nil},
		{"dead pid same host", `{"pid":` + strconv.Itoa(deadPID) + `,"host":"` + host + `","start":"2026-01-01T00:00:00Z"}`, true, nil},
		{"other host", `{"pid":1,"host":"elsewhere.example","start":"2026-01-01T00:00:00Z"}`, false, ErrLocked},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			if err := os.WriteFile(filepath.Join(root, vocab.LockFile), []byte(tc.content), 0o644); err != nil {
				t.Fatal(err)
			}
			l, stale, err := AcquireWorkspaceLock(root)
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) || !strings.Contains(err.Error(), "elsewhere.example") {
					t.Fatalf("err = %v, want %v naming the host", err, tc.wantErr)
				}
				if got, _ := os.ReadFile(filepath.Join(root, vocab.LockFile)); string(got) != tc.content {
					t.Errorf("foreign lock file changed to %q", got)
				}
				return
			}
			if err != nil || stale != tc.wantStale {
				t.Fatalf("stale=%v err=%v; want stale=%v", stale, err, tc.wantStale)
			}
			l.Release()
		})
	}
}

func TestWorkspaceLockSymlinkRefused(t *testing.T) {
	root := t.TempDir()
	victim := filepath.Join(t.TempDir(), "victim")
	if err := os.WriteFile(victim, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	mustSymlink(t, victim, filepath.Join(root, vocab.LockFile))
	if _, _, err := AcquireWorkspaceLock(root); !errors.Is(err, ErrSymlink) {
		t.Fatalf("err = %v, want ErrSymlink", err)
	}
	if got, _ := os.ReadFile(victim); string(got) != "keep" {
		t.Errorf("victim changed: %q", got)
	}
}

func TestLockResourceMutualExclusion(t *testing.T) {
	_, td := newTask(t)
	var inside, maxInside, total atomic.Int32
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for range 20 {
				unlock, err := td.LockResource(context.Background(), "state.json", "g"+strconv.Itoa(g))
				if err != nil {
					t.Error(err)
					return
				}
				n := inside.Add(1)
				for m := maxInside.Load(); n > m && !maxInside.CompareAndSwap(m, n); m = maxInside.Load() {
				}
				total.Add(1)
				inside.Add(-1)
				unlock()
				unlock() // idempotent
			}
		})
	}
	wg.Wait()
	if maxInside.Load() != 1 || total.Load() != 160 {
		t.Fatalf("max holders %d, total %d", maxInside.Load(), total.Load())
	}
}

func TestLockResourceTimeoutAndStale(t *testing.T) {
	w, td := newTask(t)
	for _, bad := range []string{"", "/abs", "../x", "a/../../b"} {
		if _, err := td.LockResource(context.Background(), bad, "me"); !errors.Is(err, ErrBadID) {
			t.Errorf("LockResource(%q) err = %v", bad, err)
		}
	}
	// Held in-process: a waiter with a deadline times out naming the owner.
	unlock, err := td.LockResource(context.Background(), "outputs/st_1.md", "worker_1")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	_, err = td.LockResource(ctx, "outputs/st_1.md", "worker_2")
	cancel()
	if !errors.Is(err, ErrLocked) || !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "worker_1") {
		t.Fatalf("err = %v; want ErrLocked + deadline naming worker_1", err)
	}
	// A waiter gets the lock as soon as the holder releases it.
	got := make(chan error, 1)
	go func() {
		u, err := td.LockResource(context.Background(), "outputs/st_1.md", "worker_2")
		if err == nil {
			u()
		}
		got <- err
	}()
	unlock()
	if err := <-got; err != nil {
		t.Fatal(err)
	}

	// Held by another process that dies: released at once (stale).
	h := startHelper(t, "hold-resource", "WS_ROOT="+w.Root(), "WS_TASK="+td.ID())
	h.waitReady(t)
	ctx, cancel = context.WithTimeout(context.Background(), 50*time.Millisecond)
	_, err = td.LockResource(ctx, "state.json", "engine")
	cancel()
	if !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), "pid "+strconv.Itoa(h.cmd.Process.Pid)) {
		t.Fatalf("err = %v; want ErrLocked naming the child", err)
	}
	h.kill(t)
	ctx, cancel = context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	u, err := td.LockResource(ctx, "state.json", "engine")
	if err != nil {
		t.Fatalf("after holder died: %v", err)
	}
	u()
}
