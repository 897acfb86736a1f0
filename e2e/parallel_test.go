package e2e_test

import (
	"flag"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// How the package's tests share the machine. Most of them wait: on the
// sim agents' pace, tmux, sshd, stall and rate-limit timers, hivemind's
// quiet periods. Those that run the real agent CLIs (three to four Node
// processes each) keep the CPU busy. With go test's default -parallel
// (GOMAXPROCS) the waiting tests queued behind the busy ones on 2 cores.
// Instead every test calls parallel(t), not t.Parallel (TestNoBareParallel),
// and runs in one of GOMAXPROCS test slots (subtests in as many slots of
// their own); one that starts real CLIs (newOffline, setupCLI) trades its
// slot for one of GOMAXPROCS CLI slots (realCLISlot). So the CLIs compete
// for the CPU no more than before, as many waiting tests run beside them,
// and a test waiting for a CLI slot holds no test slot. -parallel (go
// test's limit, raised by TestMain unless given) only has to let every
// test wait on these slots.

// parallelLimit is -test.parallel when the command line does not give
// it: more than the package's tests, so that the slots below decide.
const parallelLimit = 256

// defaultParallel sets -test.parallel to parallelLimit unless the command
// line gave it. Called by TestMain before m.Run.
func defaultParallel() {
	flag.Parse()
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if !given {
		_ = flag.Set("test.parallel", strconv.Itoa(parallelLimit))
	}
}

var (
	testSlots    = make(chan struct{}, runtime.GOMAXPROCS(0))
	subtestSlots = make(chan struct{}, runtime.GOMAXPROCS(0))
	cliSlots     = make(chan struct{}, runtime.GOMAXPROCS(0))

	slotsMu sync.Mutex
	// slotOf is the slot each running test (by name) holds.
	slotOf = map[string]chan struct{}{}
)

// parallel is t.Parallel, then a wait for a test slot (a subtest slot for
// a subtest), held until t ends or traded for a CLI slot.
func parallel(t *testing.T) {
	t.Helper()
	t.Parallel()
	name := t.Name()
	// A subtest's parent holds a test slot while it waits for its
	// subtests: they take subtest slots, or all the test slots could be
	// held by parents waiting.
	slot := testSlots
	if strings.Contains(name, "/") {
		slot = subtestSlots
	}
	slot <- struct{}{}
	slotsMu.Lock()
	slotOf[name] = slot
	slotsMu.Unlock()
	t.Cleanup(func() { release(name) })
}

// release gives back the slot the test named holds.
func release(name string) {
	slotsMu.Lock()
	slot := slotOf[name]
	delete(slotOf, name)
	slotsMu.Unlock()
	if slot != nil {
		<-slot
	}
}

// realCLISlot holds a CLI slot until t ends, trading t's test slot for
// it: the test slot is given back before the wait. A subtest of a test
// that holds a CLI slot, or a second call in the same test, goes on at
// once: waiting there could deadlock, and it is the same test's CLIs.
func realCLISlot(t *testing.T) {
	t.Helper()
	name := t.Name()
	slotsMu.Lock()
	for p := name; ; {
		if slotOf[p] == cliSlots {
			slotsMu.Unlock()
			return
		}
		i := strings.LastIndexByte(p, '/')
		if i < 0 {
			break
		}
		p = p[:i]
	}
	_, held := slotOf[name]
	slotsMu.Unlock()
	if held {
		release(name)
	} else {
		t.Cleanup(func() { release(name) })
	}
	cliSlots <- struct{}{}
	slotsMu.Lock()
	slotOf[name] = cliSlots
	slotsMu.Unlock()
}

// TestNoBareParallel: the package's tests call parallel(t), which the
// slots above count, not t.Parallel(), which they do not.
func TestNoBareParallel(t *testing.T) {
	parallel(t)
	files, err := filepath.Glob("*_test.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("no test files: %v", err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(b), "\n") {
			if strings.TrimSpace(line) == "t.Parallel()" && f != "parallel_test.go" {
				t.Errorf("%s:%d: t.Parallel(): call parallel(t) instead (e2e/parallel_test.go)", f, i+1)
			}
		}
	}
}
