package vocab

import (
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
)

// ValidID accepts exactly what the id pattern it replaced accepted:
// edge cases, then random strings over the bytes that matter.
func TestValidIDMatchesPattern(t *testing.T) {
	pattern := regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)
	want := func(s string) bool { return pattern.MatchString(s) && !strings.Contains(s, "..") }
	cases := []string{
		"", "a", "worker_1", "lead", "20261122-013300-ab12", ".hidden", "-x", "_x", "a..b", "a.b",
		"a/b", `a\b`, "a b", "a\n", "\na", "é", strings.Repeat("a", 128), strings.Repeat("a", 129),
		"a.", "a-", "a_", "0", "..", "a\x00",
	}
	alphabet := "aZ09._-/ \n\x00é"
	r := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		n := r.IntN(12)
		if r.IntN(50) == 0 {
			n = 120 + r.IntN(16)
		}
		var b strings.Builder
		for range n {
			b.WriteByte(alphabet[r.IntN(len(alphabet))])
		}
		cases = append(cases, b.String())
	}
	for _, s := range cases {
		if got := ValidID(s); got != want(s) {
			t.Fatalf("ValidID(%q) = %v, the pattern says %v", s, got, want(s))
		}
	}
}
