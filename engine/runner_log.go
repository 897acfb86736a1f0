package engine

import (
	"sync"

	"github.com/hivemind-dev/hivemind/vocab"
	"github.com/hivemind-dev/hivemind/workspace"
)

// The workspace types are what the runner is built for.
var (
	_ TaskFiles     = (*workspace.TaskDir)(nil)
	_ StateSaver    = (*workspace.StateStore)(nil)
	_ EventAppender = (*workspace.EventLog)(nil)
)

// runnerLog appends records to events.jsonl in order on its own goroutine,
// so the fsync per record stays off the runner's path. flush waits until
// everything added so far is written.
type runnerLog struct {
	log   EventAppender
	onErr func(error)

	mu      sync.Mutex
	cond    *sync.Cond
	queue   []vocab.EventRecord
	added   uint64
	written uint64
	started bool
	closed  bool
	held    bool
	done    chan struct{}
}

// hold pauses (true) or resumes (false) writing; flush and close still
// wait for everything, so a hold never loses or reorders a record.
func (l *runnerLog) hold(on bool) {
	l.mu.Lock()
	l.held = on
	l.mu.Unlock()
	if !on {
		l.cond.Broadcast()
	}
}

func newRunnerLog(log EventAppender, onErr func(error)) *runnerLog {
	l := &runnerLog{log: log, onErr: onErr, done: make(chan struct{})}
	l.cond = sync.NewCond(&l.mu)
	return l
}

// add queues a record, starting the writer on first use.
func (l *runnerLog) add(rec vocab.EventRecord) {
	if l.log == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		// After Run: write directly, nobody else is writing.
		if err := l.log.Append(rec); err != nil {
			l.onErr(err)
		}
		return
	}
	l.queue = append(l.queue, rec)
	l.added++
	if !l.started {
		l.started = true
		go l.run()
	}
	l.cond.Broadcast()
}

func (l *runnerLog) run() {
	defer close(l.done)
	l.mu.Lock()
	for {
		for (len(l.queue) == 0 || l.held) && !l.closed {
			l.cond.Wait()
		}
		if len(l.queue) == 0 && l.closed {
			l.mu.Unlock()
			return
		}
		batch := l.queue
		l.queue = nil
		l.mu.Unlock()
		for _, rec := range batch {
			if err := l.log.Append(rec); err != nil {
				l.onErr(err)
			}
		}
		l.mu.Lock()
		l.written += uint64(len(batch))
		l.cond.Broadcast()
	}
}

// flush waits until every record added before the call is written.
func (l *runnerLog) flush() {
	l.mu.Lock()
	defer l.mu.Unlock()
	target := l.added
	for l.written < target {
		l.cond.Wait()
	}
}

// close writes what is queued and stops the writer.
func (l *runnerLog) close() {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return
	}
	l.closed = true
	started := l.started
	l.cond.Broadcast()
	l.mu.Unlock()
	if started {
		<-l.done
	}
}
