package screen

import (
	"encoding/binary"
	"io"
	"math/bits"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/ansi/parser"
)

// cell is one screen column: a rune (0 = blank) or a special value, and an
// interned style id. 8 bytes.
type cell struct {
	r  int32
	st uint32
}

// contCell marks the right half of a wide character; values below it index
// Term.combos (a base rune with combining marks): -(i+2).
const contCell = -1

// line is one screen row, exactly cols cells wide (lines being reflowed
// may be shorter or longer).
type line struct {
	c []cell
	// used counts the cells written, as tmux's cellused: one past the
	// rightmost cell a character was written to since the row was last
	// cleared whole. Reflow moves cells up to it and puts the cursor at
	// it when the cursor was past it.
	used    int
	wrapped bool // the text continues on the next row (soft wrap)
}

type savedCursor struct {
	x, y     int
	wrapNext bool
	pen      style
	origin   bool
	g0DEC    bool
	set      bool
}

// pstate is the input state of Term.Write.
type pstate uint8

const (
	psGround pstate = iota
	psUTF8          // inside a multi-byte character split across writes
	psSeq           // inside an ESC/CSI sequence, fed to the x/ansi parser
	psStr           // inside an OSC/DCS/SOS/PM/APC string
	psStrEsc        // ESC seen inside a string
)

// Term is Hivemind's own terminal emulator: the Screen returned by New.
//
// Rows are slices of 8-byte cells held by pointer, so scrolling a region
// moves O(rows) pointers and never copies cells; styles, combining
// sequences and link targets are interned; lines leaving the top of the
// main screen are encoded compactly (UTF-8 runs per style) into a capped
// ring. Escape sequences are parsed with x/ansi's parser; printable text is
// handled directly in runs, and control strings are collected here with
// their real terminators (BEL, ESC \, CAN/SUB, or a 0x9C that is not a
// UTF-8 continuation byte), which avoids the C1 trap of the pinned x/ansi.
type Term struct {
	cols, rows int
	main, alt  []*line
	scr        []*line // main or alt
	altOn      bool
	spare      []*line                 // scratch for region scrolls
	encRun     [utf8.UTFMax * 256]byte // scratch for encode
	encBuf     []byte                  // scratch for encode

	x, y     int
	wrapNext bool // a character was written in the last column
	pen      style
	penID    uint32
	eraseID  uint32 // pen's background only, for erased cells
	eraseOK  bool   // eraseID is up to date with pen

	memo        []sgrMemo // SGRs seen, by pen id and parameters
	prevPen     style     // the pen before the last SGR that changed it
	prevID      uint32    // its interned id
	penCacheKey [1 << penCacheBits]style
	penCacheID  [1 << penCacheBits]uint32
	penCacheOK  [1 << penCacheBits]bool
	saved       savedCursor
	altSaved    savedCursor // cursor saved by ?1049

	top, bot int
	origin   bool
	autowrap bool
	insert   bool
	lnm      bool
	g0DEC    bool // G0 is DEC special graphics
	tabs     []bool
	modes    Modes
	title    string
	lastRune rune // single-byte character REP repeats, 0 for none
	zwj      bool // a zero-width joiner is pending

	styles   styleTable
	combos   []string
	comboIdx map[string]int32
	links    []string
	linkIdx  map[string]uint32

	sb scrollback
	// hscrolled counts the scrollback lines that scrolled off the screen
	// since it was last cleared into the scrollback, as tmux's hscrolled:
	// only those come back when the height grows.
	hscrolled int
	rcache    []rowCache // Lines' per-row rendering cache

	p       *ansi.Parser
	fparams []ansi.Param
	// slow (tests) turns the fast paths off: every CSI goes through the
	// x/ansi parser, every non-ASCII character through printRune, every
	// SGR through updatePen, and lines are encoded cell by cell, so the
	// fast paths can be checked against the general ones.
	slow    bool
	st      pstate
	ubuf    [4]byte
	un      int
	strKind byte
	strNeed int
	strOver bool
	body    []byte

	replies   chan []byte
	replyDone chan struct{}

	version uint64
	// past is the cursor the last Resize left, with tmux's column (which
	// may lie past the right edge): it still holds while the cursor has
	// not moved.
	past   pastCursor
	closed bool
	panics int
}

const penCacheBits = 10

// maxCombos bounds the interned combining sequences; past it, combining
// marks on new sequences are dropped.
const maxCombos = 1 << 16

// maxComboLen bounds the bytes of one cell (tmux's UTF8_SIZE); what
// would not fit is dropped.
const maxComboLen = 21

func newTerm(opts Options) *Term {
	initWidths()
	opts = opts.Normalized()
	t := &Term{
		cols:     opts.Cols,
		rows:     opts.Rows,
		autowrap: true,
		styles:   newStyleTable(),
		comboIdx: map[string]int32{},
		links:    []string{""},
		linkIdx:  map[string]uint32{"": 0},
		p:        ansi.NewParser(),
	}
	t.sb.max = opts.Scrollback
	t.modes.CursorVisible = true
	t.main = t.newLines(t.rows)
	t.alt = t.newLines(t.rows)
	t.scr = t.main
	t.bot = t.rows - 1
	t.resetTabs()
	t.p.SetParamsSize(32)
	t.p.SetDataSize(0)
	t.p.SetHandler(ansi.Handler{
		Execute:   t.execute,
		HandleCsi: t.csi,
		HandleEsc: t.esc,
	})
	if opts.Reply != nil {
		// Replies are written by their own goroutine so that Write never
		// blocks on a child that is not reading its input.
		t.replies = make(chan []byte, 64)
		t.replyDone = make(chan struct{})
		go func(w io.Writer, ch <-chan []byte, done chan<- struct{}) {
			defer close(done)
			for b := range ch {
				_, _ = w.Write(b)
			}
		}(opts.Reply, t.replies, t.replyDone)
	}
	return t
}

func (t *Term) newLines(n int) []*line {
	ls := make([]*line, n)
	cells := make([]cell, n*t.cols)
	for i := range ls {
		ls[i] = &line{c: cells[i*t.cols : (i+1)*t.cols : (i+1)*t.cols]}
	}
	return ls
}

