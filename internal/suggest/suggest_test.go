package suggest

import "testing"

func TestEditDistanceSwapCostsOne(t *testing.T) {
	if d := editDistance("stauts", "status"); d != 1 {
		t.Errorf("a swap of neighbours costs %d, want 1", d)
	}
}

func TestClosest(t *testing.T) {
	known := []string{"lead", "reviewer", "worker"}
	for _, tc := range []struct {
		in   string
		max  int
		want string
	}{
		{"reviwer", 2, "reviewer"}, {"wroker", 1, "worker"}, {"laed", 1, "lead"}, {"human", 2, ""}, {"", 2, ""},
	} {
		if got := Closest(tc.in, known, tc.max); got != tc.want {
			t.Errorf("Closest(%q, %d) = %q, want %q", tc.in, tc.max, got, tc.want)
		}
	}
}
