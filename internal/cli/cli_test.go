package cli

import (
	"flag"
	"os"
	"reflect"
	"regexp"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/hivemind-dev/hivemind/internal/app"
	"github.com/hivemind-dev/hivemind/internal/config"
)

func TestParseFlags(t *testing.T) {
	for _, tc := range []struct {
		name    string
		args    []string
		want    options
		wantErr string
	}{
		{name: "task then flags", args: []string{"build it", "--headless", "--workers", "3"},
			want: options{Options: app.Options{Workers: 3, WorkersSet: true}, headless: true, dashAt: -1, args: []string{"build it"}}},
		{name: "flags then task", args: []string{"--agent", "sim", "--project", "/p", "--json", "do x"},
			want: options{Options: app.Options{Workers: 2, Agent: "sim", AgentSet: true, Project: "/p", JSON: true}, dashAt: -1, args: []string{"do x"}}},
		{name: "sub-command with flags", args: []string{"events", "--follow", "--json"},
			want: options{Options: app.Options{Workers: 2, JSON: true}, follow: true, dashAt: -1, args: []string{"events"}}},
		{name: "dash dash keeps flags as text", args: []string{"--headless", "--", "--not-a-flag", "x"},
			want: options{Options: app.Options{Workers: 2}, headless: true, dashAt: 0, args: []string{"--not-a-flag", "x"}}},
		{name: "words before dash dash", args: []string{"fix", "--", "it"},
			want: options{Options: app.Options{Workers: 2}, dashAt: 1, args: []string{"fix", "it"}}},
		{name: "resume", args: []string{"--resume", "--headless"},
			want: options{Options: app.Options{Workers: 2, Resume: true}, headless: true, dashAt: -1}},
		{name: "help", args: []string{"status", "--help"},
			want: options{Options: app.Options{Workers: 2}, help: true, dashAt: -1, args: []string{"status"}}},
		{name: "short help", args: []string{"-h"}, want: options{Options: app.Options{Workers: 2}, help: true, dashAt: -1}},
		{name: "32 workers", args: []string{"--workers", "32"}, want: options{Options: app.Options{Workers: 32, WorkersSet: true}, dashAt: -1}},
		{name: "bad workers", args: []string{"--workers", "0", "x"}, wantErr: "--workers must be between 1 and 32, got 0"},
		{name: "too many workers", args: []string{"--workers", "33"}, wantErr: "--workers must be between 1 and 32, got 33"},
		{name: "unknown flag", args: []string{"--nope"}, wantErr: "unknown flag --nope"},
		{name: "unknown flag near a known one", args: []string{"-worker", "3"}, wantErr: "unknown flag --worker (did you mean --workers?)"},
		{name: "bad value", args: []string{"--workers", "x"}, wantErr: `invalid value "x" for flag --workers`},
		{name: "missing value", args: []string{"--project"}, wantErr: "flag needs an argument: --project"},
		{name: "retry resumes", args: []string{"--retry", "--headless"},
			want: options{Options: app.Options{Workers: 2, Resume: true, Retry: true}, headless: true, dashAt: -1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseFlags(tc.args)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr && !strings.HasPrefix(err.Error(), tc.wantErr) {
					t.Fatalf("err %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got.args, tc.want.args) {
				t.Errorf("args %q, want %q", got.args, tc.want.args)
			}
			got.args, tc.want.args = nil, nil
			got.set = nil
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

// The flag's workers limit is the one config files have.
func TestWorkersLimitMatchesConfig(t *testing.T) {
	for _, n := range []int{config.MinWorkers - 1, config.MinWorkers, config.MaxWorkers, config.MaxWorkers + 1} {
		_, _, cfgErr := config.Load(t.TempDir(), t.TempDir(), config.Overrides{Workers: &n})
		_, flagErr := parseFlags([]string{"--workers", strconv.Itoa(n)})
		if (cfgErr == nil) != (flagErr == nil) {
			t.Errorf("%d workers: config says %v, the flag says %v", n, cfgErr, flagErr)
		}
	}
}

func TestTaskText(t *testing.T) {
	for _, tc := range []struct {
		name   string
		words  []string
		dashAt int
		task   string
		err    string // substring; "" means a task (or none)
	}{
		{name: "nothing", words: nil, dashAt: -1, task: ""},
		{name: "quoted task", words: []string{"add rate limiting to login"}, dashAt: -1, task: "add rate limiting to login"},
		{name: "several words", words: []string{"fix", "the", "login", "bug"}, dashAt: -1, task: "fix the login bug"},
		{name: "typo of status", words: []string{"stauts"}, dashAt: -1, err: `unknown command "stauts": did you mean "hivemind status"?`},
		{name: "typo of events", words: []string{"event"}, dashAt: -1, err: `did you mean "hivemind events"?`},
		{name: "typo of doctor", words: []string{"docter"}, dashAt: -1, err: `did you mean "hivemind doctor"?`},
		{name: "single word", words: []string{"refactor"}, dashAt: -1, err: `"refactor" is not a command, and a task needs more than one word`},
		{name: "single word after dash dash", words: []string{"refactor"}, dashAt: 0, task: "refactor"},
		{name: "typo with words", words: []string{"dif", "worker_1"}, dashAt: -1, err: `did you mean "hivemind diff"?`},
		{name: "typo with words after dash dash", words: []string{"dif", "worker_1"}, dashAt: 0, task: "dif worker_1"},
		{name: "typo-like word quoted with the rest", words: []string{"tasks to do now"}, dashAt: -1, task: "tasks to do now"},
		{name: "common first words are tasks", words: []string{"fix", "add", "test"}, dashAt: -1, task: "fix add test"},
		{name: "two-letter first word", words: []string{"do", "it"}, dashAt: -1, task: "do it"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			task, err := taskText(tc.words, tc.dashAt)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("task %q, err %v; want error ~%q", task, err, tc.err)
				}
				if !strings.Contains(err.Error(), "--") {
					t.Errorf("the error does not say how to start a task: %v", err)
				}
				return
			}
			if err != nil || task != tc.task {
				t.Fatalf("task %q, err %v; want %q", task, err, tc.task)
			}
		})
	}
}

func TestSuggest(t *testing.T) {
	for _, tc := range []struct {
		in   string
		max  int
		want string
	}{
		{"stauts", 2, "status"}, {"STATUS", 2, "status"}, {"sttaus", 1, "status"}, {"dmeo", 1, "demo"},
		{"confg", 1, "config"}, {"tsks", 1, "tasks"}, {"refactor", 2, ""}, {"fix", 1, ""}, {"xyz", 2, ""},
	} {
		if got := suggest(tc.in, commands, tc.max); got != tc.want {
			t.Errorf("suggest(%q, %d) = %q, want %q", tc.in, tc.max, got, tc.want)
		}
	}
}

// Help goes to stdout with every flag spelled --flag; errors are one line
// plus a hint, on stderr, exit 2; a typo creates nothing.
func TestRunHelpAndErrors(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	for _, args := range [][]string{{"--help"}, {"-h"}, {"help"}, {"status", "--help"}} {
		var out, errOut strings.Builder
		if code := Run(args, strings.NewReader(""), &out, &errOut); code != app.ExitOK || errOut.Len() != 0 {
			t.Fatalf("%q: exit %d, stderr %q", args, code, errOut.String())
		}
		help := out.String()
		for _, want := range []string{"hivemind doctor", "--workers n", "--agent profile", "--no-preflight", "--resume", "1–32"} {
			if !strings.Contains(help, want) {
				t.Errorf("%q: help lacks %q:\n%s", args, want, help)
			}
		}
		if regexp.MustCompile(`(?m)^\s+-[a-z]`).MatchString(help) || strings.Contains(help, "Flags:\n\n") {
			t.Errorf("%q: a flag spelled -flag, or an empty Flags section:\n%s", args, help)
		}
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--nope"}, "hivemind: unknown flag --nope\nRun hivemind --help for usage.\n"},
		{[]string{"stauts"}, `hivemind: unknown command "stauts": did you mean "hivemind status"?`},
		{[]string{"stauts", "--json"}, `hivemind: unknown command "stauts": did you mean "hivemind status"?`},
		{[]string{"word"}, `hivemind: "word" is not a command`},
	} {
		var out, errOut strings.Builder
		if code := Run(tc.args, strings.NewReader(""), &out, &errOut); code != app.ExitUsage {
			t.Errorf("%q: exit %d, want %d", tc.args, code, app.ExitUsage)
		}
		if !strings.HasPrefix(errOut.String(), tc.want) || out.Len() != 0 {
			t.Errorf("%q: stdout %q, stderr %q; want stderr starting %q", tc.args, out.String(), errOut.String(), tc.want)
		}
		if n := strings.Count(errOut.String(), "\n"); n > 3 {
			t.Errorf("%q: %d lines of error", tc.args, n)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("the errors created %v", entries)
	}
}

// README's Usage block lists every command and every flag of the binary,
// and nothing else: the two cannot drift apart.
func TestReadmeUsageMatchesCLI(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(b), "\n## Usage\n")
	if !ok {
		t.Fatal("README has no ## Usage section")
	}
	_, block, ok := strings.Cut(rest, "```\n")
	block, _, ok2 := strings.Cut(block, "```")
	if !ok || !ok2 {
		t.Fatal("README's Usage section has no code block")
	}
	var o options
	fs := newFlagSet(&o)
	flags := map[string]bool{}
	fs.VisitAll(func(f *flag.Flag) {
		if _, short := shortFlags[f.Name]; !short {
			flags[f.Name] = true
		}
	})
	for name := range flags {
		if !regexp.MustCompile(`(^|[\s\[(])--` + regexp.QuoteMeta(name) + `\b`).MatchString(block) {
			t.Errorf("README's Usage does not list --%s", name)
		}
	}
	for _, m := range regexp.MustCompile(`--([a-z][a-z-]*)`).FindAllStringSubmatch(block, -1) {
		if !flags[m[1]] {
			t.Errorf("README's Usage lists --%s, which hivemind does not have", m[1])
		}
	}
	for short := range shortFlags {
		if !strings.Contains(block, "-"+short+" ") && !strings.Contains(block, "-"+short+")") && !strings.Contains(block, "-"+short+",") {
			t.Errorf("README's Usage does not mention -%s", short)
		}
	}
	listed := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^hivemind ([a-z][a-z-]*)`).FindAllStringSubmatch(block, -1) {
		listed[m[1]] = true
		if !slices.Contains(commands, m[1]) {
			t.Errorf("README's Usage lists hivemind %s, which is not a command", m[1])
		}
	}
	for _, c := range commands {
		if !listed[c] {
			t.Errorf("README's Usage does not list hivemind %s", c)
		}
	}
}

// -w is --workers; --version and version print the version; extra words
// after a command, and a flag of another command, are usage errors.
func TestCommandLineHabits(t *testing.T) {
	o, err := parseFlags([]string{"-w", "3", "build", "it"})
	if err != nil || o.Workers != 3 || !o.WorkersSet {
		t.Fatalf("-w 3: workers %d set %v, err %v", o.Workers, o.WorkersSet, err)
	}
	if _, err := parseFlags([]string{"-x", "3"}); err == nil || strings.Contains(err.Error(), "--h?") || strings.Contains(err.Error(), "--w?") {
		t.Errorf("-x: %v (a suggestion must be a long flag)", err)
	}
	dir := t.TempDir()
	t.Chdir(dir)
	for _, args := range [][]string{{"--version"}, {"version"}, {"-version"}} {
		var out, errOut strings.Builder
		if code := Run(args, strings.NewReader(""), &out, &errOut); code != app.ExitOK || errOut.Len() != 0 ||
			!regexp.MustCompile(`^hivemind \S.*\n$`).MatchString(out.String()) {
			t.Errorf("%q: exit %d, stdout %q, stderr %q", args, code, out.String(), errOut.String())
		}
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"status", "now"}, `hivemind status takes no arguments: unexpected "now"`},
		{[]string{"demo", "fast", "please"}, `hivemind demo takes no arguments: unexpected "fast please"`},
		{[]string{"tasks", "--json", "all"}, `hivemind tasks takes no arguments: unexpected "all"`},
		{[]string{"diff", "worker_1", "worker_2"}, `hivemind diff takes at most 1: unexpected "worker_2"`},
		{[]string{"version", "x"}, `hivemind version takes no arguments`},
		{[]string{"--verbose"}, "--verbose is a flag of hivemind events only"},
		{[]string{"--follow", "status"}, "--follow is a flag of hivemind events only"},
		{[]string{"context", "rm"}, "hivemind context [--json] | hivemind context rm ID"},
	} {
		var out, errOut strings.Builder
		if code := Run(tc.args, strings.NewReader(""), &out, &errOut); code != app.ExitUsage {
			t.Errorf("%q: exit %d, want %d (stderr %q)", tc.args, code, app.ExitUsage, errOut.String())
		}
		if !strings.Contains(errOut.String(), tc.want) || out.Len() != 0 {
			t.Errorf("%q: stdout %q, stderr %q; want stderr with %q", tc.args, out.String(), errOut.String(), tc.want)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("the errors created %v", entries)
	}
}

func TestBuildVersion(t *testing.T) {
	info := func(bi *debug.BuildInfo) func() (*debug.BuildInfo, bool) {
		return func() (*debug.BuildInfo, bool) { return bi, bi != nil }
	}
	vcs := []debug.BuildSetting{{Key: "vcs.revision", Value: "99f407f0123456789abcdef"}, {Key: "vcs.time", Value: "2026-11-27T10:00:00Z"}, {Key: "vcs.modified", Value: "true"}}
	for _, tc := range []struct {
		name, set string
		bi        *debug.BuildInfo
		want      string
	}{
		{"ldflags win", "v1.2.3", &debug.BuildInfo{Main: debug.Module{Version: "v0.9.0"}}, "v1.2.3"},
		{"module version", "", &debug.BuildInfo{Main: debug.Module{Version: "v0.9.0"}}, "v0.9.0"},
		{"a checkout", "", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: vcs}, "devel (commit 99f407f01234+dirty, 2026-11-27T10:00:00Z)"},
		{"nothing known", "", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, "devel (built without version information)"},
		{"no build info", "", nil, "devel (built without version information)"},
	} {
		if got := buildVersion(tc.set, info(tc.bi)); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}
