//go:build linux

package ptyagent

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Agents' processes are tracked with Linux cgroups v2 where Hivemind may
// create them: each session runs in its own cgroup (the process is cloned
// straight into it), and every descendant stays there whatever it does —
// a new session (setsid), a cleared environment, a double fork that
// reparents it to init. Stopping a session signals every process of its
// cgroup; cleaning up kills the cgroup and removes it.
//
// Layout: <Hivemind's own cgroup>/hivemind-<pid>-<random>/<agent>-<n>.
// Without a writable cgroup v2 (cgroups v1 only, a cgroup owned by root,
// HIVEMIND_CGROUPS=off) sessions fall back to the session-id and
// environment-mark scan of proc_linux.go.

// EnvCgroups set to "off" disables cgroup tracking (the mark scan is used).
const EnvCgroups = "HIVEMIND_CGROUPS"

// cgroupPrefix starts the name of a Hivemind process's cgroup.
const cgroupPrefix = "hivemind-"

// cgroup is one session's cgroup v2 directory.
type cgroup struct {
	dir string
	fd  int // open directory, for clone into it (CLONE_INTO_CGROUP)
}

// cgParent is this process's parent cgroup of its sessions' cgroups.
var cgParent struct {
	mu    sync.Mutex
	tried bool
	dir   string // "" when cgroups are unavailable
	why   string // why they are unavailable
	n     int    // sessions created, for unique names
}

// cgroupsUnavailable returns why cgroups are not used, "" when they are.
func cgroupsUnavailable() string {
	cgParent.mu.Lock()
	defer cgParent.mu.Unlock()
	cgroupParentLocked()
	return cgParent.why
}

// cgroupParentLocked returns the cgroup that holds this process's session
// cgroups, creating it on first use; "" when cgroups are unavailable.
// cgParent.mu is held.
func cgroupParentLocked() string {
	if cgParent.tried {
		return cgParent.dir
	}
	cgParent.tried = true
	if strings.EqualFold(os.Getenv(EnvCgroups), "off") {
		cgParent.why = EnvCgroups + "=off"
		return ""
	}
	own, err := ownCgroupDir()
	if err != nil {
		cgParent.why = err.Error()
		return ""
	}
	removeStaleCgroups(own)
	dir := filepath.Join(own, fmt.Sprintf("%s%d-%s", cgroupPrefix, os.Getpid(), newSecret()[:8]))
	if err := os.Mkdir(dir, 0o755); err != nil {
		cgParent.why = fmt.Sprintf("cannot create a cgroup under %s: %v", own, err)
		return ""
	}
	cgParent.dir = dir
	return dir
}

// ownCgroupDir returns the directory of this process's cgroup v2, checked
// by finding this process in its cgroup.procs.
func ownCgroupDir() (string, error) {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return "", fmt.Errorf("no /proc/self/cgroup: %w", err)
	}
	rel := ""
	found := false
	for _, line := range strings.Split(string(b), "\n") {
		if p, ok := strings.CutPrefix(line, "0::"); ok {
			rel, found = p, true
		}
	}
	if !found {
		return "", errors.New("not in a cgroup v2 hierarchy")
	}
	mnt, root, err := cgroup2Mount()
	if err != nil {
		return "", err
	}
	if root != "/" {
		rel = strings.TrimPrefix(rel, root)
	}
	dir := filepath.Join(mnt, filepath.Clean("/"+rel))
	procs, err := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
	if err != nil {
		return "", fmt.Errorf("cannot read %s: %w", dir, err)
	}
	self := []byte(strconv.Itoa(os.Getpid()))
	for _, l := range bytes.Split(procs, []byte("\n")) {
		if bytes.Equal(l, self) {
			return dir, nil
		}
	}
	return "", fmt.Errorf("this process is not listed in %s/cgroup.procs", dir)
}

// cgroup2Mount returns where the cgroup v2 hierarchy is mounted (and the
// mount's root within it), from /proc/self/mountinfo.
func cgroup2Mount() (mnt, root string, err error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return "", "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// id parent major:minor root mountpoint options... - fstype source superopts
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		if !ok || !strings.HasPrefix(post, "cgroup2 ") {
			continue
		}
		fs := strings.Fields(pre)
		if len(fs) >= 5 {
			return unescapeMount(fs[4]), unescapeMount(fs[3]), nil
		}
	}
	return "", "", errors.New("no cgroup v2 hierarchy mounted")
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space …).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// removeStaleCgroups removes the empty cgroups that Hivemind processes no
// longer alive left under own (their populated ones are reaped from the
// task's process records, see Reap).
func removeStaleCgroups(own string) {
	dirs, _ := filepath.Glob(filepath.Join(own, cgroupPrefix+"*-*"))
	for _, d := range dirs {
		pidStr, _, _ := strings.Cut(strings.TrimPrefix(filepath.Base(d), cgroupPrefix), "-")
		pid, err := strconv.Atoi(pidStr)
		if err != nil || pid == os.Getpid() || processAlive(pid) {
			continue
		}
		subs, _ := os.ReadDir(d)
		for _, s := range subs {
			if s.IsDir() {
				_ = syscall.Rmdir(filepath.Join(d, s.Name())) // fails while populated
			}
		}
		_ = syscall.Rmdir(d)
	}
}

