// Command ptybench measures, in one run and on the same bytes, how fast a
// terminal workload goes through a PTY when (1) it is only read (the
// physical limit), (2) Hivemind's emulator (screen.New) consumes it, (3)
// the x/vt reference consumes it (optional) and (4) tmux, in a detached
// 120x40 pane, consumes it. It prints MB/s per path and the ratios
// Hivemind/tmux and Hivemind/raw.
//
// The child is always `cat FILE` on a raw-mode tty. tmux is timed until it
// has processed the whole stream: after cat the child sends a cursor
// position query, which tmux answers only once every byte before it has
// been parsed, and the answer releases a `tmux wait-for` channel.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/creack/pty"
	"github.com/hivemind-dev/hivemind/ptyagent/screen"
	"github.com/hivemind-dev/hivemind/ptyagent/screen/workload"
)

func main() {
	size := flag.Int("mb", 20, "workload size in MiB")
	seed := flag.Uint64("seed", 1, "workload seed")
	runs := flag.Int("runs", 3, "runs per path (median reported)")
	cols := flag.Int("cols", 120, "pane width")
	rows := flag.Int("rows", 40, "pane height")
	withVT := flag.Bool("xvt", false, "also measure the x/vt reference emulator (slow)")
	noTmux := flag.Bool("no-tmux", false, "skip tmux")
	flag.Parse()
	if err := run(*size<<20, *seed, *runs, *cols, *rows, *withVT, *noTmux); err != nil {
		fmt.Fprintln(os.Stderr, "ptybench:", err)
		os.Exit(1)
	}
}

type path struct {
	name string
	fn   func(file string, cols, rows int) (time.Duration, error)
}

func run(size int, seed uint64, runs, cols, rows int, withVT, noTmux bool) error {
	dir, err := os.MkdirTemp("", "hivemind-bench-")
	if err != nil {
		return err
	}
	defer func() { _ = os.RemoveAll(dir) }()
	data, _ := workload.Generate(workload.Options{Seed: seed, Size: size, Cols: cols, Rows: rows})
	file := filepath.Join(dir, "workload.bin")
	if err := os.WriteFile(file, data, 0o600); err != nil {
		return err
	}
	fmt.Printf("workload: %.1f MB (seed %d, %dx%d), %d runs per path, GOMAXPROCS=%d\n",
		float64(len(data))/1e6, seed, cols, rows, runs, runtime.GOMAXPROCS(0))

	paths := []path{
		{"raw PTY read", rawRead},
		{"hivemind (screen.New)", emuRead(screen.New)},
	}
	if withVT {
		paths = append(paths, path{"x/vt (screen.NewVT)", emuRead(screen.NewVT)})
	}
	if !noTmux {
		if _, err := exec.LookPath("tmux"); err != nil {
			fmt.Println("tmux not installed: tmux path skipped")
			noTmux = true
		} else {
			paths = append(paths, path{"tmux " + tmuxVersion(), tmuxRead})
		}
	}
	times := make([][]time.Duration, len(paths))
	// Interleave the paths so that load from other processes on the
	// machine spreads over all of them.
	for range runs {
		for i, p := range paths {
			d, err := p.fn(file, cols, rows)
			if err != nil {
				return fmt.Errorf("%s: %w", p.name, err)
			}
			times[i] = append(times[i], d)
		}
	}
	mbps := make([]float64, len(paths))
	fmt.Printf("%-26s %10s %10s  %s\n", "path", "median", "MB/s", "runs (s)")
	for i, p := range paths {
		slices.Sort(times[i])
		med := times[i][len(times[i])/2]
		mbps[i] = float64(len(data)) / 1e6 / med.Seconds()
		var rs []string
		for _, d := range times[i] {
			rs = append(rs, fmt.Sprintf("%.3f", d.Seconds()))
		}
		fmt.Printf("%-26s %9.3fs %10.1f  %s\n", p.name, med.Seconds(), mbps[i], strings.Join(rs, " "))
	}
	fmt.Printf("ratio hivemind/raw:  %.2f\n", mbps[1]/mbps[0])
	if !noTmux {
		fmt.Printf("ratio hivemind/tmux: %.2f\n", mbps[1]/mbps[len(paths)-1])
	}
	return nil
}

