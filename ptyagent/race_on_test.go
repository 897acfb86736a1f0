//go:build race

package ptyagent

// raceEnabled: the race detector slows the emulator about tenfold, so
// throughput tests measure the read path alone under it.
const raceEnabled = true
