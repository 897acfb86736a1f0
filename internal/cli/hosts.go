package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/hivemind-dev/hivemind/internal/app"
)

// cmdHosts checks every configured host: one line each, saying what is
// there or exactly what is missing; exit 1 when any host fails.
func cmdHosts(o options, stdout, stderr io.Writer) int {
	cfg, _, err := o.LoadConfig()
	if err != nil {
		fmt.Fprintln(stderr, "hivemind: config:", err)
		return app.ExitError
	}
	names := cfg.HostNames()
	if len(names) == 0 {
		fmt.Fprintln(stdout, "no hosts configured: add a [hosts.<name>] table with ssh = \"<destination>\" to the config (hivemind config shows where)")
		return app.ExitOK
	}
	failed := 0
	for _, r := range app.CheckHosts(context.Background(), cfg, names) {
		fmt.Fprintln(stdout, r)
		if r.Err != nil {
			failed++
		}
	}
	if failed > 0 {
		fmt.Fprintf(stderr, "hivemind hosts: %d of %d hosts cannot run agents\n", failed, len(names))
		return app.ExitError
	}
	return app.ExitOK
}
