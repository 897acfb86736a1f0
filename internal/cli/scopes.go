package cli

import (
	"fmt"
	"io"

	"github.com/hivemind-dev/hivemind/internal/app"
)

// printWriteScopes says whether agents' writes are confined by the kernel
// here (`hivemind doctor`, `hivemind roles`): never left unsaid.
func printWriteScopes(w io.Writer) {
	fmt.Fprintln(w, app.WriteScopeStatus(""))
}
