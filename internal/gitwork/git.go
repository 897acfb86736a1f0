package gitwork

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
)

// GitError is a failed git invocation, with what git wrote on stderr.
type GitError struct {
	Dir    string
	Args   []string
	Stderr string
	Err    error
}

func (e *GitError) Error() string {
	msg := strings.TrimSpace(e.Stderr)
	if msg == "" {
		msg = e.Err.Error()
	}
	return fmt.Sprintf("git %s (in %s): %s", strings.Join(e.Args, " "), e.Dir, msg)
}

func (e *GitError) Unwrap() error { return e.Err }

// gitConfig is passed to every git call so that the user's configuration
// cannot make an unattended operation hang or change shape: no hooks, no
// signing prompts, no rerere auto-resolution, no colours, standard diff
// prefixes, and diff3 conflict markers (the base helps whoever resolves).
var gitConfig = []string{
	"-c", "core.hooksPath=/dev/null",
	"-c", "commit.gpgSign=false",
	"-c", "rerere.enabled=false",
	"-c", "color.ui=false",
	"-c", "core.quotePath=false",
	"-c", "diff.noprefix=false",
	"-c", "diff.mnemonicPrefix=false",
	"-c", "merge.conflictStyle=diff3",
	"-c", "advice.detachedHead=false",
}

// scrubbedEnv is the environment for git: variables that would redirect git
// to another repository or index are removed (Hivemind may itself run from
// a git hook), and prompts, editors and optional index writes are disabled.
// GIT_OPTIONAL_LOCKS=0 keeps read-only commands such as status from
// rewriting the user's index.
func scrubbedEnv(extra []string) []string {
	drop := map[string]bool{
		"GIT_DIR": true, "GIT_WORK_TREE": true, "GIT_INDEX_FILE": true,
		"GIT_OBJECT_DIRECTORY": true, "GIT_ALTERNATE_OBJECT_DIRECTORIES": true,
		"GIT_COMMON_DIR": true, "GIT_NAMESPACE": true, "GIT_PREFIX": true,
		"GIT_EDITOR": true, "GIT_OPTIONAL_LOCKS": true, "LC_ALL": true, "LANGUAGE": true,
	}
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if !drop[k] {
			env = append(env, kv)
		}
	}
	env = append(env, "GIT_TERMINAL_PROMPT=0", "GIT_OPTIONAL_LOCKS=0", "GIT_EDITOR=true",
		"GIT_MERGE_AUTOEDIT=no", "LC_ALL=C", "LANGUAGE=C")
	return append(env, extra...)
}

// gitCmd runs git in dir and returns its stdout.
func gitCmd(ctx context.Context, dir string, env []string, args ...string) (string, error) {
	full := append(append([]string{}, gitConfig...), args...)
	cmd := exec.CommandContext(ctx, "git", full...)
	cmd.Dir = dir
	cmd.Env = scrubbedEnv(env)
	var out, errb bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &errb
	if err := cmd.Run(); err != nil {
		return out.String(), &GitError{Dir: dir, Args: args, Stderr: errb.String(), Err: err}
	}
	return out.String(), nil
}

// exitCode is the exit status of a failed git call (-1 if it did not run).
func exitCode(err error) int {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	return -1
}

// git runs git with the repository's identity environment.
func (r *Repo) git(dir string, args ...string) (string, error) {
	return gitCmd(context.Background(), dir, r.identity, args...)
}

// gitTrim is git with surrounding white space removed from stdout.
func (r *Repo) gitTrim(dir string, args ...string) (string, error) {
	out, err := r.git(dir, args...)
	return strings.TrimSpace(out), err
}

func bgCtx() context.Context { return context.Background() }
