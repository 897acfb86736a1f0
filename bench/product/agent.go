package main

import (
	"bytes"
	"encoding/hex"
	"flag"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/charmbracelet/x/term"
	"github.com/creack/pty"

	"github.com/hivemind-dev/hivemind/ptyagent/screen/workload"
)

// The agents are this program in an agent mode, so every path (raw PTY,
// tmux, Hivemind headless and full screen) runs the same process writing
// the same bytes the same way.

// agentID is the agent's name: -id, else HIVEMIND_AGENT_ID (Hivemind sets it).
func agentID(flagID string) string {
	if flagID != "" {
		return flagID
	}
	return os.Getenv("HIVEMIND_AGENT_ID")
}

// cprRe matches a cursor position report, the terminal's answer to CSI 6n.
var cprRe = regexp.MustCompile(`\x1b\[\d+;\d+R`)

// floodMain is the throughput agent. When its id is one of -writers it
// loads -file, says it is ready (<dir>/<id>.ready), waits for <dir>/go,
// writes the file to its terminal in 32 KiB writes, then asks for the
// cursor position (CSI 6n) and waits for the answer: a terminal answers
// only after it has processed every byte before the question. It records
// "<bytes> <start> <writes done> <answer>" (unix nanos) in <dir>/<id>.time
// and then idles until its terminal goes away. Other agents idle at once.
func floodMain(args []string) int {
	fs := flag.NewFlagSet("flood", flag.ContinueOnError)
	id := fs.String("id", "", "agent id (default $HIVEMIND_AGENT_ID)")
	dir := fs.String("dir", "", "control directory")
	file := fs.String("file", "", "workload file")
	writers := fs.String("writers", "", "comma-separated ids that write")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	me := agentID(*id)
	if st, err := term.MakeRaw(os.Stdin.Fd()); err == nil {
		defer func() { _ = term.Restore(os.Stdin.Fd(), st) }()
	}
	if !inList(*writers, me) {
		_, _ = io.Copy(io.Discard, os.Stdin)
		return 0
	}
	data, err := os.ReadFile(*file)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	answered := make(chan struct{})
	go func() {
		// Input: Hivemind's injections, and at the end the answer.
		var seen []byte
		buf := make([]byte, 4096)
		once := sync.Once{}
		for {
			n, err := os.Stdin.Read(buf)
			seen = append(seen, buf[:n]...)
			if cprRe.Match(seen) {
				once.Do(func() { close(answered) })
				seen = seen[:0]
			}
			if len(seen) > 1<<16 {
				seen = append(seen[:0], seen[len(seen)-64:]...)
			}
			if err != nil {
				return
			}
		}
	}()
	if err := touch(filepath.Join(*dir, me+".ready")); err != nil {
		return 1
	}
	for !exists(filepath.Join(*dir, "go")) {
		time.Sleep(5 * time.Millisecond) // the driver's start signal: a poll, not a wait for a result
	}
	t0 := time.Now()
	for p := data; len(p) > 0; {
		n := min(len(p), 32<<10)
		if _, err := os.Stdout.Write(p[:n]); err != nil {
			return 1
		}
		p = p[n:]
	}
	t1 := time.Now()
	_, _ = os.Stdout.WriteString("\x1b[6n")
	select {
	case <-answered:
	case <-time.After(5 * time.Minute):
		fmt.Fprintln(os.Stderr, "no cursor position report")
		return 1
	}
	t2 := time.Now()
	rec := fmt.Sprintf("%d %d %d %d\n", len(data), t0.UnixNano(), t1.UnixNano(), t2.UnixNano())
	if err := writeAtomic(filepath.Join(*dir, me+".time"), rec); err != nil {
		return 1
	}
	select {} // idle until the terminal goes away (SIGHUP) or we are stopped
}

