package remote

import (
	"context"
	"io"
	"strings"
)

// Exec runs a POSIX sh script on the host and returns its standard output
// (errors as run: an ssh failure in one line, else the script's status
// and first line of stderr).
func (h Host) Exec(ctx context.Context, script string, stdin io.Reader) (string, error) {
	return h.run(ctx, nil, script, stdin)
}

// GitURL is the git remote URL of an absolute path on the host, over the
// same ssh destination.
func (h Host) GitURL(p string) string {
	if strings.HasPrefix(h.Dest, "ssh://") {
		return strings.TrimSuffix(h.Dest, "/") + p
	}
	return h.Dest + ":" + p
}

// GitSSHCommand is GIT_SSH_COMMAND for git talking to the host: the
// host's ssh with its options, never prompting.
func (h Host) GitSSHCommand() string {
	words := []string{shq(h.sshBin())}
	for _, a := range h.SSHArgs {
		words = append(words, shq(a))
	}
	return strings.Join(append(words, "-o", "BatchMode=yes", "-o", "ConnectTimeout=10"), " ")
}

// Quote quotes s for a remote POSIX sh script.
func Quote(s string) string { return shq(s) }
