package e2e_test

import (
	"flag"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// How the package's tests share the machine. Most of them wait: on the
// sim agents' pace, tmux, sshd, stall and rate-limit timers, hivemind's
// quiet periods. Those that run the real agent CLIs (three to four Node
// processes each) keep the CPU busy. go test runs GOMAXPROCS parallel
// tests by default, so on 2 cores the waiting tests queued behind the busy
// ones. Instead, -parallel defaults to parallelPerCPU × GOMAXPROCS, and a
// test that runs real CLIs first takes one of GOMAXPROCS CLI slots
// (realCLISlot): the CLIs compete for the CPU no more than before, and the
// waiting tests run beside them.

// parallelPerCPU is how many tests run at once per CPU when -parallel is
// not given.
const parallelPerCPU = 3

// defaultParallel sets -test.parallel to parallelPerCPU × GOMAXPROCS
// unless the command line gave it. Called by TestMain before m.Run.
func defaultParallel() {
	flag.Parse()
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if !given {
		_ = flag.Set("test.parallel", strconv.Itoa(parallelPerCPU*runtime.GOMAXPROCS(0)))
	}
}

// cliSlots holds one token per test running real agent CLIs.
var cliSlots = make(chan struct{}, runtime.GOMAXPROCS(0))

var (
	cliSlotsMu sync.Mutex
	cliHolders = map[string]bool{} // names of the tests holding a slot
)

// realCLISlot waits for a CLI slot and holds it until t ends. A subtest of
// a test that holds one, or a second call in the same test, goes on
// without waiting: waiting there could deadlock, and it is the same
// test's CLIs.
func realCLISlot(t *testing.T) {
	t.Helper()
	name := t.Name()
	cliSlotsMu.Lock()
	for p := name; ; {
		if cliHolders[p] {
			cliSlotsMu.Unlock()
			return
		}
		i := strings.LastIndexByte(p, '/')
		if i < 0 {
			break
		}
		p = p[:i]
	}
	cliHolders[name] = true
	cliSlotsMu.Unlock()
	cliSlots <- struct{}{}
	t.Cleanup(func() {
		<-cliSlots
		cliSlotsMu.Lock()
		delete(cliHolders, name)
		cliSlotsMu.Unlock()
	})
}
