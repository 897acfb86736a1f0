// Package sandbox confines an agent process, and every process it starts,
// to writing only where its role owns (Linux Landlock). Reads, execution
// and the network stay open; every write-like access (create, write,
// truncate, remove, rename, link, mknod) is allowed only beneath the
// granted paths.
//
// Landlock restricts the calling thread and is inherited across fork and
// execve and cannot be lifted, so confinement is a small re-exec wrapper:
// `hivemind-hook sandbox-exec --rw PATH … -- argv…` (Main) restricts
// itself on one locked OS thread, then execve's the agent from that
// thread (same pid). ptyagent wraps an agent's command line this way when
// its Spec carries a write scope (Wrap).
//
// Where Landlock is missing (an older kernel, another OS), Available is
// false and Status says so: the caller runs the agent unconfined and says
// so plainly; the wrapper never runs an agent unconfined itself.
package sandbox

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
)

// Command is the hidden sub-command of the hook binary that confines
// itself and executes the agent (Main).
const Command = "sandbox-exec"

// devices are the device files and directories any terminal program
// writes: always granted (they hold no project or engine data).
var devices = []string{
	"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom",
	"/dev/tty", "/dev/ptmx", "/dev/pts", "/dev/shm", "/dev/fd",
}

var (
	abiOnce sync.Once
	abi     int
)

// ABI returns the Landlock ABI version of the running kernel, 0 when
// Landlock is missing or disabled.
func ABI() int {
	abiOnce.Do(func() { abi = kernelABI() })
	return abi
}

// Available reports whether agents can be confined here.
func Available() bool { return ABI() >= 1 }

// StatusOff is what every surface says when agents run unconfined.
const StatusOff = "write scopes: off (no Landlock) — roles are enforced by tool checks only"

// Status is the one line the doctor, the start screen and `hivemind roles`
// show: whether agents' writes are confined by the kernel.
func Status() string {
	if !Available() {
		return StatusOff
	}
	return fmt.Sprintf("write scopes: on (Landlock ABI %d) — each agent and its children write only where its role owns", ABI())
}

// Wrap returns argv run through helper's sandbox-exec with writes
// allowed beneath writable (the device files are always added).
func Wrap(helper string, writable, argv []string) []string {
	out := []string{helper, Command}
	for _, p := range writable {
		out = append(out, "--rw", p)
	}
	out = append(out, "--")
	return append(out, argv...)
}

// Unwrap is the inverse of Wrap on the arguments after the sub-command:
// the writable paths and the agent's argv.
func Unwrap(args []string) (writable, argv []string, err error) {
	for len(args) > 0 {
		switch a := args[0]; {
		case a == "--":
			if len(args) < 2 {
				return nil, nil, errors.New("no command after --")
			}
			return writable, args[1:], nil
		case a == "--rw" && len(args) > 1:
			if !filepath.IsAbs(args[1]) {
				return nil, nil, fmt.Errorf("--rw %q: not an absolute path", args[1])
			}
			writable = append(writable, filepath.Clean(args[1]))
			args = args[2:]
		default:
			return nil, nil, fmt.Errorf("unexpected argument %q", a)
		}
	}
	return nil, nil, errors.New("usage: sandbox-exec [--rw PATH]… -- COMMAND [ARG]…")
}

// Main is the body of `sandbox-exec`: it confines this process to
// writing beneath the --rw paths and the device files, then executes the
// command in its place. It returns only on failure (126: the agent was
// not started; it never starts unconfined).
func Main(args []string, stderr io.Writer) int {
	writable, argv, err := Unwrap(args)
	if err != nil {
		fmt.Fprintln(stderr, "hivemind sandbox-exec:", err)
		return 2
	}
	path, err := exec.LookPath(argv[0])
	if err != nil {
		fmt.Fprintln(stderr, "hivemind sandbox-exec:", err)
		return 127
	}
	if err := restrictAndExec(path, argv, os.Environ(), append(slices.Clone(devices), writable...)); err != nil {
		fmt.Fprintf(stderr, "hivemind sandbox-exec: cannot confine %s: %v\n", argv[0], err)
		return 126
	}
	return 126 // unreachable: exec replaced the process
}

// Dedup returns paths cleaned, without duplicates and without paths
// beneath another one of the list (a grant covers its whole tree), sorted.
func Dedup(paths []string) []string {
	var clean []string
	for _, p := range paths {
		if p != "" && filepath.IsAbs(p) {
			clean = append(clean, filepath.Clean(p))
		}
	}
	slices.Sort(clean)
	clean = slices.Compact(clean)
	var out []string
	for _, p := range clean {
		if len(out) > 0 && beneath(out[len(out)-1], p) {
			continue
		}
		out = append(out, p)
	}
	return out
}

// beneath reports whether p is dir or inside it.
func beneath(dir, p string) bool {
	return p == dir || strings.HasPrefix(p, strings.TrimSuffix(dir, "/")+"/")
}
