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

	"github.com/hivemind-dev/hivemind/workspace"
)

// cmdEvents prints the current task's events.jsonl, one line per event;
// with --follow it keeps printing new ones until interrupted.
func cmdEvents(o options, stdout io.Writer) error {
	info, err := o.currentTask()
	if err != nil {
		return err
	}
	path := filepath.Join(info.Dir, workspace.EventsFile)
	pr := newPrinter(stdout, o.json)
	if o.follow {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		return workspace.FollowEvents(ctx, path, 0, pr.record)
	}
	recs, torn, err := workspace.ReadEvents(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		for _, r := range recs {
			pr.record(r)
		}
		return err
	}
	for _, r := range recs {
		pr.record(r)
	}
	if torn && !o.json {
		fmt.Fprintln(stdout, "(the last line is torn: the writer stopped mid-append)")
	}
	return nil
}
