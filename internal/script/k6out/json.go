package k6out

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/throttlekit/throttle/internal/script"
)

// JSON writes k6's JSON-lines output (--out json=FILE): a "Metric" line
// the first time a metric gets a value, then a "Point" line per value
// with its time, value and tags. Safe for concurrent use; a write error is
// kept and reported by Close.
type JSON struct {
	path string
	f    *os.File
	// Thresholds are the threshold expressions by metric key, listed in a
	// metric's first line; set them before the run.
	Thresholds map[string][]string

	mu   sync.Mutex
	w    *bufio.Writer
	enc  *json.Encoder
	seen map[*script.Metric]bool
	err  error
}

// OpenJSON creates the file before the run: one that cannot be created
// is bad input.
func OpenJSON(path string) (*JSON, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	w := bufio.NewWriterSize(f, 64<<10)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false) // thresholds such as "p(95)<500" as written
	return &JSON{path: path, f: f, w: w, enc: enc, seen: map[*script.Metric]bool{}}, nil
}

type jsonLine struct {
	Type   string `json:"type"`
	Data   any    `json:"data"`
	Metric string `json:"metric"`
}

type jsonMetric struct {
	Name       string   `json:"name"`
	Type       string   `json:"type"`
	Contains   string   `json:"contains"`
	Thresholds []string `json:"thresholds"`
	Submetrics []string `json:"submetrics"`
}

type jsonPoint struct {
	Time  string            `json:"time"`
	Value float64           `json:"value"`
	Tags  map[string]string `json:"tags"`
}

// Point is script.Config.Points.
func (j *JSON) Point(m *script.Metric, v float64, tags map[string]string) {
	now := time.Now().Format(time.RFC3339Nano)
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.err != nil {
		return
	}
	if !j.seen[m] {
		j.seen[m] = true
		th := j.Thresholds[m.Name]
		if th == nil {
			th = []string{}
		}
		j.err = j.enc.Encode(jsonLine{"Metric", jsonMetric{m.Name, m.Type.String(), m.Contains(), th, nil}, m.Name})
	}
	if j.err == nil {
		j.err = j.enc.Encode(jsonLine{"Point", jsonPoint{now, v, tags}, m.Name})
	}
}

// Close flushes and closes the file; the first error of the run, if any.
func (j *JSON) Close() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	return closeOutput(j.path, j.err, j.w.Flush, j.f)
}

// closeOutput flushes and closes an output file: the first of the run's
// error, the flush's and the close's, naming the file.
func closeOutput(path string, err error, flush func() error, f *os.File) error {
	if e := flush(); err == nil {
		err = e
	}
	if e := f.Close(); err == nil {
		err = e
	}
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}
