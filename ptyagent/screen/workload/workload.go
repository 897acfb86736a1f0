// Package workload generates a deterministic, agent-like terminal output
// stream for benchmarks and differential tests of the screen emulator
// (issue 8): Ink-style status redraws (half inside ?2026 brackets),
// streamed markdown with long wrapping lines and CJK/emoji/combining marks,
// syntax-coloured code, diffs with true-colour backgrounds and ESC[K, tool
// output with 2 kB lines and tabs, CR progress bars, alt-screen pager
// episodes (CUP, DECSTBM, SU, IL/DL, reverse video), a main-screen DECSTBM
// status bar with DECSC/DECRC, OSC 0 titles and OSC 8 links.
package workload

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// Kind names a kind of segment.
type Kind string

// Segment kinds, with their share of the stream in bytes.
const (
	Status   Kind = "status"   // 35 %
	Markdown Kind = "markdown" // 18 %
	Code     Kind = "code"     // 12 %
	Diff     Kind = "diff"     // 10 %
	Tool     Kind = "tool"     // 12 %
	Progress Kind = "progress" // 4 %
	Pager    Kind = "pager"    // 7 % (alternate screen)
	Region   Kind = "region"   // 4 % (main-screen scroll region)
)

var shares = []struct {
	kind  Kind
	share float64
}{
	{Status, 0.35}, {Markdown, 0.18}, {Code, 0.12}, {Diff, 0.10},
	{Tool, 0.12}, {Progress, 0.04}, {Pager, 0.07}, {Region, 0.04},
}

// Segment is one episode of the stream, data[Start:End]. Cuts lists
// offsets inside it where a sequence starts (safe places to stop feeding
// while the episode's state, e.g. the alternate screen, is active).
type Segment struct {
	Kind       Kind
	Start, End int
	Cuts       []int
}

// Options size the generated stream.
type Options struct {
	Seed uint64
	Size int // approximate number of bytes
	Cols int // terminal width the stream is drawn for (default 120)
	Rows int // terminal height (default 40)
}

type gen struct {
	r          *rand.Rand
	b          strings.Builder
	cols, rows int
	seg        *Segment
}

// Generate returns the stream and its segments. The same options always
// give the same bytes.
func Generate(o Options) ([]byte, []Segment) {
	if o.Cols <= 0 {
		o.Cols = 120
	}
	if o.Rows <= 0 {
		o.Rows = 40
	}
	g := &gen{r: rand.New(rand.NewPCG(o.Seed, 0x5eed)), cols: o.Cols, rows: o.Rows}
	g.b.Grow(o.Size + 64<<10)
	produced := map[Kind]int{}
	var segs []Segment
	for g.b.Len() < o.Size {
		// Pick the kind furthest behind its share, so the mix holds at
		// every prefix length; randomness decides ties and contents.
		total := float64(g.b.Len() + 4096)
		best, bestDef := shares[0].kind, -1e18
		for _, s := range shares {
			def := s.share*total - float64(produced[s.kind]) + g.r.Float64()*512
			if def > bestDef {
				best, bestDef = s.kind, def
			}
		}
		segs = append(segs, Segment{Kind: best, Start: g.b.Len()})
		g.seg = &segs[len(segs)-1]
		switch best {
		case Status:
			g.status()
		case Markdown:
			g.markdown()
		case Code:
			g.code()
		case Diff:
			g.diff()
		case Tool:
			g.tool()
		case Progress:
			g.progress()
		case Pager:
			g.pager()
		case Region:
			g.region()
		}
		g.seg.End = g.b.Len()
		produced[best] += g.seg.End - g.seg.Start
	}
	return []byte(g.b.String()), segs
}

func (g *gen) w(s string)                { g.b.WriteString(s) }
func (g *gen) f(format string, a ...any) { fmt.Fprintf(&g.b, format, a...) }
func (g *gen) cut()                      { g.seg.Cuts = append(g.seg.Cuts, g.b.Len()) }
func (g *gen) pick(xs []string) string   { return xs[g.r.IntN(len(xs))] }
func (g *gen) n(lo, hi int) int          { return lo + g.r.IntN(hi-lo+1) }
func (g *gen) chance(p float64) bool     { return g.r.Float64() < p }
func (g *gen) rgb() (int, int, int)      { return g.r.IntN(256), g.r.IntN(256), g.r.IntN(256) }
func (g *gen) fgRGB() string {
	r, gg, b := g.rgb()
	return fmt.Sprintf("\x1b[38;2;%d;%d;%dm", r, gg, b)
}
func (g *gen) title(s string)        { g.f("\x1b]0;%s\x07", s) }
func (g *gen) link(url, text string) { g.f("\x1b]8;;%s\x1b\\%s\x1b]8;;\x1b\\", url, text) }
func (g *gen) words(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = g.word()
	}
	return out
}
func (g *gen) sentence(n int) string { return strings.Join(g.words(n), " ") }

