package workspace

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// Fault-injection seams for tests (a full disk, a failing fsync). They are
// package variables, so tests that replace them must not run in parallel.
var (
	writeHook = func(f *os.File, b []byte) (int, error) { return f.Write(b) }
	syncHook  = func(f *os.File) error { return f.Sync() }
	syncDir   = syncDirReal
)

// WriteFileAtomic replaces path with data so that a reader (or a crash) sees
// either the old content or the new, never a mix: it writes a temp file in
// the same directory, fsyncs it, renames it over path and fsyncs the
// directory. It refuses to write through a symlink at path (ErrSymlink). On
// any failure the temp file is removed and the old file is left intact.
func WriteFileAtomic(path string, data []byte, perm os.FileMode) error {
	return writeAtomic(path, data, perm, true)
}

// writeAtomic is WriteFileAtomic with optional fsyncs (heartbeats do not
// need durability, only atomicity).
func writeAtomic(path string, data []byte, perm os.FileMode, durable bool) (err error) {
	if err := checkWritable(path); err != nil {
		return err
	}
	dir, base := filepath.Dir(path), filepath.Base(path)
	f, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return fmt.Errorf("workspace: write %s: %w", path, err)
	}
	tmp := f.Name()
	closed := false
	defer func() {
		if err != nil {
			if !closed {
				_ = f.Close()
			}
			_ = os.Remove(tmp)
		}
	}()
	n, err := writeHook(f, data)
	if err == nil && n < len(data) {
		err = io.ErrShortWrite
	}
	if err != nil {
		return fmt.Errorf("workspace: write %s: %w", path, err)
	}
	if durable {
		if err = syncHook(f); err != nil {
			return fmt.Errorf("workspace: fsync %s: %w", path, err)
		}
	}
	if err = f.Chmod(perm); err != nil {
		return fmt.Errorf("workspace: write %s: %w", path, err)
	}
	closed = true
	if err = f.Close(); err != nil {
		return fmt.Errorf("workspace: write %s: %w", path, err)
	}
	if err = os.Rename(tmp, path); err != nil {
		return fmt.Errorf("workspace: write %s: %w", path, err)
	}
	if durable {
		if err := syncDir(dir); err != nil {
			// The new content is in place; only its durability is unknown.
			return fmt.Errorf("workspace: write %s: %w", path, err)
		}
	}
	return nil
}

// atomicTempInfix sits between the destination's name and the random
// digits os.CreateTemp adds in the atomic writer's temp file names:
// "."+base+atomicTempInfix+digits.
const atomicTempInfix = ".tmp-"

// isAtomicTemp reports whether name is a temp file of writeAtomic or
// createExclusive (".<base>.tmp-<digits>"), and nothing else.
func isAtomicTemp(name string) bool {
	i := strings.LastIndex(name, atomicTempInfix)
	if !strings.HasPrefix(name, ".") || i < 2 {
		return false
	}
	digits := name[i+len(atomicTempInfix):]
	if digits == "" {
		return false
	}
	for _, r := range digits {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// removeAtomicTemps removes the atomic writer's temp files left in dir (not
// its subdirectories) by a writer killed between creating and renaming
// them, and returns how many it removed. Only regular files named like
// isAtomicTemp are touched. Call it only while holding the lock that makes
// this process the only writer of dir: a live writer's temp file would be
// taken from under it. A missing dir is no error.
func removeAtomicTemps(dir string) (int, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	n := 0
	for _, e := range entries {
		if !e.Type().IsRegular() || !isAtomicTemp(e.Name()) {
			continue
		}
		if err := os.Remove(filepath.Join(dir, e.Name())); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return n, err
		}
		n++
	}
	return n, nil
}

// checkWritable refuses a destination that is a symlink or not a regular
// file. A missing destination is fine.
func checkWritable(path string) error {
	fi, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("workspace: write %s: %w", path, err)
	case fi.Mode()&fs.ModeSymlink != 0:
		return fmt.Errorf("workspace: write %s: %w", path, ErrSymlink)
	case !fi.Mode().IsRegular():
		return fmt.Errorf("workspace: write %s: not a regular file", path)
	}
	return nil
}

// createExclusive atomically creates path with data, failing with ErrExists
// if it already exists: the content is written and synced to a temp file
// which is then hard-linked to path (link(2) never replaces).
func createExclusive(path string, data []byte, perm os.FileMode) (err error) {
	dir, base := filepath.Dir(path), filepath.Base(path)
	f, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return fmt.Errorf("workspace: create %s: %w", path, err)
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	n, err := writeHook(f, data)
	if err == nil && n < len(data) {
		err = io.ErrShortWrite
	}
	if err == nil {
		err = syncHook(f)
	}
	if err == nil {
		err = f.Chmod(perm)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("workspace: create %s: %w", path, err)
	}
	if err := os.Link(tmp, path); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("workspace: create %s: %w", path, ErrExists)
		}
		return fmt.Errorf("workspace: create %s: %w", path, err)
	}
	if err := syncDir(dir); err != nil {
		return fmt.Errorf("workspace: create %s: %w", path, err)
	}
	return nil
}

// syncDirReal fsyncs a directory so a rename or link in it is durable.
func syncDirReal(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

// maxReadSize bounds files the workspace reads whole (state, markers,
// assignments); anything larger is treated as corrupt, not loaded.
const maxReadSize = 64 << 20

// maxStateSize bounds state.json and its backups. It is far above what
// the engine writes (state holds references to what agents write, and
// every agent file it copies is bounded), so a real state always loads; a
// larger file is an error, never a reason to fall back to an older backup.
const maxStateSize = 1 << 30

// errTooLarge reports a file over the size bound of readNoFollowMax.
var errTooLarge = errors.New("file too large")

// readNoFollow reads a regular file of at most maxReadSize bytes without
// following a symlink at path (ErrSymlink).
func readNoFollow(path string) ([]byte, error) { return readNoFollowMax(path, maxReadSize) }

// readNoFollowMax is readNoFollow with a size bound.
func readNoFollowMax(path string, limit int64) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_CLOEXEC|syscall.O_NONBLOCK, 0)
	if err != nil {
		if errors.Is(err, syscall.ELOOP) {
			return nil, fmt.Errorf("%s: %w", path, ErrSymlink)
		}
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file", path)
	}
	if fi.Size() > limit {
		return nil, fmt.Errorf("%s: %w (%d bytes, at most %d)", path, errTooLarge, fi.Size(), limit)
	}
	return io.ReadAll(io.LimitReader(f, limit+1))
}
