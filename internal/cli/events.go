package cli

import (
	"context"
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
// agent exit that is a graceful stop says so.
func cmdEvents(o options, stdout io.Writer) error {
	info, err := o.CurrentTask()
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
