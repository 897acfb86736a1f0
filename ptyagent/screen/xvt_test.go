package screen_test

import (
	"github.com/hivemind-dev/hivemind/ptyagent/screen"
	"github.com/hivemind-dev/hivemind/ptyagent/screen/xvt"
)

// The x/vt reference runs screen's behaviour tests, the benchmarks and
// (HIVEMIND_DIFF_IMPL=xvt) the diff against tmux beside Hivemind's emulator.
func init() { screen.NewVT = xvt.New }
