package tui

import (
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/hivemind-dev/hivemind/vocab"
)

// bindingsOf lists the bindings of a key map by field name, nested maps
// (a Scroll map) included. Any other kind of field fails the test: a key
// map holds bindings only.
func bindingsOf(t *testing.T, km any) map[string]key.Binding {
	t.Helper()
	out := map[string]key.Binding{}
	var walk func(prefix string, v reflect.Value)
	walk = func(prefix string, v reflect.Value) {
		for i := range v.NumField() {
			f, fv := v.Type().Field(i), v.Field(i)
			switch {
			case f.Type == reflect.TypeFor[key.Binding]():
				out[prefix+f.Name] = fv.Interface().(key.Binding)
			case f.Type.Kind() == reflect.Struct && f.IsExported():
				walk(prefix+f.Name+".", fv)
			default:
				t.Errorf("%T.%s%s is a %v, not a key.Binding", km, prefix, f.Name, f.Type)
			}
		}
	}
	walk("", reflect.ValueOf(km))
	return out
}

// namedKeys are the key names bubbletea gives the keys the key maps use
// that are not one character.
var namedKeys = map[string]rune{
	"enter": tea.KeyEnter, "tab": tea.KeyTab, "esc": tea.KeyEscape, "backspace": tea.KeyBackspace,
	"space": tea.KeySpace, "up": tea.KeyUp, "down": tea.KeyDown, "left": tea.KeyLeft, "right": tea.KeyRight,
	"pgup": tea.KeyPgUp, "pgdown": tea.KeyPgDown, "home": tea.KeyHome, "end": tea.KeyEnd,
	"f1": tea.KeyF1, "f12": tea.KeyF12,
}

// pressOf is the key press bubbletea delivers for a key name, and fails
// when its name is not name: a binding whose key bubbletea never names
// so (a typo, "pgdn") would never match.
func pressOf(t testing.TB, name string) tea.KeyPressMsg {
	t.Helper()
	var k tea.KeyPressMsg
	switch base, mod := name, tea.KeyMod(0); {
	case strings.HasPrefix(name, "ctrl+") && utf8.RuneCountInString(name) == 6:
		r, _ := utf8.DecodeLastRuneInString(name)
		k = tea.KeyPressMsg{Code: r, Mod: tea.ModCtrl}
	default:
		if b, ok := strings.CutPrefix(name, "shift+"); ok {
			base, mod = b, tea.ModShift
		}
		if code, ok := namedKeys[base]; ok {
			k = tea.KeyPressMsg{Code: code, Mod: mod}
			if code == tea.KeySpace {
				k.Text = " "
			}
		} else if utf8.RuneCountInString(name) == 1 {
			k = keyMsg(name)
		}
	}
	if k.String() != name {
		t.Fatalf("key %q: no key press bubbletea names so (built %q)", name, k.String())
	}
	return k
}

// Every key of every screen is a key.Binding of the screen's key map,
// named as bubbletea names keys, and the help that screen offers lists
// it.
func TestEveryScreenKeyIsInItsHelp(t *testing.T) {
	m := New(Options{FPS: 30, Launcher: newFakeLauncher(), Diff: func(string) (string, error) { return "", nil }, Remote: &Remote{}})
	for s := range numScreens {
		km := m.keyMapOf(s)
		if km == nil {
			t.Errorf("screen %v has no key map", s)
			continue
		}
		listed := map[helpEntry]bool{}
		for _, sec := range m.helpOf(s) {
			for _, e := range sec.entries {
				listed[e] = true
			}
		}
		bs := bindingsOf(t, km)
		if len(bs) == 0 {
			t.Errorf("screen %v: empty key map %T", s, km)
		}
		for name, b := range bs {
			h := b.Help()
			switch {
			case len(b.Keys()) == 0:
				t.Errorf("%v: %s has no key", s, name)
			case h.Key == "" || h.Desc == "":
				t.Errorf("%v: %s (%q) has no help", s, name, b.Keys())
			case !listed[helpEntry{h.Key, h.Desc}]:
				t.Errorf("%v: %s (%s %s) is not in the screen's help", s, name, h.Key, h.Desc)
			}
			for _, k := range b.Keys() {
				pressOf(t, k)
			}
		}
	}
}

