// Command emudigest feeds the seeded 20 MB workload (seed 1, 120×40,
// 10 000 lines of scrollback, 4 KiB writes, as BenchmarkEmulator) to the
// emulator reps times, for instruction counts: bench/callgrind.sh runs it
// under callgrind with reps 0 and 1 and prints the difference, the
// emulator's instructions for one pass. With a second argument it prints
// a digest of every screen and scrollback line, the cursor, title and
// modes, so two builds can be checked to agree.
//
// Usage: emudigest REPS [digest]
package main

import (
	"fmt"
	"hash/fnv"
	"os"
	"strconv"
	"strings"

	"github.com/hivemind-dev/hivemind/ptyagent/screen"
	"github.com/hivemind-dev/hivemind/ptyagent/screen/workload"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: emudigest REPS [digest]")
		os.Exit(2)
	}
	reps, err := strconv.Atoi(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "usage: emudigest REPS [digest]")
		os.Exit(2)
	}
	data, _ := workload.Generate(workload.Options{Seed: 1, Size: 20 << 20})
	s := screen.New(screen.Options{Cols: 120, Rows: 40, Scrollback: 10000})
	for range reps {
		for p := data; len(p) > 0; {
			n := min(4096, len(p))
			_, _ = s.Write(p[:n])
			p = p[n:]
		}
	}
	if len(os.Args) > 2 {
		h := fnv.New64a()
		for sc := 0; sc <= s.ScrollbackLen(); sc += 40 {
			h.Write([]byte(strings.Join(s.Lines(sc), "\n")))
		}
		x, y, v := s.Cursor()
		fmt.Printf("digest %x sb=%d cursor=%d,%d,%v title=%q modes=%+v\n", h.Sum64(), s.ScrollbackLen(), x, y, v, s.Title(), s.Modes())
	}
	_ = s.Close()
}
