// Command overhead measures the tokens Hivemind's own messages cost
// (issue 24, item 4): it runs the demo scenario's task (the scripted plan
// rejected once, one round of checkpoint issues) with real Claude Code,
// Codex and Gemini CLIs offline against the fake model APIs
// (internal/fakeapi), headless, once per team (-teams; by default two, so
// each CLI is a worker once), then charges every model request the fake
// API served to the Hivemind message whose turn it serves, and prints, per
// agent and for the team, the share of tokens spent on Hivemind's own
// messages.
//
// Attribution. A model request is charged to the [HIVEMIND] message its
// conversation's current turn started with (the fake API's Request.Line:
// the newest typed message before the run of tool calls; side calls such
// as title generation quote it too). Its tokens are what the fake API
// reported for it: input (the whole request, system prompt, tools and
// history — the fake reports no cache reads) plus output. So:
//
//   - work: turns of an assignment (the agent doing what it was asked);
//   - re-sends: turns of a message sent again for the same work (after a
//     crash, a stall, a refused trigger, a rate limit), as far as they pay
//     again for work its earlier attempts were paid for (a re-send of a
//     turn answered only with 429s, never paid, is the work itself);
//   - notices: turns of a read-only notice (information, no work);
//   - outside: requests in no [HIVEMIND] turn (the CLI's own start-up and
//     side calls).
//
// Re-sends and notices, so counted, are overhead: the goal is ≤ 5 % of
// each worker's tokens (exit 1 above -goal). "words" is a second, smaller figure: the tokens of the
// text of Hivemind's lines themselves (assignments, re-sends and notices)
// as they recur in the context of every later request (at the fake's
// 40 bytes a token); the assignment file an agent reads is not in it (the
// fake model reads it itself, not through a tool call).
//
// Usage: go run ./bench/overhead -hivemind ./hivemind (bench/overhead.sh,
// `make overhead`, builds the binary and puts the CLIs on PATH).
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/hivemind-dev/hivemind/engine/flow"
	"github.com/hivemind-dev/hivemind/internal/agenttest"
	"github.com/hivemind-dev/hivemind/internal/claudetest"
	"github.com/hivemind-dev/hivemind/internal/fakeapi"
	"github.com/hivemind-dev/hivemind/vocab"
	"github.com/hivemind-dev/hivemind/workspace"
)

// defaultTeams run each of the three CLIs as a worker (the demo's plan
// keeps two workers busy), and as Lead and Reviewer.
const defaultTeams = "lead=claude,reviewer=codex,worker_1=claude,worker_2=gemini;lead=gemini,reviewer=claude,worker_1=codex,worker_2=claude"

func main() {
	hm := flag.String("hivemind", "", "the hivemind binary (required)")
	teams := flag.String("teams", defaultTeams, "the teams to run, one after the other: hivemind --agent values separated by ;")
	workers := flag.Int("workers", 2, "workers (hivemind --workers)")
	task := flag.String("task", "add a greeting service", "the task text")
	deadline := flag.Duration("deadline", 10*time.Minute, "give up on a run after this long")
	goal := flag.Float64("goal", 5, "most re-sends + notices may cost, in % of a worker's tokens (exit 1 above)")
	keep := flag.Bool("keep", false, "keep each run's project and homes (printed)")
	limit := flag.String("limit", "", "AGENT:TURN: the fake answers AGENT's requests in turns whose line contains TURN with 429 for 5 s (a rate limit: the lost turn is sent again)")
	flag.Parse()
	if *hm == "" {
		fmt.Fprintln(os.Stderr, "overhead: -hivemind is required (bench/overhead.sh builds it)")
		os.Exit(2)
	}
	worst, who := 0.0, "none"
	start := time.Now()
	for _, team := range strings.Split(*teams, ";") {
		rep, err := run(*hm, strings.TrimSpace(team), *workers, *task, *deadline, *keep, *limit)
		if err != nil {
			fmt.Fprintln(os.Stderr, "overhead:", err)
			os.Exit(2)
		}
		if w, id := rep.worstWorker(); w >= worst {
			worst, who = w, id+" ("+cliOf(team, vocab.AgentID(id))+")"
		}
		fmt.Println()
	}
	fmt.Printf("re-sends + notices: at most %.1f %% of a worker's tokens (%s); goal ≤ %.0f %%: ", worst, who, *goal)
	if worst > *goal {
		fmt.Printf("ABOVE (%v)\n", time.Since(start).Round(time.Second))
		os.Exit(1)
	}
	fmt.Printf("ok (%v)\n", time.Since(start).Round(time.Second))
}

