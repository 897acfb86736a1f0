// Package suggest finds the "did you mean" of a mistyped name. It sits
// below every package that reads names from people (config keys, roles,
// commands) so each can suggest without importing the others.
package suggest

// Closest returns the name in known closest to s, at most max edits away
// (a swap of two neighbours counts as one), or "".
func Closest[S ~string](s string, known []S, max int) S {
	var best S
	bestD := max + 1
	for _, k := range known {
		if d := editDistance(s, string(k)); d < bestD {
			best, bestD = k, d
		}
	}
	return best
}

// editDistance is the optimal string alignment distance: insertions,
// deletions, substitutions and transpositions of neighbours.
func editDistance(a, b string) int {
	x, y := []rune(a), []rune(b)
	d := make([][]int, len(x)+1)
	for i := range d {
		d[i] = make([]int, len(y)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(x); i++ {
		for j := 1; j <= len(y); j++ {
			cost := 1
			if x[i-1] == y[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && x[i-1] == y[j-2] && x[i-2] == y[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(x)][len(y)]
}
