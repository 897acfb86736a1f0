package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/hivemind-dev/hivemind/vocab"
	"github.com/hivemind-dev/hivemind/workspace"
)

// taskRow is one task of `hivemind tasks --json`.
type taskRow struct {
	ID          string     `json:"id"`
	State       string     `json:"state"`
	Created     time.Time  `json:"created"`
	Started     *time.Time `json:"started,omitempty"`
	Finished    *time.Time `json:"finished,omitempty"`
	DurationSec float64    `json:"duration_seconds"`
	Description string     `json:"description"`
	Dir         string     `json:"dir"`
	Problem     string     `json:"problem,omitempty"`
}

// cmdTasks lists the tasks of the project's workspace, newest first: an
// aligned table, or a JSON array with --json. It only reads.
func cmdTasks(o options, stdout io.Writer) error {
	rows, err := listTasks(o, time.Now())
	if err != nil {
		return err
	}
	if o.JSON {
		if rows == nil {
			rows = []taskRow{}
		}
		b, err := json.MarshalIndent(rows, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(stdout, "%s\n", b)
		return err
	}
	if len(rows) == 0 {
		_, err := fmt.Fprintln(stdout, "no tasks yet")
		return err
	}
	return writeTaskTable(stdout, rows)
}

// listTasks reads the task rows of the workspace the options name (none
// when it does not exist yet; nothing is created).
func listTasks(o options, now time.Time) ([]taskRow, error) {
	root, err := o.WorkspaceRoot()
	if err != nil {
		return nil, err
	}
	_, infos, err := workspace.ReadTasks(root)
	if err != nil {
		return nil, err
	}
	live := workspace.RunLive(root)
	var rows []taskRow
	for _, in := range workspace.NewestFirst(infos) {
		r := taskRow{ID: in.ID, State: in.StateName(), Created: in.Task.CreatedAt, Description: in.Title(),
			Dir: in.Dir, Problem: in.Problem}
		if st := in.State; st != nil {
			end := st.EndedAt()
			if !end.IsZero() {
				r.Finished = &end
			}
			if s := st.StartedAt; !s.IsZero() {
				r.Started = &s
				// The elapsed clock, as status and the UI say it.
				r.DurationSec = st.Elapsed(now, live).Round(time.Second).Seconds()
			}
		}
		rows = append(rows, r)
	}
	return rows, nil
}

// writeTaskTable prints the rows as an aligned table.
func writeTaskTable(w io.Writer, rows []taskRow) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSTATE\tSTARTED\tDURATION\tDESCRIPTION")
	for _, r := range rows {
		started, dur := "-", "-"
		if r.Started != nil {
			started = r.Started.Local().Format("2006-01-02 15:04")
			dur = fmtDuration(time.Duration(r.DurationSec) * time.Second)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", r.ID, r.State, started, dur, clip(vocab.Headline(r.Description), 70))
	}
	return tw.Flush()
}

// fmtDuration renders a duration as 1h02m03s, 2m03s or 3s.
func fmtDuration(d time.Duration) string {
	s := int64(d / time.Second)
	switch {
	case s >= 3600:
		return fmt.Sprintf("%dh%02dm%02ds", s/3600, s/60%60, s%60)
	case s >= 60:
		return fmt.Sprintf("%dm%02ds", s/60, s%60)
	}
	return fmt.Sprintf("%ds", s)
}

// clip cuts s to n runes, marked with "…" when cut.
func clip(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