func (t *Term) resetTabs() {
	t.tabs = make([]bool, t.cols)
	for i := 8; i < t.cols; i += 8 {
		t.tabs[i] = true
	}
}

func (t *Term) reply(s string) {
	if t.replies == nil || t.closed {
		return
	}
	select {
	case t.replies <- []byte(s):
	default: // the writer is stuck; dropping a reply beats blocking output
	}
}

// Write feeds child output. It never panics (a bug in a handler is
// contained and counted) and never fails.
func (t *Term) Write(p []byte) (int, error) {
	if t.closed || len(p) == 0 {
		return len(p), nil
	}
	t.version++
	t.write(p)
	return len(p), nil
}

func (t *Term) write(p []byte) {
	defer func() {
		if r := recover(); r != nil {
			t.panics++
			t.st = psGround
			t.p.Reset()
			t.clampCursor()
		}
	}()
	i := 0
	for i < len(p) {
		switch t.st {
		case psGround:
			i = t.ground(p, i)
		case psUTF8:
			b := p[i]
			if b < 0x80 || b > 0xBF {
				t.un = 0
				t.st = psGround
				continue // reprocess b
			}
			t.ubuf[t.un] = b
			t.un++
			i++
			if utf8.FullRune(t.ubuf[:t.un]) {
				r, n := utf8.DecodeRune(t.ubuf[:t.un])
				t.un = 0
				t.st = psGround
				if r != utf8.RuneError || n > 1 {
					t.printRune(r)
				}
			}
		case psSeq:
			b := p[i]
			if b >= 0x80 {
				// 8-bit bytes abort a sequence; handle b in text.
				t.p.Reset()
				t.st = psGround
				continue
			}
			i++
			t.p.Advance(b)
			switch t.p.State() {
			case parser.GroundState:
				t.st = psGround
			case parser.OscStringState:
				t.startString(']')
			case parser.DcsEntryState:
				t.startString('P')
			case parser.SosStringState:
				t.startString('X')
			case parser.PmStringState:
				t.startString('^')
			case parser.ApcStringState:
				t.startString('_')
			}
		case psStr:
			b := p[i]
			i++
			if t.strNeed > 0 && b >= 0x80 && b <= 0xBF {
				t.strNeed--
				t.put(b)
				continue
			}
			t.strNeed = 0
			switch {
			case b == 0x07:
				// 8-bit ST (0x9C) is not recognised in UTF-8 mode, as in tmux.
				t.dispatchString()
				t.st = psGround
			case b == 0x1b:
				t.st = psStrEsc
			case b == 0x18 || b == 0x1A:
				t.st = psGround
			default:
				switch {
				case b >= 0xC2 && b <= 0xDF:
					t.strNeed = 1
				case b >= 0xE0 && b <= 0xEF:
					t.strNeed = 2
				case b >= 0xF0 && b <= 0xF4:
					t.strNeed = 3
				}
				t.put(b)
			}
		case psStrEsc:
			if p[i] == '\\' {
				i++
				t.dispatchString()
				t.st = psGround
				continue
			}
			// ESC + anything else aborts the string and starts a sequence.
			t.p.Reset()
			t.p.Advance(0x1b)
			t.st = psSeq
		}
	}
}

// ground handles p from i in the ground state, in one loop until a byte
// leaves that state (an ESC that does not start a whole CSI fastCSI takes,
// a character split across writes) or p ends, and returns where it
// stopped.
func (t *Term) ground(p []byte, i int) int {
	for i < len(p) {
		b := p[i]
		if b >= 0x20 && b < 0x7f {
			j := i + 1 + printableLen(p[i+1:])
			t.printASCII(p[i:j])
			i = j
			continue
		}
		if b < 0x20 {
			if b != 0x1b {
				t.execute(b)
				i++
				continue
			}
			if i+2 < len(p) && p[i+1] == '[' && !t.slow {
				if n := t.fastCSI(p[i+2:]); n > 0 {
					i += 2 + n
					continue
				}
			}
			t.st = psSeq
			t.p.Advance(b)
			return i + 1
		}
		if b < 0xC2 || b > 0xF4 {
			i++ // DEL, stray C1 or continuation byte, invalid lead
			continue
		}
		r, n := decodeRune(p[i:])
		if r == utf8.RuneError && n <= 1 {
			if !utf8.FullRune(p[i:]) {
				t.un = copy(t.ubuf[:], p[i:])
				t.st = psUTF8
				return len(p)
			}
			i++
			continue
		}
		if t.slow || !t.printNarrow(r) {
			t.printRune(r)
		}
		i += n
	}
	return i
}

// fastCSI dispatches a plain CSI sequence (optional private prefix,
// digits, ';' and ':', final byte) that lies whole in q, building the same
// ansi.Params x/ansi's parser would, and returns the bytes it consumed.
// Anything else (intermediates, controls inside, a sequence split across
// writes, huge numbers) returns 0 and goes through the x/ansi parser.
func (t *Term) fastCSI(q []byte) int {
	if n := t.memoSGR(q); n > 0 {
		return n
	}
	params := t.fparams[:0]
	cur := parser.MissingParam
	var prefix byte
	j := 0
	if len(q) > 0 && q[0] >= '<' && q[0] <= '?' {
		prefix = q[0]
		j = 1
	}
	for ; j < len(q); j++ {
		c := q[j]
		switch {
		case c >= '0' && c <= '9':
			cur = int(c - '0')
			for j+1 < len(q) && q[j+1] >= '0' && q[j+1] <= '9' {
				j++
				cur = cur*10 + int(q[j]-'0')
				if cur > 1<<24 {
					return 0
				}
			}
		case c == ';' || c == ':':
			if len(params) >= parser.MaxParamsSize-1 {
				return 0
			}
			v := cur
			if c == ':' {
				v |= parser.HasMoreFlag
			}
			params = append(params, ansi.Param(v))
			cur = parser.MissingParam
		case c >= 0x40 && c <= 0x7e:
			if len(params) > 0 || cur != parser.MissingParam {
				params = append(params, ansi.Param(cur))
			}
			t.fparams = params
			if c == 'm' && prefix == 0 {
				from := t.penID
				t.sgr(params) // most sequences: skip csi's dispatch
				t.rememberSGR(from, q[:j])
			} else {
				t.csi(ansi.Cmd(ansi.Command(prefix, 0, c)), params)
			}
			return j + 1
		default:
			return 0
		}
	}
	return 0
}

