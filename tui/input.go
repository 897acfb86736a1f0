package tui

import (
	"strconv"
	"strings"
	"sync"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/hivemind-dev/hivemind/ptyagent/screen"
)

// inputWriter delivers bytes to agent terminals in order, off the UI
// goroutine: a PTY write can block when the child does not read, and the UI
// must never block. One goroutine drains the queue while it is non-empty and
// exits when it is empty, so an idle TUI has no goroutine here.
type inputWriter struct {
	mu      sync.Mutex
	queue   []pendingWrite
	running bool
	writing Terminal // the terminal of the write under way
	err     string
	idle    *sync.Cond // signalled when the queue drains (tests)
}

type pendingWrite struct {
	t Terminal
	b []byte
}

func (w *inputWriter) enqueue(t Terminal, b []byte) {
	if t == nil || len(b) == 0 {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.queue = append(w.queue, pendingWrite{t, b})
	if !w.running {
		w.running = true
		go w.drain()
	}
}

func (w *inputWriter) drain() {
	for {
		w.mu.Lock()
		if len(w.queue) == 0 {
			w.running = false
			if w.idle != nil {
				w.idle.Broadcast()
			}
			w.mu.Unlock()
			return
		}
		p := w.queue[0]
		w.queue[0] = pendingWrite{}
		w.queue = w.queue[1:]
		w.writing = p.t
		w.mu.Unlock()
		_, err := p.t.Write(p.b)
		w.mu.Lock()
		w.writing = nil
		if err != nil {
			w.err = err.Error()
		} else {
			w.err = ""
		}
		w.mu.Unlock()
	}
}

// pending reports whether bytes for t are queued or being written (keys
// typed a moment ago that the terminal has not read yet). Terminals are
// pointers, so comparable.
func (w *inputWriter) pending(t Terminal) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.writing == t {
		return true
	}
	for _, p := range w.queue {
		if p.t == t {
			return true
		}
	}
	return false
}

// wait blocks until every queued write was delivered.
func (w *inputWriter) wait() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.idle == nil {
		w.idle = sync.NewCond(&w.mu)
	}
	for w.running {
		w.idle.Wait()
	}
}

func (w *inputWriter) lastError() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// ---- key encoding ----

// encodeKey turns a key press into the bytes an xterm-compatible terminal
// sends for it. appCursor selects the DECCKM (application cursor keys)
// encoding of arrows, Home and End. It returns nil for keys that have no
// encoding (e.g. a lone modifier).
func encodeKey(k tea.Key, appCursor bool) []byte {
	mod := k.Mod &^ (tea.ModCapsLock | tea.ModNumLock | tea.ModScrollLock)
	ctrl := mod.Contains(tea.ModCtrl)
	alt := mod.Contains(tea.ModAlt)
	shift := mod.Contains(tea.ModShift)
	// xterm's modifier parameter: 1 + shift(1) + alt(2) + ctrl(4) + meta(8).
	xmod := 1
	if shift {
		xmod++
	}
	if alt {
		xmod += 2
	}
	if ctrl {
		xmod += 4
	}
	if mod.Contains(tea.ModMeta) {
		xmod += 8
	}

	// Cursor and editing keys.
	if seq, ok := csiKeys[k.Code]; ok {
		if xmod > 1 {
			return []byte("\x1b[1;" + strconv.Itoa(xmod) + string(seq))
		}
		if appCursor {
			return []byte("\x1bO" + string(seq))
		}
		return []byte("\x1b[" + string(seq))
	}
	if n, ok := tildeKeys[k.Code]; ok {
		if xmod > 1 {
			return []byte("\x1b[" + strconv.Itoa(n) + ";" + strconv.Itoa(xmod) + "~")
		}
		return []byte("\x1b[" + strconv.Itoa(n) + "~")
	}
	if seq, ok := ss3Keys[k.Code]; ok { // F1–F4
		if xmod > 1 {
			return []byte("\x1b[1;" + strconv.Itoa(xmod) + string(seq))
		}
		return []byte("\x1bO" + string(seq))
	}

	var out []byte
	switch k.Code {
	case tea.KeyEnter, tea.KeyKpEnter:
		out = []byte{'\r'}
	case tea.KeyTab:
		if shift {
			return []byte("\x1b[Z")
		}
		out = []byte{'\t'}
	case tea.KeyBackspace:
		if ctrl {
			out = []byte{0x08}
		} else {
			out = []byte{0x7f}
		}
	case tea.KeyEscape:
		out = []byte{0x1b}
	case tea.KeySpace:
		if ctrl {
			out = []byte{0}
		} else {
			out = []byte{' '}
		}
	default:
		switch {
		case ctrl:
			c, ok := ctrlByte(k.Code)
			if !ok {
				return nil
			}
			out = []byte{c}
		case k.Text != "":
			out = []byte(k.Text)
		case k.Code >= tea.KeyKp0 && k.Code <= tea.KeyKp9:
			out = []byte{byte('0' + k.Code - tea.KeyKp0)}
		case k.Code > 0 && k.Code < tea.KeyExtended && k.Code < 0x10FFFF:
			r := k.Code
			if shift && r >= 'a' && r <= 'z' {
				r -= 'a' - 'A'
			}
			out = []byte(string(r))
		default:
			return nil
		}
	}
	if alt {
		out = append([]byte{0x1b}, out...)
	}
	return out
}

