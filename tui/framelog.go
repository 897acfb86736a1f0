package tui

import (
	"bufio"
	"fmt"
	"io"
	"sync"
	"time"
)

// frameLog records how long each View takes — the model's part of a frame
// — for the product benchmark (bench/product, via HIVEMIND_FRAME_LOG). One
// line a View: "<unix nanos> <view nanos>". Buffered; flushed at most once
// a second, so it costs no system call per frame.
type frameLog struct {
	mu    sync.Mutex
	w     *bufio.Writer
	flush time.Time
}

func newFrameLog(w io.Writer) *frameLog {
	if w == nil {
		return nil
	}
	return &frameLog{w: bufio.NewWriter(w)}
}

// observe records a View that started at t0.
func (f *frameLog) observe(t0 time.Time) {
	if f == nil {
		return
	}
	now := time.Now()
	f.mu.Lock()
	defer f.mu.Unlock()
	fmt.Fprintf(f.w, "%d %d\n", now.UnixNano(), now.Sub(t0).Nanoseconds())
	if now.Sub(f.flush) >= time.Second {
		_ = f.w.Flush()
		f.flush = now
	}
}