// startCat starts `cat file` on a raw-mode PTY of the given size.
func startCat(file string, cols, rows int) (*os.File, *exec.Cmd, error) {
	cmd := exec.Command("sh", "-c", `stty raw -echo; exec cat "$1"`, "sh", file)
	f, err := pty.StartWithSize(cmd, &pty.Winsize{Cols: uint16(cols), Rows: uint16(rows)})
	if err != nil {
		return nil, nil, err
	}
	return f, cmd, nil
}

// drain reads the PTY until the child has exited (EIO), passing each read
// to sink.
func drain(f *os.File, sink func([]byte)) error {
	buf := make([]byte, 32<<10)
	for {
		n, err := f.Read(buf)
		if n > 0 {
			sink(buf[:n])
		}
		if err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, syscall.EIO) {
				return nil
			}
			return err
		}
	}
}

func rawRead(file string, cols, rows int) (time.Duration, error) {
	start := time.Now()
	f, cmd, err := startCat(file, cols, rows)
	if err != nil {
		return 0, err
	}
	defer func() { _ = f.Close() }()
	var total int
	err = drain(f, func(p []byte) { total += len(p) })
	d := time.Since(start)
	_ = cmd.Wait()
	return d, err
}

func emuRead(mk func(screen.Options) screen.Screen) func(string, int, int) (time.Duration, error) {
	return func(file string, cols, rows int) (time.Duration, error) {
		start := time.Now()
		f, cmd, err := startCat(file, cols, rows)
		if err != nil {
			return 0, err
		}
		defer func() { _ = f.Close() }()
		s := mk(screen.Options{Cols: cols, Rows: rows, Scrollback: 10000, Reply: io.Discard})
		err = drain(f, func(p []byte) { _, _ = s.Write(p) })
		d := time.Since(start)
		_ = s.Close()
		_ = cmd.Wait()
		return d, err
	}
}

func tmuxVersion() string {
	out, err := exec.Command("tmux", "-V").Output()
	if err != nil {
		return "?"
	}
	return strings.TrimPrefix(strings.TrimSpace(string(out)), "tmux ")
}

func tmuxRead(file string, cols, rows int) (time.Duration, error) {
	dir, err := os.MkdirTemp("", "hivemind-tmux-")
	if err != nil {
		return 0, err
	}
	defer func() { _ = os.RemoveAll(dir) }()
	sock := filepath.Join(dir, "s")
	tmux := func(args ...string) *exec.Cmd {
		c := exec.Command("tmux", append([]string{"-S", sock, "-f", "/dev/null"}, args...)...)
		c.Env = append(os.Environ(), "LANG=C.UTF-8", "LC_ALL=C.UTF-8")
		return c
	}
	// The DSR answer comes back only after tmux parsed everything before
	// the query; reading it then releases the wait-for channel.
	script := fmt.Sprintf(`stty raw -echo; cat %q; printf '\033[6n'; IFS= read -r -s -d R _; tmux -S %q wait-for -S hivemind-done; exec sleep 600`,
		file, sock)
	start := time.Now()
	if out, err := tmux("new-session", "-d", "-x", strconv.Itoa(cols), "-y", strconv.Itoa(rows), "bash", "-c", script).CombinedOutput(); err != nil {
		return 0, fmt.Errorf("new-session: %v: %s", err, out)
	}
	defer func() { _ = tmux("kill-server").Run() }()
	waitDone := make(chan error, 1)
	go func() { waitDone <- tmux("wait-for", "hivemind-done").Run() }()
	select {
	case err := <-waitDone:
		if err != nil {
			return 0, fmt.Errorf("wait-for: %w", err)
		}
	case <-time.After(5 * time.Minute):
		return 0, errors.New("tmux did not finish within 5 minutes")
	}
	return time.Since(start), nil
}