// feedMain is the scale agent: it streams the workload at -rate bytes/s
// while <control> says "busy", as fast as its terminal takes it while it
// says "flood" ("busy-others", "flood-others": all but the lead), draws a
// static screen naming itself on every row while it says "mark" (see
// mark), is silent otherwise, and echoes what it is typed like an agent's input
// box. The lead logs every read of its input ("<unix nanos> <hex>") to
// <control>.lead-input, which times keystrokes.
func feedMain(args []string) int {
	fs := flag.NewFlagSet("feed", flag.ContinueOnError)
	control := fs.String("control", "", "control file: idle, busy, busy-others")
	rate := fs.Int("rate", 20000, "bytes per second while busy")
	every := fs.Duration("tick", 10*time.Millisecond, "write interval while busy")
	streamers := fs.String("streamers", "", "comma-separated ids that stream (empty: all)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	id := os.Getenv("HIVEMIND_AGENT_ID")
	if st, err := term.MakeRaw(os.Stdin.Fd()); err == nil {
		defer func() { _ = term.Restore(os.Stdin.Fd(), st) }()
	}
	streams := *streamers == "" || inList(*streamers, id)
	f := &feeder{id: id, out: os.Stdout}
	if id == "lead" {
		if lf, err := os.Create(*control + ".lead-input"); err == nil {
			defer lf.Close()
			f.inputLog = lf
		}
	}
	f.regenerate()

	winch := make(chan os.Signal, 1)
	signal.Notify(winch, syscall.SIGWINCH)
	inputDone := make(chan struct{})
	go f.echo(os.Stdin, inputDone)

	tick := time.NewTicker(*every)
	defer tick.Stop()
	var mode string
	var modeAt, since time.Time
	var sent int64
	// readMode reads the control file: idle, busy (rate-limited), flood
	// (as fast as the terminal takes it); "-others" spares the lead, whose
	// pane is typed into.
	readMode := func(now time.Time) {
		b, _ := os.ReadFile(*control)
		m := strings.TrimSpace(string(b))
		if others, ok := strings.CutSuffix(m, "-others"); ok {
			m = others
			if id == "lead" {
				m = "idle"
			}
		}
		if !streams {
			m = "idle"
		}
		if m != mode {
			if mode == "busy" || mode == "flood" {
				// The stream stopped anywhere, maybe inside an escape
				// sequence or on the alternate screen: end those, so
				// what is typed next shows.
				f.write(-1)
			}
			mode, since, sent = m, now, 0
			f.marking.Store(mode == "mark")
			if mode == "mark" {
				f.mark()
			}
		}
		modeAt = now
	}
	for {
		if mode == "flood" {
			f.write(32 << 10)
			select {
			case <-inputDone:
				return 0
			default:
			}
			if now := time.Now(); now.Sub(modeAt) >= 50*time.Millisecond {
				readMode(now)
			}
			continue
		}
		select {
		case <-inputDone:
			return 0
		case <-winch:
			f.regenerate()
			if mode == "mark" {
				f.mark()
			}
		case now := <-tick.C:
			if now.Sub(modeAt) >= 50*time.Millisecond || mode == "" {
				readMode(now)
			}
			if mode != "busy" {
				continue
			}
			if owed := int64(now.Sub(since).Seconds()*float64(*rate)) - sent; owed > 0 {
				f.write(owed)
				sent += owed
			}
		}
	}
}

type feeder struct {
	id       string
	out      io.Writer
	inputLog io.Writer   // "unixnano hex-bytes" per read (nil: none)
	marking  atomic.Bool // the mark screen is up: input redraws it, not echoed

	mu   sync.Mutex
	data []byte
	pos  int
}

// regenerate makes a workload drawn for the terminal's current size.
func (f *feeder) regenerate() {
	rows, cols, err := pty.Getsize(os.Stdout)
	if err != nil || rows <= 0 || cols <= 0 {
		rows, cols = 24, 80
	}
	h := fnv.New64a()
	_, _ = h.Write([]byte(f.id))
	data, _ := workload.Generate(workload.Options{Seed: h.Sum64(), Size: 2 << 20, Cols: cols, Rows: rows})
	f.mu.Lock()
	f.data, f.pos = data, 0
	f.mu.Unlock()
}

// mark draws a static screen whose every row names the agent, the row and
// the rows of the terminal ("lead r03/22"): a screen shown whole is
// recognised on sight.
func (f *feeder) mark() {
	rows, _, err := pty.Getsize(os.Stdout)
	if err != nil || rows <= 0 {
		rows = 24
	}
	var b strings.Builder
	b.WriteString("\x1b[0m\x1b[2J\x1b[H")
	for r := 1; r <= rows; r++ {
		fmt.Fprintf(&b, "%s r%02d/%02d", f.id, r, rows)
		if r < rows {
			b.WriteString("\r\n")
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	_, _ = io.WriteString(f.out, b.String())
}

// streamReset cancels a sequence in progress (CAN), leaves the alternate
// screen and scroll regions, resets colours and starts a new line.
const streamReset = "\x18\x1b[0m\x1b[r\x1b[?1049l\x1b[?25h\r\n"

// write writes the next n bytes of the workload (wrapping around); n < 0
// writes streamReset.
func (f *feeder) write(n int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if n < 0 {
		_, _ = io.WriteString(f.out, streamReset)
		return
	}
	for n > 0 {
		chunk := min(int(n), len(f.data)-f.pos)
		_, _ = f.out.Write(f.data[f.pos : f.pos+chunk])
		f.pos = (f.pos + chunk) % len(f.data)
		n -= int64(chunk)
	}
}

// echo writes back what is typed (Enter as a new line); it closes done at EOF.
func (f *feeder) echo(in io.Reader, done chan<- struct{}) {
	defer close(done)
	buf := make([]byte, 4096)
	for {
		n, err := in.Read(buf)
		if n > 0 {
			if f.inputLog != nil {
				fmt.Fprintf(f.inputLog, "%d %x\n", time.Now().UnixNano(), buf[:n])
			}
			if f.marking.Load() {
				f.mark() // Hivemind's injections leave the mark screen whole
			} else {
				b := bytes.ReplaceAll(buf[:n], []byte("\r"), []byte("\r\n"))
				f.mu.Lock()
				_, _ = f.out.Write(b)
				f.mu.Unlock()
			}
		}
		if err != nil {
			return
		}
	}
}

// inputArrival returns when the lead's feeder read the last byte of tok.
func inputArrival(log, tok string) (time.Time, error) {
	b, err := os.ReadFile(log)
	if err != nil {
		return time.Time{}, err
	}
	var all []byte
	for _, l := range strings.Split(string(b), "\n") {
		ns, hexb, ok := strings.Cut(l, " ")
		if !ok {
			continue
		}
		chunk, err := hex.DecodeString(hexb)
		if err != nil {
			continue
		}
		all = append(all, chunk...)
		if bytes.Contains(all, []byte(tok)) {
			var t int64
			_, _ = fmt.Sscan(ns, &t)
			return time.Unix(0, t), nil
		}
	}
	return time.Time{}, fmt.Errorf("the lead never read %q", tok)
}

func inList(list, id string) bool {
	for _, w := range strings.Split(list, ",") {
		if w == id && id != "" {
			return true
		}
	}
	return false
}

func touch(path string) error { return os.WriteFile(path, nil, 0o644) }

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

func writeAtomic(path, s string) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(s), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