// An SGR memo entry: the SGR with parameter bytes params[:n] took the
// pen with id from to the pen with id id (styles.styles[id], ids standing
// for pens one to one while the memo is on). 32 bytes, so that an entry
// is one cache line's part and the table (64 KiB) stays in cache.
type sgrMemo struct {
	from, id uint32
	n        uint8
	params   [23]byte
}

const sgrMemoBits = 11

// sgrMemoHash indexes the memo by pen id and parameter bytes.
func sgrMemoHash(from uint32, params []byte) uint32 {
	h := from * 0x9E3779B1
	for _, c := range params {
		h = (h ^ uint32(c)) * 0x01000193
	}
	return h >> (32 - sgrMemoBits)
}

// memoEnabled reports whether pen ids stand for pens one to one, as the
// memo needs: true until the style table is full (then new styles share
// ids) and never in the tests' slow mode.
func (t *Term) memoEnabled() bool {
	return !t.slow && len(t.styles.styles) < maxStyles
}

// memoSGR applies an SGR that lies whole at the start of q (parameter
// bytes, then 'm') from the memo, so agents' few recurring colour changes
// are not parsed and interned again each time, and returns the bytes it
// consumed (0 when the SGR is not in the memo).
func (t *Term) memoSGR(q []byte) int {
	if t.memo == nil || !t.memoEnabled() {
		return 0
	}
	// The parameter bytes are found and hashed (as sgrMemoHash) in one pass.
	h := t.penID * 0x9E3779B1
	k := 0
	for ; k < len(q); k++ {
		c := q[k]
		if c-'0' >= 12 { // not a digit, ':' or ';'
			break
		}
		h = (h ^ uint32(c)) * 0x01000193
	}
	if k >= len(q) || q[k] != 'm' || k > len(sgrMemo{}.params) {
		return 0
	}
	e := &t.memo[h>>(32-sgrMemoBits)]
	if e.from != t.penID || int(e.n) != k || string(e.params[:k]) != string(q[:k]) {
		return 0
	}
	t.lastRune = 0
	if e.id != t.penID {
		t.prevPen, t.prevID = t.pen, t.penID
		t.pen, t.penID = t.styles.styles[e.id], e.id
		t.eraseOK = false
	}
	return k + 1
}

// rememberSGR records where the SGR with parameter bytes params took the
// pen from pen id from.
func (t *Term) rememberSGR(from uint32, params []byte) {
	if len(params) > len(sgrMemo{}.params) || !t.memoEnabled() {
		return
	}
	if t.memo == nil {
		t.memo = make([]sgrMemo, 1<<sgrMemoBits)
	}
	e := &t.memo[sgrMemoHash(from, params)]
	e.from, e.id, e.n = from, t.penID, uint8(len(params))
	copy(e.params[:], params)
}

func (t *Term) startString(kind byte) {
	t.lastRune = 0
	t.p.Reset()
	t.st = psStr
	t.strKind = kind
	t.strNeed = 0
	t.strOver = false
	t.body = t.body[:0]
}

func (t *Term) put(b byte) {
	if len(t.body) >= MaxControlString {
		t.strOver = true
		return
	}
	t.body = append(t.body, b)
}

func (t *Term) dispatchString() {
	if t.strOver || t.strKind != ']' {
		return // DCS, SOS, PM, APC: nothing Hivemind needs
	}
	body := t.body
	semi := -1
	for i, c := range body {
		if c == ';' {
			semi = i
			break
		}
	}
	if semi < 0 {
		return
	}
	switch string(body[:semi]) {
	case "0", "2":
		t.title = strings.ToValidUTF8(string(body[semi+1:]), "\uFFFD")
	case "8":
		// OSC 8 ; params ; uri
		rest := body[semi+1:]
		k := -1
		for i, c := range rest {
			if c == ';' {
				k = i
				break
			}
		}
		if k < 0 {
			return
		}
		uri := string(rest[k+1:])
		id, ok := t.linkIdx[uri]
		if !ok {
			if len(t.links) >= maxCombos {
				id = 0
			} else {
				id = uint32(len(t.links))
				t.links = append(t.links, uri)
				t.linkIdx[uri] = id
			}
		}
		t.pen.link = id
		t.updatePen()
	}
}

// sgr applies SGR parameters to the pen.
func (t *Term) sgr(params ansi.Params) {
	t.lastRune = 0
	old, oldID := t.pen, t.penID
	t.pen.sgr(params)
	switch t.pen {
	case old:
		return
	default:
		if t.pen == t.prevPen && !t.slow { // back to the pen before, e.g. after bold
			t.penID = t.prevID
			t.eraseOK = false
		} else {
			t.updatePen()
		}
	}
	t.prevPen, t.prevID = old, oldID
}

// updatePen interns the pen after an SGR. A small direct-mapped cache in
// front of the style map keeps the common case (a few styles alternating)
// free of map hashing.
func (t *Term) updatePen() {
	p := t.pen
	h := (uint32(p.fg)*0x9E3779B1 ^ uint32(p.bg)*0x85EBCA77 ^ uint32(p.attrs)*0xC2B2AE3D ^ uint32(p.ul)*0x27D4EB2F ^ p.link) >> (32 - penCacheBits)
	if t.penCacheOK[h] && t.penCacheKey[h] == p {
		t.penID = t.penCacheID[h]
	} else {
		t.penID = t.styles.intern(p)
		t.penCacheKey[h], t.penCacheID[h], t.penCacheOK[h] = p, t.penID, true
	}
	t.eraseOK = false
}

