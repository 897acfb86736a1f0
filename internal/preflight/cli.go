package preflight

import (
	"context"
	"strings"
)

// KeyCheck returns the check that one of the variables keys holds a key
// or selects a login (keys is called at check time: a CLI may read its
// own config to know which). A missing key only warns: the CLIs keep
// logins in their homes, which login names.
func KeyCheck(bin string, keys func(env Env) []string, login string) func(context.Context, Env, Agent, string) []Result {
	return func(_ context.Context, env Env, _ Agent, _ string) []Result {
		r := Result{Check: bin + " key"}
		ks := keys(env)
		for _, k := range ks {
			if env.Getenv(k) != "" {
				r.Msg = k + " is set"
				return []Result{r}
			}
		}
		r.Status = Warn
		r.Msg = "none of " + strings.Join(ks, ", ") + " is set"
		r.Fix = "set one, or make sure of " + login
		return []Result{r}
	}
}

// Keys returns a keys function for KeyCheck naming fixed variables.
func Keys(names ...string) func(Env) []string {
	return func(Env) []string { return names }
}
