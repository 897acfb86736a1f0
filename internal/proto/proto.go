// Package proto is the protocol between a Hivemind server (one per
// project: it owns the engine, the agents' PTYs and emulators) and its
// clients (the full-screen UI of `hivemind attach`, `hivemind wait`,
// `hivemind ls`) over the server's unix socket.
//
// The wire is one JSON object per line, each at most MaxLine bytes. A
// client's first message is a Hello naming the protocol Version it speaks;
// the server answers Welcome, or Error naming its own version and binary
// when they differ (a newer client never talks to an older server
// half-way). After that the server pushes, per client: the list of agent
// panes (Panes), the engine's state (Snapshot), notices, and screen
// updates (Pane) only for the panes the client says it shows (View) —
// row diffs of the server's emulator against what it last sent that
// client, so a hidden pane costs nothing, and a pane the client draws
// slowly (Want.FPS) costs its rate. The client sends keys (Input), sizes
// (Resize), scroll positions and rates (View) and engine commands (Cmd).
package proto

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	"github.com/hivemind-dev/hivemind/ptyagent/screen"
	"github.com/hivemind-dev/hivemind/vocab"
	"github.com/hivemind-dev/hivemind/workspace"
)

// Version is the protocol version. Change it with any change of meaning
// of a message; the hello handshake refuses another version.
const Version = 1

// MaxLine bounds one message (a snapshot with its event tail, a full
// screen of a wide pane with its escape sequences).
const MaxLine = 16 << 20

// Message types (Msg.T).
const (
	THello    = "hello"    // client → server, first
	TWelcome  = "welcome"  // server → client: Info
	TError    = "error"    // server → client: Err, then the server hangs up
	TPanes    = "panes"    // server → client: the agents that have a terminal
	TSnapshot = "snapshot" // server → client: Snapshot
	TNotice   = "notice"   // server → client: Level, Text
	TPane     = "pane"     // server → client: Pane (row diff)
	TBye      = "bye"      // server → client: the server stops (Text says why)
	TView     = "view"     // client → server: View (the panes shown and their scroll)
	TInput    = "input"    // client → server: Agent, Data
	TResize   = "resize"   // client → server: Agent, Cols, Rows
	TCmd      = "cmd"      // client → server: Cmd (+ Agent, Approve, Feedback)
)

// Client kinds (Hello.Kind).
const (
	KindUI   = "ui"   // the full-screen UI: gets panes, snapshots, notices
	KindWait = "wait" // hivemind wait, status, events, diff: gets snapshots only (and its diffs)
	KindInfo = "info" // hivemind ls: the Welcome alone
)

// Engine commands (Msg.Cmd).
const (
	CmdPause      = "pause"
	CmdResume     = "resume"
	CmdCancel     = "cancel"
	CmdRetry      = "retry"
	CmdAbandon    = "abandon"
	CmdPauseAgent = "pause_agent"
	CmdPlan       = "plan"  // the plan gate's decision: Approve, Feedback
	CmdStop       = "stop"  // stop the team (the task stays resumable) and the server
	CmdDiff       = "diff"  // a worker's diff (the task's for no Agent; read-only clients too): answered by a TNotice-free TCmd reply
	CmdWeb        = "web"   // serve the web client too: the reply's Text is its URL with the token that acts
	CmdReply      = "reply" // server → client: the answer to a CmdPlan or CmdDiff (Text, Err)
)

// Msg is every message; T says which fields mean something.
type Msg struct {
	T string `json:"t"`

	// hello
	Version  int    `json:"v,omitempty"`
	Binary   string `json:"bin,omitempty"`
	Kind     string `json:"kind,omitempty"`
	ReadOnly bool   `json:"ro,omitempty"`

	// welcome
	Info *Info `json:"info,omitempty"`

	// error, bye, notice, reply
	Err   string `json:"err,omitempty"`
	Level string `json:"level,omitempty"`
	Text  string `json:"text,omitempty"`

	Panes    []PaneID  `json:"panes,omitempty"`
	Snapshot *Snapshot `json:"snap,omitempty"`
	Pane     *Pane     `json:"pane,omitempty"`
	View     []Want    `json:"view,omitempty"`

	Agent    vocab.AgentID `json:"agent,omitempty"`
	Data     []byte        `json:"data,omitempty"`
	Cols     int           `json:"cols,omitempty"`
	Rows     int           `json:"rows,omitempty"`
	Cmd      string        `json:"cmd,omitempty"`
	Approve  bool          `json:"approve,omitempty"`
	Feedback string        `json:"feedback,omitempty"`
	ID       uint64        `json:"id,omitempty"` // a CmdPlan/CmdDiff and its reply
}

// Info is what a server says of itself and its run.
type Info struct {
	Version int    `json:"version"` // protocol
	Binary  string `json:"binary"`  // hivemind version of the server
	PID     int    `json:"pid"`
	Project string `json:"project"`
	Root    string `json:"root"`   // the workspace
	Socket  string `json:"socket"` // where clients connect
	TaskID  string `json:"task_id"`
	Title   string `json:"title"`
	Branch  string `json:"branch,omitempty"`
	Phase   string `json:"phase"`
	// Why is the reason of needs_human or error, "" otherwise.
	Why        string                   `json:"why,omitempty"`
	Clients    int                      `json:"clients"`
	Started    time.Time                `json:"started"`
	FPS        int                      `json:"fps"`
	Team       map[vocab.Role]string    `json:"team,omitempty"`
	WorkerTeam map[vocab.AgentID]string `json:"worker_team,omitempty"`
	HasDiff    bool                     `json:"has_diff,omitempty"`
	// Web is the web client's address (without its token: web.json in
	// the workspace has them), "" when the server serves none.
	Web string `json:"web,omitempty"`
}

