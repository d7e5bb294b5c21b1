// Package metricstest scrapes and reads a Prometheus text exposition, for
// tests of what throttle exports. It parses with the Prometheus text parser
// (github.com/prometheus/common/expfmt), so a test sees what Prometheus would.
package metricstest

import (
	"fmt"
	"io"
	"net/http"
	"strings"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Families are a parsed exposition, by metric family name.
type Families map[string]*dto.MetricFamily

// client keeps no connections between scrapes, so a test that scrapes
// leaves no goroutine behind.
var client = &http.Client{Transport: &http.Transport{DisableKeepAlives: true, Proxy: nil}}

// Scrape GETs url in the text format and parses it.
func Scrape(url string) (Families, error) {
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "text/plain; version=0.0.4")
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		return nil, fmt.Errorf("GET %s: %s: %s", url, resp.Status, b)
	}
	return Parse(resp.Body)
}

// Parse parses a text exposition, with Prometheus' classic name rules.
func Parse(r io.Reader) (Families, error) {
	p := expfmt.NewTextParser(model.LegacyValidation)
	f, err := p.TextToMetricFamilies(r)
	return Families(f), err
}

// Series returns the series of family name whose labels include want.
func (f Families) Series(name string, want map[string]string) []*dto.Metric {
	fam := f[name]
	if fam == nil {
		return nil
	}
	var out []*dto.Metric
	for _, m := range fam.GetMetric() {
		if hasLabels(m, want) {
			out = append(out, m)
		}
	}
	return out
}

func hasLabels(m *dto.Metric, want map[string]string) bool {
	for k, v := range want {
		found := false
		for _, l := range m.GetLabel() {
			if l.GetName() == k && l.GetValue() == v {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// Value is the value of the one gauge, counter or untyped series of family
// name whose labels include want (a histogram's is its count). It fails
// unless exactly one series matches.
func (f Families) Value(name string, want map[string]string) (float64, error) {
	s := f.Series(name, want)
	if len(s) != 1 {
		return 0, fmt.Errorf("%s%v: %d series, want 1", name, want, len(s))
	}
	m := s[0]
	switch {
	case m.Gauge != nil:
		return m.GetGauge().GetValue(), nil
	case m.Counter != nil:
		return m.GetCounter().GetValue(), nil
	case m.Histogram != nil:
		return float64(m.GetHistogram().GetSampleCount()), nil
	case m.Untyped != nil:
		return m.GetUntyped().GetValue(), nil
	}
	return 0, fmt.Errorf("%s%v: no value", name, want)
}

// Names are the metric names a PromQL query can use on this exposition:
// every family's name, and a histogram's _bucket, _sum and _count.
func (f Families) Names() map[string]bool {
	names := map[string]bool{}
	for name, fam := range f {
		names[name] = true
		if fam.GetType() == dto.MetricType_HISTOGRAM {
			for _, s := range []string{"_bucket", "_sum", "_count"} {
				names[name+s] = true
			}
		}
	}
	return names
}

// Label returns the value of label name on m, "" if it has none.
func Label(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

// String is a short description of a series, for failure messages.
func String(m *dto.Metric) string {
	var b strings.Builder
	for i, l := range m.GetLabel() {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "%s=%q", l.GetName(), l.GetValue())
	}
	return "{" + b.String() + "}"
}
