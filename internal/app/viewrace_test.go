package app

import (
	"net"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/hivemind-dev/hivemind/internal/proto"
	"github.com/hivemind-dev/hivemind/ptyagent/screen"
	"github.com/hivemind-dev/hivemind/tui"
	"github.com/hivemind-dev/hivemind/vocab"
)

// The views of a client race: the goroutine that receives a new pane
// list and the UI's on a new layout (or scroll) both build one and send
// it, and the server keeps the last it gets. Here the UI's first view
// (the lead alone) is built, then held before it is sent while a second
// (lead and worker) is built and sent: the server's last view must be the
// second, the newest state, not the one that happened to be sent last.
func TestServerLinkSendsTheNewestViewLast(t *testing.T) {
	cEnd, sEnd := net.Pipe()
	defer cEnd.Close()
	defer sEnd.Close()
	server := proto.NewConn(sEnd)
	views := make(chan []proto.Want, 16)
	go func() { // the server's reader
		for {
			m, err := server.Recv()
			if err != nil {
				close(views)
				return
			}
			if m.T == proto.TView {
				views <- m.View
			} else if m.T == proto.TCmd {
				views <- nil // the end of the test's messages
			}
		}
	}()
	link := newServerLink(proto.NewConn(cEnd), false)
	link.panes([]proto.PaneID{{Agent: "lead", Gen: 1}, {Agent: "worker_1", Gen: 2}})
	if v := <-views; len(v) != 2 {
		t.Fatalf("before the layout, the view %v asks every pane", v)
	}

	built, release := make(chan struct{}), make(chan struct{})
	first := true
	testViewBuilt = func([]proto.Want) {
		if first { // only the first view's sender runs this
			first = false
			close(built)
			<-release
		}
	}
	t.Cleanup(func() { testViewBuilt = nil })
	older := make(chan struct{})
	go func() {
		defer close(older)
		link.Showing(tui.Shown{Panes: []vocab.AgentID{"lead"}, Fast: "lead"})
	}()
	<-built
	link.Showing(tui.Shown{Panes: []vocab.AgentID{"lead", "worker_1"}, Fast: "lead", SlowFPS: 5})
	close(release)
	<-older
	link.cmd(proto.CmdPause) // after every view
	var last []proto.Want
	timeout := time.After(30 * time.Second)
	for {
		select {
		case v, ok := <-views:
			if !ok {
				t.Fatal("the connection ended")
			}
			if v != nil {
				last = v
				continue
			}
			want := []proto.Want{{Agent: "lead"}, {Agent: "worker_1", FPS: 5}}
			if !slices.Equal(last, want) {
				t.Fatalf("the server's last view is %v, want the newest %v", last, want)
			}
			return
		case <-timeout:
			t.Fatal("the views did not arrive in 30 s")
		}
	}
}

// resizeOrder is fakePanes whose first Resize waits for hold; size is the
// terminal's last size.
type resizeOrder struct {
	fakePanes
	hold chan struct{}

	mu    sync.Mutex
	calls int
	size  paneSize
}

func (r *resizeOrder) Resize(_ vocab.AgentID, cols, rows int) error {
	r.mu.Lock()
	r.calls++
	first := r.calls == 1
	r.mu.Unlock()
	if first {
		<-r.hold
	}
	r.mu.Lock()
	r.size = paneSize{cols, rows}
	r.mu.Unlock()
	return nil
}

// Clients size a pane concurrently: a big client's fit (80x24) is on its
// way to the terminal when a smaller client attaches and fits it to
// 60x20. The terminal must end at 60x20, the size its clients ask for
// now, whichever resize the scheduler finishes first.
func TestServerResizesInTheOrderItFits(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newServer()
		src := &resizeOrder{fakePanes: fakePanes{"lead": {s: screen.New(screen.Options{Cols: 100, Rows: 40})}}, hold: make(chan struct{})}
		s.src = src
		fit := func(cl *client) <-chan struct{} {
			s.mu.Lock()
			s.clients[cl] = struct{}{}
			s.mu.Unlock()
			done := make(chan struct{})
			go func() {
				defer close(done)
				s.fitSize("lead")
			}()
			return done
		}
		big := fit(&client{sizes: map[vocab.AgentID]paneSize{"lead": {80, 24}}})
		synctest.Wait() // the big client's resize is on its way
		small := fit(&client{sizes: map[vocab.AgentID]paneSize{"lead": {60, 20}}})
		synctest.Wait() // the small client's fit is made (or waits its turn)
		close(src.hold)
		<-big
		<-small
		if want := (paneSize{60, 20}); src.size != want {
			t.Fatalf("the terminal is %v after both fits, want %v (the smallest size asked)", src.size, want)
		}
	})
}
