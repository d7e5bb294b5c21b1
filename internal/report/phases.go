package report

import (
	"errors"
	"io"
)

// Phase is one scenario of a k6 script run: its name, its executor and its
// report.
type Phase struct {
	Phase    string `json:"phase"`
	Executor string `json:"executor"`
	*Report
}

// Phased is a k6 script run's JSON document: the report of its first
// governed scenario (its first scenario when none is governed) at the top
// level, exactly as a URL run's, plus "phases", every scenario's report in
// start order. A reader of URL-run reports reads it unchanged.
type Phased struct {
	*Report
	Phases []Phase `json:"phases"`
}

// NewPhased builds the document; top indexes the phase shown at the top.
func NewPhased(phases []Phase, top int) (*Phased, error) {
	if top < 0 || top >= len(phases) {
		return nil, errors.New("no phase to put at the top")
	}
	return &Phased{Report: phases[top].Report, Phases: phases}, nil
}

// WriteJSON writes the document as one indented JSON document.
func (p *Phased) WriteJSON(w io.Writer) error { return writeJSON(w, p) }

// SaveJSON writes the document to path, whole or not at all.
func (p *Phased) SaveJSON(path string) error { return saveFile(path, p.WriteJSON) }
