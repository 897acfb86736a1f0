package main

import (
	"testing"

	"github.com/hivemind-dev/hivemind/engine/flow"
	"github.com/hivemind-dev/hivemind/internal/fakeapi"
	"github.com/hivemind-dev/hivemind/vocab"
)

// Every request is charged to the message of its turn; a re-send is
// overhead only as far as its work was paid for already; a notice's turn
// is overhead whole; requests in no turn are "outside".
func TestAttribute(t *testing.T) {
	const dir = "/p/.hivemind/tasks/t1"
	sent := func(agent vocab.AgentID, seq int, what string) vocab.EventRecord {
		return vocab.EventRecord{Type: "assignment_sent", Agent: agent, Details: map[string]any{"seq": float64(seq), "what": what}}
	}
	notice := flow.NoticeText("Friction was logged\nRead it.", nil)
	recs := []vocab.EventRecord{
		sent("worker_1", 1, "Do subtask st_1: a"),
		sent("worker_1", 2, "(re-sent) Do subtask st_1: a"), // its first turn was paid: 100
		sent("worker_1", 3, "Do subtask st_2: b"),
		sent("worker_1", 4, "(re-sent) Do subtask st_2: b"), // its first turn was never paid (429s)
		{Type: "assignment_sent", Agent: "worker_1", Details: map[string]any{"seq": float64(5), "what": "Friction was logged", "read_only": true, "text": notice}},
	}
	line := func(seq int, what string) string {
		return "context\n" + flow.InjectText(what, flow.AssignmentFile(dir, "worker_1", seq))
	}
	req := func(l string, in, out, status int) fakeapi.Request {
		return fakeapi.Request{Agent: "worker_1", Kind: "messages", Status: status, Line: l, InputTokens: in, OutputTokens: out}
	}
	reqs := []fakeapi.Request{
		req("", 5, 0, 200), // start-up, in no turn
		req(line(1, "Do subtask st_1: a"), 60, 40, 200),
		req(line(2, "(re-sent) Do subtask st_1: a"), 100, 50, 200), // 100 paid again, 50 new
		req(line(3, "Do subtask st_2: b"), 70, 0, 429),
		req(line(4, "(re-sent) Do subtask st_2: b"), 60, 20, 200),
		req(notice, 30, 3, 200),
		{Kind: "gemini", Status: 200, Line: notice, InputTokens: 7}, // no agent known
	}
	rep := attribute(dir, recs, reqs)
	r := rep.rows["worker_1"]
	want := map[string]int{kindOutside: 5, kindWork: 100 + 50 + 80, kindResend: 100, kindNotice: 33}
	for k, v := range want {
		if r.tokens[k] != v {
			t.Errorf("%s: %d tokens, want %d (%v)", k, r.tokens[k], v, r.tokens)
		}
	}
	if r.requests != 5 || rep.unknown != 1 || rep.unknownTokens != 7 {
		t.Errorf("requests %d, unknown %d (%d tokens)", r.requests, rep.unknown, rep.unknownTokens)
	}
	if got, want := r.overhead(), 100*float64(133)/float64(368); got != want {
		t.Errorf("overhead %.2f %%, want %.2f %%", got, want)
	}
	if rep.sentCount[kindWork] != 2 || rep.sentCount[kindResend] != 2 || rep.sentCount[kindNotice] != 1 {
		t.Errorf("sent %v", rep.sentCount)
	}
}
