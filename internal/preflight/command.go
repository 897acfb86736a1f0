package preflight

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"time"

	"github.com/creack/pty"
)

// agentFix is where a custom agent is set, for fixes.
const agentFix = "correct the agent (--agent, or agent = / [profiles.<name>].command in config); hivemind demo runs without any agent installed"

// command checks a custom agent: its program exists and is executable, a
// script's interpreter (#!) exists, and, when env.Probe is set (hivemind
// doctor), the whole command runs in a terminal to its first prompt.
func command(ctx context.Context, env Env, a Agent) []Result {
	r := Result{Check: "agent command"}
	prog := a.Argv0
	if prog == "" || (a.Shell && !plainWord(prog)) {
		r.Status, r.Msg = Warn, fmt.Sprintf("%q: cannot tell which program it runs; not checked", a.Name)
		return append([]Result{r}, probe(ctx, env, a)...)
	}
	if strings.Contains(prog, "/") && !filepath.IsAbs(prog) && a.Dir != "" {
		prog = filepath.Join(a.Dir, prog) // agents run in the project directory
	}
	path, err := env.LookPath(prog)
	if err != nil {
		r.Status, r.Msg, r.Fix = Fail, notRunnable(env, a, prog), agentFix
		if p, ok := nonExecutable(env, prog); ok {
			r.Fix = "chmod +x " + p + " (or run it through its interpreter: --agent \"sh " + p + "\")"
		}
		return []Result{r}
	}
	if msg, fix := badShebang(env, path); msg != "" {
		r.Status, r.Msg, r.Fix = Fail, fmt.Sprintf("%s (the agent of %s) cannot start: %s", path, a.Roles, msg), fix
		return []Result{r}
	}
	r.Msg = fmt.Sprintf("%s for %s", path, a.Roles)
	return append([]Result{r}, probe(ctx, env, a)...)
}

// notRunnable says why prog is not a program LookPath accepts: missing,
// a directory, or a file without the execute bit.
func notRunnable(env Env, a Agent, prog string) string {
	who := fmt.Sprintf("%s (the agent of %s)", a.Argv0, a.Roles)
	if p, ok := findFile(env, prog); ok {
		fi, err := os.Stat(p)
		switch {
		case err == nil && fi.IsDir():
			return fmt.Sprintf("%s is a directory, not a program: %s", who, p)
		case err == nil:
			return fmt.Sprintf("%s is not executable: %s has mode %s", who, p, fi.Mode().Perm())
		}
	}
	if strings.Contains(prog, "/") {
		return fmt.Sprintf("%s is not installed: %s does not exist", who, prog)
	}
	return fmt.Sprintf("%s is not installed: %s not found on PATH", who, prog)
}

// nonExecutable finds prog (which LookPath refused) as a file that is
// there but not a directory: it lacks the execute bit.
func nonExecutable(env Env, prog string) (string, bool) {
	p, ok := findFile(env, prog)
	if !ok {
		return "", false
	}
	if fi, err := os.Stat(p); err != nil || fi.IsDir() {
		return "", false
	}
	return p, true
}

// findFile finds prog as a file: a path as given, else the first file of
// that name in a $PATH directory, executable or not.
func findFile(env Env, prog string) (string, bool) {
	if strings.Contains(prog, "/") {
		_, err := os.Stat(prog)
		return prog, err == nil
	}
	if env.Getenv == nil {
		return "", false // an Env that only looks programs up
	}
	for _, dir := range filepath.SplitList(env.Getenv("PATH")) {
		if dir == "" {
			continue
		}
		p := filepath.Join(dir, prog)
		if _, err := os.Stat(p); err == nil {
			return p, true
		}
	}
	return "", false
}

// badShebang reads a script's #! line and says what is wrong with it: an
// interpreter that does not exist or is not executable, or one /usr/bin/env
// cannot find on PATH. A binary, or a script whose interpreter is there,
// gives "".
func badShebang(env Env, path string) (msg, fix string) {
	f, err := os.Open(path)
	if err != nil {
		return "", ""
	}
	defer f.Close()
	line, err := bufio.NewReader(io.LimitReader(f, 256)).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return "", ""
	}
	rest, ok := strings.CutPrefix(line, "#!")
	if !ok {
		return "", ""
	}
	words := strings.Fields(rest)
	if len(words) == 0 {
		return "its first line #! names no interpreter", "put the interpreter on the first line of " + path + ", e.g. #!/bin/sh"
	}
	interp := words[0]
	first := "#!" + strings.TrimSpace(rest)
	if fi, err := os.Stat(interp); err != nil || fi.IsDir() || fi.Mode().Perm()&0o111 == 0 {
		return fmt.Sprintf("its interpreter %s (first line %s) does not exist or is not executable", interp, first),
			"install " + filepath.Base(interp) + ", or correct the first line of " + path
	}
	if filepath.Base(interp) == "env" && len(words) > 1 {
		name := words[1]
		if name == "-S" && len(words) > 2 {
			name = words[2]
		}
		if !strings.HasPrefix(name, "-") && !strings.Contains(name, "=") {
			if _, err := env.LookPath(name); err != nil {
				return fmt.Sprintf("its interpreter %s (first line %s) is not on PATH", name, first),
					"install " + name + ", or correct the first line of " + path
			}
		}
	}
	return "", ""
}

// Probe is what running a command to its first prompt found.
type Probe struct {
	Exited   bool // it exited within the bound
	ExitCode int
	Quiet    bool          // it printed something, then went quiet: its first prompt
	After    time.Duration // how long it ran (until exit, quiet or the bound)
	Last     string        // its last lines of output, plain text
	Err      error         // it could not be started
}

