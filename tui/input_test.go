package tui

import (
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/hivemind-dev/hivemind/ptyagent/screen"
)

func TestEncodeKey(t *testing.T) {
	cases := []struct {
		name string
		k    tea.Key
		app  bool
		want string
	}{
		{"text", tea.Key{Code: 'a', Text: "a"}, false, "a"},
		{"shifted text", tea.Key{Code: 'a', ShiftedCode: 'A', Mod: tea.ModShift, Text: "A"}, false, "A"},
		{"unicode", tea.Key{Code: 'é', Text: "é"}, false, "é"},
		{"enter", tea.Key{Code: tea.KeyEnter}, false, "\r"},
		{"tab", tea.Key{Code: tea.KeyTab}, false, "\t"},
		{"shift+tab", tea.Key{Code: tea.KeyTab, Mod: tea.ModShift}, false, "\x1b[Z"},
		{"backspace", tea.Key{Code: tea.KeyBackspace}, false, "\x7f"},
		{"ctrl+backspace", tea.Key{Code: tea.KeyBackspace, Mod: tea.ModCtrl}, false, "\x08"},
		{"esc", tea.Key{Code: tea.KeyEscape}, false, "\x1b"},
		{"space", tea.Key{Code: tea.KeySpace, Text: " "}, false, " "},
		{"ctrl+space", tea.Key{Code: tea.KeySpace, Mod: tea.ModCtrl}, false, "\x00"},
		{"ctrl+a", tea.Key{Code: 'a', Mod: tea.ModCtrl}, false, "\x01"},
		{"ctrl+c", tea.Key{Code: 'c', Mod: tea.ModCtrl}, false, "\x03"},
		{"ctrl+\\", tea.Key{Code: '\\', Mod: tea.ModCtrl}, false, "\x1c"},
		{"ctrl+alt+a", tea.Key{Code: 'a', Mod: tea.ModCtrl | tea.ModAlt}, false, "\x1b\x01"},
		{"alt+x", tea.Key{Code: 'x', Mod: tea.ModAlt}, false, "\x1bx"},
		{"alt+enter", tea.Key{Code: tea.KeyEnter, Mod: tea.ModAlt}, false, "\x1b\r"},
		{"up", tea.Key{Code: tea.KeyUp}, false, "\x1b[A"},
		{"up app", tea.Key{Code: tea.KeyUp}, true, "\x1bOA"},
		{"left app", tea.Key{Code: tea.KeyLeft}, true, "\x1bOD"},
		{"shift+up", tea.Key{Code: tea.KeyUp, Mod: tea.ModShift}, true, "\x1b[1;2A"},
		{"ctrl+right", tea.Key{Code: tea.KeyRight, Mod: tea.ModCtrl}, false, "\x1b[1;5C"},
		{"home", tea.Key{Code: tea.KeyHome}, false, "\x1b[H"},
		{"end app", tea.Key{Code: tea.KeyEnd}, true, "\x1bOF"},
		{"pgup", tea.Key{Code: tea.KeyPgUp}, false, "\x1b[5~"},
		{"pgdown", tea.Key{Code: tea.KeyPgDown}, false, "\x1b[6~"},
		{"delete", tea.Key{Code: tea.KeyDelete}, false, "\x1b[3~"},
		{"shift+delete", tea.Key{Code: tea.KeyDelete, Mod: tea.ModShift}, false, "\x1b[3;2~"},
		{"insert", tea.Key{Code: tea.KeyInsert}, false, "\x1b[2~"},
		{"f1", tea.Key{Code: tea.KeyF1}, false, "\x1bOP"},
		{"ctrl+f1", tea.Key{Code: tea.KeyF1, Mod: tea.ModCtrl}, false, "\x1b[1;5P"},
		{"f5", tea.Key{Code: tea.KeyF5}, false, "\x1b[15~"},
		{"f12", tea.Key{Code: tea.KeyF12}, false, "\x1b[24~"},
		{"capslock ignored", tea.Key{Code: 'a', Text: "a", Mod: tea.ModCapsLock}, false, "a"},
		{"lone modifier", tea.Key{Code: tea.KeyLeftShift}, false, ""},
	}
	for _, c := range cases {
		if got := string(encodeKey(c.k, c.app)); got != c.want {
			t.Errorf("%s: got %q, want %q", c.name, got, c.want)
		}
	}
}

func TestEncodeMouse(t *testing.T) {
	sgr := screen.Modes{MouseNormal: true, MouseSGR: true}
	x10 := screen.Modes{MouseNormal: true}
	cases := []struct {
		name            string
		m               tea.Mouse
		release, motion bool
		modes           screen.Modes
		want            string
	}{
		{"no tracking", tea.Mouse{Button: tea.MouseLeft}, false, false, screen.Modes{}, ""},
		{"sgr press", tea.Mouse{Button: tea.MouseLeft}, false, false, sgr, "\x1b[<0;3;4M"},
		{"sgr release", tea.Mouse{Button: tea.MouseLeft}, true, false, sgr, "\x1b[<0;3;4m"},
		{"sgr wheel down ctrl", tea.Mouse{Button: tea.MouseWheelDown, Mod: tea.ModCtrl}, false, false, sgr, "\x1b[<81;3;4M"},
		{"x10 press", tea.Mouse{Button: tea.MouseRight}, false, false, x10, "\x1b[M\x22\x23\x24"},
		{"x10 release", tea.Mouse{Button: tea.MouseRight}, true, false, x10, "\x1b[M\x23\x23\x24"},
		{"motion not asked", tea.Mouse{Button: tea.MouseLeft}, false, true, sgr, ""},
		{"drag in button mode", tea.Mouse{Button: tea.MouseLeft}, false, true, screen.Modes{MouseButton: true, MouseSGR: true}, "\x1b[<32;3;4M"},
	}
	for _, c := range cases {
		if got := string(encodeMouse(c.m, 2, 3, c.release, c.motion, c.modes)); got != c.want {
			t.Errorf("%s: got %q, want %q", c.name, got, c.want)
		}
	}
}

func TestEncodePaste(t *testing.T) {
	if got := string(encodePaste("a\r\nb\nc", screen.Modes{})); got != "a\rb\rc" {
		t.Errorf("plain paste %q", got)
	}
	if got := string(encodePaste("a\x1b[201~b\n", screen.Modes{BracketedPaste: true})); got != "\x1b[200~a[201~b\n\x1b[201~" {
		t.Errorf("bracketed paste %q", got)
	}
}
