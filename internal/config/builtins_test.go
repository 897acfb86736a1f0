package config

// The built-in agents, as ptyagent/profiles registers them in the binary
// (its tests check the registry reaches RegisterAgent).
func init() {
	for _, n := range []string{"claude", "codex", "gemini", "sim"} {
		RegisterAgent(n)
	}
}
