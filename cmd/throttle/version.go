package main

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// version is set at link time (-ldflags "-X main.version=v1.2.3"); a build
// from a module version reports that instead of "dev".
var version = "dev"

func newVersionCmd(e env) *cobra.Command {
	return &cobra.Command{
		Use:     "version",
		Short:   "Print throttle's version",
		Long:    "version prints throttle's version, the Go version it was built with and the platform.",
		Example: "  throttle version",
		Args:    cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			_, err := fmt.Fprintf(e.stdout, "throttle %s (%s %s/%s)\n", buildVersion(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
			return err
		},
	}
}

// buildVersion is this build's version: the linked one, else the module's.
func buildVersion() string {
	v := version
	if bi, ok := debug.ReadBuildInfo(); ok && v == "dev" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		v = bi.Main.Version
	}
	return v
}