// run runs the task once with team and prints its report.
func run(hm, team string, workers int, task string, deadline time.Duration, keep bool, limit string) (report, error) {
	clis := map[string]bool{}
	for _, item := range strings.Split(team, ",") {
		_, cli, ok := strings.Cut(item, "=")
		if !ok {
			cli = item
		}
		clis[strings.TrimSpace(cli)] = true
	}
	for cli := range clis {
		if _, ok := agenttest.Binary(cli); !ok {
			return report{}, fmt.Errorf("%s is not on PATH (make real-agents installs the CLIs; bench/overhead.sh puts them on PATH)", cli)
		}
	}
	root, err := os.MkdirTemp("", "hivemind-overhead-")
	if err != nil {
		return report{}, err
	}
	cache, err := privateCache()
	if err != nil {
		return report{}, err
	}
	if keep {
		fmt.Printf("kept: %s %s\n", root, cache)
	} else {
		defer os.RemoveAll(root)
		defer os.RemoveAll(cache)
	}
	project, home := filepath.Join(root, "project"), filepath.Join(root, "home")
	if err := gitInit(project); err != nil {
		return report{}, err
	}
	sc := fakeapi.DefaultScript()
	args := []string{"--project", project, "--headless", "--agent", team, "--workers", fmt.Sprint(workers)}
	if limit != "" {
		agent, turn, ok := strings.Cut(limit, ":")
		if !ok || agent == "" || turn == "" {
			return report{}, fmt.Errorf("-limit %q: want AGENT:TURN (worker_1:Do subtask)", limit)
		}
		sc.Errors = []fakeapi.ErrorRule{{Agent: agent, Turn: turn, Status: 429, For: 5 * time.Second, RetryAfter: time.Second}}
		// The account's hold lasts 20 s (the default is minutes).
		cfg := filepath.Join(root, "config.toml")
		if err := os.WriteFile(cfg, []byte("rate_limit_cooldown_seconds = 20\n"), 0o644); err != nil {
			return report{}, err
		}
		args = append(args, "--config", cfg)
	}
	api := fakeapi.New(sc)
	defer api.Close()
	env, err := offlineEnv(home, project, cache, api.URL())
	if err != nil {
		return report{}, err
	}
	if limit != "" {
		env = append(env, "CLAUDE_CODE_MAX_RETRIES=1") // Claude gives up on the limit instead of retrying for minutes
	}

	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	cmd := exec.CommandContext(ctx, hm, append(args, task)...)
	cmd.Env, cmd.Dir = env, project
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err = cmd.Run()
	took := time.Since(start)
	if err != nil {
		return report{}, fmt.Errorf("hivemind %s (after %v): %v\n%s", strings.Join(cmd.Args[1:], " "), took.Round(time.Second), err, out.String())
	}
	dirs, _ := filepath.Glob(filepath.Join(project, ".hivemind", "tasks", "*", "task.json"))
	if len(dirs) != 1 {
		return report{}, errors.New("no task directory after the run")
	}
	taskDir := filepath.Dir(dirs[0])
	recs, _, err := workspace.ReadEvents(filepath.Join(taskDir, vocab.EventsFile))
	if err != nil {
		return report{}, err
	}
	rep := attribute(taskDir, recs, api.Requests())
	limited := ""
	if limit != "" {
		limited = " (429s for " + limit + ")"
	}
	fmt.Printf("hivemind --headless --agent %s --workers %d %q%s: complete in %v\n\n", team, workers, task, limited, took.Round(time.Second))
	rep.print(os.Stdout, team)
	return rep, nil
}

// Kinds of Hivemind messages, and of the requests charged to them.
const (
	kindWork    = "work"
	kindResend  = "re-sends"
	kindNotice  = "notices"
	kindOutside = "outside"
)

var kinds = []string{kindWork, kindResend, kindNotice, kindOutside}

// sent is one message the engine typed (an assignment_sent record).
type sent struct {
	agent vocab.AgentID
	seq   int
	line  string // the [HIVEMIND] line typed
	kind  string
	// tokens are those of the requests charged to it.
	tokens int
}

