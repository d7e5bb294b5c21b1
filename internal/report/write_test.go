package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"encoding/xml"
	"errors"
	"flag"
	"image/png"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/throttlekit/throttle/governor"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s changed; if the change is intended, bump SchemaVersion when a field was renamed, removed or changed meaning, then run go test -update.\n--- got\n%s", path, got)
	}
}

func demoReport(t *testing.T) *Report {
	t.Helper()
	return build(t, demoRun().run(t))
}

// The JSON schema is pinned: any renamed, removed or added field, or a
// changed computation, shows up as a difference from the golden file.
func TestJSONGolden(t *testing.T) {
	var b bytes.Buffer
	if err := demoReport(t).WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	golden(t, "report.golden.json", b.Bytes())
}

// The text report is pinned too: it is the README's example.
func TestTextGolden(t *testing.T) {
	var b bytes.Buffer
	if err := demoReport(t).WriteText(&b); err != nil {
		t.Fatal(err)
	}
	golden(t, "report.golden.txt", b.Bytes())
}

// Decoding the JSON gives back the same report, and every field of the
// schema is present in the document (none omitted).
func TestJSONRoundTrip(t *testing.T) {
	r := demoReport(t)
	var b bytes.Buffer
	if err := r.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	var back Report
	dec := json.NewDecoder(bytes.NewReader(b.Bytes()))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(*r, back) {
		t.Fatalf("round trip changed the report:\n%+v\n%+v", *r, back)
	}
	var generic map[string]any
	if err := json.Unmarshal(b.Bytes(), &generic); err != nil {
		t.Fatal(err)
	}
	if generic["schema_version"] != float64(SchemaVersion) {
		t.Errorf("schema_version %v", generic["schema_version"])
	}
	checkAllFields(t, reflect.TypeOf(Report{}), generic, "")
}

// checkAllFields walks a struct type and asserts each JSON field is in doc.
func checkAllFields(t *testing.T, typ reflect.Type, doc map[string]any, path string) {
	t.Helper()
	for i := 0; i < typ.NumField(); i++ {
		f := typ.Field(i)
		if !f.IsExported() {
			continue
		}
		name := strings.Split(f.Tag.Get("json"), ",")[0]
		v, ok := doc[name]
		if !ok {
			t.Errorf("field %s%s missing from the JSON", path, name)
			continue
		}
		ft := f.Type
		if ft.Kind() == reflect.Slice && ft.Elem().Kind() == reflect.Struct {
			if items, _ := v.([]any); len(items) > 0 {
				checkAllFields(t, ft.Elem(), items[0].(map[string]any), path+name+"[0].")
			}
			continue
		}
		if ft.Kind() == reflect.Struct && ft != reflect.TypeOf(time.Time{}) {
			checkAllFields(t, ft, v.(map[string]any), path+name+".")
		}
	}
}

func TestJSONEmptyReport(t *testing.T) {
	r := build(t, Input{Settings: Settings{Limits: governor.NewLimits(governor.Rate, 10), Governed: true}, Start: t0, End: t0, Interrupted: true})
	var b bytes.Buffer
	if err := r.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	// Empty lists are [], never null, so consumers can iterate blindly.
	for _, want := range []string{`"windows": []`, `"notes": []`} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("empty report lacks %s:\n%s", want, b.String())
		}
	}
}

func TestCSVParsesBack(t *testing.T) {
	r := demoReport(t)
	var b bytes.Buffer
	if err := r.WriteCSV(&b); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(rows[0], CSVHeader) {
		t.Fatalf("header %v", rows[0])
	}
	if len(rows)-1 != len(r.Windows) {
		t.Fatalf("%d rows for %d windows", len(rows)-1, len(r.Windows))
	}
	col := map[string]int{}
	for i, name := range rows[0] {
		col[name] = i
	}
	for i, row := range rows[1:] {
		w := r.Windows[i]
		f := func(name string) float64 {
			v, err := strconv.ParseFloat(row[col[name]], 64)
			if err != nil {
				t.Fatalf("row %d %s: %v", i, name, err)
			}
			return v
		}
		b := func(name string) bool {
			v, err := strconv.ParseBool(row[col[name]])
			if err != nil {
				t.Fatalf("row %d %s: %v", i, name, err)
			}
			return v
		}
		if f("start_s") != w.StartS || f("end_s") != w.EndS || f("offer") != w.Offer || f("ok") != float64(w.OK) ||
			f("failed") != float64(w.Failed) || f("frac") != w.Frac || f("attempts_per_s") != w.AttemptsPerS ||
			f("goodput_per_s") != w.GoodputPerS || f("last_bad") != w.LastBad || f("streak") != float64(w.Streak) ||
			f("p50_ms") != w.P50Ms || f("p99_ms") != w.P99Ms ||
			row[col["signal"]] != w.Signal || row[col["kind"]] != w.Kind ||
			b("settled") != w.Settled || b("saturated") != w.Saturated {
			t.Errorf("row %d %v does not match window %+v", i, row, w)
		}
	}
}