// driver is a model on one screen: run-view screens on a harness,
// front-door screens on a front harness (whose commands run and settle).
type driver struct {
	h  *harness
	fh *frontHarness
}

// seen is everything a key can change that the user or the outside sees:
// the screen, and the engine's and launcher's calls.
func (d driver) seen() string {
	s := d.h.plain() + "\n" + strings.Join(d.h.eng.got(), ",")
	if d.fh != nil {
		d.fh.l.mu.Lock()
		s += "\n" + strings.Join(d.fh.l.calls, ",")
		d.fh.l.mu.Unlock()
	}
	return s
}

// press presses k and reports whether it did anything: changed what is
// seen, or returned a command (quit, copy, search, a launcher call).
func (d driver) press(t *testing.T, k string) bool {
	t.Helper()
	before := d.seen()
	cmd := d.h.send(pressOf(t, k))
	if d.fh != nil {
		d.fh.run(cmd)
	}
	return cmd != nil || d.seen() != before
}

// screenSetup puts a fresh model on a screen; before, by binding name,
// gets it into the state where that binding acts (something to scroll
// back to, a query to erase…).
type screenSetup struct {
	setup  func(t *testing.T) driver
	before map[string]func(d driver)
}

func runDriver(t *testing.T) driver {
	h := newHarness(t, 4, 120, 40)
	h.m.run.opts.Diff = func(string) (string, error) { return "", nil }
	return driver{h: h}
}

// pressing is a setup step that presses ks (and settles the front door).
func pressing(ks ...string) func(d driver) {
	return func(d driver) {
		for _, k := range ks {
			cmd := d.h.send(pressOf(d.h.t, k))
			if d.fh != nil {
				d.fh.run(cmd)
			}
			d.h.view() // as a program renders after each key (help learns how far it scrolls)
		}
	}
}

