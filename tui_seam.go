package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/charmbracelet/x/term"

	"github.com/hivemind-dev/hivemind/engine"
	"github.com/hivemind-dev/hivemind/tui"
)

// runTUI runs the full-screen UI for a wired-up app and returns the exit
// code. ok is false when no UI can run (stdout is not a terminal); then the
// caller runs headless.
//
// The UI stays up after the task reaches a final state so the user can read
// it; quitting before that leaves the task resumable (hivemind --resume).
func runTUI(a *app) (code int, ok bool) {
	if !term.IsTerminal(os.Stdout.Fd()) || !term.IsTerminal(os.Stdin.Fd()) {
		return 0, false
	}
	terms := tui.TerminalsFunc(func(id string) (tui.Terminal, bool) {
		s, ok := a.agents.Session(id)
		if !ok || s == nil {
			return nil, false // never a typed nil inside the interface
		}
		return s, true
	}, a.agents.Changed())
	p := tui.NewProgram(tui.Options{
		Engine:    a.runner,
		Terminals: terms,
		Title:     a.title(),
		FPS:       a.cfg.FPS,
	})

	// The terminal belongs to the UI now: notices go to the UI, records
	// only to events.jsonl (which the UI shows).
	a.out.redirect(io.Discard, func(level, msg string) { p.Send(tui.NotifyMsg{Level: level, Message: msg}) })

	// Forward snapshots without ever blocking the engine on the UI: keep
	// only the newest pending one.
	latest := make(chan engine.Snapshot, 1)
	a.onSnapshot = func(s engine.Snapshot) {
		select {
		case <-latest:
		default:
		}
		latest <- s
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		for {
			select {
			case <-ctx.Done():
				return
			case s := <-latest:
				p.Send(tui.SnapshotMsg{State: s.State, Events: s.Events})
			}
		}
	}()

	// SIGTERM/SIGHUP quit the UI, leaving the task resumable.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sigs)
	go func() {
		select {
		case <-sigs:
			p.Quit()
		case <-ctx.Done():
		}
	}()

	runCtx, cancelRunner := context.WithCancel(context.Background())
	runDone := make(chan error, 1)
	go func() { runDone <- a.runner.Run(runCtx) }()
	a.runner.Send(a.first)

	_, err := p.Run()
	cancel()
	final := a.finalPhase()
	a.shutdown(cancelRunner, runDone)
	if err != nil {
		fmt.Fprintln(os.Stderr, "hivemind:", err)
		return exitError, true
	}
	if final == "" {
		fmt.Fprintf(os.Stderr, "hivemind: task %s left unfinished; resume it with: hivemind --resume --project %s\n", a.td.ID(), a.project)
		return exitOK, true
	}
	fmt.Fprintf(os.Stderr, "hivemind: task %s: %s\n", a.td.ID(), final)
	return exitCode(final), true
}

// title is the header text of the UI: the task's first line.
func (a *app) title() string {
	t, err := a.td.Task()
	if err != nil {
		return a.td.ID()
	}
	d := t.Description
	for i, r := range d {
		if r == '\n' {
			return d[:i]
		}
	}
	return d
}
