package main

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

	"github.com/hivemind-dev/hivemind/tui"
	"github.com/hivemind-dev/hivemind/workspace"
)

// cmdEvents prints the current task's events.jsonl, one line per event;
// with --follow it keeps printing new ones until interrupted. It prints the
// milestones (tui.IsMilestone: states, plan, subtasks, checkpoints,
// failures); --verbose (and --json, for tools) prints every record. An
// agent exit that is a graceful stop says so.
func cmdEvents(o options, stdout io.Writer) error {
	info, err := o.currentTask()
	if err != nil {
		return err
	}
	path := filepath.Join(info.Dir, workspace.EventsFile)
	pr := newPrinter(stdout, o.json)
	show := func(r workspace.EventRecord) {
		switch {
		case o.json:
			pr.record(r)
		case o.verbose || tui.IsMilestone(r):
			line := formatRecord(r)
			if note := tui.StopNote(r); note != "" {
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
	if !o.json && !o.verbose && len(recs) > 0 {
		fmt.Fprintln(stdout, "(milestones only; hivemind events --verbose shows every record)")
	}
	if torn && !o.json {
		fmt.Fprintln(stdout, "(the last line is torn: the writer stopped mid-append)")
	}
	return nil
}
