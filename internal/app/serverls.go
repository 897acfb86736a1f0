package app

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"text/tabwriter"
	"time"

	"github.com/hivemind-dev/hivemind/internal/proto"
	"github.com/hivemind-dev/hivemind/vocab"
	"github.com/hivemind-dev/hivemind/workspace"
)

// ListServers writes the teams running on this machine (hivemind ls): per
// server its project, task, state, attached clients and age; one JSON
// object per line with jsonOut. Registry entries of servers that are gone
// are removed.
func ListServers(binary string, jsonOut bool, stdout io.Writer) error {
	es, err := registered()
	if err != nil {
		return err
	}
	var infos []proto.Info
	for _, e := range es {
		c, info, err := dialServer(e.Sock, proto.KindInfo, binary, true)
		if err != nil {
			if errors.Is(err, errNoServer) && !alive(e.PID) {
				if p, perr := pathsOf(e.Root); perr == nil {
					_ = os.Remove(p.entry)
				}
				continue
			}
			// A server of another version still runs: list what is known.
			info = proto.Info{Project: e.Project, Root: e.Root, PID: e.PID, Started: e.Started, Phase: "?", Why: err.Error()}
		} else {
			_ = c.Close()
		}
		if info.Web != "" {
			if f, err := WebFile(info.Root); err == nil && f.URL != "" {
				info.Web = f.URL // with its token: this user's file (0600)
			}
		}
		infos = append(infos, info)
	}
	// The teams that wait on a human first.
	sort.Slice(infos, func(i, j int) bool {
		wi, wj := vocab.Phase(infos[i].Phase).Terminal(), vocab.Phase(infos[j].Phase).Terminal()
		if wi != wj {
			return wi
		}
		return infos[i].Project < infos[j].Project
	})
	if jsonOut {
		enc := json.NewEncoder(stdout)
		for _, in := range infos {
			if err := enc.Encode(in); err != nil {
				return err
			}
		}
		return nil
	}
	if len(infos) == 0 {
		fmt.Fprintln(stdout, "no Hivemind server runs on this machine (hivemind --server \"task\" starts one)")
		return nil
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "PROJECT\tTASK\tSTATE\tCLIENTS\tAGE\tTITLE")
	var webs []string
	for _, in := range infos {
		state := in.Phase
		if in.Why != "" && vocab.Phase(in.Phase) == vocab.PhaseNeedsHuman {
			state += " (needs you)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\n", in.Project, in.TaskID, state, in.Clients,
			time.Since(in.Started).Round(time.Second), in.Title)
		if in.Web != "" {
			webs = append(webs, fmt.Sprintf("web %s: %s", in.Project, in.Web))
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, w := range webs {
		fmt.Fprintln(stdout, w)
	}
	return nil
}

// alive reports whether a process pid exists.
func alive(pid int) bool {
	if pid <= 0 {
		return false
	}
	_, err := os.Stat(filepath.Join("/proc", fmt.Sprint(pid)))
	return err == nil
}

// Wait blocks until the project's task needs a human or ends and returns
// the exit code headless mode gives it (0 complete, 1 error or cancelled,
// 3 needs_human); with no server running it answers from the task's
// state in the workspace.
func Wait(o Options, project, binary string, stdout, stderr io.Writer) int {
	sock, err := findServer(o, project)
	if err != nil {
		fmt.Fprintln(stderr, "hivemind:", err)
		return ExitError
	}
	c, info, err := dialServer(sock, proto.KindWait, binary, true)
	if err != nil {
		// A server that stopped as this client came (the task waited on a
		// human with server_idle_seconds = 0, or ended) left its answer
		// in the workspace.
		if !errors.Is(err, errNoServer) && !errors.Is(err, errServerGone) {
			fmt.Fprintln(stderr, "hivemind:", err)
			return ExitError
		}
		return waitFromWorkspace(o, project, stdout, stderr)
	}
	defer c.Close()
	phase := vocab.Phase(info.Phase)
	for !phase.Terminal() {
		m, err := c.Recv()
		if err != nil {
			// The server went without a bye (killed): the workspace says
			// where the task is.
			return waitFromWorkspace(o, project, stdout, stderr)
		}
		switch m.T {
		case proto.TSnapshot:
			if m.Snapshot != nil {
				phase = m.Snapshot.State.Phase
				if phase.Terminal() {
					info.Why = m.Snapshot.State.EndReason()
				}
			}
		case proto.TBye:
			if m.Info != nil {
				phase, info.Why = vocab.Phase(m.Info.Phase), m.Info.Why
			}
			if !phase.Terminal() {
				fmt.Fprintf(stderr, "hivemind: the server stopped (%s) before task %s ended; resume it with hivemind --resume --project %s\n", m.Text, info.TaskID, info.Project)
				return ExitError
			}
		}
	}
	printWaitResult(stdout, info.TaskID, phase, info.Why)
	return exitCode(phase)
}

func printWaitResult(w io.Writer, task string, phase vocab.Phase, why string) {
	msg := fmt.Sprintf("task %s: %s", task, phase)
	if why != "" {
		msg += ": " + why
	}
	fmt.Fprintln(w, msg)
}

// waitFromWorkspace answers wait when no server runs: the newest task's
// state decides.
func waitFromWorkspace(o Options, project string, stdout, stderr io.Writer) int {
	if project != "" {
		if fi, err := os.Stat(project); err == nil && fi.IsDir() {
			o.Project, o.Workspace = project, ""
		}
	}
	root, err := o.WorkspaceRoot()
	if err != nil {
		fmt.Fprintln(stderr, "hivemind:", err)
		return ExitError
	}
	_, infos, err := workspace.ReadTasks(root)
	if err != nil || len(infos) == 0 {
		fmt.Fprintf(stderr, "hivemind: no Hivemind server runs for %s and it has no task\n", root)
		return ExitError
	}
	in := workspace.NewestFirst(infos)[0]
	if in.State == nil || !in.State.Phase.Terminal() {
		phase := vocab.Phase("not started")
		if in.State != nil {
			phase = in.State.Phase
		}
		fmt.Fprintf(stderr, "hivemind: no Hivemind server runs for %s; task %s stopped in %s: resume it with hivemind --resume\n", root, in.ID, phase)
		return ExitError
	}
	why := ""
	if in.State.Phase.Terminal() {
		why = in.State.EndReason()
	}
	printWaitResult(stdout, in.ID, in.State.Phase, why)
	return exitCode(in.State.Phase)
}