func screenSetups() map[screenID]screenSetup {
	on := func(ks ...string) func(t *testing.T) driver {
		return func(t *testing.T) driver { d := runDriver(t); pressing(ks...)(d); return d }
	}
	diff := func(t *testing.T) driver {
		d := runDriver(t)
		d.h.m.run.opts.Diff = func(string) (string, error) { return strings.Repeat("+ a line\n", 200), nil }
		d.h.key("3") // worker_1
		msgs := msgsOfNow(d.h.key("d"))
		for _, msg := range msgs {
			d.h.send(msg)
		}
		return d
	}
	plan := func(t *testing.T) driver {
		h := newHarness(t, 4, 80, 14)
		h.send(SnapshotMsg{State: gateState()})
		return driver{h: h}
	}
	front := func(t *testing.T) driver {
		l := newFakeLauncher()
		past := testPastTasks()
		l.projects[testProject] = Project{Dir: testProject, Git: true, Unfinished: &past[0], Tasks: past}
		fh := newFrontHarnessWith(t, l, Options{Agents: []AgentChoice{{Name: "claude"}, {Name: "codex"}}}, 120, 40)
		return driver{h: fh.harness, fh: fh}
	}
	focus := func(f startFocus, more ...string) func(d driver) {
		return func(d driver) {
			d.fh.run(d.fh.m.fd.start.setFocus(f))
			pressing(more...)(d)
		}
	}
	live := func(t *testing.T) driver {
		fh := liveHarness(t)
		fh.phase(vocab.PhaseError)
		fh.send(tea.WindowSizeMsg{Width: 120, Height: 14}) // the summary scrolls
		return driver{h: fh.harness, fh: fh}
	}
	return map[screenID]screenSetup{
		screenRun: {setup: on(), before: map[string]func(driver){
			"Leave": func(d driver) { // D is a server's client's key
				d.h.m.run.opts.Remote = &Remote{Stop: func() {}}
				d.h.m.run.keys.Leave.SetEnabled(true)
			},
		}},
		screenAttached: {setup: on("enter")},
		screenConfirm: {setup: on("c"), before: map[string]func(driver){
			"QuitNow": pressing("esc", "q"), // ctrl+c answers only "quit?"
		}},
		screenDraft: {setup: func(t *testing.T) driver {
			h, _ := draftHarness(t, 120, 40)
			pressing("4", "enter", "ctrl+]")(driver{h: h})
			return driver{h: h}
		}},
		screenSearch: {setup: on("/"), before: map[string]func(driver){
			"Erase": pressing("x"), "Run": pressing("x"),
		}},
		screenHelp: {setup: func(t *testing.T) driver {
			d := driver{h: newHarness(t, 4, 80, 24)}
			pressing("?")(d)
			return d
		}, before: map[string]func(driver){"Up": pressing("pgdown"), "PageUp": pressing("pgdown")}},
		screenDiff: {setup: diff, before: map[string]func(driver){
			"Scroll.Up": pressing("pgdown"), "Scroll.PageUp": pressing("pgdown"), "Scroll.Top": pressing("pgdown"),
		}},
		screenPlan: {setup: plan, before: map[string]func(driver){
			"Scroll.Up": pressing("pgdown"), "Scroll.PageUp": pressing("pgdown"), "Scroll.Top": pressing("pgdown"),
		}},
		screenFeedback: {setup: func(t *testing.T) driver { d := plan(t); d.h.key("f"); return d }},
		screenLeave: {setup: func(t *testing.T) driver {
			d := runDriver(t)
			d.h.m.run.opts.Remote = &Remote{Stop: func() {}}
			d.h.m.run.keys.Leave.SetEnabled(true)
			pressing("q")(d)
			return d
		}},
		screenStart: {setup: front, before: map[string]func(driver){
			"Submit": focus(focusTask), "NextField": focus(focusTask), "PrevField": focus(focusTask),
			"Menu": focus(focusTask), "FieldHelp": focus(focusTask),
			"SlotLeft": focus(focusTeam), "SlotRight": focus(focusTeam), "PickUp": focus(focusTeam), "PickDown": focus(focusTeam),
			"MoreWorkers": focus(focusTeam), "FewerWorkers": focus(focusTeam, "+"),
			"AllRoles": focus(focusTeam, "up"), "PlanBy": focus(focusTeam), "Each": focus(focusTeam, "right", "right"),
			"Up":        focus(focusList, "down"),
			"CloseHelp": focus(focusList, "?"),
		}},
		screenPicker: {setup: func(t *testing.T) driver {
			fh := newFrontHarnessAt(t, newFakeLauncher(), "testdata/pickerproj", 100, 24)
			d := driver{h: fh.harness, fh: fh}
			pressing("ctrl+o")(d)
			fh.waitFor("the picker to list the folders", func() bool { return strings.Contains(fh.plain(), "docs") })
			return d
		}, before: map[string]func(driver){"Up": pressing("down")}},
		screenSummary: {setup: live, before: map[string]func(driver){
			"Back": func(d driver) { // a past task's summary: back to the start screen
				d.fh.l.mu.Lock()
				d.fh.l.projects[testProject] = Project{Dir: testProject, Git: true, Tasks: testPastTasks()}
				d.fh.l.mu.Unlock()
				d.fh.run(d.fh.endSessionNow())
				d.fh.run(d.fh.m.fd.start.setFocus(focusList))
				pressing("enter")(d)
			},
			"ScrollUp": pressing("pgdown"), "PageUp": pressing("pgdown"), "CloseHelp": pressing("?"),
		}},
	}
}

// endSessionNow leaves the live task for the start screen.
func (h *frontHarness) endSessionNow() tea.Cmd { return h.m.apply(h.m.fd.end()) }

// msgsOfNow runs cmd's leaves that answer at once (a diff load), leaving
// out those that wait (timers, screen changes).
func msgsOfNow(cmd tea.Cmd) []tea.Msg {
	var out []tea.Msg
	var run func(c tea.Cmd)
	run = func(c tea.Cmd) {
		if c == nil {
			return
		}
		done := make(chan tea.Msg, 1)
		go func() { done <- c() }()
		select {
		case msg := <-done:
			if b, ok := msg.(tea.BatchMsg); ok {
				for _, c := range b {
					run(c)
				}
				return
			}
			out = append(out, msg)
		case <-time.After(2 * time.Second):
		}
	}
	run(cmd)
	return out
}