var plainWords = strings.Fields(`the agent reads files and writes code while the reviewer checks
each checkpoint plan output terminal screen emulator buffer scroll region cursor style
parser render frame pane session worker lead hook marker assignment budget latency
throughput memory ring cell row column width grapheme escape sequence benchmark result`)

var fancyWords = []string{
	"日本語", "中文字符", "한국어", "テスト", "🎉", "✅", "🚀", "café", "naïve",
	"e\u0301t\u0301e\u0301", "✔\ufe0f", "❤\ufe0f", "✳", "→", "…", "“quoted”", "Ünïcödé",
	"αβγ", "Привет", "ｆｕｌｌ", "😀", "👍", "🔥", "✻",
}

func (g *gen) word() string {
	if g.chance(0.08) {
		return g.pick(fancyWords)
	}
	return g.pick(plainWords)
}

var spinners = []string{"✻", "✶", "✢", "·", "✳", "✽"}

// status is an Ink-style redraw of a few bottom lines: cursor up, erase,
// redraw; half of them inside synchronized-output brackets.
func (g *gen) status() {
	lines := g.n(2, 5)
	g.w(strings.Repeat("\r\n", lines))
	for frame := g.n(20, 60); frame > 0; frame-- {
		g.cut()
		sync := g.chance(0.5)
		if sync {
			g.w("\x1b[?2026h")
		}
		if g.chance(0.1) {
			g.title(g.pick(spinners) + " Claude Code")
		}
		g.f("\x1b[%dA", lines)
		for i := 0; i < lines; i++ {
			g.w("\r\x1b[2K")
			switch i {
			case 0:
				g.f("\x1b[38;5;174m%s\x1b[39m \x1b[1mThinking…\x1b[22m \x1b[2m(%ds · ↑ %d.%dk tokens · esc to interrupt)\x1b[22m",
					g.pick(spinners), g.n(1, 300), g.n(1, 40), g.n(0, 9))
			case lines - 1:
				g.f("\x1b[38;2;136;136;136m  ⏵⏵ accept edits on\x1b[39m \x1b[2m(shift+tab to cycle)\x1b[22m")
			default:
				g.f("\x1b[38;2;%d;%d;%dm│\x1b[39m %s", 80, 80, 80+g.r.IntN(100), g.sentence(g.n(3, 10)))
			}
			g.w("\x1b[K")
			if i < lines-1 {
				g.w("\n")
			}
		}
		if sync {
			g.w("\x1b[?2026l")
		}
	}
	g.w("\r\n")
}

func (g *gen) markdown() {
	for para := g.n(2, 6); para > 0; para-- {
		g.cut()
		switch g.r.IntN(4) {
		case 0:
			g.f("\x1b[1;38;5;%dm## %s\x1b[0m\r\n", g.n(16, 231), g.sentence(g.n(2, 6)))
		case 1:
			for item := g.n(2, 5); item > 0; item-- {
				g.f("  • %s\r\n", g.sentence(g.n(5, 25)))
			}
		default:
			words := g.words(g.n(30, 120))
			for i, wd := range words {
				switch {
				case g.chance(0.05):
					g.f("\x1b[1m%s\x1b[22m", wd)
				case g.chance(0.04):
					g.f("%s%s\x1b[39m", g.fgRGB(), wd)
				case g.chance(0.03):
					g.f("\x1b[3;38;5;%dm`%s`\x1b[0m", g.n(16, 231), wd)
				case g.chance(0.01):
					g.link("https://example.com/"+wd, wd)
				default:
					g.w(wd)
				}
				if i < len(words)-1 {
					g.w(" ")
				}
			}
			g.w("\r\n")
		}
		g.w("\r\n")
	}
}

var keywords = []string{"func", "return", "if", "for", "range", "var", "const", "type", "struct", "package", "import", "defer", "go"}

func (g *gen) code() {
	g.f("\x1b[38;5;244m```go\x1b[39m\r\n")
	for n := g.n(8, 40); n > 0; n-- {
		if n%8 == 0 {
			g.cut()
		}
		g.f("\x1b[38;5;240m%4d\x1b[39m ", g.n(1, 999))
		g.w(strings.Repeat("\t", g.n(0, 3)))
		for tok := g.n(2, 9); tok > 0; tok-- {
			switch g.r.IntN(5) {
			case 0:
				g.f("\x1b[38;2;198;120;221m%s\x1b[39m ", g.pick(keywords))
			case 1:
				g.f("\x1b[38;2;152;195;121m\"%s\"\x1b[39m ", g.word())
			case 2:
				g.f("\x1b[38;2;97;175;239m%s\x1b[39m(", g.pick(plainWords))
			case 3:
				g.f("\x1b[38;5;%dm%d\x1b[39m ", g.n(160, 220), g.r.IntN(1000))
			default:
				g.f("%s ", g.pick(plainWords))
			}
		}
		if g.chance(0.3) {
			g.f("\x1b[2;3m// %s\x1b[0m", g.sentence(g.n(2, 8)))
		}
		g.w("\r\n")
	}
	g.f("\x1b[38;5;244m```\x1b[39m\r\n")
}

