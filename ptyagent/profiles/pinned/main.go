// Command pinned prints the npm install of every registered agent CLI at
// the version Hivemind was tested with, one per line:
//
//	<name> <package>@<version> <global|prefix>
//
// global: installed with npm -g; prefix: under the agents prefix. .ci/run
// and make real-agents install from it, so a profile's Version is the one
// place a pin is written. -latest prints @latest instead.
package main

import (
	"flag"
	"fmt"

	"github.com/hivemind-dev/hivemind/ptyagent/profiles"
)

func main() {
	latest := flag.Bool("latest", false, "print @latest instead of the tested versions")
	flag.Parse()
	for _, p := range profiles.Registered() {
		if p.NPM == "" {
			continue
		}
		spec := p.InstallSpec()
		if *latest {
			spec = p.NPM + "@latest"
		}
		where := "prefix"
		if p.Global {
			where = "global"
		}
		fmt.Println(p.Name, spec, where)
	}
}
