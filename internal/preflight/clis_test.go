package preflight

// The CLIs as the tests know them (ptyagent/profiles registers the real
// ones; its tests check that each profile's CLI is complete).
var (
	testClaude = &CLI{Bin: "claude", Title: "Claude Code", Install: "npm install -g @anthropic-ai/claude-code", Checks: ClaudeChecks}
	testCodex  = &CLI{Bin: "codex", Install: "npm install -g @openai/codex",
		Checks: KeyCheck("codex", Keys("OPENAI_API_KEY", "CODEX_API_KEY"), "codex login")}
	testGemini = &CLI{Bin: "gemini", Install: "npm install -g @google/gemini-cli",
		Checks: KeyCheck("gemini", Keys("GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI", "GOOGLE_GENAI_USE_GCA"), "a Google login")}
	testSim = &CLI{About: "built-in simulated agents (no Claude Code, no network needed)"}
)