func (g *gen) diff() {
	g.f("\x1b[1m⏺ Update(\x1b[0m%s\x1b[1m)\x1b[0m\r\n", g.pick([]string{"engine/step.go", "tui/view.go", "ptyagent/session.go"}))
	g.f("  ⎿  Updated with \x1b[1m%d\x1b[0m additions and \x1b[1m%d\x1b[0m removals\r\n", g.n(1, 40), g.n(0, 30))
	for n := g.n(6, 30); n > 0; n-- {
		if n%6 == 0 {
			g.cut()
		}
		num := g.n(1, 2000)
		switch g.r.IntN(3) {
		case 0:
			g.f("\x1b[38;5;246m%6d\x1b[39m \x1b[48;2;34;92;43m\x1b[38;2;220;255;220m+ %s\x1b[K\x1b[0m\r\n", num, g.sentence(g.n(3, 14)))
		case 1:
			g.f("\x1b[38;5;246m%6d\x1b[39m \x1b[48;2;122;41;54m\x1b[38;2;255;220;220m- %s\x1b[K\x1b[0m\r\n", num, g.sentence(g.n(3, 14)))
		default:
			g.f("\x1b[38;5;246m%6d\x1b[39m   %s\r\n", num, g.sentence(g.n(3, 14)))
		}
	}
}

func (g *gen) tool() {
	g.f("\x1b[1m⏺ Bash\x1b[0m(%s)\r\n", g.pick([]string{"go test ./...", "ls -la", "grep -rn TODO .", "cat go.sum"}))
	for n := g.n(5, 25); n > 0; n-- {
		if n%5 == 0 {
			g.cut()
		}
		if g.chance(0.15) {
			// A 2 kB line with tabs.
			var lb strings.Builder
			for lb.Len() < 2000 {
				lb.WriteString(g.word())
				if g.chance(0.2) {
					lb.WriteByte('\t')
				} else {
					lb.WriteByte(' ')
				}
			}
			g.w(lb.String())
		} else {
			g.f("%s\t%d\t%s", g.pick(plainWords), g.r.IntN(100000), g.sentence(g.n(2, 12)))
		}
		g.w("\r\n")
	}
}

func (g *gen) progress() {
	width := g.n(20, 50)
	label := g.pick([]string{"Downloading", "Indexing", "Compiling", "Uploading"})
	for pct := 0; pct <= 100; pct += g.n(1, 4) {
		if pct%10 < 4 {
			g.cut()
		}
		done := pct * width / 100
		g.f("\r%s \x1b[32m%s\x1b[2m%s\x1b[0m %3d%%", label, strings.Repeat("█", done), strings.Repeat("░", width-done), pct)
	}
	g.w("\r\n")
}

// pager is an alternate-screen episode: full draw, scroll region, SU,
// IL/DL, reverse-video status line, then back to the main screen.
func (g *gen) pager() {
	g.w("\x1b[?1049h\x1b[H\x1b[2J")
	g.title("less " + g.word())
	for y := 1; y <= g.rows-1; y++ {
		g.f("\x1b[%d;1H%s\x1b[K", y, g.sentence(g.n(3, 18)))
	}
	g.f("\x1b[%d;1H\x1b[7m %s (press q) \x1b[27m\x1b[K", g.rows, g.word())
	g.f("\x1b[1;%dr", g.rows-1)
	for step := g.n(5, 20); step > 0; step-- {
		g.cut()
		switch g.r.IntN(4) {
		case 0:
			g.f("\x1b[%dS\x1b[%d;1H%s\x1b[K", g.n(1, 3), g.rows-1, g.sentence(g.n(3, 18)))
		case 1:
			g.f("\x1b[%d;1H\x1b[%dL%s", g.n(1, g.rows-2), g.n(1, 3), g.sentence(g.n(3, 12)))
		case 2:
			g.f("\x1b[%d;1H\x1b[%dM", g.n(1, g.rows-2), g.n(1, 3))
		default:
			g.f("\x1b[%d;%dH\x1b[7m%s\x1b[27m", g.n(1, g.rows-1), g.n(1, g.cols-20), g.word())
		}
	}
	g.f("\x1b[r\x1b[%d;1H\x1b[7m(END)\x1b[27m\x1b[K", g.rows)
	g.w("\x1b[?1049l")
}

// region is a main-screen scroll region with a status bar drawn below it
// between DECSC and DECRC.
func (g *gen) region() {
	g.f("\x1b[1;%dr\x1b[%d;1H", g.rows-1, g.rows-1)
	for n := g.n(10, 40); n > 0; n-- {
		if n%5 == 0 {
			g.cut()
		}
		g.f("%s\r\n", g.sentence(g.n(3, 15)))
		if n%3 == 0 {
			g.f("\x1b7\x1b[%d;1H\x1b[44;97m %s %d%% \x1b[0m\x1b[K\x1b8", g.rows, g.word(), g.r.IntN(100))
		}
	}
	g.w("\x1b[r")
	g.f("\x1b[%d;1H\r\n", g.rows)
}
