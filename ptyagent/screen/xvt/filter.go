package xvt

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/hivemind-dev/hivemind/ptyagent/screen"
)

// filter is a streaming pre-parser that sits in front of an emulator whose
// parser mishandles control strings (x/vt at the pinned revision takes byte
// 0x9C inside UTF-8 as the string terminator, so Claude Code's title
// "ESC ] 0 ; ✳ Claude Code BEL" spills " Claude Code" onto the screen).
//
// It holds OSC/DCS/SOS/PM/APC bodies until their real terminator (BEL,
// ESC \, CAN/SUB aborts, or a 0x9C that is not a UTF-8 continuation byte),
// reports titles itself (OSC 0/2, ';' allowed in the text), forwards the
// other strings only when they are pure ASCII, drops stray C1 and invalid
// UTF-8 bytes in normal text (as tmux does) and clamps DECSTBM to the
// screen height. Everything else passes through byte for byte, so the
// emulator behind it sees a clean stream.
type filter struct {
	state   fstate
	need    int    // UTF-8 continuation bytes still expected
	hold    []byte // bytes withheld: a partial UTF-8 char or a CSI
	kind    byte   // string introducer: ']' 'P' 'X' '^' '_'
	body    []byte // control string body
	over    bool   // body exceeded screen.MaxControlString and is being discarded
	strNeed int    // UTF-8 continuation bytes expected inside a string
	rows    int    // screen height, for clamping DECSTBM
	title   func(string)
}

type fstate uint8

const (
	fGround fstate = iota
	fUTF8
	fEsc
	fCSI
	fStr
	fStrEsc
)

// maxCSI bounds a withheld CSI sequence; longer ones pass through unchanged.
const maxCSI = 256

// run filters p and appends the clean stream to out.
func (f *filter) run(out, p []byte) []byte {
	for _, b := range p {
		out = f.step(out, b)
	}
	return out
}

func (f *filter) step(out []byte, b byte) []byte {
	switch f.state {
	case fGround:
		return f.ground(out, b)
	case fUTF8:
		if b >= 0x80 && b <= 0xBF {
			f.hold = append(f.hold, b)
			f.need--
			if f.need == 0 {
				if utf8.Valid(f.hold) {
					out = append(out, f.hold...)
				}
				f.hold = f.hold[:0]
				f.state = fGround
			}
			return out
		}
		// Truncated sequence: drop it and look at b afresh.
		f.hold = f.hold[:0]
		f.state = fGround
		return f.ground(out, b)
	case fEsc:
		return f.escape(out, b)
	case fCSI:
		switch {
		case b >= 0x40 && b <= 0x7E:
			f.hold = append(f.hold, b)
			out = f.csi(out)
			f.hold = f.hold[:0]
			f.state = fGround
		case b == 0x1B || b == 0x18 || b == 0x1A || b >= 0x80:
			// Aborted sequence: pass what we held and restart on b.
			out = append(out, f.hold...)
			f.hold = f.hold[:0]
			f.state = fGround
			return f.ground(out, b)
		default:
			f.hold = append(f.hold, b)
			if len(f.hold) > maxCSI {
				out = append(out, f.hold...)
				f.hold = f.hold[:0]
				f.state = fGround
			}
		}
		return out
	case fStr:
		return f.str(out, b)
	case fStrEsc:
		if b == '\\' {
			out = f.dispatch(out)
			f.state = fGround
			return out
		}
		// ESC followed by anything else aborts the string and starts a
		// new escape sequence.
		f.body = f.body[:0]
		f.state = fEsc
		return f.escape(out, b)
	}
	return out
}

func (f *filter) ground(out []byte, b byte) []byte {
	switch {
	case b == 0x1B:
		f.state = fEsc
	case b < 0x80:
		out = append(out, b)
	case b >= 0xC2 && b <= 0xDF:
		f.hold = append(f.hold[:0], b)
		f.need = 1
		f.state = fUTF8
	case b >= 0xE0 && b <= 0xEF:
		f.hold = append(f.hold[:0], b)
		f.need = 2
		f.state = fUTF8
	case b >= 0xF0 && b <= 0xF4:
		f.hold = append(f.hold[:0], b)
		f.need = 3
		f.state = fUTF8
	default:
		// Stray C1 control or continuation byte, or invalid UTF-8: dropped.
	}
	return out
}

