package config

import (
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// README's Config keys table is the key tables (keys.go), row by row: a key
// added, renamed, re-ranged or re-defaulted there fails this until README
// says the same. The failure prints the table to paste.
func TestREADMEConfigKeys(t *testing.T) {
	data, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(data), "\n### Config keys\n")
	if !ok {
		t.Fatal("README has no Config keys section")
	}
	var got []string
	for _, line := range strings.Split(section, "\n") {
		if strings.HasPrefix(line, "|") {
			got = append(got, line)
		} else if len(got) > 0 {
			break
		}
	}
	want := []string{"| key | type | default | meaning |", "|---|---|---|---|"}
	for _, d := range KeyDocs() {
		row := "| " + strings.Join([]string{d.Key, d.Type, d.Default, d.Doc}, " | ") + " |"
		want = append(want, strings.ReplaceAll(row, "|  |", "| |"))
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		for i := range max(len(got), len(want)) {
			var g, w string
			if i < len(got) {
				g = got[i]
			}
			if i < len(want) {
				w = want[i]
			}
			if g != w {
				t.Errorf("row %d:\n README: %s\n keys:   %s", i, g, w)
				break
			}
		}
		t.Fatalf("README's Config keys table differs from the key tables; it should read:\n%s", strings.Join(want, "\n"))
	}
}

// Every field of the configuration structs is some key's target (or is
// listed here as filled otherwise): a field added without its key fails.
func TestEveryFieldHasAKey(t *testing.T) {
	checkFields(t, topKeys, "Roles", "WorkerAgents", "WorkerModels", "Profiles", "Pricing", "Hosts", "Placement", "Files")
	checkFields(t, roleKeys)
	checkFields(t, workerAgentKeys)
	checkFields(t, profileKeys, "Env")
	checkFields(t, hostKeys)
	checkFields(t, priceKeys)
}

func checkFields[T any](t *testing.T, keys []key[T], otherwise ...string) {
	t.Helper()
	var v T
	targets := map[uintptr]string{}
	for _, k := range keys {
		if k.field != nil {
			targets[reflect.ValueOf(k.field(&v)).Pointer()] = k.name
		}
	}
	rv := reflect.ValueOf(&v).Elem()
	for i := range rv.NumField() {
		f := rv.Type().Field(i)
		if _, ok := targets[rv.Field(i).Addr().Pointer()]; !ok && !slices.Contains(otherwise, f.Name) {
			t.Errorf("%T.%s is no key's field", v, f.Name)
		}
	}
}
