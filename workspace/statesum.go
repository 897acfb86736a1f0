package workspace

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"

	"github.com/hivemind-dev/hivemind/vocab"
)

// stateSumFile, in locks/ (never an agent's), lists the sha256 of the
// state.json contents the engine wrote last, newest last: a state.json
// whose hash is not there was written by someone else (an agent) and is
// not obeyed (StateStore.load). Engine files are the engine's.
const stateSumFile = "state.sha256"

// ErrStateEdited: state.json is not what the engine last wrote.
var ErrStateEdited = errors.New("state.json changed outside Hivemind")

// keepSums bounds the list: the current write, the one before (a crash
// between writing the list and state.json leaves the older file in place)
// and every kept backup.
const keepSums = KeepBackups + 2

// stateSum is the hash of state.json content; surrounding white space
// (a lost trailing newline) does not count.
func stateSum(data []byte) string {
	sum := sha256.Sum256(bytes.TrimSpace(data))
	return hex.EncodeToString(sum[:])
}

// readSums reads the list of known state.json hashes; nil (no check) when
// there is none: a task whose state was never saved by this version.
func readSums(t *TaskDir) ([]string, error) {
	p, err := t.Path(filepath.Join(vocab.LocksDir, stateSumFile))
	if err != nil {
		return nil, err
	}
	data, err := readNoFollowMax(p, 64<<10)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("workspace: read %s: %w", stateSumFile, err)
	}
	sums := []string{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		if l := strings.TrimSpace(sc.Text()); len(l) == 64 {
			sums = append(sums, l)
		}
	}
	return sums, nil
}

// writeSums records sum as the newest engine write of state.json.
func (s *StateStore) writeSums(sum string) error {
	known := append(slices.DeleteFunc(slices.Clone(s.sums), func(x string) bool { return x == sum }), sum)
	if len(known) > keepSums {
		known = known[len(known)-keepSums:]
	}
	if err := WriteFileAtomic(filepath.Join(s.t.dir, vocab.LocksDir, stateSumFile), []byte(strings.Join(known, "\n")+"\n"), 0o644); err != nil {
		return err
	}
	s.sums = known
	return nil
}

// engineWrote reports whether data is a state.json the engine wrote (true
// when nothing is recorded to check against).
func (s *StateStore) engineWrote(data []byte) bool {
	return s.sums == nil || slices.Contains(s.sums, stateSum(data))
}
