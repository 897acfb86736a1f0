package screen

import (
	"fmt"
	"runtime"
	"sync"
	"testing"

	"github.com/hivemind-dev/hivemind/ptyagent/screen/workload"
)

var (
	benchOnce sync.Once
	benchData []byte
)

// benchWorkload is the issue-8 workload: 20 MB, seed 1, drawn for 120x40.
func benchWorkload() []byte {
	benchOnce.Do(func() {
		benchData, _ = workload.Generate(workload.Options{Seed: 1, Size: 20 << 20})
	})
	return benchData
}

// feed writes data in PTY-sized chunks.
func feed(s Screen, data []byte) {
	const chunk = 4096
	for len(data) > 0 {
		n := min(chunk, len(data))
		_, _ = s.Write(data[:n])
		data = data[n:]
	}
}

func benchmarkEmulator(b *testing.B, mk func(Options) Screen) {
	data := benchWorkload()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		s := mk(Options{Cols: 120, Rows: 40, Scrollback: 10000})
		feed(s, data)
		_ = s.Close()
	}
}

// BenchmarkEmulator measures emulator throughput (MB/s) on the workload.
func BenchmarkEmulator(b *testing.B) {
	b.Run("hivemind", func(b *testing.B) { benchmarkEmulator(b, New) })
	b.Run("xvt", func(b *testing.B) { benchmarkEmulator(b, NewVT) })
}

// BenchmarkMemory reports the heap one 120x40 pane holds after the 20 MB
// workload with 10 000 lines of scrollback (MiB/pane).
func BenchmarkMemory(b *testing.B) {
	b.Run("hivemind", func(b *testing.B) { benchmarkMemory(b, New) })
	b.Run("xvt", func(b *testing.B) { benchmarkMemory(b, NewVT) })
}

func benchmarkMemory(b *testing.B, mk func(Options) Screen) {
	data := benchWorkload()
	var mib float64
	var sb int
	for range b.N {
		before := heapInUse()
		s := mk(Options{Cols: 120, Rows: 40, Scrollback: 10000})
		feed(s, data)
		mib = float64(heapInUse()-before) / (1 << 20)
		sb = s.ScrollbackLen()
		runtime.KeepAlive(s)
		_ = s.Close()
	}
	b.ReportMetric(mib, "MiB/pane")
	b.ReportMetric(float64(sb), "scrollback-lines")
}

func heapInUse() int64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

// BenchmarkLines measures rendering every row of 1, 4 and 8 panes (the
// emulator's share of composing one TUI frame), each 120x40 after 1 MB of
// the workload.
func BenchmarkLines(b *testing.B) {
	data := benchWorkload()[:1<<20]
	for _, n := range []int{1, 4, 8} {
		b.Run(fmt.Sprintf("panes=%d", n), func(b *testing.B) {
			panes := make([]Screen, n)
			for i := range panes {
				panes[i] = New(Options{Cols: 120, Rows: 40})
				feed(panes[i], data)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				for _, p := range panes {
					_ = p.Lines(0)
				}
			}
		})
	}
}

// BenchmarkResize measures one zoom or unzoom of a 120x40 pane holding
// 2000 lines of scrollback from the workload: the width changes, so the
// scrollback and the screen are reflowed (the cost is per line, never per
// byte written).
func BenchmarkResize(b *testing.B) {
	data := benchWorkload()[:4<<20]
	s := New(Options{Cols: 120, Rows: 40, Scrollback: 2000})
	defer func() { _ = s.Close() }()
	feed(s, data)
	sizes := [][2]int{{80, 30}, {120, 40}}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		sz := sizes[i%2]
		s.Resize(sz[0], sz[1])
	}
	b.ReportMetric(float64(s.ScrollbackLen()), "scrollback-lines")
}