// sentMessages lists the messages of a run from its event records.
func sentMessages(taskDir string, recs []vocab.EventRecord) []sent {
	var out []sent
	for _, r := range recs {
		if r.Type != vocab.RecordAssignmentSent {
			continue
		}
		what, _ := r.Details["what"].(string)
		seq, _ := r.Details["seq"].(float64)
		m := sent{agent: r.Agent, seq: int(seq), kind: kindWork, line: flow.InjectText(what, flow.AssignmentFile(taskDir, r.Agent, int(seq)))}
		switch text, _ := r.Details["text"].(string); {
		case text != "":
			m.line, m.kind = text, kindNotice
		case strings.HasPrefix(what, "(re-sent) "):
			m.kind = kindResend
		}
		out = append(out, m)
	}
	return out
}

// agentRow is one agent's tokens by kind.
type agentRow struct {
	requests int
	tokens   map[string]int
	words    int // tokens of Hivemind's lines in the requests' context
}

func (r *agentRow) total() int {
	n := 0
	for _, v := range r.tokens {
		n += v
	}
	return n
}

// overhead is the share of re-send and notice turns, in %.
func (r *agentRow) overhead() float64 {
	if t := r.total(); t > 0 {
		return 100 * float64(r.tokens[kindResend]+r.tokens[kindNotice]) / float64(t)
	}
	return 0
}

type report struct {
	rows      map[vocab.AgentID]*agentRow
	sentCount map[string]int
	// unknown counts the model requests the fake API could not tie to an
	// agent (a conversation that never named an assignment file).
	unknown, unknownTokens int
}

// attribute charges every answered request to the message of its turn.
func attribute(taskDir string, recs []vocab.EventRecord, reqs []fakeapi.Request) report {
	msgs := sentMessages(taskDir, recs)
	rep := report{rows: map[vocab.AgentID]*agentRow{}, sentCount: map[string]int{}}
	for _, m := range msgs {
		rep.sentCount[m.kind]++
	}
	for _, r := range reqs {
		if r.Status != 200 || r.Kind == "count_tokens" || r.Kind == "other" {
			continue
		}
		if r.Agent == "" {
			rep.unknown++
			rep.unknownTokens += r.InputTokens + r.OutputTokens
			continue
		}
		id := vocab.AgentID(r.Agent)
		row := rep.rows[id]
		if row == nil {
			row = &agentRow{tokens: map[string]int{}}
			rep.rows[id] = row
		}
		row.requests++
		best := -1
		for i, m := range msgs {
			if m.agent != id {
				continue
			}
			if r.Line != "" && strings.Contains(r.Line, m.line) && (best < 0 || m.seq > msgs[best].seq) {
				best = i
			}
			row.words += bytes.Count(r.Body, jsonText(m.line)) * len(jsonText(m.line)) / 40
		}
		if best < 0 {
			row.tokens[kindOutside] += r.InputTokens + r.OutputTokens
		} else {
			msgs[best].tokens += r.InputTokens + r.OutputTokens
		}
	}
	// A re-send is overhead as far as it pays for work already paid for
	// (its earlier attempts' turns): a re-send of a turn that was never
	// paid (answered with 429s) is the work itself.
	paid := map[vocab.AgentID]int{} // the agent's current work, paid so far
	for _, m := range msgs {
		row := rep.rows[m.agent]
		if row == nil {
			continue
		}
		switch m.kind {
		case kindResend:
			over := min(m.tokens, paid[m.agent])
			row.tokens[kindResend] += over
			row.tokens[kindWork] += m.tokens - over
			paid[m.agent] += m.tokens
		case kindWork:
			row.tokens[kindWork] += m.tokens
			paid[m.agent] = m.tokens
		default:
			row.tokens[m.kind] += m.tokens
		}
	}
	return rep
}

// jsonText is s as it appears inside a JSON string.
func jsonText(s string) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return bytes.TrimSuffix(bytes.TrimPrefix(bytes.TrimSpace(b.Bytes()), []byte(`"`)), []byte(`"`))
}

