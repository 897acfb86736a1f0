package cli

import (
	"fmt"
	"io"

	"github.com/hivemind-dev/hivemind/roles"
)

// cmdConfig prints the effective configuration and where each value came
// from.
func cmdConfig(o options, stdout io.Writer) error {
	cfg, src, err := o.LoadConfig()
	if err != nil {
		return err
	}
	_, err = fmt.Fprint(stdout, cfg.Describe(src))
	return err
}

// cmdRoles prints the effective per-role permissions.
func cmdRoles(o options, stdout io.Writer) error {
	cfg, _, err := o.LoadConfig()
	if err != nil {
		return err
	}
	if _, err = fmt.Fprint(stdout, roles.Table(cfg)); err == nil {
		printWriteScopes(stdout)
	}
	return err
}