// erase returns the style of erased cells: the pen's background only.
func (t *Term) erase() uint32 {
	if !t.eraseOK {
		t.eraseID = 0
		if t.pen.bg != 0 {
			t.eraseID = t.styles.intern(style{bg: t.pen.bg})
		}
		t.eraseOK = true
	}
	return t.eraseID
}

// execute handles C0 controls.
func (t *Term) execute(b byte) {
	t.lastRune = 0
	switch b {
	case '\n', '\v', '\f':
		t.index()
		if t.lnm {
			t.x = 0
			t.wrapNext = false
		}
	case '\r':
		t.x = 0
		t.wrapNext = false
	case '\b':
		switch {
		case t.wrapNext:
			t.wrapNext = false
		case t.x > 0:
			t.x--
		case t.y > 0 && t.scr[t.y-1].wrapped:
			// tmux backs up into a soft-wrapped previous row.
			t.y--
			t.x = t.cols - 1
		}
	case '\t':
		if t.wrapNext {
			return
		}
		x := t.x + 1
		for x < t.cols-1 && !t.tabs[x] {
			x++
		}
		t.x = min(x, t.cols-1)
	case 0x0e, 0x0f: // SO/SI: G1 is not supported
	}
}

func (t *Term) clampCursor() {
	t.x = max(0, min(t.x, t.cols-1))
	t.y = max(0, min(t.y, t.rows-1))
	if t.top < 0 || t.bot >= t.rows || t.top >= t.bot {
		t.top, t.bot = 0, t.rows-1
	}
}

// index moves the cursor down, scrolling the region at its bottom margin.
func (t *Term) index() {
	switch {
	case t.y == t.bot:
		t.scrollUp(t.top, t.bot, 1)
	case t.y < t.rows-1:
		t.y++
	}
}

func (t *Term) reverseIndex() {
	switch {
	case t.y == t.top:
		t.scrollDown(t.top, t.bot, 1)
	case t.y > 0:
		t.y--
	}
}

// wrap moves to the start of the next row after a write in the last column.
func (t *Term) wrap() {
	t.scr[t.y].wrapped = true
	t.x = 0
	t.wrapNext = false
	t.index()
}

func (t *Term) printASCII(s []byte) {
	// Like tmux, only plain autowrapping text takes the run path.
	if t.insert || t.g0DEC || !t.autowrap {
		for _, b := range s {
			t.printRune(rune(b))
		}
		return
	}
	pen := t.penID
	for len(s) > 0 {
		if t.wrapNext {
			t.wrap()
		}
		l := t.scr[t.y]
		c := l.c
		x := t.x
		n := min(len(s), t.cols-x)
		end := x + n
		l.used = max(l.used, end)
		if r := c[x].r; x > 0 && (r < 0 || r >= utf8.RuneSelf) {
			t.runStart(c, x) // over padding or a character that may be wide
		}
		dst := c[x:end]
		for i, b := range s[:len(dst)] {
			dst[i] = cell{int32(b), pen}
		}
		t.lastRune = rune(s[n-1])
		s = s[n:]
		for xx := end; xx < t.cols && c[xx].r == contCell; xx++ {
			c[xx] = cell{}
		}
		if end < t.cols {
			t.x = end
			continue
		}
		t.x = t.cols - 1
		t.wrapNext = true
	}
}

// printableLen returns the length of the run of printable ASCII
// (0x20-0x7E) that p starts with, testing eight bytes at a time: in a word
// of printable bytes, subtracting 0x20 or adding 0x01 from each byte
// neither borrows nor carries, so no byte's high bit gets set; any other
// byte sets one (the lowest byte below 0x20 borrows into its own high bit,
// 0x7F becomes 0x80, bytes from 0x80 have it already).
func printableLen(p []byte) int {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	i := 0
	for ; i+8 <= len(p); i += 8 {
		v := binary.LittleEndian.Uint64(p[i:])
		if m := ((v - 0x20*ones) | (v + ones) | v) & highs; m != 0 {
			// The lowest byte flagged is the first one not printable:
			// the bytes below it neither borrow nor carry into it.
			return i + bits.TrailingZeros64(m)/8
		}
	}
	for i < len(p) && p[i] >= 0x20 && p[i] < 0x7f {
		i++
	}
	return i
}

// decodeRune is utf8.DecodeRune with the two- and three-byte forms (box
// drawing, symbols, CJK: most non-ASCII output) decoded inline.
func decodeRune(p []byte) (rune, int) {
	if len(p) >= 3 {
		b0, b1, b2 := p[0], p[1], p[2]
		switch {
		case b0 >= 0xC2 && b0 <= 0xDF && b1&0xC0 == 0x80:
			return rune(b0&0x1F)<<6 | rune(b1&0x3F), 2
		case b0&0xF0 == 0xE0 && b1&0xC0 == 0x80 && b2&0xC0 == 0x80:
			r := rune(b0&0x0F)<<12 | rune(b1&0x3F)<<6 | rune(b2&0x3F)
			if r >= 0x800 && (r < 0xD800 || r > 0xDFFF) { // not overlong, not a surrogate
				return r, 3
			}
		}
	}
	return utf8.DecodeRune(p)
}

// decGraphics maps 0x60-0x7E in the DEC special graphics set.
var decGraphics = []rune("◆▒␉␌␍␊°±␤␋┘┐┌└┼⎺⎻─⎼⎽├┤┴┬│≤≥π≠£·")

