package k6out

import (
	"fmt"
	"io"

	"github.com/throttlekit/throttle/internal/report"
	"github.com/throttlekit/throttle/internal/script"
)

// WriteSummaryExport writes the summary in k6's summary-export JSON
// (--summary-export) to path.
func WriteSummaryExport(path string, s *script.Summary) error {
	b, err := s.ExportJSON()
	if err == nil {
		err = report.WriteFileAtomic(path, append(b, '\n'))
	}
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// WriteOutputs writes what handleSummary returned: to stdout, stderr or a
// file each; it tries each and reports the first failure.
func WriteOutputs(stdout, stderr io.Writer, outs []script.SummaryOutput) error {
	var first error
	for _, o := range outs {
		var err error
		switch o.Name {
		case "stdout":
			_, err = stdout.Write(o.Data)
		case "stderr":
			_, err = stderr.Write(o.Data)
		default:
			err = report.WriteFileAtomic(o.Name, o.Data)
		}
		if err != nil && first == nil {
			first = fmt.Errorf("handleSummary: writing %s: %w", o.Name, err)
		}
	}
	return first
}
