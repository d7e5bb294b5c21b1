//go:build !unix

package main

import "os"

// profileSignal: none where there is no SIGUSR1; the profile is written
// when the command ends.
var profileSignal os.Signal
