package report

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
)

// WriteJSON writes the report as one indented JSON document (the schema of
// Report).
func (r *Report) WriteJSON(w io.Writer) error { return writeJSON(w, r) }

// writeJSON writes v as one indented JSON document.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// CSVHeader is the CSV timeline's header row.
var CSVHeader = []string{
	"start_s", "end_s", "offer", "ok", "failed", "frac", "attempts_per_s", "goodput_per_s",
	"signal", "kind", "early", "last_bad", "streak", "settled", "saturated", "p50_ms", "p99_ms",
	"fail_frac", "dropped", "queued", "unserved", "mean_ms", "inflation", "generator_saturated", "drained_s", "by", "missed",
}

// WriteCSV writes the timeline: CSVHeader, then one row per window, the
// fields meaning what they mean in WindowJSON.
func (r *Report) WriteCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(CSVHeader); err != nil {
		return err
	}
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	u := func(v uint64) string { return strconv.FormatUint(v, 10) }
	write := func(x WindowJSON) error {
		return cw.Write([]string{
			f(x.StartS), f(x.EndS), f(x.Offer), u(x.OK), u(x.Failed), f(x.Frac), f(x.AttemptsPerS), f(x.GoodputPerS),
			x.Signal, x.Kind, strconv.FormatBool(x.Early), f(x.LastBad), strconv.Itoa(x.Streak), strconv.FormatBool(x.Settled), strconv.FormatBool(x.Saturated),
			f(x.P50Ms), f(x.P99Ms),
			f(x.FailFrac), u(x.Dropped), strconv.FormatInt(x.Queued, 10), u(x.Unserved), f(x.MeanMs), f(x.Inflation),
			strconv.FormatBool(x.GeneratorSaturated), f(x.DrainedS), x.By, u(x.Missed),
		})
	}
	if r.timeline != nil {
		// A run longer than KeepWindows windows: every row from the spool.
		if err := r.timeline.rows(write); err != nil {
			return err
		}
	} else {
		for _, x := range r.Windows {
			if err := write(x); err != nil {
				return err
			}
		}
	}
	cw.Flush()
	return cw.Error()
}

// SaveJSON writes the JSON report to the file at path.
func (r *Report) SaveJSON(path string) error { return saveFile(path, r.WriteJSON) }

// SaveCSV writes the CSV timeline to the file at path.
func (r *Report) SaveCSV(path string) error { return saveFile(path, r.WriteCSV) }

// SaveText writes the text report to the file at path.
func (r *Report) SaveText(path string) error { return saveFile(path, r.WriteText) }

// WriteFileAtomic writes data to path whole or not at all, as the report's
// own files are written (k6's summary export and handleSummary's files).
func WriteFileAtomic(path string, data []byte) error {
	return saveFile(path, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// saveFile writes a file whole or not at all: into a temporary file beside
// it, renamed over path once complete, so a run stopped while writing never
// leaves half a report. A path that exists and is not a regular file (a
// device such as /dev/stdout, a pipe) is written in place: renaming over
// it would replace the device.
func saveFile(path string, write func(io.Writer) error) (err error) {
	if st, serr := os.Stat(path); serr == nil && !st.Mode().IsRegular() {
		return writeInPlace(path, write)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			_ = tmp.Close()
			_ = os.Remove(tmp.Name())
		}
	}()
	bw := bufio.NewWriter(tmp)
	if err = write(bw); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err = bw.Flush(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err = tmp.Chmod(0o644); err != nil {
		return err
	}
	if err = tmp.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err = os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	return nil
}

// writeInPlace writes to a path that is not a regular file.
func writeInPlace(path string, write func(io.Writer) error) error {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(f)
	err = write(bw)
	if err == nil {
		err = bw.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}
