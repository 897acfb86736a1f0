package workspace

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/hivemind-dev/hivemind/vocab"
)

// BlobsDir holds a task's content-addressed blobs: blobs/<sha256 hex>.
const BlobsDir = "blobs"

// InlineMax is the longest string (as a JSON literal, quotes and escapes
// included) state.json holds inline. A longer one — a subtask description,
// a plan summary, a deferred trigger's content: whatever agents wrote — is
// stored once in blobs/ and state.json holds a reference
//
//	{"$blob": "sha256:<hex>", "size": <bytes>, "preview": "<first bytes>"}
//
// so state.json's size does not grow with what agents write. Nothing in
// State is an object of exactly that shape (its maps with agent-chosen keys
// hold objects, arrays or booleans, never a string next to a number), so a
// reference is never confused with content.
const InlineMax = 1024

const (
	blobKey     = "$blob"
	blobPrefix  = "sha256:"
	previewMax  = 64
	maxBlobSize = maxStateSize
)

// ErrBlob reports a state.json that references a blob which is missing or
// does not match its hash. The state cannot be used as it is; nothing on
// disk is changed.
var ErrBlob = errors.New("state.json references content that is missing or corrupt")

// externalize returns compact, marshalled JSON js with every string value
// longer than InlineMax replaced by a blob reference, and the blobs to
// store (by hex hash). js must be encoding/json output: no whitespace, so
// a string followed by ':' is a key.
func externalize(js []byte) ([]byte, map[string][]byte, error) {
	var out []byte
	blobs := map[string][]byte{}
	last := 0
	for i := 0; i < len(js); i++ {
		if js[i] != '"' {
			continue
		}
		b, end := i, stringEnd(js, i)
		if end < 0 {
			return nil, nil, errors.New("workspace: externalize: unterminated string")
		}
		lit := js[b:end]
		i = end - 1
		if len(lit) <= InlineMax || (end < len(js) && js[end] == ':') {
			continue
		}
		var s string
		if err := json.Unmarshal(lit, &s); err != nil {
			return nil, nil, fmt.Errorf("workspace: externalize: %w", err)
		}
		sum := sha256.Sum256([]byte(s))
		h := hex.EncodeToString(sum[:])
		blobs[h] = []byte(s)
		preview, _ := json.Marshal(clipRunes(s, previewMax))
		out = append(out, js[last:b]...)
		out = fmt.Appendf(out, `{%q:%q,"size":%d,"preview":%s}`, blobKey, blobPrefix+h, len(s), preview)
		last = end
	}
	if last == 0 {
		return js, nil, nil
	}
	return append(out, js[last:]...), blobs, nil
}

