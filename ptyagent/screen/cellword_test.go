package screen

import (
	"math/rand/v2"
	"testing"
)

// randomCells returns n cells drawn from the values the word loops must
// tell apart: never written (zero), spaces, ASCII, non-ASCII, padding,
// combining sequences, in the default style, st and others, including
// styles and runes whose halves differ by one bit from the wanted ones.
func randomCells(r *rand.Rand, n int, st uint32) []cell {
	runes := []int32{0, 0, 0, ' ', 'a', '~', 0x7f, 0x80, 0xff, 0x100, 0x4e2d, contCell, -2, -1 << 30, 1 << 24}
	styles := []uint32{0, 0, st, st, st ^ 1, st ^ 0x80, st | 1<<31, 1}
	c := make([]cell, n)
	for i := range c {
		c[i] = cell{runes[r.IntN(len(runes))], styles[r.IntN(len(styles))]}
		if r.IntN(3) == 0 {
			c[i] = cell{int32(r.IntN(0x80)), st}
		}
	}
	return c
}

// TestWordCells checks that this machine's cells are the words the fast
// loops assume (the loops are off where they are not).
func TestWordCells(t *testing.T) {
	if !wordCells {
		t.Skip("big-endian: the word loops are off")
	}
	c := []cell{{'a', 7}, {contCell, 0}}
	w := cellWords(c)
	if w[0] != 'a'|7<<32 || w[1] != 0xffffffff {
		t.Fatalf("cell words %#x, want 0x7_00000061 and 0xffffffff", w)
	}
}

// TestAsciiRunWords checks the word loop against the cell loop on random
// cells, with output buffers shorter and longer than the cells.
func TestAsciiRunWords(t *testing.T) {
	if !wordCells {
		t.Skip("big-endian: the word loops are off")
	}
	r := rand.New(rand.NewPCG(3, 4))
	for range 200000 {
		st := uint32(r.IntN(4))
		if r.IntN(4) == 0 {
			st = r.Uint32()
		}
		c := randomCells(r, r.IntN(24), st)
		size := r.IntN(30)
		got, want := make([]byte, size), make([]byte, size)
		n, wn := asciiRunWords(got, c, st), asciiRunCells(want, c, st)
		if n != wn || string(got) != string(want) {
			t.Fatalf("asciiRunWords(%d bytes, %v, %d) = %d %q, want %d %q", size, c, st, n, got[:n], wn, want[:wn])
		}
	}
}

// TestBlankEnd checks the four-words-at-a-time tail scan against the cell
// loop on random rows with blank tails of every length and kind.
func TestBlankEnd(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for range 100000 {
		c := randomCells(r, r.IntN(40), 0)
		for i := r.IntN(len(c) + 1); i < len(c); i++ {
			c[i] = cell{}
			if r.IntN(8) == 0 {
				c[i] = cell{' ', 0}
			}
		}
		if got, want := blankEnd(c, false), blankEnd(c, true); got != want {
			t.Fatalf("blankEnd(%v) = %d, want %d", c, got, want)
		}
	}
}

// TestMemoSGRFindsRemembered checks that memoSGR's one-pass hash finds
// every SGR rememberSGR stored (a hash that disagreed would only miss, so
// nothing else would notice).
func TestMemoSGRFindsRemembered(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	tm := newTerm(Options{Cols: 20, Rows: 5})
	const alphabet = "0123456789;:"
	for range 20000 {
		params := make([]byte, 1+r.IntN(len(sgrMemo{}.params)))
		for k := range params {
			params[k] = alphabet[r.IntN(len(alphabet))]
		}
		tm.penID = uint32(r.IntN(1000))
		from := tm.penID
		tm.rememberSGR(from, params)
		if n := tm.memoSGR(append(params, 'm', 'x')); n != len(params)+1 {
			t.Fatalf("memoSGR(%q) from pen %d = %d, want %d", params, from, n, len(params)+1)
		}
	}
}
