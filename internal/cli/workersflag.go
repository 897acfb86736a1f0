package cli

import (
	"strconv"

	"github.com/hivemind-dev/hivemind/internal/config"
)

// workersFlag is --workers: a count ("4"), or counts placed on hosts
// ("4@buildbox", "2,3@buildbox"; config.ParseWorkers).
type workersFlag struct{ o *options }

func (w workersFlag) String() string {
	if w.o == nil {
		return "2"
	}
	return strconv.Itoa(w.o.Workers)
}

func (w workersFlag) Set(s string) error {
	n, placement, err := config.ParseWorkers(s)
	if err != nil {
		return err
	}
	w.o.Workers, w.o.Placement = n, placement
	return nil
}