func (t *Term) printRune(r rune) {
	if t.g0DEC && r >= 0x60 && r <= 0x7e {
		r = decGraphics[r-0x60]
	}
	if r >= utf8.RuneSelf {
		t.lastRune = 0 // REP repeats single-byte characters only
	}
	w := runeWidth(r)
	// A zero-width joiner is held as tmux 3.3 does: the next non-ASCII
	// character joins the cell before the cursor together with it (ASCII
	// leaves it pending).
	if r == 0x200D {
		t.zwj = t.zwj || t.x > 0 || t.wrapNext
		return
	}
	if t.zwj && r >= utf8.RuneSelf {
		t.zwj = false
		t.combine(0x200D)
		t.combine(r)
		return
	}
	if w == 0 {
		t.combine(r)
		return
	}
	// tmux order: drop a wide character that cannot fit without
	// autowrap, make room in insert mode (a no-op past the last column),
	// then wrap, then write; so the first character after a wrap
	// overwrites.
	if !t.autowrap && w > 1 && (w > t.cols || (!t.wrapNext && t.x > t.cols-w)) {
		return
	}
	if t.insert && !t.wrapNext {
		t.insertCells(w)
	}
	if t.wrapNext {
		if !t.autowrap {
			return // tmux: past the last column without autowrap, dropped
		}
		t.wrap()
	}
	if t.x+w > t.cols {
		if !t.autowrap || w > t.cols {
			return
		}
		// A wide character does not fit in the last column: wrap it
		// whole (as tmux does) and leave the column blank.
		t.wrap()
	}
	l := t.scr[t.y]
	c := l.c
	x := t.x
	t.overwrite(c, x, w)
	c[x] = cell{r, t.penID}
	if w == 2 {
		c[x+1] = cell{contCell, t.penID}
	}
	l.used = max(l.used, x+w)
	t.lastRune = 0
	if r < utf8.RuneSelf {
		t.lastRune = r
	}
	if x+w >= t.cols {
		t.x = t.cols - 1
		t.wrapNext = t.autowrap
	} else {
		t.x = x + w
	}
}

// printNarrow prints a single-width non-ASCII character the way printRune
// does in the common case (no pending wrap, joiner or insert mode, not on
// padding or over a wide character) and reports whether it did.
func (t *Term) printNarrow(r rune) bool {
	if r >= 0x20000 || wtab[r]&3 != 1 || t.wrapNext || t.zwj || t.insert {
		return false
	}
	l := t.scr[t.y]
	x := t.x
	if old := l.c[x].r; old < 0 || (old >= utf8.RuneSelf && t.cellWidth(old) != 1) {
		return false
	}
	l.c[x] = cell{r, t.penID}
	l.used = max(l.used, x+1)
	t.lastRune = 0
	if x+1 >= t.cols {
		t.wrapNext = t.autowrap
	} else {
		t.x = x + 1
	}
	return true
}

// runStart prepares a run of ASCII written from x the way tmux's run
// writer does: padding cells back from x are cleared and a wide character
// found there too, but column 0 is never examined.
func (t *Term) runStart(c []cell, x int) {
	xx := x
	for xx > 0 && c[xx].r == contCell {
		c[xx] = cell{}
		xx--
	}
	if xx > 0 && c[xx].r != 0 && t.cellWidth(c[xx].r) == 2 {
		c[xx] = cell{}
	}
}

// overwrite prepares writing a character of width w at x the way tmux's
// cell writer does: over padding, the padding back to the character and
// the character are cleared; padding after the new character is cleared
// when either character is not single-width.
func (t *Term) overwrite(c []cell, x, w int) {
	old := c[x]
	if old.r == contCell {
		xx := x
		for xx > 0 && c[xx].r == contCell {
			c[xx] = cell{}
			xx--
		}
		c[xx] = cell{}
	}
	if w != 1 || old.r == contCell || (old.r != 0 && t.cellWidth(old.r) != 1) {
		for xx := x + w; xx < len(c) && c[xx].r == contCell; xx++ {
			c[xx] = cell{}
		}
	}
}

// combine attaches a zero-width rune to the character before the cursor.
func (t *Term) combine(r rune) {
	x := t.x - 1
	if t.wrapNext {
		x = t.x
	}
	if x < 0 {
		return
	}
	l := t.scr[t.y]
	t.attach(l.c, x, r)
	l.used = max(l.used, x+1) // the cell is written, as in tmux
}

// blankCells clears c[from:to] with style st. Like tmux it leaves halves
// of wide characters on the boundaries alone (they are drawn as blanks).
func (t *Term) blankCells(c []cell, from, to int, st uint32) {
	from = max(from, 0)
	to = min(to, len(c))
	if from >= to {
		return
	}
	fill(c[from:to], cell{0, st})
}

// fill sets every cell of c to v: cleared in bulk for blanks of the
// default style, else by doubling copies (memmove beats a loop of stores).
func fill(c []cell, v cell) {
	if v == (cell{}) {
		clear(c)
		return
	}
	if len(c) == 0 {
		return
	}
	c[0] = v
	for k := 1; k < len(c); k *= 2 {
		copy(c[k:], c[:k])
	}
}

// clearLine clears a whole row as tmux's grid_clear_lines does: no cell
// used, not wrapped.
func (t *Term) clearLine(l *line, st uint32) {
	l.wrapped = false
	l.used = 0
	clear(l.c[len(l.c):cap(l.c)]) // cells hidden by a narrower alternate screen
	fill(l.c, cell{0, st})
}

// scrollUp moves rows top..bot up by n. On the main screen the rows
// leaving the top of the region go to the scrollback, as in tmux 3.3a
// (grid_scroll_history_region), even when the region is not the whole
// screen; elsewhere the rows move as tmux's grid_move_lines moves them.
func (t *Term) scrollUp(top, bot, n int) {
	if top < 0 || bot >= t.rows || top > bot {
		return
	}
	n = min(n, bot-top+1)
	if n <= 0 {
		return
	}
	if !t.history() {
		for range n {
			t.moveRows(top, top+1, bot-top)
		}
		return
	}
	for _, l := range t.scr[top : top+n] {
		t.sb.push(t.encode(l))
	}
	t.hscrolled = min(t.hscrolled+n, t.sb.len())
	t.spare = append(t.spare[:0], t.scr[top:top+n]...)
	copy(t.scr[top:], t.scr[top+n:bot+1])
	for i, l := range t.spare {
		t.clearLine(l, t.erase())
		t.scr[bot-n+1+i] = l
	}
}

func (t *Term) scrollDown(top, bot, n int) {
	if top < 0 || bot >= t.rows || top > bot {
		return
	}
	for range min(n, bot-top+1) {
		t.moveRows(top+1, top, bot-top)
	}
}

