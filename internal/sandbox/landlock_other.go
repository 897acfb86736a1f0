//go:build !linux

package sandbox

import "errors"

func kernelABI() int { return 0 }

func restrictAndExec(string, []string, []string, []string) error {
	return errors.New("Landlock exists only on Linux")
}