func (f *filter) escape(out []byte, b byte) []byte {
	switch b {
	case ']', 'P', 'X', '^', '_':
		f.kind = b
		f.body = f.body[:0]
		f.over = false
		f.strNeed = 0
		f.state = fStr
	case '[':
		f.hold = append(f.hold[:0], 0x1B, '[')
		f.state = fCSI
	case 0x1B:
		out = append(out, 0x1B)
	case 0x18, 0x1A:
		// CAN/SUB cancel the escape sequence.
		f.state = fGround
	default:
		out = append(out, 0x1B)
		f.state = fGround
		return f.ground(out, b)
	}
	return out
}

func (f *filter) str(out []byte, b byte) []byte {
	if f.strNeed > 0 && b >= 0x80 && b <= 0xBF {
		f.strNeed--
		return f.put(out, b)
	}
	f.strNeed = 0
	switch {
	case b == 0x07 || b == 0x9C:
		out = f.dispatch(out)
		f.state = fGround
	case b == 0x1B:
		f.state = fStrEsc
	case b == 0x18 || b == 0x1A:
		f.body = f.body[:0]
		f.state = fGround
	case b >= 0xC2 && b <= 0xDF:
		f.strNeed = 1
		return f.put(out, b)
	case b >= 0xE0 && b <= 0xEF:
		f.strNeed = 2
		return f.put(out, b)
	case b >= 0xF0 && b <= 0xF4:
		f.strNeed = 3
		return f.put(out, b)
	default:
		return f.put(out, b)
	}
	return out
}

func (f *filter) put(out []byte, b byte) []byte {
	if len(f.body) >= screen.MaxControlString {
		f.over = true
		return out
	}
	f.body = append(f.body, b)
	return out
}

// dispatch handles a complete control string.
func (f *filter) dispatch(out []byte) []byte {
	body := f.body
	f.body = f.body[:0]
	if f.over {
		return out
	}
	if f.kind == ']' {
		num, text, _ := strings.Cut(string(body), ";")
		switch num {
		case "0", "2":
			if f.title != nil {
				f.title(strings.ToValidUTF8(text, "\uFFFD"))
			}
			return out
		case "1":
			return out // icon name
		}
	}
	for _, c := range body {
		if c >= 0x80 || (c < 0x20 && c != '\t') {
			return out // not safe for the emulator behind us
		}
	}
	out = append(out, 0x1B, f.kind)
	out = append(out, body...)
	return append(out, 0x1B, '\\')
}

// csi forwards the held CSI sequence, clamping DECSTBM to the screen height
// (tmux semantics: bottom clamped, ignored unless top < bottom).
func (f *filter) csi(out []byte) []byte {
	seq := f.hold
	if seq[len(seq)-1] != 'r' || f.rows <= 0 {
		return append(out, seq...)
	}
	params := string(seq[2 : len(seq)-1])
	if params == "" {
		return append(out, seq...)
	}
	if c := params[0]; c < '0' || c > ';' {
		return append(out, seq...) // private or other form
	}
	ts, bs, _ := strings.Cut(params, ";")
	top, bot := 1, f.rows
	if ts != "" {
		n, err := strconv.Atoi(ts)
		if err != nil {
			return append(out, seq...)
		}
		top = max(n, 1)
	}
	if bs != "" {
		n, err := strconv.Atoi(bs)
		if err != nil {
			return append(out, seq...)
		}
		if n > 0 {
			bot = min(n, f.rows)
		}
	}
	if top >= bot {
		return out
	}
	out = append(out, 0x1B, '[')
	out = strconv.AppendInt(out, int64(top), 10)
	out = append(out, ';')
	out = strconv.AppendInt(out, int64(bot), 10)
	return append(out, 'r')
}
