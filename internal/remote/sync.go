package remote

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// The sync stream carries the files remote agents write in their task
// dir mirror (outputs, friction notes) to the local task dir:
// `hivemind-hook remote-sync <dir> <subdir>…` runs on the host for as
// long as the ssh connection lives and prints one JSON record a line for
// each file that is complete (unchanged over one scan), plus a heartbeat.
// It keeps no state: on every (re)connect it sends every file again and
// the local side (SyncFrom) skips what it has already delivered, so a
// dropped connection loses nothing.

// MaxSyncFile bounds one synced file, as the local trigger files are
// bounded; a larger file is reported as an error record naming it.
const MaxSyncFile = 1 << 20

// syncScan is how often the helper looks for new files; a file is sent
// once it is unchanged over one scan.
const syncScan = 200 * time.Millisecond

// SyncHeartbeat is how often the helper says it is alive; the local side
// takes a silence of several heartbeats for a dead connection.
const SyncHeartbeat = 2 * time.Second

// SyncRecord is one line of the stream.
type SyncRecord struct {
	Path  string `json:"path,omitempty"` // slash path relative to the synced dir
	SHA   string `json:"sha,omitempty"`
	Data  []byte `json:"data,omitempty"`
	Error string `json:"error,omitempty"` // the file could not be sent
	Beat  bool   `json:"beat,omitempty"`
}

type fileSeen struct {
	size int64
	mod  time.Time
}

// Sync is `remote-sync <dir> <subdir>…`: it ends when its stdin closes
// (the ssh connection went away) or stdout cannot be written.
func Sync(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) < 2 {
		fmt.Fprintln(stderr, "usage: remote-sync <dir> <subdir>…")
		return 2
	}
	dir, subs := args[0], args[1:]
	gone := make(chan struct{})
	go func() {
		_, _ = io.Copy(io.Discard, stdin)
		close(gone)
	}()
	w := bufio.NewWriter(stdout)
	enc := json.NewEncoder(w)
	send := func(r SyncRecord) bool {
		return enc.Encode(r) == nil && w.Flush() == nil
	}
	last := map[string]fileSeen{} // previous scan
	sent := map[string]fileSeen{} // what was sent, as it was then
	tick := time.NewTicker(syncScan)
	defer tick.Stop()
	nextBeat := time.Now()
	for {
		now := map[string]fileSeen{}
		for _, sub := range subs {
			root := filepath.Join(dir, filepath.FromSlash(sub))
			_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
				if err != nil || !d.Type().IsRegular() {
					return nil
				}
				fi, err := d.Info()
				if err != nil {
					return nil
				}
				rel, err := filepath.Rel(dir, p)
				if err != nil || strings.Contains(d.Name(), ".tmp") {
					return nil // a file being written by an atomic writer
				}
				now[filepath.ToSlash(rel)] = fileSeen{fi.Size(), fi.ModTime()}
				return nil
			})
		}
		for rel, s := range now {
			if last[rel] != s || sent[rel] == s {
				continue
			}
			sent[rel] = s
			rec := SyncRecord{Path: rel}
			if s.size > MaxSyncFile {
				rec.Error = fmt.Sprintf("%d bytes, more than the %d a file may have", s.size, MaxSyncFile)
			} else if data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(rel))); err != nil {
				rec.Error = err.Error()
			} else {
				sum := sha256.Sum256(data)
				rec.SHA, rec.Data = hex.EncodeToString(sum[:]), data
			}
			if !send(rec) {
				return 0
			}
		}
		last = now
		if time.Now().After(nextBeat) {
			if !send(SyncRecord{Beat: true}) {
				return 0
			}
			nextBeat = time.Now().Add(SyncHeartbeat)
		}
		select {
		case <-gone:
			return 0
		case <-tick.C:
		}
	}
}

// SyncSink receives the files of a sync stream.
type SyncSink interface {
	// Deliver writes one file (rel is a clean slash path under one of
	// the synced subdirs).
	Deliver(rel string, data []byte) error
	// Problem reports a record that was refused or failed.
	Problem(rel, msg string)
}

