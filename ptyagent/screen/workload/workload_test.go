package workload

import (
	"bytes"
	"math"
	"testing"
)

func TestDeterministic(t *testing.T) {
	a, sa := Generate(Options{Seed: 7, Size: 256 << 10})
	b, sb := Generate(Options{Seed: 7, Size: 256 << 10})
	if !bytes.Equal(a, b) || len(sa) != len(sb) {
		t.Fatal("same seed gave different streams")
	}
	c, _ := Generate(Options{Seed: 8, Size: 256 << 10})
	if bytes.Equal(a, c) {
		t.Fatal("different seeds gave the same stream")
	}
}

func TestMix(t *testing.T) {
	data, segs := Generate(Options{Seed: 1, Size: 4 << 20})
	if len(data) < 4<<20 {
		t.Fatalf("only %d bytes", len(data))
	}
	got := map[Kind]int{}
	prev := 0
	for _, s := range segs {
		if s.Start != prev || s.End < s.Start {
			t.Fatalf("segments not contiguous at %d", s.Start)
		}
		prev = s.End
		got[s.Kind] += s.End - s.Start
		for _, c := range s.Cuts {
			if c < s.Start || c >= s.End {
				t.Fatalf("cut %d outside segment %d..%d", c, s.Start, s.End)
			}
		}
	}
	for _, sh := range shares {
		frac := float64(got[sh.kind]) / float64(len(data))
		if math.Abs(frac-sh.share) > 0.02 {
			t.Errorf("%s: %.3f of the stream, want %.2f", sh.kind, frac, sh.share)
		}
	}
	for _, want := range []string{"\x1b[?2026h", "\x1b[?1049h", "\x1b]0;", "\x1b]8;;", "\x1b7", "\x1b[K", "\t", "\x1b[1;39r"} {
		if !bytes.Contains(data, []byte(want)) {
			t.Errorf("stream lacks %q", want)
		}
	}
}