// wellFormed checks that an SVG parses as XML from its first element to
// its end, and returns its text.
func wellFormed(t *testing.T, svg []byte) string {
	t.Helper()
	dec := xml.NewDecoder(bytes.NewReader(svg))
	var text strings.Builder
	var root string
	depth := 0
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("SVG is not well-formed XML: %v", err)
		}
		switch x := tok.(type) {
		case xml.StartElement:
			if root == "" {
				root = x.Name.Local
			}
			depth++
		case xml.EndElement:
			depth--
		case xml.CharData:
			text.Write(x)
		}
	}
	if root != "svg" || depth != 0 {
		t.Fatalf("root element %q, depth at end %d", root, depth)
	}
	return text.String()
}

func TestChartSVG(t *testing.T) {
	var b bytes.Buffer
	if err := demoReport(t).WriteChart(&b, SVG); err != nil {
		t.Fatal(err)
	}
	text := wellFormed(t, b.Bytes())
	for _, want := range []string{"offer/s", "goodput req/s", "throughput req/s", "attempt failures %", "high bound 5 %", "capacity ≈ 800 req/s"} {
		if !strings.Contains(text, want) {
			t.Errorf("SVG lacks %q", want)
		}
	}
	if n := strings.Count(b.String(), "<path"); n < 6 {
		t.Errorf("SVG draws %d paths, want at least the 6 lines", n)
	}
}

func TestChartPNG(t *testing.T) {
	var b bytes.Buffer
	if err := demoReport(t).WriteChart(&b, PNG); err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(&b)
	if err != nil {
		t.Fatal(err)
	}
	if sz := img.Bounds().Size(); sz.X != chartWidth || sz.Y != chartHeight {
		t.Fatalf("PNG is %v", sz)
	}
	// Not blank: the offer's colour appears.
	found := false
	for y := 0; y < chartHeight && !found; y++ {
		for x := 0; x < chartWidth; x++ {
			r, g, b, _ := img.At(x, y).RGBA()
			if r>>8 == uint32(colorOffer.R) && g>>8 == uint32(colorOffer.G) && b>>8 == uint32(colorOffer.B) {
				found = true
				break
			}
		}
	}
	if !found {
		t.Error("the PNG has no pixel of the offer line's colour")
	}
}

func TestChartHTML(t *testing.T) {
	r := demoReport(t)
	var b bytes.Buffer
	if err := r.WriteChart(&b, HTML); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	if !strings.HasPrefix(page, "<!DOCTYPE html>") || !strings.HasSuffix(page, "</html>\n") {
		t.Fatalf("not a whole page:\n%.200s", page)
	}
	// It parses as HTML (auto-closing void elements) from end to end.
	dec := xml.NewDecoder(strings.NewReader(page))
	dec.Strict, dec.AutoClose, dec.Entity = false, xml.HTMLAutoClose, xml.HTMLEntity
	for {
		if _, err := dec.Token(); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("page does not parse: %v", err)
		}
	}
	// Offline and script-free: nothing is fetched, nothing runs.
	for _, banned := range []string{"<script", "<link", " src=", "@import", "url("} {
		if strings.Contains(page, banned) {
			t.Errorf("page contains %q", banned)
		}
	}
	start, end := strings.Index(page, "<svg"), strings.Index(page, "</svg>")
	if start < 0 || end < start {
		t.Fatal("no inline SVG")
	}
	wellFormed(t, []byte(page[start:end+len("</svg>")]))
	if !strings.Contains(page, "capacity ≈ 800 req/s") || !strings.Contains(page, "throttle report: governed rate phase") {
		t.Error("page lacks the verdict or the text report")
	}
}

func TestChartFormatFor(t *testing.T) {
	for path, want := range map[string]ChartFormat{"a.svg": SVG, "out/B.PNG": PNG, "c.html": HTML, "d.htm": HTML} {
		if got, err := ChartFormatFor(path); err != nil || got != want {
			t.Errorf("ChartFormatFor(%q) = %v, %v", path, got, err)
		}
	}
	for _, path := range []string{"chart", "chart.jpg", "chart.svg.txt"} {
		if _, err := ChartFormatFor(path); err == nil || !strings.Contains(err.Error(), path) {
			t.Errorf("ChartFormatFor(%q) error %v, want one naming the file", path, err)
		}
	}
}

func TestSaveFiles(t *testing.T) {
	dir := t.TempDir()
	r := demoReport(t)
	for name, save := range map[string]func(string) error{
		"r.json": r.SaveJSON, "w.csv": r.SaveCSV, "r.txt": r.SaveText,
		"c.svg": r.SaveChart, "c.png": r.SaveChart, "c.html": r.SaveChart,
	} {
		path := filepath.Join(dir, name)
		if err := save(path); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if fi, err := os.Stat(path); err != nil || fi.Size() == 0 {
			t.Errorf("%s: %v, %v", name, fi, err)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 6 {
		t.Errorf("temporary files left behind: %v", entries)
	}
	if err := r.SaveJSON(filepath.Join(dir, "missing", "r.json")); err == nil {
		t.Error("saving into a missing directory succeeded")
	}
	empty := build(t, Input{Settings: Settings{Limits: governor.NewLimits(governor.Rate, 10), Governed: true}, Start: t0, End: t0})
	if err := empty.SaveChart(filepath.Join(dir, "e.svg")); !errors.Is(err, ErrNoWindows) {
		t.Errorf("chart of no windows: %v", err)
	}
	if err := empty.WriteChart(io.Discard, PNG); !errors.Is(err, ErrNoWindows) {
		t.Errorf("chart of no windows: %v", err)
	}
}