// Snapshot is the engine state a client shows (tui.SnapshotMsg).
type Snapshot struct {
	State     vocab.State                    `json:"state"`
	Events    []vocab.EventRecord            `json:"events,omitempty"`
	Health    map[vocab.AgentID]vocab.Health `json:"health,omitempty"`
	Knowledge []workspace.KnowledgeItem      `json:"knowledge,omitempty"`
}

// PaneID is an agent with a live terminal; Gen changes when the agent's
// terminal is a new one (a restart).
type PaneID struct {
	Agent vocab.AgentID `json:"agent"`
	Gen   uint64        `json:"gen"`
}

// Want is a pane a client shows and how far it is scrolled back.
type Want struct {
	Agent  vocab.AgentID `json:"agent"`
	Scroll int           `json:"scroll,omitempty"`
	// FPS caps how often the pane's new content is sent: at most FPS
	// updates a second (0: the server's fps, Info.FPS). A client asks
	// the panes it draws slower (the UI's unfocused panes) at its own
	// rate, so they cost neither side more than it draws. A first update,
	// a new terminal and a new scroll position are sent at once. A server
	// that does not know the field sends at its fps: the same screens,
	// more often.
	FPS int `json:"fps,omitempty"`
}

// Row is one changed row of a pane.
type Row struct {
	I int    `json:"i"`
	S string `json:"s"`
}

// Pane is a screen update: the rows of the pane's terminal (scrolled
// Scroll lines back) that differ from what the client was sent last.
// Gen says which terminal of the agent it is: a new Gen starts from
// empty rows (all of them are sent).
type Pane struct {
	Agent  vocab.AgentID `json:"agent"`
	Gen    uint64        `json:"gen"`
	Ver    uint64        `json:"ver"` // the server terminal's Version the rows are at least as new as
	Scroll int           `json:"scroll,omitempty"`
	Back   int           `json:"back,omitempty"` // scrollback lines held
	N      int           `json:"n"`              // rows in all
	Set    []Row         `json:"set,omitempty"`
	Modes  screen.Modes  `json:"modes"`
	// Cursor is where the terminal's cursor is (0-based), when the
	// server's terminal says.
	Cursor *Cursor `json:"cur,omitempty"`
}

// Cursor is a terminal's cursor.
type Cursor struct {
	X       int  `json:"x"`
	Y       int  `json:"y"`
	Visible bool `json:"vis,omitempty"`
}

// Conn is one end of a connection: Send is safe from several goroutines,
// Recv from one.
type Conn struct {
	c  net.Conn
	r  *bufio.Reader
	mu sync.Mutex
	w  *bufio.Writer
}

// NewConn wraps c.
func NewConn(c net.Conn) *Conn {
	return &Conn{c: c, r: bufio.NewReaderSize(c, 64<<10), w: bufio.NewWriterSize(c, 64<<10)}
}

// ErrTooLong is a message over MaxLine.
var ErrTooLong = errors.New("proto: message longer than the limit")

// Send writes one message.
func (c *Conn) Send(m Msg) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	if len(b) >= MaxLine {
		return fmt.Errorf("%w (%d bytes, at most %d)", ErrTooLong, len(b), MaxLine)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, err := c.w.Write(append(b, '\n')); err != nil {
		return err
	}
	return c.w.Flush()
}

// Recv reads one message.
func (c *Conn) Recv() (Msg, error) {
	var line []byte
	for {
		part, err := c.r.ReadSlice('\n')
		if len(line)+len(part) > MaxLine {
			return Msg{}, ErrTooLong
		}
		line = append(line, part...)
		if err == bufio.ErrBufferFull {
			continue
		}
		if err != nil {
			if err == io.EOF && len(bytes.TrimSpace(line)) > 0 {
				return Msg{}, io.ErrUnexpectedEOF
			}
			return Msg{}, err
		}
		break
	}
	var m Msg
	if err := json.Unmarshal(line, &m); err != nil {
		return Msg{}, fmt.Errorf("proto: bad message: %w", err)
	}
	return m, nil
}

// SetDeadline sets the connection's read and write deadline.
func (c *Conn) SetDeadline(t time.Time) error { return c.c.SetDeadline(t) }

// SetWriteDeadline sets the connection's write deadline.
func (c *Conn) SetWriteDeadline(t time.Time) error { return c.c.SetWriteDeadline(t) }

// Close closes the connection.
func (c *Conn) Close() error { return c.c.Close() }

// CheckHello is the server's answer to a client's first message: nil for
// a hello of this Version, else the error to send back, naming both sides'
// versions and what to do.
func CheckHello(m Msg, serverBinary string) error {
	if m.T != THello {
		return fmt.Errorf("the first message must be a hello, not %q", m.T)
	}
	if m.Version != Version {
		return fmt.Errorf("this Hivemind server runs protocol %d (hivemind %s); the client (hivemind %s) speaks protocol %d: "+
			"attach with the hivemind binary that started the server, or stop the team from such a client (q, then s) and resume it with this one",
			Version, serverBinary, m.Binary, m.Version)
	}
	switch m.Kind {
	case KindUI, KindWait, KindInfo:
	default:
		return fmt.Errorf("unknown client kind %q (want %s, %s or %s)", m.Kind, KindUI, KindWait, KindInfo)
	}
	return nil
}
