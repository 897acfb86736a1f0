package screen

import (
	"os"
	"strconv"
	"strings"
	"testing"
)

func screensEqual(t *testing.T, in string, cols, rows int) (bool, string) {
	want, wx, wy, walt := tmuxScreen(t, []byte(in), cols, rows)
	s := New(Options{Cols: cols, Rows: rows})
	write(s, in)
	gx, gy, _ := s.Cursor()
	wr, gr := normRows(want, rows), normRows(s.Text(), rows)
	ok := gx == wx && gy == wy && s.Modes().AltScreen == walt && strings.Join(wr, "\n") == strings.Join(gr, "\n")
	return ok, "tmux:\n" + strings.Join(wr, "|\n") + "|\n(" + strconv.Itoa(wx) + "," + strconv.Itoa(wy) + ")\nours:\n" + strings.Join(gr, "|\n") + "|\n(" + strconv.Itoa(gx) + "," + strconv.Itoa(gy) + ")"
}

func TestScratchBisect(t *testing.T) {
	seed, _ := strconv.Atoi(os.Getenv("SEED"))
	lo, hi := 0, 60
	for lo < hi {
		mid := (lo + hi) / 2
		if ok, _ := screensEqual(t, randomOps(uint64(seed), mid+1, 12, 6), 12, 6); ok {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	n := lo + 1
	prev := randomOps(uint64(seed), n-1, 12, 6)
	full := randomOps(uint64(seed), n, 12, 6)
	_, st := screensEqual(t, full, 12, 6)
	_, st0 := screensEqual(t, prev, 12, 6)
	t.Logf("first diverging op %d: %q\nprefix tail %q\nBEFORE (equal):\n%s\nAFTER:\n%s", n, full[len(prev):], prev[max(0, len(prev)-80):], st0, st)
}

func TestScratchTrace(t *testing.T) {
	seed, _ := strconv.Atoi(os.Getenv("SEED"))
	from, _ := strconv.Atoi(os.Getenv("FROM"))
	to, _ := strconv.Atoi(os.Getenv("TO"))
	for n := from; n <= to; n++ {
		prev := randomOps(uint64(seed), n-1, 12, 6)
		full := randomOps(uint64(seed), n, 12, 6)
		_, st := screensEqual(t, full, 12, 6)
		t.Logf("op %d %q\n%s", n, full[len(prev):], st)
	}
}