// moveRows moves rows py..py+ny-1 to dy..dy+ny-1 as tmux's
// grid_move_lines does: the rows they leave are emptied, and the rows
// above the destination and above the rows left are no longer
// soft-wrapped (their text does not continue there any more).
func (t *Term) moveRows(dy, py, ny int) {
	if ny <= 0 || py == dy {
		return
	}
	in := func(y, from int) bool { return y >= from && y < from+ny }
	// The rows overwritten give their lines to the rows left.
	t.spare = t.spare[:0]
	for y := dy; y < dy+ny; y++ {
		if !in(y, py) {
			t.spare = append(t.spare, t.scr[y])
		}
	}
	t.unwrapAbove(dy)
	copy(t.scr[dy:dy+ny], t.scr[py:py+ny])
	k := 0
	for y := py; y < py+ny; y++ {
		if !in(y, dy) {
			l := t.spare[k]
			k++
			t.clearLine(l, t.erase())
			t.scr[y] = l
		}
	}
	if !in(py, dy) {
		t.unwrapAbove(py)
	}
}

// clearRows clears rows from..to-1 whole as tmux's grid_clear_lines does,
// which also ends the soft wrap of the row above. With to before from it
// only ends that wrap: IL and DL pass tmux a negative row count then,
// which wraps around to a call that clears nothing but still unwraps.
func (t *Term) clearRows(from, to int) {
	if from == to {
		return
	}
	for _, l := range t.scr[from:max(from, to)] {
		t.clearLine(l, t.erase())
	}
	t.unwrapAbove(from)
}

// unwrapAbove clears the soft-wrap flag of the row above row y of the
// screen; above row 0 is the newest scrollback line (tmux keeps the
// scrollback above whichever screen is on).
func (t *Term) unwrapAbove(y int) {
	if y > 0 {
		t.scr[y-1].wrapped = false
		return
	}
	if n := t.sb.len(); y == 0 && n > 0 {
		if b := t.sb.get(n - 1); len(b) > 0 {
			b[0] &^= 1
		}
	}
}

// neverUsed approximates tmux's "line never allocated" (cellsize 0), for
// which clearing it with the default background does nothing at all.
func (t *Term) neverUsed(l *line) bool {
	if l.used != 0 || t.erase() != 0 {
		return false
	}
	for _, c := range l.c {
		if c != (cell{}) {
			return false
		}
	}
	return true
}

// insertCells makes room for n cells at the cursor exactly as tmux 3.3a's
// grid does: at the last column the cell is cleared; otherwise the cells
// that still fit move right and only the cells they left are cleared (so
// inserting up to or past the end of the row changes nothing).
func (t *Term) insertCells(n int) {
	c := t.scr[t.y].c
	x := t.x
	if x >= t.cols-1 {
		c[x] = cell{0, t.erase()}
		return
	}
	moved := t.cols - x - n
	if n <= 0 || moved <= 0 {
		return
	}
	t.scr[t.y].used = max(t.scr[t.y].used, t.cols) // tmux's grid_move_cells
	copy(c[x+n:x+n+moved], c[x:x+moved])
	for xx := x; xx < x+moved && xx < x+n; xx++ {
		c[xx] = cell{0, t.erase()}
	}
}

func (t *Term) deleteCells(n int) {
	l := t.scr[t.y]
	c := l.c
	x := t.x
	n = min(n, t.cols-x)
	if n <= 0 {
		return
	}
	if n == t.cols {
		t.clearRows(t.y, t.y+1) // tmux clears a row deleted whole
		return
	}
	if x+n < t.cols {
		l.used = max(l.used, t.cols-n) // tmux's grid_move_cells
	}
	copy(c[x:], c[x+n:])
	for i := t.cols - n; i < t.cols; i++ {
		c[i] = cell{0, t.erase()}
	}
}

// cellWidth is the width of the character stored as r.
func (t *Term) cellWidth(r int32) int {
	switch {
	case r == 0:
		return 1
	case r == contCell:
		return 0
	case r < contCell:
		rr, _ := utf8.DecodeRuneInString(t.combos[-r-2])
		return runeWidth(rr)
	}
	return runeWidth(rune(r))
}

// px is the cursor column for erase/insert operations: tmux keeps the
// cursor past the last column after writing there, so they act on nothing.
func (t *Term) px() int {
	if t.wrapNext {
		return t.cols
	}
	return t.x
}

// setAlt switches screens as tmux does: entering saves the pen (and with
// saveCursor the cursor) unless already on the alternate screen; leaving
// with saveCursor restores them even when not on the alternate screen.
func (t *Term) setAlt(on, saveCursor bool) {
	if on {
		if t.altOn {
			return
		}
		pen := t.pen
		if saveCursor {
			t.altSaved = t.save()
		}
		t.altSaved.pen = pen
		t.altOn = true
		if len(t.alt) != t.rows || len(t.alt[0].c) != t.cols {
			t.alt = t.newLines(t.rows) // resized while the main screen was on
		}
		t.scr = t.alt
		for _, l := range t.alt {
			t.clearLine(l, 0)
		}
		t.unwrapAbove(0)
	} else {
		// Cursor columns as tmux counts them: past the last while a
		// wrap is pending.
		cx, cy := t.x, t.y
		if t.wrapNext {
			cx++
		}
		saved := saveCursor && t.altSaved.set
		if saved {
			cx, cy = t.altSaved.x, t.altSaved.y
			if t.altSaved.wrapNext {
				cx++
			}
			t.pen = t.altSaved.pen
			t.updatePen()
		}
		if t.altOn {
			t.altOn = false
			cx, cy = t.leaveAlt(saved, cx, cy)
			t.scr = t.main
		}
		// tmux clamps the cursor into the screen.
		t.x, t.y, t.wrapNext = min(cx, t.cols-1), cy, false
	}
	t.modes.AltScreen = t.altOn
	t.clampCursor()
}

func (t *Term) save() savedCursor {
	return savedCursor{x: t.x, y: t.y, wrapNext: t.wrapNext, pen: t.pen, origin: t.origin, g0DEC: t.g0DEC, set: true}
}