var csiKeys = map[rune]byte{
	tea.KeyUp: 'A', tea.KeyDown: 'B', tea.KeyRight: 'C', tea.KeyLeft: 'D',
	tea.KeyHome: 'H', tea.KeyEnd: 'F',
	tea.KeyKpUp: 'A', tea.KeyKpDown: 'B', tea.KeyKpRight: 'C', tea.KeyKpLeft: 'D',
	tea.KeyKpHome: 'H', tea.KeyKpEnd: 'F',
}

var tildeKeys = map[rune]int{
	tea.KeyInsert: 2, tea.KeyDelete: 3, tea.KeyPgUp: 5, tea.KeyPgDown: 6,
	tea.KeyKpInsert: 2, tea.KeyKpDelete: 3, tea.KeyKpPgUp: 5, tea.KeyKpPgDown: 6,
	tea.KeyF5: 15, tea.KeyF6: 17, tea.KeyF7: 18, tea.KeyF8: 19,
	tea.KeyF9: 20, tea.KeyF10: 21, tea.KeyF11: 23, tea.KeyF12: 24,
}

var ss3Keys = map[rune]byte{tea.KeyF1: 'P', tea.KeyF2: 'Q', tea.KeyF3: 'R', tea.KeyF4: 'S'}

// ctrlByte is the C0 byte for ctrl+<key>.
func ctrlByte(r rune) (byte, bool) {
	switch {
	case r >= 'a' && r <= 'z':
		return byte(r - 'a' + 1), true
	case r >= 'A' && r <= 'Z':
		return byte(r - 'A' + 1), true
	case r == '@' || r == '2' || r == ' ':
		return 0, true
	case r == '[' || r == '3':
		return 0x1b, true
	case r == '\\' || r == '4':
		return 0x1c, true
	case r == ']' || r == '5':
		return 0x1d, true
	case r == '^' || r == '6':
		return 0x1e, true
	case r == '_' || r == '-' || r == '7' || r == '/':
		return 0x1f, true
	case r == '?' || r == '8':
		return 0x7f, true
	}
	return 0, false
}

// encodePaste is what a terminal sends for pasted text: wrapped in
// bracketed-paste markers when the application enabled them (with any ESC
// removed from the text so it cannot end the paste early), else the text
// with line feeds turned into carriage returns, as xterm does.
func encodePaste(s string, modes screen.Modes) []byte {
	if modes.BracketedPaste {
		return []byte(ansi.BracketedPasteStart + strings.ReplaceAll(s, "\x1b", "") + ansi.BracketedPasteEnd)
	}
	s = strings.ReplaceAll(s, "\r\n", "\r")
	return []byte(strings.ReplaceAll(s, "\n", "\r"))
}

// encodeMouse encodes a mouse event at pane-relative cell (x, y) (0-based)
// for an application that enabled mouse tracking, or returns nil when the
// application does not want this kind of event.
func encodeMouse(m tea.Mouse, x, y int, release, motion bool, modes screen.Modes) []byte {
	if !modes.MouseTracking() {
		return nil
	}
	if motion && !modes.MouseButton && !modes.MouseAny {
		return nil
	}
	if release && modes.MouseX10 && !modes.MouseNormal && !modes.MouseButton && !modes.MouseAny {
		return nil // X10 mode reports presses only
	}
	btn := m.Button
	if release && !modes.MouseSGR {
		btn = tea.MouseNone // legacy encodings cannot say which button was released
	}
	b := ansi.EncodeMouseButton(btn, motion, m.Mod.Contains(tea.ModShift), m.Mod.Contains(tea.ModAlt), m.Mod.Contains(tea.ModCtrl))
	if b == 0xff {
		return nil
	}
	if modes.MouseSGR {
		return []byte(ansi.MouseSgr(b, x, y, release))
	}
	// Legacy X10 encoding: bytes 32+b, 33+x, 33+y; coordinates past 222
	// cannot be expressed.
	if x > 222 || y > 222 {
		return nil
	}
	return []byte{0x1b, '[', 'M', 32 + b, byte(33 + x), byte(33 + y)}
}
