package cli

import (
	"reflect"
	"strings"
	"testing"

	"github.com/hivemind-dev/hivemind/internal/config"
)

func TestWorkersFlagPlacement(t *testing.T) {
	o, err := parseFlags([]string{"--workers", "2,3@buildbox", "--headless"})
	if err != nil {
		t.Fatal(err)
	}
	if !o.WorkersSet || o.Workers != 5 || !reflect.DeepEqual(o.Placement, []config.Placement{{Count: 2, Host: "local"}, {Count: 3, Host: "buildbox"}}) {
		t.Errorf("got workers=%d set=%v placement=%v", o.Workers, o.WorkersSet, o.Placement)
	}
	if _, err := parseFlags([]string{"--workers", "3@"}); err == nil || !strings.Contains(err.Error(), "is not a host name") {
		t.Errorf("3@: %v", err)
	}
}
