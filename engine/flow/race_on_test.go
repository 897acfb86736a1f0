//go:build race

package flow

// raceEnabled: the race detector slows Step about tenfold; the property
// tests run fewer sequences under it.
const raceEnabled = true
