package k6out

import (
	"encoding/csv"
	"net/url"
	"os"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/throttlekit/throttle/internal/script"
)

// csvColumns are k6's CSV output columns: the metric, its time (Unix
// seconds) and value, the system tags by name, the other tags in
// extra_tags (URL query form), and metadata (empty: throttle has none).
var csvColumns = []string{"metric_name", "timestamp", "metric_value", "check", "error", "error_code", "expected_response",
	"group", "method", "name", "proto", "scenario", "service", "status", "subproto", "tls_version", "url", "extra_tags", "metadata"}

// csvTagColumns are the columns that hold a tag of the same name.
var csvTagColumns = csvColumns[3:17]

// CSV writes k6's CSV output (--out csv=FILE): a header row, then one row
// per metric value. Safe for concurrent use; a write error is kept and
// reported by Close.
type CSV struct {
	path string
	f    *os.File

	mu  sync.Mutex
	w   *csv.Writer
	err error
}

// OpenCSV creates the file and writes the header before the run: one that
// cannot be created is bad input.
func OpenCSV(path string) (*CSV, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	c := &CSV{path: path, f: f, w: csv.NewWriter(f)}
	c.err = c.w.Write(csvColumns)
	return c, nil
}

// Point is script.Config.Points.
func (c *CSV) Point(m *script.Metric, v float64, tags map[string]string) {
	row := make([]string, 0, len(csvColumns))
	row = append(row, m.Name, strconv.FormatInt(time.Now().Unix(), 10), strconv.FormatFloat(v, 'f', 6, 64))
	known := map[string]bool{}
	for _, col := range csvTagColumns {
		known[col] = true
		row = append(row, tags[col])
	}
	var extra []string
	for k := range tags {
		if !known[k] {
			extra = append(extra, k)
		}
	}
	sort.Strings(extra)
	q := ""
	for i, k := range extra {
		if i > 0 {
			q += "&"
		}
		q += url.QueryEscape(k) + "=" + url.QueryEscape(tags[k])
	}
	row = append(row, q, "")
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err == nil {
		c.err = c.w.Write(row)
	}
}

// Close flushes and closes the file; the first error of the run, if any.
func (c *CSV) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return closeOutput(c.path, c.err, func() error { c.w.Flush(); return c.w.Error() }, c.f)
}
