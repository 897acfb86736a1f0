package ptyagent

import (
	"math/rand/v2"
	"testing"
	"time"
)

// The reader's mode machine against a modelled PTY and producer, on a
// virtual clock: the guarantees of the reader's comment hold by
// construction, whatever the machine's load (the MB/s a real PTY reaches
// is the benchmark's business: BenchmarkPTYToScreen, bench/product.sh).

// floorRate is the producer rate (bytes/s) above which the reader streams.
const floorRate = float64(streamFloor) / float64(streamWindow) * float64(time.Second)

// simDrain is one drain of the simulated reader.
type simDrain struct {
	at     time.Duration
	n      int
	paused bool // the reader paused after it
}

// simulate runs readMode for end of virtual time. rate(at) is what the
// producer writes per second at that moment; the PTY holds 20 KiB, a
// producer blocks while it is full. stall(at) is how late the reader is
// for a drain (the machine busy, the feeder behind); besides, each drain
// costs 10 µs to 2 ms.
func simulate(r *rand.Rand, end time.Duration, rate func(time.Duration) float64, stall func(time.Duration) time.Duration) []simDrain {
	const ptyCap = 20 << 10
	base := time.Unix(1e9, 0)
	var (
		m       readMode
		at      time.Duration
		pending float64
		out     []simDrain
	)
	advance := func(d time.Duration) {
		for d > 0 {
			step := min(d, 100*time.Microsecond)
			pending = min(ptyCap, pending+rate(at)*step.Seconds())
			at, d = at+step, d-step
		}
	}
	for at < end {
		for pending < 1 && at < end { // the reader waits for output
			advance(100 * time.Microsecond)
		}
		advance(stall(at) + time.Duration(10+r.IntN(2000))*time.Microsecond)
		n := int(pending)
		pending -= float64(n)
		m.drained(base.Add(at), n)
		p := m.pause(false)
		out = append(out, simDrain{at, n, p})
		if p {
			advance(coalesceDelay)
		}
	}
	return out
}

// randomStalls makes the reader late by up to 300 ms for one drain in
// ten, late by up to 5 ms otherwise.
func randomStalls(r *rand.Rand) func(time.Duration) time.Duration {
	return func(time.Duration) time.Duration {
		if r.IntN(10) == 0 {
			return time.Duration(r.IntN(300)) * time.Millisecond
		}
		return time.Duration(r.IntN(5000)) * time.Microsecond
	}
}

func pausesIn(ds []simDrain, from, to time.Duration) (pauses, drains int) {
	for _, d := range ds {
		if d.at >= from && d.at < to {
			drains++
			if d.paused {
				pauses++
			}
		}
	}
	return pauses, drains
}

// A producer that floods (at least twice the streaming rate, up to PTY
// speed) is held for one pause at most, when the reader first sees it,
// and never again while it floods, however late the reader is for its
// drains.
func TestReadModeFlood(t *testing.T) {
	for seed := range uint64(300) {
		r := rand.New(rand.NewPCG(seed, 1))
		bps := 2*floorRate + r.Float64()*(100e6-2*floorRate)
		ds := simulate(r, 3*time.Second, func(time.Duration) float64 { return bps }, randomStalls(r))
		if p, n := pausesIn(ds, 0, 3*time.Second); p > 1 {
			t.Fatalf("seed %d, %.0f KB/s: %d pauses in %d drains while the producer floods", seed, bps/1e3, p, n)
		}
	}
}

// A trickle (half the streaming rate or less) is read in batches: the
// reader pauses after every drain, so it drains at most once per
// coalesceDelay.
func TestReadModeTrickle(t *testing.T) {
	for seed := range uint64(300) {
		r := rand.New(rand.NewPCG(seed, 2))
		bps := 100 + r.Float64()*(floorRate/2-100)
		ds := simulate(r, 3*time.Second, func(time.Duration) float64 { return bps }, func(time.Duration) time.Duration { return 0 })
		p, n := pausesIn(ds, 0, 3*time.Second)
		if p != n || n > int(3*time.Second/coalesceDelay) {
			t.Fatalf("seed %d, %.0f B/s: %d pauses in %d drains: the trickle is not coalesced", seed, bps, p, n)
		}
	}
}

// A producer that trickles, floods, then trickles again is held once at
// most during the flood, and read in batches again two windows after it.
func TestReadModeTrickleFloodTrickle(t *testing.T) {
	const phase = time.Second
	for seed := range uint64(300) {
		r := rand.New(rand.NewPCG(seed, 3))
		slow := 100 + r.Float64()*(floorRate/2-100)
		fast := 2*floorRate + r.Float64()*(100e6-2*floorRate)
		rate := func(at time.Duration) float64 {
			if at >= phase && at < 2*phase {
				return fast
			}
			return slow
		}
		late := randomStalls(r)
		stall := func(at time.Duration) time.Duration {
			if at >= phase && at < 2*phase {
				return late(at)
			}
			return 0
		}
		ds := simulate(r, 3*phase, rate, stall)
		if p, n := pausesIn(ds, phase, 2*phase); p > 1 {
			t.Fatalf("seed %d: %d pauses in %d drains of the flood", seed, p, n)
		}
		// Back to trickling: the last window of the flood, plus the
		// reader's last stall, plus one window that sees the trickle.
		settle := 2*phase + 2*streamWindow + 300*time.Millisecond
		if p, n := pausesIn(ds, settle, 3*phase); p != n || n == 0 {
			t.Fatalf("seed %d: %d pauses in %d drains after the flood", seed, p, n)
		}
	}
}