// SyncFrom keeps a sync stream of dir's subdirs on the host running
// until ctx ends: it (re)connects with backoff, delivers each file once
// per content (whatever the reconnects), and calls state with true once
// connected and false when the connection is lost (no heartbeat for
// three periods, or ssh ended).
func SyncFrom(ctx context.Context, h Host, remoteHelper, dir string, subs []string, sink SyncSink, state func(up bool, err error)) {
	delivered := map[string]string{} // rel → sha
	backoff := time.Second
	for ctx.Err() == nil {
		err := syncOnce(ctx, h, remoteHelper, dir, subs, delivered, sink, func() {
			backoff = time.Second
			state(true, nil)
		})
		if ctx.Err() != nil {
			return
		}
		state(false, err)
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 30*time.Second)
	}
}

func syncOnce(ctx context.Context, h Host, remoteHelper, dir string, subs []string, delivered map[string]string, sink SyncSink, up func()) error {
	script := "exec " + shq(remoteHelper) + " remote-sync " + shq(dir)
	for _, s := range subs {
		script += " " + shq(s)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	argv := h.sshArgv(nil, script)
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.WaitDelay = 3 * time.Second
	stdin, err := cmd.StdinPipe() // closed when we go: the helper ends
	if err != nil {
		return err
	}
	defer stdin.Close()
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	var errb limitedBuffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		return err
	}
	// No record for three heartbeats: the connection is dead even if
	// TCP has not said so yet.
	var mu sync.Mutex
	lastSeen := time.Now()
	go func() {
		t := time.NewTicker(SyncHeartbeat)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				mu.Lock()
				dead := time.Since(lastSeen) > 3*SyncHeartbeat
				mu.Unlock()
				if dead {
					cancel()
					return
				}
			}
		}
	}()
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 64<<10), 2*MaxSyncFile)
	first := true
	for sc.Scan() {
		mu.Lock()
		lastSeen = time.Now()
		mu.Unlock()
		if first {
			first = false
			up()
		}
		var r SyncRecord
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			sink.Problem("", "unreadable sync record: "+err.Error())
			continue
		}
		if r.Beat {
			continue
		}
		if !validSyncPath(r.Path, subs) {
			sink.Problem(r.Path, "not a path under "+strings.Join(subs, ", ")+": ignored")
			continue
		}
		if r.Error != "" {
			if delivered[r.Path] != "error:"+r.Error {
				delivered[r.Path] = "error:" + r.Error
				sink.Problem(r.Path, r.Error)
			}
			continue
		}
		sum := sha256.Sum256(r.Data)
		sha := hex.EncodeToString(sum[:])
		if sha != r.SHA || len(r.Data) > MaxSyncFile {
			sink.Problem(r.Path, "damaged in transit: ignored")
			continue
		}
		if delivered[r.Path] == sha {
			continue
		}
		if err := sink.Deliver(r.Path, r.Data); err != nil {
			sink.Problem(r.Path, err.Error())
			continue
		}
		delivered[r.Path] = sha
	}
	cancel()
	err = cmd.Wait()
	if said := strings.TrimSpace(errb.String()); said != "" {
		return errors.New(h.label() + ": sync: " + firstLine(said))
	}
	if err != nil {
		return fmt.Errorf("%s: sync connection lost (%v)", h.label(), err)
	}
	return fmt.Errorf("%s: sync connection ended", h.label())
}

// validSyncPath: a clean relative slash path below one of subs.
func validSyncPath(p string, subs []string) bool {
	if p == "" || path.IsAbs(p) || path.Clean(p) != p || strings.HasPrefix(p, "../") || strings.Contains(p, "\\") {
		return false
	}
	for _, s := range subs {
		if strings.HasPrefix(p, s+"/") {
			return true
		}
	}
	return false
}

// limitedBuffer keeps the first 64 KiB written to it.
type limitedBuffer struct {
	mu  sync.Mutex
	buf strings.Builder
}

func (b *limitedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if room := 64<<10 - b.buf.Len(); room > 0 {
		b.buf.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

func (b *limitedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