// stringEnd returns the offset just past the JSON string literal opening at
// js[i], or -1.
func stringEnd(js []byte, i int) int {
	for j := i + 1; j < len(js); j++ {
		switch js[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return -1
}

// clipRunes returns at most n bytes of s, cut at a rune boundary.
func clipRunes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// storeBlobs writes each blob to dir/blobs/<hash> unless it is there
// already (blobs are immutable: same name, same content). Each is written
// atomically and fsync'd, so a state.json that references it is never on
// disk before it (write-ahead). known caches hashes stored or found by
// this process.
func storeBlobs(dir string, blobs map[string][]byte, known map[string]bool) error {
	if len(blobs) == 0 {
		return nil
	}
	bdir := filepath.Join(dir, BlobsDir)
	for h, data := range blobs {
		if known[h] {
			continue
		}
		p := filepath.Join(bdir, h)
		if fi, err := os.Lstat(p); err == nil && fi.Mode().IsRegular() && fi.Size() == int64(len(data)) {
			known[h] = true
			continue
		}
		if err := ensureDir(dir, bdir); err != nil {
			return err
		}
		if err := WriteFileAtomic(p, data, 0o644); err != nil {
			return err
		}
		known[h] = true
	}
	return nil
}

// ensureDir creates sub (a directory in dir) durably: the new entry in dir
// is fsync'd before anything in sub is relied on.
func ensureDir(dir, sub string) error {
	if fi, err := os.Lstat(sub); err == nil {
		if !fi.IsDir() {
			return fmt.Errorf("workspace: %s is not a directory", sub)
		}
		return nil
	}
	if err := os.Mkdir(sub, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("workspace: %w", err)
	}
	return syncDir(dir)
}

// resolveBlobs returns state.json content js with every blob reference
// replaced by the content it names, read from dir/blobs and checked
// against its hash. A missing or mismatching blob is ErrBlob. The result
// is compact JSON.
func resolveBlobs(dir string, js []byte) ([]byte, error) {
	open := []byte(`{"` + blobKey + `":`)
	var compact bytes.Buffer
	if !bytes.Contains(js, []byte(strconv.Quote(blobKey))) || json.Compact(&compact, js) != nil {
		// No reference, or not valid JSON (ParseState says so).
		return js, nil
	}
	// In compact JSON a quote inside a string is escaped, so the opening
	// of a reference object cannot be part of a string.
	in, out := compact.Bytes(), make([]byte, 0, compact.Len())
	for {
		i := bytes.Index(in, open)
		if i < 0 {
			return append(out, in...), nil
		}
		out = append(out, in[:i]...)
		in = in[i:]
		d := json.NewDecoder(bytes.NewReader(in))
		d.DisallowUnknownFields()
		var ref struct {
			Blob    string  `json:"$blob"`
			Size    *int64  `json:"size"`
			Preview *string `json:"preview"`
		}
		h, hasPrefix := "", false
		if d.Decode(&ref) == nil {
			h, hasPrefix = strings.CutPrefix(ref.Blob, blobPrefix)
		}
		if !hasPrefix || !validHash(h) || ref.Size == nil || *ref.Size < 0 {
			// Not a reference: an object that merely starts alike.
			out, in = append(out, in[0]), in[1:]
			continue
		}
		content, err := readBlob(dir, h, *ref.Size)
		if err != nil {
			return nil, err
		}
		lit, err := json.Marshal(content)
		if err != nil {
			return nil, err
		}
		out, in = append(out, lit...), in[d.InputOffset():]
	}
}

func validHash(h string) bool {
	if len(h) != 2*sha256.Size {
		return false
	}
	_, err := hex.DecodeString(h)
	return err == nil && strings.ToLower(h) == h
}

// readBlob reads blobs/<h> and checks its size and hash.
func readBlob(dir, h string, size int64) (string, error) {
	rel := filepath.Join(BlobsDir, h)
	if size > maxBlobSize {
		return "", fmt.Errorf("%w: %s: %d bytes is over the limit", ErrBlob, rel, size)
	}
	data, err := readNoFollowMax(filepath.Join(dir, rel), size)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", fmt.Errorf("%w: %s is missing", ErrBlob, rel)
	case errors.Is(err, errTooLarge):
		return "", fmt.Errorf("%w: %s is larger than the %d bytes state.json records", ErrBlob, rel, size)
	case err != nil:
		return "", fmt.Errorf("%w: %s: %v", ErrBlob, rel, err)
	}
	if sum := sha256.Sum256(data); int64(len(data)) != size || hex.EncodeToString(sum[:]) != h {
		return "", fmt.Errorf("%w: %s does not match its hash (%d bytes, %d recorded): it was changed after it was written", ErrBlob, rel, len(data), size)
	}
	return string(data), nil
}

// ReadStateFile reads the state.json of the task directory dir as it is
// (no backup is tried, nothing is changed), resolving its blob
// references: for readers outside the engine (tests, tools) that must not
// parse state.json themselves.
func ReadStateFile(dir string) (vocab.State, error) {
	data, err := readNoFollowMax(filepath.Join(dir, vocab.StateFile), maxStateSize)
	if err != nil {
		return vocab.State{}, err
	}
	if data, err = resolveBlobs(dir, data); err != nil {
		return vocab.State{}, err
	}
	return ParseState(data, "")
}
