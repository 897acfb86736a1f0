//go:build linux

package sandbox

import (
	"errors"
	"fmt"
	"runtime"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// kernelABI asks the kernel for its Landlock ABI version.
func kernelABI() int {
	v, _, e := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
	if e != 0 {
		return 0
	}
	return int(v)
}

// Write-like access rights by the ABI that introduced them. Reading,
// reading directories and executing are never handled, so they stay
// allowed everywhere; so are ioctl on devices (terminals need it) and
// connecting to unix sockets (the hook relay).
const (
	fileWrites = unix.LANDLOCK_ACCESS_FS_WRITE_FILE
	dirWrites  = unix.LANDLOCK_ACCESS_FS_REMOVE_DIR | unix.LANDLOCK_ACCESS_FS_REMOVE_FILE |
		unix.LANDLOCK_ACCESS_FS_MAKE_CHAR | unix.LANDLOCK_ACCESS_FS_MAKE_DIR |
		unix.LANDLOCK_ACCESS_FS_MAKE_REG | unix.LANDLOCK_ACCESS_FS_MAKE_SOCK |
		unix.LANDLOCK_ACCESS_FS_MAKE_FIFO | unix.LANDLOCK_ACCESS_FS_MAKE_BLOCK |
		unix.LANDLOCK_ACCESS_FS_MAKE_SYM
	referV2    = unix.LANDLOCK_ACCESS_FS_REFER    // ABI 2: rename/link across directories
	truncateV3 = unix.LANDLOCK_ACCESS_FS_TRUNCATE // ABI 3
)

// rights returns the handled write rights for a file and for a directory
// at ABI v.
func rights(v int) (file, dir uint64) {
	file, dir = fileWrites, fileWrites|dirWrites
	if v >= 2 {
		dir |= referV2
	}
	if v >= 3 {
		file |= truncateV3
		dir |= truncateV3
	}
	return file, dir
}

// restrictAndExec confines the calling OS thread to writing beneath
// writable and executes path from that same thread: the new program
// inherits the thread's Landlock domain (and no_new_privs), and so does
// every process it starts. Paths that do not exist are skipped. At ABI 6
// and later the agent may also not signal processes outside its domain
// (Hivemind, other agents) or reach their abstract unix sockets.
func restrictAndExec(path string, argv, env, writable []string) error {
	v := ABI()
	if v < 1 {
		return errors.New("this kernel has no Landlock")
	}
	fileR, dirR := rights(v)
	// Older kernels accept the larger struct while its unknown fields are 0.
	attr := unix.LandlockRulesetAttr{Access_fs: dirR}
	if v >= 6 {
		attr.Scoped = unix.LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET | unix.LANDLOCK_SCOPE_SIGNAL
	}
	rfd, _, e := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, uintptr(unsafe.Pointer(&attr)), unsafe.Sizeof(attr), 0)
	if e != 0 {
		return fmt.Errorf("landlock_create_ruleset: %w", e)
	}
	defer unix.Close(int(rfd))
	for _, p := range Dedup(writable) {
		fd, err := unix.Open(p, unix.O_PATH|unix.O_CLOEXEC, 0)
		if errors.Is(err, unix.ENOENT) {
			continue
		}
		if err != nil {
			return fmt.Errorf("open %s: %w", p, err)
		}
		var st unix.Stat_t
		allowed := dirR
		if unix.Fstat(fd, &st) == nil && st.Mode&unix.S_IFMT != unix.S_IFDIR {
			allowed = fileR
		}
		rule := unix.LandlockPathBeneathAttr{Allowed_access: allowed, Parent_fd: int32(fd)}
		_, _, e := unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, rfd, unix.LANDLOCK_RULE_PATH_BENEATH,
			uintptr(unsafe.Pointer(&rule)), 0, 0, 0)
		_ = unix.Close(fd) // an O_PATH descriptor: nothing to flush
		if e != 0 {
			return fmt.Errorf("landlock_add_rule %s: %w", p, e)
		}
	}
	// Both calls act on this thread only; the exec below runs on it too.
	runtime.LockOSThread()
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("prctl(no_new_privs): %w", err)
	}
	if _, _, e := unix.Syscall(unix.SYS_LANDLOCK_RESTRICT_SELF, rfd, 0, 0); e != 0 {
		return fmt.Errorf("landlock_restrict_self: %w", e)
	}
	return fmt.Errorf("exec %s: %w", path, syscall.Exec(path, argv, env))
}
