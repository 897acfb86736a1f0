//go:build linux

package procenv

import (
	"bytes"
	"os"
	"strconv"
	"syscall"
)

// ProcsWithEnv returns the live processes of uid whose environment holds
// the exact entry kv (only processes whose environment this process may
// read: its own user's, or all as root).
func ProcsWithEnv(uid int, kv string) []int {
	ents, _ := os.ReadDir("/proc")
	want := []byte(kv)
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		var st syscall.Stat_t
		if syscall.Stat("/proc/"+e.Name(), &st) != nil || int(st.Uid) != uid {
			continue
		}
		if stat, err := os.ReadFile("/proc/" + e.Name() + "/stat"); err != nil || zombie(stat) {
			continue
		}
		env, err := os.ReadFile("/proc/" + e.Name() + "/environ")
		if err != nil {
			continue
		}
		for _, v := range bytes.Split(env, []byte{0}) {
			if bytes.Equal(v, want) {
				out = append(out, pid)
				break
			}
		}
	}
	return out
}

func zombie(stat []byte) bool {
	i := bytes.LastIndexByte(stat, ')')
	return i < 0 || i+2 >= len(stat) || stat[i+2] == 'Z' || stat[i+2] == 'X'
}

// Start is the start time of pid in clock ticks after boot (0 when
// it does not exist): with the pid it names one process, never a later
// one that reused the pid.
func Start(pid int) uint64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil || zombie(b) {
		return 0
	}
	f := bytes.Fields(b[bytes.LastIndexByte(b, ')')+1:])
	if len(f) < 20 {
		return 0
	}
	v, _ := strconv.ParseUint(string(f[19]), 10, 64)
	return v
}

// Alive reports whether the process recorded as pid, started at start
// (Start), still runs.
func Alive(pid int, start uint64) bool {
	return start != 0 && Start(pid) == start
}
