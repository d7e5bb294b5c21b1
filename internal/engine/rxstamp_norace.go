//go:build linux && !race

package engine

// raceIO is the race detector's order of a socket read (rxstamp_race.go);
// nothing without it.
func raceIO(int) {}

// raceWriting is the race detector's order of a socket write
// (rxstamp_race.go); nothing outside race builds.
func raceWriting() {}
