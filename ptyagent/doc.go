// Package ptyagent runs one interactive agent CLI (Claude Code, the built-in
// sim agent, or a custom command) per pseudo-terminal and drives it
// reliably: spawn in its own session, raw output log, terminal emulation
// through the screen package, a health model built from hooks, the window
// title, output activity and process state, injection of messages with
// confirmed delivery, the hook relay (a unix socket server plus the client
// used by `hivemind hook <event>`), resize, and a graceful stop that leaves
// no process behind.
//
// The package knows nothing about the workflow: the engine talks to it
// through Manager (Start, Stop, Inject) and receives Events.
//
// Events and logs written by this package never contain environment
// values; environment variables are referred to by name only.
package ptyagent
