package vocab

import (
	"strings"
)

// Headline is the first non-blank line of a task's description, its
// spaces collapsed: a task in one line, for titles and listings.
func Headline(description string) string {
	s, _, _ := strings.Cut(strings.TrimSpace(description), "\n")
	return strings.Join(strings.Fields(s), " ")
}