// cgroupsOff makes newCgroup return nil (tests of the mark scan).
var cgroupsOff atomic.Bool

// sessionCgroup creates a session's cgroup (newCgroup); tests replace it.
var sessionCgroup = newCgroup

// newCgroup creates a cgroup for one session of agent id; nil when
// cgroups are unavailable.
func newCgroup(id string) *cgroup {
	if cgroupsOff.Load() {
		return nil
	}
	cgParent.mu.Lock()
	defer cgParent.mu.Unlock()
	parent := cgroupParentLocked()
	if parent == "" {
		return nil
	}
	cgParent.n++
	name := strings.Map(func(r rune) rune {
		if r == '/' || r == '.' || r < ' ' {
			return '_'
		}
		return r
	}, id)
	dir := filepath.Join(parent, fmt.Sprintf("%s-%d", name, cgParent.n))
	if err := os.Mkdir(dir, 0o755); err != nil {
		return nil
	}
	fd, err := syscall.Open(dir, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	if err != nil {
		_ = syscall.Rmdir(dir)
		return nil
	}
	return &cgroup{dir: dir, fd: fd}
}

// disableCgroups stops using cgroups in this process: the kernel refused
// to start a process in one (err).
func disableCgroups(err error) {
	cgParent.mu.Lock()
	defer cgParent.mu.Unlock()
	if cgParent.dir != "" {
		_ = syscall.Rmdir(cgParent.dir)
	}
	cgParent.tried, cgParent.dir = true, ""
	cgParent.why = fmt.Sprintf("starting a process in a cgroup failed: %v", err)
}

// openCgroup returns the cgroup at dir (a recorded session cgroup) without
// a clone fd, or nil when dir is not a Hivemind session cgroup.
func openCgroup(dir string) *cgroup {
	dir = filepath.Clean(dir)
	if !filepath.IsAbs(dir) || !strings.HasPrefix(filepath.Base(filepath.Dir(dir)), cgroupPrefix) {
		return nil
	}
	if _, err := os.Stat(filepath.Join(dir, "cgroup.procs")); err != nil {
		return nil
	}
	return &cgroup{dir: dir, fd: -1}
}

// procs lists the processes in the cgroup.
func (c *cgroup) procs() []int {
	b, err := os.ReadFile(filepath.Join(c.dir, "cgroup.procs"))
	if err != nil {
		return nil
	}
	var pids []int
	for _, f := range bytes.Fields(b) {
		if pid, err := strconv.Atoi(string(f)); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids
}

// signal sends sig to every process in the cgroup and returns how many.
func (c *cgroup) signal(sig syscall.Signal) int {
	pids := c.procs()
	for _, pid := range pids {
		_ = syscall.Kill(pid, sig)
	}
	return len(pids)
}

// populated reports whether a live process is left in the cgroup.
func (c *cgroup) populated() bool {
	b, err := os.ReadFile(filepath.Join(c.dir, "cgroup.events"))
	if err != nil {
		return len(c.procs()) > 0
	}
	return bytes.Contains(b, []byte("populated 1"))
}

// kill kills every process in the cgroup (cgroup.kill, Linux 5.14+, which
// also catches processes forking meanwhile; else SIGKILL to each), waits
// up to timeout for them to be gone and removes the cgroup. It returns how
// many processes are left (0 when the cgroup is removed).
func (c *cgroup) kill(timeout time.Duration) int {
	c.closeFD()
	deadline := time.Now().Add(timeout)
	for {
		if !c.populated() {
			break
		}
		if err := os.WriteFile(filepath.Join(c.dir, "cgroup.kill"), []byte("1"), 0); err != nil {
			c.signal(syscall.SIGKILL)
		}
		if time.Now().After(deadline) {
			return len(c.procs())
		}
		// The kernel tears the processes down asynchronously.
		time.Sleep(2 * time.Millisecond)
	}
	if err := syscall.Rmdir(c.dir); err != nil && !errors.Is(err, syscall.ENOENT) {
		return len(c.procs())
	}
	// The parent (this Hivemind's, or a dead one's being reaped) goes with
	// its last session; a later session creates it again.
	cgParent.mu.Lock()
	defer cgParent.mu.Unlock()
	parent := filepath.Dir(c.dir)
	if !strings.HasPrefix(filepath.Base(parent), cgroupPrefix) {
		return 0
	}
	if syscall.Rmdir(parent) == nil && parent == cgParent.dir {
		cgParent.dir, cgParent.tried = "", false
	}
	return 0
}

// closeFD closes the directory fd once the process has been cloned.
func (c *cgroup) closeFD() {
	if c.fd >= 0 {
		_ = syscall.Close(c.fd)
		c.fd = -1
	}
}

// withCgroup returns attr set to clone the process into cg.
func withCgroup(attr *syscall.SysProcAttr, cg *cgroup) *syscall.SysProcAttr {
	if cg == nil || cg.fd < 0 {
		return attr
	}
	a := *attr
	a.UseCgroupFD, a.CgroupFD = true, cg.fd
	return &a
}
