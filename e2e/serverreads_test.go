package e2e_test

import (
	"bytes"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hivemind-dev/hivemind/internal/proto"
	"github.com/hivemind-dev/hivemind/vocab"
)

// serverSnapshot is what the server's clients see: the snapshot it sends a
// client after its welcome.
func serverSnapshot(t *testing.T, sock string) proto.Snapshot {
	t.Helper()
	nc, err := net.DialTimeout("unix", sock, tuiWait)
	if err != nil {
		t.Fatal(err)
	}
	c := proto.NewConn(nc)
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(tuiWait))
	if err := c.Send(proto.Msg{T: proto.THello, Version: proto.Version, Binary: "test", Kind: proto.KindWait}); err != nil {
		t.Fatal(err)
	}
	for {
		m, err := c.Recv()
		if err != nil {
			t.Fatalf("the server's snapshot: %v", err)
		}
		if m.T == proto.TSnapshot && m.Snapshot != nil {
			return *m.Snapshot
		}
	}
}

// eventLines parses hivemind events --json (or events.jsonl) into one
// canonical JSON line per record.
func eventLines(t *testing.T, out string) []string {
	t.Helper()
	var lines []string
	for l := range strings.Lines(out) {
		if strings.TrimSpace(l) == "" {
			continue
		}
		var r vocab.EventRecord
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("not an event record: %q: %v", l, err)
		}
		lines = append(lines, canonical(t, r))
	}
	return lines
}

func canonical(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// statusState is hivemind status --json: the state, and whether it is live.
func statusState(t *testing.T, project string, env []string) (vocab.State, bool) {
	t.Helper()
	out, code := hmIn(t, project, env, tuiWait, "status", "--json")
	if code != 0 {
		t.Fatalf("hivemind status --json: exit %d\n%s", code, out)
	}
	var st vocab.State
	var live struct {
		Live bool `json:"live"`
	}
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		t.Fatalf("hivemind status --json: %v\n%s", err, out)
	}
	_ = json.Unmarshal([]byte(out), &live)
	return st, live.Live
}

