package workspace

import (
	"os"
	"path/filepath"

	"github.com/hivemind-dev/hivemind/vocab"
)

// RunLive reports whether a Hivemind process holds the workspace at root:
// its lock file names a process of this host that runs (or one of another
// host, which cannot be checked from here). It only reads: `status` asks
// it while a run goes on. A lock released by a run that ended is empty.
func RunLive(root string) bool {
	path := filepath.Join(root, vocab.LockFile)
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	li, err := readLockInfo(f)
	if err != nil || li.PID <= 0 {
		return false
	}
	return !holderGone(path, hostname())
}