func (rep report) print(w *os.File, team string) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "agent\tCLI\trequests\ttokens\twork\tre-sends\tnotices\toutside\tre-sends+notices\twords\t")
	ids := make([]vocab.AgentID, 0, len(rep.rows))
	for id := range rep.rows {
		ids = append(ids, id)
	}
	vocab.SortAgents(ids)
	all := &agentRow{tokens: map[string]int{}}
	for _, id := range ids {
		r := rep.rows[id]
		rep.line(tw, string(id), cliOf(team, id), r)
		all.requests += r.requests
		all.words += r.words
		for k, v := range r.tokens {
			all.tokens[k] += v
		}
	}
	rep.line(tw, "team", "", all)
	_ = tw.Flush()
	fmt.Fprintf(w, "\nmessages typed: %d assignments, %d re-sends, %d notices; requests of no known agent: %d (%d tokens)\n",
		rep.sentCount[kindWork], rep.sentCount[kindResend], rep.sentCount[kindNotice], rep.unknown, rep.unknownTokens)
	fmt.Fprintln(w, "tokens: input + output as the fake API served them (no cache reads), each request charged to the [HIVEMIND] message whose turn it serves;")
	fmt.Fprintln(w, "re-sends: as far as they pay again for work already paid for (the rest is work);")
	fmt.Fprintln(w, "words: tokens of Hivemind's own lines in the requests' context (40 bytes a token)")
}

func (rep report) line(tw *tabwriter.Writer, name, cli string, r *agentRow) {
	t := r.total()
	pct := func(n int) string {
		if t == 0 {
			return "-"
		}
		return fmt.Sprintf("%.1f %%", 100*float64(n)/float64(t))
	}
	fmt.Fprintf(tw, "%s\t%s\t%d\t%d", name, cli, r.requests, t)
	for _, k := range kinds {
		fmt.Fprintf(tw, "\t%d", r.tokens[k])
	}
	fmt.Fprintf(tw, "\t%s\t%s\t\n", pct(r.tokens[kindResend]+r.tokens[kindNotice]), pct(r.words))
}

// worstWorker is the highest re-send + notice share of a worker.
func (rep report) worstWorker() (float64, string) {
	worst, who := 0.0, "none"
	for id, r := range rep.rows {
		if vocab.RoleOf(id) == vocab.RoleWorker && r.overhead() >= worst {
			worst, who = r.overhead(), string(id)
		}
	}
	return worst, who
}

// cliOf names the CLI team runs agent id with.
func cliOf(team string, id vocab.AgentID) string {
	byName := map[string]string{}
	all := ""
	for _, item := range strings.Split(team, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(item), "=")
		if !ok {
			all = k
			continue
		}
		byName[k] = v
	}
	for _, k := range []string{string(id), string(vocab.RoleOf(id))} {
		if v := byName[k]; v != "" {
			return v
		}
	}
	return all
}

// offlineEnv prepares one home whose configuration points Claude Code,
// Codex and Gemini CLI at the fake API, and returns hivemind's
// environment (as e2e's SetupTeamOffline does).
func offlineEnv(home, project, cache, url string) ([]string, error) {
	if err := os.MkdirAll(home, 0o755); err != nil {
		return nil, err
	}
	if err := claudetest.WriteConfig(home, project); err != nil {
		return nil, err
	}
	codexHome := filepath.Join(home, "codex")
	if err := agenttest.WriteCodexHome(codexHome, url, []string{project}, nil); err != nil {
		return nil, err
	}
	if err := agenttest.WriteGeminiHome(home, []string{project}, nil); err != nil {
		return nil, err
	}
	return append(claudetest.Env(home, url), "XDG_CONFIG_HOME="+filepath.Join(home, ".config"),
		"CODEX_HOME="+codexHome, agenttest.CodexKeyEnv+"="+agenttest.APIKey,
		"GEMINI_API_KEY="+agenttest.APIKey, "GOOGLE_GEMINI_BASE_URL="+strings.TrimSuffix(url, "/"),
		// Gemini CLI ignores a settings file below a directory others may
		// write: Hivemind keeps it in the cache directory, private here.
		"XDG_CACHE_HOME="+cache), nil
}

// privateCache is a new directory below the user's ~/.cache.
func privateCache() (string, error) {
	home, err := os.UserHomeDir()
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(filepath.Join(home, ".cache"), 0o700); err != nil {
		return "", err
	}
	return os.MkdirTemp(filepath.Join(home, ".cache"), "hivemind-overhead-")
}

// gitInit makes dir a git repository with one commit (go.mod).
func gitInit(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/demo\n\ngo 1.26\n"), 0o644); err != nil {
		return err
	}
	for _, args := range [][]string{
		{"init", "-q"},
		{"add", "go.mod"},
		{"-c", "user.name=Hivemind Bench", "-c", "user.email=bench@example.com", "commit", "-q", "-m", "initial commit"},
	} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir)
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("git %v: %v\n%s", args, err, out)
		}
	}
	return nil
}