// While a project's server runs, hivemind status, events and diff answer
// what the server says (the state and newest events its clients see),
// even when the workspace's files lag behind it (here: made to lag, the
// state rewritten and the newest events cut off); once it stopped, they
// answer from the workspace. The server's log stays bounded while a
// chatty notify_command writes 40 MB to it.
func TestServerReadsLive(t *testing.T) {
	parallel(t)
	env := append(serverEnv(t), "HIVEMIND_SIM_ARGS=--pace 2ms --reject-plans 99")
	project := t.TempDir()
	gitInit(t, project)
	// notify_command writes 40 MB to the server's log at needs_human.
	if err := os.MkdirAll(project+"/.hivemind", 0o755); err != nil {
		t.Fatal(err)
	}
	chatty := "notify_command = \"head -c 40000000 /dev/zero | tr '\\\\0' x\"\n"
	if err := os.WriteFile(project+"/.hivemind/config.toml", []byte(chatty), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, code := hmIn(t, project, env, 3*tuiWait, "--server", "--headless", "--agent", "sim", "build a tiny calculator"); code != 3 {
		t.Fatalf("hivemind --server --headless: exit %d, want 3 (needs_human):\n%s", code, out)
	}
	infos := servers(t, project, env)
	if len(infos) != 1 {
		t.Fatalf("hivemind ls: %+v, want the server waiting on a human", infos)
	}
	dir := taskDir(t, project)
	statePath, eventsPath := filepath.Join(dir, "state.json"), filepath.Join(dir, vocab.EventsFile)
	diffLive, _ := hmIn(t, project, env, tuiWait, "diff")
	if !pollUntil(3*tuiWait, func() bool {
		b, _ := os.ReadFile(eventsPath)
		return bytes.Contains(b, []byte(`"type":"`+vocab.RecordNotifyCommand+`"`))
	}) {
		t.Fatal("notify_command did not end")
	}
	for _, f := range []string{"server.log", "server.log.1"} {
		fi, err := os.Stat(filepath.Join(project, ".hivemind", f))
		switch {
		case err != nil:
			t.Errorf("the server's log while it runs: %v", err)
		case fi.Size() > 16<<20+64<<10:
			t.Errorf("the server's %s while it runs: %d bytes, want at most 16 MiB (and one write)", f, fi.Size())
		default:
			t.Logf("%s: %d bytes", f, fi.Size())
		}
	}

	// The workspace lags: state.json says another phase, events.jsonl
	// lacks its newest records.
	origState, err := os.ReadFile(statePath)
	if err != nil {
		t.Fatal(err)
	}
	origEvents, err := os.ReadFile(eventsPath)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(origState, &doc); err != nil {
		t.Fatal(err)
	}
	doc["phase"] = string(vocab.PhaseExecuting)
	if err := os.WriteFile(statePath, []byte(canonical(t, doc)), 0o644); err != nil {
		t.Fatal(err)
	}
	lines := bytes.SplitAfter(bytes.TrimRight(origEvents, "\n"), []byte("\n"))
	if len(lines) < 5 {
		t.Fatalf("events.jsonl has %d records", len(lines))
	}
	if err := os.WriteFile(eventsPath, bytes.Join(lines[:len(lines)-3], nil), 0o644); err != nil {
		t.Fatal(err)
	}

	// (Asked again should the team have moved in between.)
	var snap proto.Snapshot
	var st vocab.State
	var live bool
	if !pollUntil(tuiWait, func() bool {
		snap = serverSnapshot(t, infos[0].Socket)
		st, live = statusState(t, project, env)
		return live && canonical(t, st) == canonical(t, snap.State)
	}) {
		t.Errorf("hivemind status --json while the server runs (live %v):\n%s\nwant the server's state:\n%s", live, canonical(t, st), canonical(t, snap.State))
	}
	if out, _ := hmIn(t, project, env, tuiWait, "status"); !strings.Contains(out, "state     needs_human") {
		t.Errorf("hivemind status while the server runs:\n%s", out)
	}
	out, code := hmIn(t, project, env, tuiWait, "events", "--json")
	got, full := eventLines(t, out), eventLines(t, string(origEvents))
	newest := slices.Index(got, canonical(t, snap.Events[len(snap.Events)-1]))
	if code != 0 || len(got) < len(full) || strings.Join(got[:len(full)], "\n") != strings.Join(full, "\n") || newest < len(full)-1 {
		t.Errorf("hivemind events --json while the server runs: exit %d, %d records, want the %d of the log with the server's newest:\n%s",
			code, len(got), len(full), out)
	}

	// Stopped, the server's task answers from the workspace.
	if err := os.WriteFile(statePath, origState, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(eventsPath, origEvents, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(infos[0].PID, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if !pollUntil(tuiWait, func() bool { return len(servers(t, project, env)) == 0 }) {
		t.Fatal("the server still runs after SIGTERM")
	}
	st, live = statusState(t, project, env)
	if disk := readState(t, dir); live || canonical(t, st) != canonical(t, disk) {
		t.Errorf("hivemind status --json after the server stopped (live %v):\n%s\nwant state.json:\n%s", live, canonical(t, st), canonical(t, disk))
	}
	onDisk, _ := os.ReadFile(eventsPath)
	if out, _ := hmIn(t, project, env, tuiWait, "events", "--json"); strings.Join(eventLines(t, out), "\n") != strings.Join(eventLines(t, string(onDisk)), "\n") {
		t.Errorf("hivemind events --json after the server stopped differs from events.jsonl:\n%s", out)
	}
	if out, _ := hmIn(t, project, env, tuiWait, "diff"); out != diffLive {
		t.Errorf("hivemind diff: %q from the server, %q from the workspace", diffLive, out)
	}
	noLeftovers(t, project)
}

// As root, hivemind --server asks the IS_SANDBOX question in the starting
// terminal before the server detaches, and a yes reaches the server (its
// environment, which its agents inherit); without a terminal it says why
// it did not start and the fix, and starts nothing.
func TestServerRootAsksForSandbox(t *testing.T) {
	parallel(t)
	if os.Geteuid() != 0 {
		t.Skip("the question is asked only as root")
	}
	env := append(serverEnv(t), "PATH="+fakeClaude(t, true)+":/usr/bin:/bin", "ANTHROPIC_BASE_URL="+listen(t), "IS_SANDBOX=")
	project := t.TempDir()
	out, code := hmIn(t, project, env, tuiWait, "--server", "--headless", "--agent", "claude", "add a greeting service")
	if code != 1 || !strings.Contains(out, "fail  claude as root") || !strings.Contains(out, "IS_SANDBOX=1 hivemind") || strings.Contains(out, "[y/N]") {
		t.Errorf("hivemind --server --headless as root: exit %d, want 1 with the reason and fix, no question:\n%s", code, out)
	}
	if infos := servers(t, project, env); len(infos) != 0 {
		t.Fatalf("a server runs after a refused start: %+v", infos)
	}

	r := startTUI(t, tuiOptions{project: project, env: env, args: []string{"--server", "--agent", "claude", "add a greeting service"}})
	r.waitText(tuiWait, "Is this a container or VM you can throw away? Run the agents with IS_SANDBOX=1 [y/N]")
	r.keys("y", "Enter")
	var infos []proto.Info
	if !pollUntil(tuiWait, func() bool { infos = servers(t, project, env); return len(infos) == 1 }) {
		t.Fatalf("no server after yes:\n%s", r.joined())
	}
	environ, err := os.ReadFile("/proc/" + strconv.Itoa(infos[0].PID) + "/environ")
	if err != nil || !bytes.Contains(append([]byte{0}, environ...), []byte("\x00IS_SANDBOX=1\x00")) {
		t.Errorf("the server's environment (%v) lacks IS_SANDBOX=1", err)
	}
	if err := syscall.Kill(infos[0].PID, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if !pollUntil(tuiWait, func() bool { return len(servers(t, project, env)) == 0 }) {
		t.Fatal("the server still runs after SIGTERM")
	}
	r.waitExit(tuiWait)
	noLeftovers(t, project)
}
