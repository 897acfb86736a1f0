package web

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/hivemind-dev/hivemind/internal/proto"
	"github.com/hivemind-dev/hivemind/ptyagent/screen"
	"github.com/hivemind-dev/hivemind/vocab"
)

// ticking is a terminal whose one row is new at each tick.
type ticking struct{ v uint64 }

func (s *ticking) Lines(int) []string       { return []string{fmt.Sprintf("line %d", s.v)} }
func (s *ticking) Version() uint64          { return s.v }
func (s *ticking) Modes() screen.Modes      { return screen.Modes{} }
func (s *ticking) ScrollbackLen() int       { return 0 }
func (s *ticking) Cursor() (int, int, bool) { return int(s.v % 10), 0, true }

// The page's focus costs the full rate, the other panes it shows the
// unfocused rate, the panes it does not show nothing, and the slowed
// pane's latest content still arrives: behind the bridge, a server that
// sends each pane as the real one does (proto.Sender, held by the Want's
// FPS) on a clock of its own, ticking at the server's fps while every
// screen changes at every tick; the page counts the frames of each pane.
func TestWebSendsUnfocusedPanesAtTheirRate(t *testing.T) {
	const fps, ticks = 30, 90
	screens := map[vocab.AgentID]*ticking{"lead": {}, "worker_1": {}, "worker_2": {}}
	views := make(chan []proto.Want, 1)
	dial := func() (net.Conn, error) {
		c, srv := net.Pipe()
		go func() {
			pc := proto.NewConn(srv)
			defer pc.Close()
			if _, err := pc.Recv(); err != nil {
				return
			}
			_ = pc.Send(proto.Msg{T: proto.TWelcome, Info: &proto.Info{Title: "rates", FPS: fps}})
			_ = pc.Send(proto.Msg{T: proto.TPanes, Panes: []proto.PaneID{{Agent: "lead", Gen: 1}, {Agent: "worker_1", Gen: 1}, {Agent: "worker_2", Gen: 1}}})
			m, err := pc.Recv()
			if err != nil || m.T != proto.TView {
				return
			}
			views <- m.View
			senders := map[vocab.AgentID]*proto.Sender{}
			now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
			round := func() {
				for _, w := range m.View {
					snd := senders[w.Agent]
					if snd == nil {
						snd = &proto.Sender{}
						senders[w.Agent] = snd
					}
					sc := screens[w.Agent]
					if snd.Hold(sc, 1, w.Scroll, w.FPS, now) > 0 {
						continue
					}
					if p, changed := snd.UpdateAt(w.Agent, sc, 1, w.Scroll, now); changed {
						_ = pc.Send(proto.Msg{T: proto.TPane, Pane: &p})
					}
				}
			}
			for range ticks {
				for _, sc := range screens {
					sc.v++
				}
				round()
				now = now.Add(time.Second / fps)
			}
			now = now.Add(time.Second) // every held pane is due
			round()
			_ = pc.Send(proto.Msg{T: proto.TNotice, Level: "info", Text: "done"})
			for {
				if _, err := pc.Recv(); err != nil {
					return
				}
			}
		}()
		return c, nil
	}
	c := pageOn(t, dial)
	// The page shows the lead, typed into, and worker_1; worker_2 is off
	// screen.
	b, _ := json.Marshal(map[string]any{"t": "view", "view": []proto.Want{{Agent: "lead"}, {Agent: "worker_1", FPS: 1000}}, "focus": "lead"})
	if err := c.Write(context.Background(), websocket.MessageText, b); err != nil {
		t.Fatal(err)
	}
	frames := map[vocab.AgentID]int{}
	mirrors := map[vocab.AgentID]*proto.Mirror{}
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		_, p, err := c.Read(ctx)
		cancel()
		if err != nil {
			t.Fatalf("%v before the server's last frame (frames %v)", err, frames)
		}
		var m proto.Msg
		if strings.HasPrefix(string(p), `{"t":"hello"`) {
			continue // the page's own (pageHello)
		}
		if err := json.Unmarshal(p, &m); err != nil {
			t.Fatal(err)
		}
		if m.T == proto.TNotice && m.Text == "done" {
			break
		}
		if m.T == proto.TPane {
			frames[m.Pane.Agent]++
			if mirrors[m.Pane.Agent] == nil {
				mirrors[m.Pane.Agent] = &proto.Mirror{}
			}
			mirrors[m.Pane.Agent].Apply(*m.Pane)
		}
	}
	view := <-views
	if want := []proto.Want{{Agent: "lead"}, {Agent: "worker_1", FPS: unfocusedFPS}}; !slices.Equal(view, want) {
		t.Errorf("the server was asked %+v, want %+v", view, want)
	}
	if frames["lead"] != ticks {
		t.Errorf("the focused pane: %d frames for %d changes, want every one", frames["lead"], ticks)
	}
	// The unfocused pane: one frame per 1/unfocusedFPS of the server's
	// clock, and the last held one.
	if most := ticks*unfocusedFPS/fps + 2; frames["worker_1"] > most || frames["worker_1"] < 2 {
		t.Errorf("the unfocused pane: %d frames for %d changes, want 2 to %d", frames["worker_1"], ticks, most)
	}
	if frames["worker_2"] != 0 {
		t.Errorf("the pane off screen: %d frames, want none", frames["worker_2"])
	}
	for _, id := range []vocab.AgentID{"lead", "worker_1"} {
		if mr := mirrors[id]; mr == nil || !slices.Equal(mr.Rows, screens[id].Lines(0)) || mr.Cursor == nil || mr.Cursor.X != int(screens[id].v%10) {
			t.Errorf("%s on the page: %+v, want its latest screen %q", id, mr, screens[id].Lines(0))
		}
	}
	t.Logf("frames over %d changes: %v", ticks, frames)
}

// A view's focus must be one of its panes; a rate the page asks is not
// taken (the bridge sets it).
func TestPageViewFocus(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   pageIn
		fps  int
		want []proto.Want
		why  string
	}{
		{"focus", pageIn{Msg: proto.Msg{T: proto.TView, View: []proto.Want{{Agent: "lead", FPS: 1}, {Agent: "reviewer", FPS: 240}}}, Focus: "reviewer"}, 30,
			[]proto.Want{{Agent: "lead", FPS: unfocusedFPS}, {Agent: "reviewer"}}, ""},
		{"no focus", pageIn{Msg: proto.Msg{T: proto.TView, View: []proto.Want{{Agent: "lead"}}}}, 30,
			[]proto.Want{{Agent: "lead", FPS: unfocusedFPS}}, ""},
		{"a server slower than the unfocused rate", pageIn{Msg: proto.Msg{T: proto.TView, View: []proto.Want{{Agent: "lead"}, {Agent: "reviewer"}}}, Focus: "lead"}, 4,
			[]proto.Want{{Agent: "lead"}, {Agent: "reviewer", FPS: 4}}, ""},
		{"focus off the view", pageIn{Msg: proto.Msg{T: proto.TView, View: []proto.Want{{Agent: "lead"}}}, Focus: "worker_9"}, 30,
			nil, "the view's focus is not one of its panes"},
		{"the empty view of a hidden page", pageIn{Msg: proto.Msg{T: proto.TView}}, 30, []proto.Want{}, ""},
	} {
		got, why := pageMsg(tc.in, false, tc.fps)
		if why != tc.why || !slices.Equal(got.View, tc.want) {
			t.Errorf("%s: %+v %q, want %+v %q", tc.name, got.View, why, tc.want, tc.why)
		}
	}
}
