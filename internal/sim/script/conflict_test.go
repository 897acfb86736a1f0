package script

import "testing"

func TestResolveConflicts(t *testing.T) {
	tests := []struct {
		name, in, want string
		ok             bool
	}{
		{"no markers", "a\nb\n", "a\nb\n", false},
		{"diff3 block keeps both sides without the base",
			"head\n<<<<<<< HEAD\nours\n||||||| base\nold\n=======\ntheirs\n>>>>>>> br\ntail\n",
			"head\nours\ntheirs\ntail\n", true},
		{"two-way block", "<<<<<<< HEAD\nx\n=======\ny\n>>>>>>> br\n", "x\ny\n", true},
		{"two blocks", "<<<<<<< A\n1\n=======\n2\n>>>>>>> B\nmid\n<<<<<<< A\n3\n=======\n4\n>>>>>>> B\n", "1\n2\nmid\n3\n4\n", true},
		{"unfinished block is kept", "<<<<<<< A\n1\n=======\n2\n", "<<<<<<< A\n1\n=======\n2\n", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := ResolveConflicts(tc.in)
			if got != tc.want || ok != tc.ok {
				t.Fatalf("got %q %v, want %q %v", got, ok, tc.want, tc.ok)
			}
		})
	}
}
