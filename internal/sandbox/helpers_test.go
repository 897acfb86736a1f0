package sandbox

import (
	"errors"
	"os/exec"
	"strconv"
)

func strconvItoa(i int) string { return strconv.Itoa(i) }

func asExit(err error, ee **exec.ExitError) bool { return errors.As(err, ee) }
