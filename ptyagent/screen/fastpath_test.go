package screen

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/hivemind-dev/hivemind/internal/testkit"
	"github.com/hivemind-dev/hivemind/ptyagent/screen/workload"
)

// TestPrintableLen checks the eight-bytes-at-a-time scan against a byte
// loop for every byte value at every position of inputs up to three words
// long, and on random inputs.
func TestPrintableLen(t *testing.T) {
	ref := func(p []byte) int {
		i := 0
		for i < len(p) && p[i] >= 0x20 && p[i] < 0x7f {
			i++
		}
		return i
	}
	buf := make([]byte, 24)
	for n := 0; n <= len(buf); n++ {
		for pos := range n {
			for v := range 256 {
				for k := range buf {
					buf[k] = byte(' ' + k*7%95)
				}
				buf[pos] = byte(v)
				if got, want := printableLen(buf[:n]), ref(buf[:n]); got != want {
					t.Fatalf("printableLen(%q) = %d, want %d", buf[:n], got, want)
				}
			}
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 100000 {
		p := make([]byte, r.IntN(40))
		for k := range p {
			p[k] = byte(0x20 + r.IntN(0x5f))
			if r.IntN(20) == 0 {
				p[k] = byte(r.IntN(256))
			}
		}
		if got, want := printableLen(p), ref(p); got != want {
			t.Fatalf("printableLen(%q) = %d, want %d", p, got, want)
		}
	}
}

// TestDecodeRune checks the inline UTF-8 decoding against utf8.DecodeRune
// for every lead byte from 0x80 with every two following bytes, and for
// every truncated form.
func TestDecodeRune(t *testing.T) {
	p := make([]byte, 3)
	for b0 := 0x80; b0 < 0x100; b0++ {
		for b1 := range 256 {
			for b2 := range 256 {
				p[0], p[1], p[2] = byte(b0), byte(b1), byte(b2)
				r, n := decodeRune(p)
				wr, wn := utf8.DecodeRune(p)
				if r != wr || n != wn {
					t.Fatalf("decodeRune(% x) = %U,%d, want %U,%d", p, r, n, wr, wn)
				}
			}
			p[0], p[1] = byte(b0), byte(b1)
			for _, q := range [][]byte{p[:1], p[:2]} {
				r, n := decodeRune(q)
				wr, wn := utf8.DecodeRune(q)
				if r != wr || n != wn {
					t.Fatalf("decodeRune(% x) = %U,%d, want %U,%d", q, r, n, wr, wn)
				}
			}
		}
	}
	for _, s := range []string{"🎉x", "\U0010FFFF", "\xf4\x90\x80\x80", "\xed\xa0\x80", "\xe0\x80\xaf"} {
		r, n := decodeRune([]byte(s))
		wr, wn := utf8.DecodeRuneInString(s)
		if r != wr || n != wn {
			t.Fatalf("decodeRune(%q) = %U,%d, want %U,%d", s, r, n, wr, wn)
		}
	}
}

// TestFastPathsMatchSlow feeds the same bytes to a Term with its fast
// paths (fast CSI and SGR, narrow characters, ASCII runs in encode, the
// previous-pen shortcut) and to one without them (Term.slow), in PTY-sized
// writes and in small random ones that split sequences and characters, and
// requires identical state: every scrollback line byte for byte, the
// screen, cursor, pen and modes. The inputs are a quarter of their size
// under make test-long (workloads of 1 MiB, random output of 256 KiB).
func TestFastPathsMatchSlow(t *testing.T) {
	size := 256 << 10
	if testkit.Long() {
		size = 1 << 20
	}
	type input struct {
		name       string
		data       []byte
		cols, rows int
	}
	var inputs []input
	for _, o := range []workload.Options{
		{Seed: 1, Size: size},
		{Seed: 2, Size: size, Cols: 37, Rows: 11},
	} {
		data, _ := workload.Generate(o)
		inputs = append(inputs, input{fmt.Sprintf("workload seed %d", o.Seed), data, max(o.Cols, 120), max(o.Rows, 40)})
	}
	for seed := range uint64(4) {
		cols, rows := 9+int(seed)*23, 5+int(seed)*7
		inputs = append(inputs, input{fmt.Sprintf("random seed %d", seed), randomOutput(seed, size/4), cols, rows})
	}
	for _, in := range inputs {
		t.Run(in.name, func(t *testing.T) {
			opts := Options{Cols: in.cols, Rows: in.rows, Scrollback: 300}
			fast, slow, split := newTerm(opts), newTerm(opts), newTerm(opts)
			slow.slow = true
			defer func() { _, _, _ = fast.Close(), slow.Close(), split.Close() }()
			feed(fast, in.data)
			feed(slow, in.data)
			r := rand.New(rand.NewPCG(7, 7))
			for p := in.data; len(p) > 0; {
				n := min(1+r.IntN(48), len(p))
				_, _ = split.Write(p[:n])
				p = p[n:]
			}
			if err := sameTerm(fast, slow); err != nil {
				t.Fatalf("fast paths differ from the general ones: %v", err)
			}
			if err := sameTerm(split, slow); err != nil {
				t.Fatalf("fast paths in small writes differ from the general ones: %v", err)
			}
		})
	}
}

// sameTerm reports the first difference between two Terms' visible state,
// scrollback (encoded bytes) and pen.
func sameTerm(a, b *Term) error {
	if a.panics != 0 || b.panics != 0 {
		return fmt.Errorf("handlers panicked: %d and %d times", a.panics, b.panics)
	}
	if a.sb.len() != b.sb.len() {
		return fmt.Errorf("scrollback has %d lines and %d", a.sb.len(), b.sb.len())
	}
	for i := range a.sb.len() {
		if x, y := a.sb.get(i), b.sb.get(i); !bytes.Equal(x, y) {
			return fmt.Errorf("scrollback line %d encoded as\n%q, want\n%q", i, x, y)
		}
	}
	if x, y := strings.Join(a.Lines(0), "\n"), strings.Join(b.Lines(0), "\n"); x != y {
		return fmt.Errorf("screen\n%s\nwant\n%s", x, y)
	}
	if a.x != b.x || a.y != b.y || a.wrapNext != b.wrapNext || a.lastRune != b.lastRune || a.zwj != b.zwj {
		return fmt.Errorf("cursor (%d,%d,%v,%q,%v), want (%d,%d,%v,%q,%v)",
			a.x, a.y, a.wrapNext, a.lastRune, a.zwj, b.x, b.y, b.wrapNext, b.lastRune, b.zwj)
	}
	if a.pen != b.pen || a.penID != b.penID || a.erase() != b.erase() {
		return fmt.Errorf("pen %+v id %d, want %+v id %d", a.pen, a.penID, b.pen, b.penID)
	}
	if a.Modes() != b.Modes() || a.Title() != b.Title() {
		return fmt.Errorf("modes %+v title %q, want %+v %q", a.Modes(), a.Title(), b.Modes(), b.Title())
	}
	return nil
}

// randomOutput returns n bytes of escape-heavy terminal output: text runs,
// SGRs in both parameter forms, cursor and erase sequences, wide,
// combining and joined characters, controls, links and mode changes.
func randomOutput(seed uint64, n int) []byte {
	r := rand.New(rand.NewPCG(seed, 99))
	words := []string{"x", "hello", " ", "  ", "─┼│", "日本語", "e\u0301", "🎉", "👩\u200d💻", "✔\ufe0f", "\u200d", "é", "\u0301", "Ω≈", "\x7f", "\xc3", "\xe2\x94"}
	var b bytes.Buffer
	for b.Len() < n {
		switch r.IntN(12) {
		case 0, 1, 2:
			for range 1 + r.IntN(30) {
				b.WriteByte(byte(0x20 + r.IntN(0x5f)))
			}
		case 3, 4:
			b.WriteString(words[r.IntN(len(words))])
		case 5, 6:
			sgr := []string{"0", "", "1", "22", "2", "3", "23", "39", "49", "7", "27", "4:3", "24",
				fmt.Sprintf("38;2;%d;%d;%d", r.IntN(3)*100, r.IntN(256), 7), fmt.Sprintf("48;5;%d", r.IntN(256)),
				fmt.Sprintf("38:2::%d:%d:%d", r.IntN(256), 1, 2), fmt.Sprintf("%d", 30+r.IntN(78)), "1;31", "0;44;97"}
			fmt.Fprintf(&b, "\x1b[%sm", sgr[r.IntN(len(sgr))])
		case 7:
			fmt.Fprintf(&b, "\x1b[%d%c", r.IntN(5), "ABCDGKJ@PXLMSTb"[r.IntN(15)])
		case 8:
			fmt.Fprintf(&b, "\x1b[%d;%dH", 1+r.IntN(50), 1+r.IntN(130))
		case 9:
			b.WriteString([]string{"\r\n", "\n", "\r", "\t", "\b", "\x1b[K\r\n", "\x1bM", "\x1b7", "\x1b8"}[r.IntN(9)])
		case 10:
			b.WriteString([]string{"\x1b[?1049h", "\x1b[?1049l", "\x1b[?7l", "\x1b[?7h", "\x1b[4h", "\x1b[4l",
				"\x1b(0", "\x1b(B", "\x1b[2;9r", "\x1b[r", "\x1b]8;;http://x\x07", "\x1b]8;;\x1b\\", "\x1b]0;t\x07"}[r.IntN(13)])
		default:
			fmt.Fprintf(&b, "\x1b[%d;%dm", r.IntN(110), r.IntN(110))
		}
	}
	return b.Bytes()
}
