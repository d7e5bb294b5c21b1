package script

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/throttlekit/throttle/internal/phase"
)

// turnLog records what an agent's GC turns did, so a run can be judged:
// with THROTTLE_WATCH_TRACE=DIR (phase.WatchTraceEnv), one CSV per agent,
// DIR/gcturn-PID.csv, beside the watch's traces and on their clock (unix
// seconds), a line an event:
//
//	start    the turn, cores the machine's, and in note why nothing will
//	         be forced (empty: the machine is read)
//	forced   a cycle run in turn: machine the busy cores over the last
//	         second before it, runway the share of the runway used,
//	         cycle_s runtime.GC's wall time
//	skipped  a turn in which a cycle was due and the machine never had
//	         room: machine the fewest busy cores read at its checks (-1:
//	         no full span read), runway the share used at its last
//	off      a machine reading failed: no cycle is forced from here on
//	end      the agent's totals: forced and skipped
//
// machine beside cores sets each decision beside the room it read. Events come every rotation (2N s) at most, so each is one write.
// A nil *turnLog records nothing.
type turnLog struct {
	f     *os.File
	turn  string
	cores float64 // the machine's, set at start
}

// openTurnLog opens the agent's turn log in the watch's trace directory,
// or nil when no trace is asked for (or the file cannot be made: the
// trace is a diagnostic, the turns run without it).
func openTurnLog(t GCTurn) *turnLog {
	dir := os.Getenv(phase.WatchTraceEnv)
	if dir == "" {
		return nil
	}
	f, err := os.Create(filepath.Join(dir, "gcturn-"+strconv.Itoa(os.Getpid())+".csv"))
	if err != nil {
		return nil
	}
	fmt.Fprintln(f, "unix_s,turn,event,machine,cores,runway,cycle_s,note")
	return &turnLog{f: f, turn: t.String()}
}

// line writes one event; a note's commas become semicolons, so that
// every line has the header's fields.
func (l *turnLog) line(now time.Time, event string, machine, runway, cycle float64, note string) {
	if l == nil {
		return
	}
	fmt.Fprintf(l.f, "%.3f,%s,%s,%.3f,%.0f,%.3f,%.3f,%s\n", float64(now.UnixNano())/1e9, l.turn, event,
		machine, l.cores, runway, cycle, strings.ReplaceAll(note, ",", ";"))
}

func (l *turnLog) start(now time.Time, room *machineRoom) {
	if l != nil {
		l.cores = room.cores
	}
	l.line(now, "start", -1, -1, -1, room.off)
}

func (l *turnLog) forced(now time.Time, busy, used float64, took time.Duration) {
	l.line(now, "forced", busy, used, took.Seconds(), "")
}

func (l *turnLog) skipped(now time.Time, least, used float64) {
	l.line(now, "skipped", least, used, -1, "")
}

func (l *turnLog) off(now time.Time, why string) {
	l.line(now, "off", -1, -1, -1, why)
}

// end writes r's totals and closes the log.
func (l *turnLog) end(now time.Time, r *turnRun) {
	if l == nil {
		return
	}
	l.line(now, "end", -1, -1, -1, fmt.Sprintf("forced %d skipped %d", r.forced, r.skipped))
	l.f.Close()
}