// probeBound bounds how long doctor runs a custom command; probeQuiet is
// the quiet after output taken as its first prompt; probeSilent the time
// without any output after which a still-running command passes.
const (
	probeBound  = 10 * time.Second
	probeQuiet  = time.Second
	probeSilent = 3 * time.Second
)

// probe runs the agent's command (when env.Probe is set) and turns what it
// found into a result: exited (with its code and last output), or running
// at its first prompt.
func probe(ctx context.Context, env Env, a Agent) []Result {
	if env.Probe == nil || len(a.Argv) == 0 {
		return nil
	}
	r := Result{Check: "agent start"}
	p := env.Probe(ctx, a.Argv, a.Dir)
	last := ""
	if p.Last != "" {
		last = "; last output: " + p.Last
	}
	switch {
	case p.Err != nil:
		r.Status, r.Msg, r.Fix = Fail, fmt.Sprintf("%q could not be started: %v", a.Name, p.Err), agentFix
	case p.Exited:
		r.Status = Fail
		r.Msg = fmt.Sprintf("%q exited with code %d after %v, before its first prompt%s", a.Name, p.ExitCode, p.After.Round(10*time.Millisecond), last)
		if p.Last == "" {
			r.Msg += " (it printed nothing)"
		}
		r.Fix = "run it yourself in the project directory to see why; an agent must keep running and read its instructions from the terminal"
	case p.Quiet:
		r.Msg = fmt.Sprintf("%q started and waits for input after %v%s", a.Name, p.After.Round(10*time.Millisecond), last)
	default:
		r.Msg = fmt.Sprintf("%q started and was still running after %v (no prompt seen)%s", a.Name, p.After.Round(10*time.Millisecond), last)
	}
	return []Result{r}
}

// ProbeCommand runs argv in a terminal in dir until its first prompt
// (output, then probeQuiet of quiet), probeSilent without any output, its
// exit, or probeBound, whichever comes first, then kills its process
// group. The agent environment names it a preflight run
// (HIVEMIND_PREFLIGHT=1) with a throwaway task directory.
func ProbeCommand(ctx context.Context, argv []string, dir string) Probe {
	start := time.Now()
	tmp, err := os.MkdirTemp("", "hivemind-preflight-")
	if err != nil {
		return Probe{Err: err}
	}
	defer os.RemoveAll(tmp)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "TERM=xterm-256color", "HIVEMIND_PREFLIGHT=1",
		"HIVEMIND_ROLE=lead", "HIVEMIND_AGENT_ID=lead", "HIVEMIND_TASK_DIR="+tmp, "HIVEMIND_PROJECT="+dir)
	ptmx, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 24, Cols: 100})
	if err != nil {
		return Probe{Err: err}
	}
	defer ptmx.Close()
	type chunk struct {
		n   int
		err error
	}
	var out bytes.Buffer
	reads := make(chan chunk)
	buf := make([]byte, 4096)
	go func() {
		for {
			n, err := ptmx.Read(buf)
			if n > 0 && out.Len() < 64<<10 {
				out.Write(buf[:n])
			}
			reads <- chunk{n, err}
			if err != nil {
				return
			}
		}
	}()
	waited := make(chan int, 1)
	go func() {
		err := cmd.Wait()
		code := 0
		if ps := cmd.ProcessState; ps != nil {
			code = ps.ExitCode()
			if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
				code = 128 + int(ws.Signal())
			}
		} else if err != nil {
			code = -1
		}
		waited <- code
	}()
	p := Probe{}
	bound := time.NewTimer(probeBound)
	defer bound.Stop()
	quiet := time.NewTimer(probeSilent)
	defer quiet.Stop()
	seen, readerDone := false, false
	exited := false
loop:
	for {
		select {
		case c := <-reads:
			if c.err != nil {
				readerDone = true
				reads = nil
				continue
			}
			seen = true
			quiet.Reset(probeQuiet)
		case p.ExitCode = <-waited:
			p.Exited, exited = true, true
			break loop
		case <-quiet.C:
			p.Quiet = seen
			break loop
		case <-bound.C:
			break loop
		case <-ctx.Done():
			break loop
		}
	}
	p.After = time.Since(start)
	if !exited {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Process.Kill()
		<-waited
	}
	// What it printed last, once the reader has drained the terminal.
	if !readerDone {
		_ = ptmx.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
		for c := range reads {
			if c.err != nil {
				break
			}
		}
	}
	p.Last = lastLines(out.String(), 2, 240)
	return p
}

// ansiSeq matches terminal escape sequences (CSI, OSC, and two-byte ESC
// sequences).
var ansiSeq = regexp.MustCompile(`\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(\x07|\x1b\\)|\x1b[@-Z\\-_]`)

// lastLines is the last n lines with words in them of a terminal's output,
// escape sequences removed, joined by " / " and clipped to max runes.
func lastLines(s string, n, max int) string {
	s = ansiSeq.ReplaceAllString(s, "")
	var picked []string
	lines := strings.Split(strings.ReplaceAll(s, "\r", "\n"), "\n")
	for i := len(lines) - 1; i >= 0 && len(picked) < n; i-- {
		if l := strings.TrimSpace(lines[i]); l != "" {
			picked = append([]string{l}, picked...)
		}
	}
	out := []rune(strings.Join(picked, " / "))
	if len(out) > max {
		out = append(out[:max-1], '…')
	}
	return string(out)
}