func (t *Term) restore(s savedCursor) {
	if !s.set {
		t.x, t.y, t.wrapNext = 0, 0, false
		t.pen = style{}
		t.origin = false
		t.g0DEC = false
		t.updatePen()
		return
	}
	// tmux moves the cursor into the screen: a saved pending wrap is lost.
	t.x, t.y, t.wrapNext = s.x, s.y, false
	t.pen, t.origin, t.g0DEC = s.pen, s.origin, s.g0DEC
	t.updatePen()
	t.clampCursor()
}

// moveTo sets the cursor from 0-based coordinates, honouring origin mode.
func (t *Term) moveTo(x, y int) {
	if t.origin {
		y += t.top
		t.y = max(t.top, min(y, t.bot))
	} else {
		t.y = max(0, min(y, t.rows-1))
	}
	t.x = max(0, min(x, t.cols-1))
	t.wrapNext = false
}

// reset is RIS as tmux does it: the current screen is cleared and the
// modes reset, but the alternate screen stays active and the title kept.
func (t *Term) reset() {
	for _, l := range t.scr {
		t.clearLine(l, 0)
	}
	t.unwrapAbove(0)
	t.x, t.y, t.wrapNext = 0, 0, false
	t.pen = style{}
	t.updatePen()
	t.saved, t.altSaved = savedCursor{}, savedCursor{}
	t.top, t.bot = 0, t.rows-1
	t.origin, t.autowrap, t.insert, t.lnm, t.g0DEC = false, true, false, false, false
	t.resetTabs()
	t.modes = Modes{CursorVisible: true, AltScreen: t.altOn}
}

func (t *Term) esc(cmd ansi.Cmd) {
	t.lastRune = 0
	inter := cmd.Intermediate()
	final := cmd.Final()
	switch inter {
	case 0:
		switch final {
		case '7':
			t.saved = t.save()
		case '8':
			t.restore(t.saved)
		case 'D':
			t.index()
		case 'E':
			t.x, t.wrapNext = 0, false
			t.index()
		case 'M':
			t.reverseIndex()
		case 'H':
			if t.x < t.cols {
				t.tabs[t.x] = true
			}
		case 'c':
			t.reset()
		}
	case '(':
		switch final {
		case '0':
			t.g0DEC = true
		case 'B':
			t.g0DEC = false
		}
	case '#':
		if final == '8' {
			for _, l := range t.scr {
				for i := range l.c {
					l.c[i] = cell{'E', 0}
				}
				l.used = len(l.c)
				l.wrapped = false
			}
		}
	}
}

// param returns parameter i (default def, zero treated as def) clamped to
// a sane range.
func param(params ansi.Params, i, def int) int {
	if i >= len(params) {
		return def
	}
	v := params[i].Param(def)
	if v == 0 {
		v = def
	}
	return min(v, 1<<16)
}

func (t *Term) csi(cmd ansi.Cmd, params ansi.Params) {
	last := t.lastRune
	t.lastRune = 0 // REP repeats a character printed just before only
	prefix := cmd.Prefix()
	inter := cmd.Intermediate()
	final := cmd.Final()
	if prefix == '?' && inter == 0 && (final == 'h' || final == 'l') {
		for i := range params {
			t.setDECMode(params[i].Param(0), final == 'h')
		}
		return
	}
	if prefix != 0 || inter != 0 {
		if prefix == 0 && inter == '!' && final == 'p' { // DECSTR
			t.pen = style{}
			t.updatePen()
			t.top, t.bot = 0, t.rows-1
			t.origin, t.insert, t.autowrap = false, false, true
			t.modes.CursorVisible = true
			t.saved = savedCursor{}
		}
		return // DA2, XTVERSION, kitty keyboard, DECSCUSR, DECRQM...
	}
	n := param(params, 0, 1)
	switch final {
	case '@':
		t.insertCellsAt(n)
	case 'A':
		t.cursorUp(n)
	case 'B':
		t.cursorDown(n)
	case 'C':
		t.wrapNext = false
		t.x = min(t.x+n, t.cols-1)
	case 'D':
		x := t.x
		if t.wrapNext {
			x = t.cols // tmux counts from past the last column
		}
		t.wrapNext = false
		t.x = max(x-n, 0)
	case 'E':
		t.cursorDown(n)
		t.x = 0
	case 'F':
		t.cursorUp(n)
		t.x = 0
	case 'G', '`':
		t.wrapNext = false
		t.x = min(n, t.cols) - 1
	case 'H', 'f':
		t.moveTo(param(params, 1, 1)-1, n-1)
	case 'J':
		t.eraseDisplay(param0(params))
	case 'K':
		t.eraseLine(param0(params))
	case 'L':
		t.insertLines(n)
	case 'M':
		t.deleteLines(n)
	case 'P':
		if !t.wrapNext {
			t.deleteCells(n)
		}
	case 'S':
		t.scrollUp(t.top, t.bot, n)
	case 'T':
		t.scrollDown(t.top, t.bot, n)
	case 'X':
		x := t.px()
		if x == 0 && n >= t.cols {
			t.clearRows(t.y, t.y+1) // tmux clears a row erased whole
			break
		}
		t.blankCells(t.scr[t.y].c, x, x+n, t.erase())
	case 'Z':
		t.wrapNext = false
		for range min(n, t.cols) {
			x := t.x - 1
			for x > 0 && !t.tabs[x] {
				x--
			}
			t.x = max(x, 0)
		}
	case 'b':
		// tmux: only a single-byte character printed just before, and no
		// further than the end of the line.
		if last != 0 && !t.wrapNext {
			for range min(n, t.cols-t.x) {
				t.printRune(last)
			}
			t.lastRune = 0
		}
	case 'c':
		if param0(params) == 0 {
			t.reply("\x1b[?1;2c")
		}
	case 'd':
		// tmux keeps the column, including a pending wrap.
		if t.origin {
			t.y = max(t.top, min(t.top+n-1, t.bot))
		} else {
			t.y = min(n, t.rows) - 1
		}
	case 'g':
		switch param0(params) {
		case 0:
			if t.x < t.cols {
				t.tabs[t.x] = false
			}
		case 3:
			clear(t.tabs)
		}
	case 'h', 'l':
		for i := range params {
			switch params[i].Param(0) {
			case 4:
				t.insert = final == 'h'
			case 20:
				t.lnm = final == 'h'
			}
		}
	case 'm':
		t.sgr(params)
	case 'n':
		switch param0(params) {
		case 5:
			t.reply("\x1b[0n")
		case 6:
			y := t.y
			if t.origin {
				y -= t.top
			}
			t.reply("\x1b[" + strconv.Itoa(y+1) + ";" + strconv.Itoa(t.x+1) + "R")
		}
	case 'r':
		// tmux: a missing bottom is the last row, an explicit 0 is row 1.
		top := param(params, 0, 1) - 1
		bot := t.rows - 1
		if len(params) > 1 && params[1].Param(-1) >= 0 {
			bot = max(params[1].Param(1), 1) - 1
		}
		bot = min(bot, t.rows-1)
		if top >= bot {
			return
		}
		t.top, t.bot = top, bot
		t.x, t.y, t.wrapNext = 0, 0, false // tmux: absolute home, even in origin mode
	case 's':
		t.saved = t.save()
	case 'u':
		t.restore(t.saved)
	}
}

