package workspace

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// tempFiles lists leftover temp files in dir.
func tempFiles(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp-") {
			out = append(out, e.Name())
		}
	}
	return out
}

func TestWriteFileAtomic(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f.json")
	for _, content := range []string{"one", "two, longer", ""} {
		if err := WriteFileAtomic(p, []byte(content), 0o640); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(p)
		if err != nil || string(got) != content {
			t.Fatalf("content %q, %v; want %q", got, err, content)
		}
	}
	if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o640 {
		t.Errorf("perm %v", fi.Mode().Perm())
	}
	if tmp := tempFiles(t, dir); len(tmp) != 0 {
		t.Errorf("temp files left: %v", tmp)
	}
	if err := WriteFileAtomic(filepath.Join(dir, "missing", "f"), []byte("x"), 0o644); err == nil {
		t.Error("write into a missing directory succeeded")
	}
	if err := os.Mkdir(filepath.Join(dir, "adir"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := WriteFileAtomic(filepath.Join(dir, "adir"), []byte("x"), 0o644); err == nil {
		t.Error("write over a directory succeeded")
	}
}

func TestWriteFileAtomicRefusesSymlink(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	target := filepath.Join(outside, "victim")
	if err := os.WriteFile(target, []byte("precious"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "state.json")
	mustSymlink(t, target, link)
	err := WriteFileAtomic(link, []byte("evil"), 0o644)
	if !errors.Is(err, ErrSymlink) {
		t.Fatalf("err = %v, want ErrSymlink", err)
	}
	if got, _ := os.ReadFile(target); string(got) != "precious" {
		t.Errorf("target changed to %q", got)
	}
	if fi, _ := os.Lstat(link); fi.Mode()&os.ModeSymlink == 0 {
		t.Error("symlink replaced")
	}
}

// TestWriteFileAtomicFailures injects a full disk and failing fsyncs: the
// old file must stay intact and no temp file may remain.
func TestWriteFileAtomicFailures(t *testing.T) {
	origWrite, origSync := writeHook, syncHook
	t.Cleanup(func() { writeHook, syncHook = origWrite, origSync })
	tests := []struct {
		name  string
		write func(*os.File, []byte) (int, error)
		sync  func(*os.File) error
		want  error
	}{
		{"disk full mid-write", func(f *os.File, b []byte) (int, error) {
			n, _ := f.Write(b[:len(b)/2])
			return n, syscall.ENOSPC
		}, origSync, syscall.ENOSPC},
		{"short write without error", func(f *os.File, b []byte) (int, error) {
			return f.Write(b[:1])
		}, origSync, nil},
		{"fsync fails", origWrite, func(*os.File) error { return syscall.EIO }, syscall.EIO},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			p := filepath.Join(dir, "state.json")
			if err := os.WriteFile(p, []byte("old content"), 0o644); err != nil {
				t.Fatal(err)
			}
			writeHook, syncHook = tc.write, tc.sync
			err := WriteFileAtomic(p, []byte("new content that is longer"), 0o644)
			writeHook, syncHook = origWrite, origSync
			if err == nil {
				t.Fatal("write succeeded")
			}
			if tc.want != nil && !errors.Is(err, tc.want) {
				t.Errorf("err = %v, want %v", err, tc.want)
			}
			if got, _ := os.ReadFile(p); string(got) != "old content" {
				t.Errorf("old file now %q", got)
			}
			if tmp := tempFiles(t, dir); len(tmp) != 0 {
				t.Errorf("temp files left: %v", tmp)
			}
		})
	}
}

func TestCreateExclusive(t *testing.T) {
	p := filepath.Join(t.TempDir(), "task.json")
	if err := createExclusive(p, []byte("a"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := createExclusive(p, []byte("b"), 0o644); !errors.Is(err, ErrExists) {
		t.Fatalf("err = %v, want ErrExists", err)
	}
	if got, _ := os.ReadFile(p); string(got) != "a" {
		t.Errorf("content %q", got)
	}
	if tmp := tempFiles(t, filepath.Dir(p)); len(tmp) != 0 {
		t.Errorf("temp files left: %v", tmp)
	}
}
