// Package config loads Hivemind's configuration: built-in defaults, the
// user-level file ($XDG_CONFIG_HOME/hivemind/config.toml), the project file
// (<workspace>/config.toml) and command-line flags, in that order of
// precedence (flags win). It records where every effective value came from,
// so `hivemind config` can say so.
//
// A configuration with an unknown key, a value of the wrong type or a value
// out of range is rejected with an error that names the file, the line and
// the key; the run must not start on such a configuration.
package config
