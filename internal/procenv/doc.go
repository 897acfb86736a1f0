// Package procenv finds processes by an entry of their environment — the
// mark a session's processes inherit, which they keep whatever session or
// parent they end up with — and tells a live process from a later one
// that reused its pid. It uses the standard library only (the hook binary
// links it).
package procenv
