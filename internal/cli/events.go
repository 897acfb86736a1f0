package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/hivemind-dev/hivemind/internal/app"
	"github.com/hivemind-dev/hivemind/vocab"
	"github.com/hivemind-dev/hivemind/workspace"
)

// cmdEvents prints the current task's events.jsonl, one line per event;
// with --follow it keeps printing new ones until interrupted. It prints the
// milestones (vocab.IsMilestone: states, plan, subtasks, checkpoints,
// failures); --verbose (and --json, for tools) prints every record. An
// agent exit that is a graceful stop says so. While the project's server
// runs, the newest records its clients see and the file lacks yet (its
// writer is behind) come last.
func cmdEvents(o options, stdout io.Writer) error {
	info, live, err := currentTask(o)
	if err != nil {
		return err
	}
	path := filepath.Join(info.Dir, vocab.EventsFile)
	pr := app.NewPrinter(stdout, o.JSON)
	show := func(r vocab.EventRecord) {
		switch {
		case o.JSON:
			pr.Record(r)
		case o.verbose || vocab.IsMilestone(r):
			line := app.FormatRecord(r)
			if note := vocab.StopNote(r); note != "" {
				line += " (" + note + ")"
			}
			fmt.Fprintln(stdout, line)
		}
	}
	if o.follow {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		return workspace.FollowEvents(ctx, path, 0, show)
	}
	recs, torn, err := workspace.ReadEvents(path)
	if live != nil {
		recs = withNewest(recs, live.Snapshot.Events)
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		for _, r := range recs {
			show(r)
		}
		return err
	}
	for _, r := range recs {
		show(r)
	}
	if !o.JSON && !o.verbose && len(recs) > 0 {
		fmt.Fprintln(stdout, "(milestones only; hivemind events --verbose shows every record)")
	}
	if torn && !o.JSON {
		fmt.Fprintln(stdout, "(the last line is torn: the writer stopped mid-append)")
	}
	return nil
}

// withNewest appends to the records of events.jsonl the newest ones of the
// server's tail that the file lacks: those after the file's last record,
// or the whole tail when the file ends before it began (more than a tail
// behind).
func withNewest(recs, tail []vocab.EventRecord) []vocab.EventRecord {
	if len(tail) == 0 {
		return recs
	}
	if len(recs) == 0 {
		return tail
	}
	last := recordKey(recs[len(recs)-1])
	for i := len(tail) - 1; i >= 0; i-- {
		if recordKey(tail[i]) == last {
			return append(recs, tail[i+1:]...)
		}
	}
	if tail[0].Time.After(recs[len(recs)-1].Time) {
		return append(recs, tail...)
	}
	return recs // the file is ahead of the tail: it has all of it
}

// recordKey is a record as events.jsonl holds it.
func recordKey(r vocab.EventRecord) string {
	b, _ := json.Marshal(r)
	return string(b)
}
