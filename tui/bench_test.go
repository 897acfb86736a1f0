package tui

import (
	"fmt"
	"io"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	uv "github.com/charmbracelet/ultraviolet"
)

const benchW, benchH = 160, 48

func benchHarness(b *testing.B, n int) *harness {
	h := newHarness(b, n, benchW, benchH)
	for _, id := range agentIDs(n) {
		ft := h.term(id)
		ft.mu.Lock()
		ft.styled = true
		ft.mu.Unlock()
	}
	h.send(tea.WindowSizeMsg{Width: benchW + 1, Height: benchH})
	h.send(tea.WindowSizeMsg{Width: benchW, Height: benchH})
	h.view()
	// Take every pane's change on every frame (the worst case); the
	// UnfocusedFPS throttle is measured by the "focused" variants.
	h.m.run.slow = 0
	b.Cleanup(h.m.run.life.stop)
	return h
}

// BenchmarkView is the TUI's cost of one frame at 160×48: the Update of the
// frame message plus View. "changed" bumps every pane's screen before each
// frame (the 8-agents-streaming case), "unchanged" draws a frame where no
// screen changed (e.g. the clock tick).
func BenchmarkView(b *testing.B) {
	for _, n := range []int{1, 4, 8} {
		for _, changed := range []bool{true, false} {
			name := fmt.Sprintf("panes_%d/unchanged", n)
			if changed {
				name = fmt.Sprintf("panes_%d/changed", n)
			}
			b.Run(name, func(b *testing.B) {
				h := benchHarness(b, n)
				terms := make([]*fakeTerm, 0, n)
				for _, id := range agentIDs(n) {
					terms = append(terms, h.term(id))
				}
				b.ReportAllocs()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					if changed {
						for _, t := range terms {
							t.bump()
						}
					}
					nm, _ := h.m.Update(frameTickedMsg{})
					h.m = nm.(Model)
					_ = h.m.View()
				}
			})
		}
	}
}

// BenchmarkFrameWithRenderer adds what bubbletea's renderer does with a
// changed frame (parse the content into cells, diff against the previous
// frame, write the changes), to see the whole per-frame cost of the process.
func BenchmarkFrameWithRenderer(b *testing.B) {
	for _, n := range []int{1, 4, 8} {
		for _, variant := range []string{"changed_all", "changed_focused"} {
			b.Run(fmt.Sprintf("panes_%d/%s", n, variant), func(b *testing.B) {
				h := benchHarness(b, n)
				terms := make([]*fakeTerm, 0, n)
				for _, id := range agentIDs(n) {
					terms = append(terms, h.term(id))
				}
				if variant == "changed_focused" {
					terms = terms[:1] // the lead has the focus
				}
				buf := uv.NewScreenBuffer(benchW, benchH)
				scr := uv.NewTerminalRenderer(io.Discard, []string{"TERM=xterm-256color"})
				scr.SetColorProfile(colorprofile.TrueColor)
				scr.SetFullscreen(true)
				scr.Resize(benchW, benchH)
				b.ReportAllocs()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					for _, t := range terms {
						t.bump()
					}
					nm, _ := h.m.Update(frameTickedMsg{})
					h.m = nm.(Model)
					v := h.m.View()
					buf.Clear()
					uv.NewStyledString(v.Content).Draw(buf, buf.Bounds())
					scr.Render(buf.RenderBuffer)
					if err := scr.Flush(); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
