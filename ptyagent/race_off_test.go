//go:build !race

package ptyagent

const raceEnabled = false
