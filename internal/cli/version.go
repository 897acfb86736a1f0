package cli

import (
	"runtime/debug"
	"strings"
)

// version is the release this binary is, when the build says so:
// go build -ldflags "-X github.com/hivemind-dev/hivemind/internal/cli.version=v1.2.3".
// Without it the Go toolchain's build information names the module version
// (go install …@v1.2.3) or the commit (a build from a git checkout).
var version string

// versionText is the version line of `hivemind --version`.
func versionText() string {
	return "hivemind " + buildVersion(version, readBuildInfo) + "\n"
}

// binaryVersion is this binary's version, as a server and its clients
// name it to each other.
func binaryVersion() string { return buildVersion(version, readBuildInfo) }

// readBuildInfo is debug.ReadBuildInfo (tests swap it).
var readBuildInfo = debug.ReadBuildInfo

// buildVersion is the version a build carries: the -ldflags one, else
// the module's version (go install …@v1.2.3, or the pseudo-version Go
// stamps from the checkout's commit), else the commit it was built from
// ("+dirty" for uncommitted changes), else "devel".
func buildVersion(set string, info func() (*debug.BuildInfo, bool)) string {
	if set = strings.TrimSpace(set); set != "" {
		return set
	}
	bi, ok := info()
	if !ok {
		return "devel (built without version information)"
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	var rev, when string
	dirty := false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			when = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev == "" {
		return "devel (built without version information)"
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if dirty {
		rev += "+dirty"
	}
	s := "devel (commit " + rev
	if when != "" {
		s += ", " + when
	}
	return s + ")"
}
