package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/throttlekit/throttle/internal/script"
)

// k6JSON writes k6's JSON-lines output (--out json=FILE): a "Metric" line
// the first time a metric gets a value, then a "Point" line per value
// with its time, value and tags. Safe for concurrent use; a write error is
// kept and reported by close.
type k6JSON struct {
	path       string
	f          *os.File
	thresholds map[string][]string // threshold expressions by metric key

	mu   sync.Mutex
	w    *bufio.Writer
	enc  *json.Encoder
	seen map[*script.Metric]bool
	err  error
}

// openK6JSON creates the file before the run: one that cannot be created
// is bad input.
func openK6JSON(path string) (*k6JSON, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, usagef("--out json=%s: %v", path, err)
	}
	w := bufio.NewWriterSize(f, 64<<10)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false) // thresholds such as "p(95)<500" as written
	return &k6JSON{path: path, f: f, w: w, enc: enc, seen: map[*script.Metric]bool{}}, nil
}

type k6JSONLine struct {
	Type   string `json:"type"`
	Data   any    `json:"data"`
	Metric string `json:"metric"`
}

type k6JSONMetric struct {
	Name       string   `json:"name"`
	Type       string   `json:"type"`
	Contains   string   `json:"contains"`
	Thresholds []string `json:"thresholds"`
	Submetrics []string `json:"submetrics"`
}

type k6JSONPoint struct {
	Time  string            `json:"time"`
	Value float64           `json:"value"`
	Tags  map[string]string `json:"tags"`
}

// point is script.Config.Points.
func (j *k6JSON) point(m *script.Metric, v float64, tags map[string]string) {
	now := time.Now().Format(time.RFC3339Nano)
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.err != nil {
		return
	}
	if !j.seen[m] {
		j.seen[m] = true
		th := j.thresholds[m.Name]
		if th == nil {
			th = []string{}
		}
		j.err = j.enc.Encode(k6JSONLine{"Metric", k6JSONMetric{m.Name, m.Type.String(), m.Contains(), th, nil}, m.Name})
	}
	if j.err == nil {
		j.err = j.enc.Encode(k6JSONLine{"Point", k6JSONPoint{now, v, tags}, m.Name})
	}
}

// close flushes and closes the file; the first error of the run, if any.
func (j *k6JSON) close() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	err := j.err
	if e := j.w.Flush(); err == nil {
		err = e
	}
	if e := j.f.Close(); err == nil {
		err = e
	}
	if err != nil {
		return fmt.Errorf("writing %s: %w", j.path, err)
	}
	return nil
}