// Every key of every screen does something on that screen: it changes
// what the user sees, calls the engine or the launcher, or returns a
// command. A key no handler matches (f12) does none of these, on every
// screen, which is what makes the check able to fail.
func TestEveryScreenKeyActs(t *testing.T) {
	setups := screenSetups()
	for s := range numScreens {
		st, ok := setups[s]
		if !ok {
			t.Errorf("screen %v: no setup drives its keys", s)
			continue
		}
		t.Run(s.String(), func(t *testing.T) {
			fresh := func(name string) driver {
				d := st.setup(t)
				if f := st.before[name]; f != nil {
					f(d)
				}
				if got := d.h.m.screen(); got != s {
					t.Fatalf("setup for %s: on screen %v, want %v\n%s", name, got, s, d.h.plain())
				}
				return d
			}
			if s != screenAttached && s != screenSearch && s != screenFeedback {
				// (there, f12 goes to the agent or the input)
				if fresh("").press(t, "f12") {
					t.Fatalf("f12, bound to nothing, did something on %v", s)
				}
			}
			for name, b := range bindingsOf(t, fresh("").h.m.keyMapOf(s)) {
				for _, k := range b.Keys() {
					if !fresh(name).press(t, k) {
						t.Errorf("%v: %s (%s) did nothing", s, name, k)
					}
				}
			}
			for name := range st.before {
				if _, ok := bindingsOf(t, fresh("").h.m.keyMapOf(s))[name]; !ok {
					t.Errorf("%v: setup for %s, which is no binding", s, name)
				}
			}
		})
	}
}

// When layers are up together, the one Model.screen names takes the keys,
// and a key the layers below also bind acts on it alone.
func TestScreenPrecedence(t *testing.T) {
	t.Run("help over a diff scrolls the help", func(t *testing.T) {
		d := screenSetups()[screenDiff].setup(t)
		pressing("?")(d)
		d.h.send(tea.WindowSizeMsg{Width: 80, Height: 24}) // the help scrolls here
		d.h.view()
		pressing("j")(d)
		if d.h.m.screen() != screenHelp || d.h.m.run.help.scroll != 1 || d.h.m.run.diff.scroll != 0 {
			t.Fatalf("screen %v, help scroll %d, diff scroll %d", d.h.m.screen(), d.h.m.run.help.scroll, d.h.m.run.diff.scroll)
		}
		pressing("esc", "j")(d) // help closed: the diff has the keys again
		if d.h.m.screen() != screenDiff || d.h.m.run.diff.scroll != 1 {
			t.Fatalf("after esc: screen %v, diff scroll %d", d.h.m.screen(), d.h.m.run.diff.scroll)
		}
	})
	t.Run("the search prompt over the plan gate takes a as text", func(t *testing.T) {
		d := screenSetups()[screenPlan].setup(t)
		pressing("o", "/", "a")(d) // the panes, a search, then a
		if d.h.m.screen() != screenSearch || d.h.m.run.find.query != "a" || len(d.h.eng.got()) != 0 {
			t.Fatalf("screen %v, query %q, engine %q", d.h.m.screen(), d.h.m.run.find.query, d.h.eng.got())
		}
	})
	t.Run("the feedback input takes ? and q as text", func(t *testing.T) {
		d := screenSetups()[screenFeedback].setup(t)
		pressing("?", "q")(d)
		if d.h.m.screen() != screenFeedback || d.h.m.run.gate.input.Value() != "?q" || d.h.m.run.help.show {
			t.Fatalf("screen %v, input %q, help %v", d.h.m.screen(), d.h.m.run.gate.input.Value(), d.h.m.run.help.show)
		}
	})
	t.Run("a question asked from the help answers n, not the help", func(t *testing.T) {
		d := runDriver(t)
		pressing("?", "c")(d) // c passes through the help: cancel asks
		if d.h.m.screen() != screenConfirm {
			t.Fatalf("screen %v after ? c", d.h.m.screen())
		}
		pressing("n")(d)
		if d.h.m.screen() != screenHelp || d.h.m.run.confirm != confirmNone {
			t.Fatalf("after n: screen %v, confirm %v", d.h.m.screen(), d.h.m.run.confirm)
		}
	})
	t.Run("at the plan gate under the knowledge panel, a says how to decide", func(t *testing.T) {
		d := screenSetups()[screenPlan].setup(t)
		pressing("x", "a")(d)
		if d.h.m.screen() != screenRun || !strings.Contains(d.h.m.run.notice.text, "x closes the knowledge panel") {
			t.Fatalf("screen %v, notice %q", d.h.m.screen(), d.h.m.run.notice.text)
		}
		pressing("x", "a")(d)
		if d.h.m.run.gate.sent != "sending" {
			t.Fatalf("panel closed, a: sent %q", d.h.m.run.gate.sent)
		}
	})
	t.Run("attached, ? goes to the agent", func(t *testing.T) {
		d := screenSetups()[screenAttached].setup(t)
		pressing("?", "q")(d)
		if d.h.m.screen() != screenAttached || d.h.m.run.help.show {
			t.Fatalf("screen %v, help %v", d.h.m.screen(), d.h.m.run.help.show)
		}
	})
}