func param0(params ansi.Params) int {
	if len(params) == 0 {
		return 0
	}
	return min(params[0].Param(0), 1<<16)
}

func (t *Term) insertCellsAt(n int) {
	if t.wrapNext {
		return
	}
	t.insertCells(min(n, t.cols-t.x))
}

func (t *Term) cursorUp(n int) {
	t.wrapNext = false
	if t.y >= t.top {
		t.y = max(t.y-n, t.top)
	} else {
		t.y = max(t.y-n, 0)
	}
}

func (t *Term) cursorDown(n int) {
	t.wrapNext = false
	if t.y <= t.bot {
		t.y = min(t.y+n, t.bot)
	} else {
		t.y = min(t.y+n, t.rows-1)
	}
}

func (t *Term) eraseDisplay(mode int) {
	switch mode {
	case 0:
		if t.x == 0 && t.y == 0 && !t.wrapNext && t.history() {
			t.clearIntoHistory()
			return
		}
		if x := t.px(); x == 0 {
			t.clearRows(t.y, t.y+1)
		} else {
			t.blankCells(t.scr[t.y].c, x, t.cols, t.erase())
		}
		t.clearRows(t.y+1, t.rows)
	case 1:
		t.clearRows(0, t.y)
		t.eraseLine(1)
	case 2:
		if t.history() {
			t.clearIntoHistory()
			return
		}
		t.clearRows(0, t.rows)
	case 3:
		t.sb.clear()
		t.hscrolled = 0
	}
}

// history reports whether the current screen keeps a scrollback: the main
// screen, unless it was configured without one.
func (t *Term) history() bool { return !t.altOn && t.sb.max > 0 }

// clearIntoHistory clears the screen the way tmux (scroll-on-clear, the
// default) clears the main screen for ED 2 and for ED 0 from the home
// position: the rows down to the last one used scroll into the
// scrollback, and none of the scrollback comes back on a taller screen.
func (t *Term) clearIntoHistory() {
	last := 0
	for y, l := range t.scr {
		if l.used != 0 {
			last = y + 1
		}
	}
	if last == 0 {
		t.clearRows(0, t.rows)
		return
	}
	for _, l := range t.scr[:last] {
		t.sb.push(t.encode(l))
	}
	for _, l := range t.scr {
		t.clearLine(l, t.erase())
	}
	if last < t.rows {
		t.unwrapAbove(0)
	}
	t.hscrolled = 0
}

func (t *Term) eraseLine(mode int) {
	l := t.scr[t.y]
	switch mode {
	case 0:
		x := t.px()
		if x == 0 {
			if !t.neverUsed(l) {
				t.clearRows(t.y, t.y+1) // tmux resets a row cleared whole
			}
			return
		}
		t.blankCells(l.c, x, t.cols, t.erase())
	case 1:
		if t.x >= t.cols-1 {
			t.clearRows(t.y, t.y+1)
			return
		}
		t.blankCells(l.c, 0, t.x+1, t.erase())
	case 2:
		if !t.neverUsed(l) {
			t.clearRows(t.y, t.y+1)
		}
	}
}

// insertLines implements IL as tmux 3.3a's grid_view_insert_lines(_region)
// does: inside the scroll region it shifts the region below the cursor;
// outside it, the rows that still fit move down and only the rows they
// left are wiped, so when more rows are inserted than move, the rows in
// between keep their text.
func (t *Term) insertLines(n int) {
	y := t.y
	if y >= t.top && y <= t.bot {
		n = min(n, t.bot+1-y)
		kept := t.bot + 1 - y - n
		t.moveRows(y+n, y, kept)
		t.clearRows(y+kept, y+n)
		return
	}
	n = min(n, t.rows-y)
	t.moveRows(y+n, y, t.rows-y-n)
}

// deleteLines implements DL as tmux 3.3a's grid_view_delete_lines(_region)
// does. Deleted lines never go to the scrollback.
func (t *Term) deleteLines(n int) {
	y := t.y
	if y >= t.top && y <= t.bot {
		n = min(n, t.bot+1-y)
		kept := t.bot + 1 - y - n
		t.moveRows(y, y+n, kept)
		t.clearRows(y+kept, y+n)
		return
	}
	n = min(n, t.rows-y)
	t.moveRows(y, y+n, t.rows-y-n)
	t.clearRows(t.rows-n, y+n)
}

func (t *Term) setDECMode(m int, on bool) {
	switch m {
	case 6:
		t.origin = on
		t.moveTo(0, 0)
	case 7:
		t.autowrap = on
	case 47, 1047:
		t.setAlt(on, false)
	case 1049:
		t.setAlt(on, true)
	case 1048:
		if on {
			t.saved = t.save()
		} else {
			t.restore(t.saved)
		}
	default:
		t.modes.SetDEC(m, on)
	}
}
