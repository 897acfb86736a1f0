package remote

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// HelperName is the helper's file name, local and remote.
const HelperName = "hivemind-hook"

// pingAnswer is what `hivemind-hook remote-ping` prints: the proof that
// an installed helper runs on its host.
const pingAnswer = "hivemind-hook remote ok"

// HelperFor returns the helper binary for a host's platform: the
// hivemind-hook beside self (the running Hivemind) when the platform is
// this one, else hivemind-hook-<goos>-<goarch> beside it.
func HelperFor(self, goos, goarch string) (string, error) {
	name := HelperName
	if goos != runtime.GOOS || goarch != runtime.GOARCH {
		name += "-" + goos + "-" + goarch
	}
	p := filepath.Join(filepath.Dir(self), name)
	if fi, err := os.Stat(p); err != nil || !fi.Mode().IsRegular() {
		return "", fmt.Errorf("no %s for %s/%s beside %s — build it: GOOS=%s GOARCH=%s go build -o %s ./cmd/hivemind-hook",
			name, goos, goarch, self, goos, goarch, p)
	}
	return p, nil
}

// Installed is where Install put the helper.
type Installed struct {
	Path    string // absolute remote path of the helper
	Version string // its content hash (the directory name)
	Copied  bool   // false: that version was already there
}

// Install puts the helper binary at ~/.cache/hivemind/helper/<hash>/ on
// the host, unless that exact build is there already, and checks it runs
// there. The version is the binary's content hash, so two builds never
// share a name and the same build is copied once. Nothing is asked of the
// user (ssh runs in batch mode).
func Install(ctx context.Context, h Host, helper string) (Installed, error) {
	f, err := os.Open(helper)
	if err != nil {
		return Installed{}, fmt.Errorf("%s: helper: %w", h.label(), err)
	}
	defer f.Close()
	inst, present, err := findInstalled(ctx, h, f)
	if err != nil || present {
		return inst, err
	}
	path := helperPath(inst.Version)
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return Installed{}, err
	}
	// Written under a temporary name and renamed: a concurrent install,
	// or one cut off half-way, never leaves a partial binary at the path.
	script := `p=` + path + `; mkdir -p "${p%/*}" && t="$p.tmp.$$" && cat > "$t" && chmod 755 "$t" && mv -f "$t" "$p" && "$p" remote-ping`
	out, err := h.run(ctx, nil, script, f)
	if err != nil {
		return Installed{}, fmt.Errorf("%s: install %s: %w", h.label(), HelperName, err)
	}
	if strings.TrimSpace(out) != pingAnswer {
		return Installed{}, fmt.Errorf("%s: the installed %s does not run there (answered %q) — is it built for that platform?", h.label(), HelperName, clip(out, 100))
	}
	inst.Copied = true
	return inst, nil
}

// HelperInstalled reports whether this build of the helper is installed
// on the host and runs there (Install would copy nothing), without
// changing anything on the host.
func HelperInstalled(ctx context.Context, h Host, helper string) (Installed, bool, error) {
	f, err := os.Open(helper)
	if err != nil {
		return Installed{}, false, fmt.Errorf("%s: helper: %w", h.label(), err)
	}
	defer f.Close()
	return findInstalled(ctx, h, f)
}

// helperPath is where a helper version lives on a host (a sh expression).
func helperPath(ver string) string {
	return `"$HOME"/.cache/hivemind/helper/` + ver + "/" + HelperName
}

// findInstalled hashes the helper build f and asks the host whether that
// version is installed and answers its ping.
func findInstalled(ctx context.Context, h Host, f io.Reader) (Installed, bool, error) {
	sum := sha256.New()
	if _, err := io.Copy(sum, f); err != nil {
		return Installed{}, false, fmt.Errorf("%s: helper: %w", h.label(), err)
	}
	ver := hex.EncodeToString(sum.Sum(nil))[:16]
	out, err := h.run(ctx, nil, `p=`+helperPath(ver)+`; echo "$p"; if [ -x "$p" ] && [ "$("$p" remote-ping 2>/dev/null)" = `+shq(pingAnswer)+` ]; then echo present; fi`, nil)
	if err != nil {
		return Installed{}, false, err
	}
	lines := strings.Fields(out)
	if len(lines) == 0 || !strings.HasPrefix(lines[0], "/") {
		return Installed{}, false, fmt.Errorf("%s: install: unexpected answer %q", h.label(), clip(out, 100))
	}
	return Installed{Path: lines[0], Version: ver}, len(lines) > 1 && lines[1] == "present", nil
}

// ReapHost runs the installed helper's remote-reap on the host: the
// sessions whose helper is gone, and those named by ids (the marks of a
// previous run's sessions, whatever their state), lose every process.
// It returns the helper's one-line account.
func ReapHost(ctx context.Context, h Host, remoteHelper string, ids ...string) (string, error) {
	script := "exec " + shq(remoteHelper) + " remote-reap"
	for _, id := range ids {
		if !ValidMark(id) {
			return "", fmt.Errorf("%s: reap: %q is not a session id", h.label(), id)
		}
		script += " " + id
	}
	out, err := h.run(ctx, nil, script, nil)
	return strings.TrimSpace(out), err
}