// The screens with a sub-model (the run view; help, diff, plan gate,
// search over its panes; folder picker, summary, start screen) keep their
// state in it, updated by its own update: the parents that route to them
// (Model between the front door and the run view, the front door among
// its screens, the run view among its layers) hold each in one field and
// no widget of a screen (a text field, the file picker), and their other
// fields are the run view's and the routing's, listed here: a field added
// to a parent must be added to this list, or go into its screen's
// sub-model.
func TestParentsHoldNoScreenState(t *testing.T) {
	subModels := []reflect.Type{reflect.TypeFor[runView](), reflect.TypeFor[helpView](), reflect.TypeFor[diffView](), reflect.TypeFor[planGate](),
		reflect.TypeFor[search](), reflect.TypeFor[folderPicker](), reflect.TypeFor[summaryView](), reflect.TypeFor[startScreen]()}
	own := map[reflect.Type][]string{
		reflect.TypeFor[Model](): {"width", "height", "fd", "frames"},
		reflect.TypeFor[runView](): {"opts", "interval", "slow", "keys", "km", "spin", "prog", "width", "height",
			"st", "haveState", "events", "health", "agents", "focusID", "zoom", "attached", "showEvents", "cx",
			"confirm", "draftOf", "notice", "scroll", "detail", "digits", "sel", "lay", "bannerNow", "checkout",
			"draftRung", "lastFrame", "lastSlow", "timerDue", "waiting", "frameTimer", "clockOn", "clockGen",
			"spinning", "r", "input", "life"},
		reflect.TypeFor[frontDoor](): {"on", "mode", "sess", "seen", "launcher", "configHuman"},
	}
	widgets := []string{"charm.land/bubbles/v2/textarea", "charm.land/bubbles/v2/textinput",
		"charm.land/bubbles/v2/filepicker", "charm.land/bubbles/v2/viewport"}
	held := map[reflect.Type]int{}
	for parent, names := range own {
		for i := range parent.NumField() {
			f := parent.Field(i)
			switch {
			case slices.Contains(subModels, f.Type):
				held[f.Type]++
			case slices.Contains(widgets, f.Type.PkgPath()):
				t.Errorf("%v.%s is a %v, a screen's widget: it belongs in the screen's sub-model", parent, f.Name, f.Type)
			case !slices.Contains(names, f.Name):
				t.Errorf("%v.%s (%v) is new: a screen's state goes in its sub-model; the run view's is listed in this test", parent, f.Name, f.Type)
			}
		}
	}
	for _, s := range subModels {
		want := 1
		if s == reflect.TypeFor[helpView]() {
			want = 2 // the run view's help overlay, and the front door's help screen
		}
		if held[s] != want {
			t.Errorf("%v is held by %d fields of the parents, want %d", s, held[s], want)
		}
	}
}
