package main

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestMeasure(t *testing.T) {
	const in = `{"settings":{"window_s":5,"tick_s":1},"capacity":{"found":true,"goodput_per_s":398.5},"windows":[
	{"start_s":1,"end_s":6,"offer":320,"next_offer":640,"ok":1600,"failed":0,"signal":"slow-start"},
	{"start_s":7,"end_s":8,"offer":640,"next_offer":400,"ok":400,"failed":240,"signal":"back-off","early":true},
	{"start_s":9,"end_s":14,"offer":400,"next_offer":400,"ok":1990,"failed":10,"signal":"dead-band","settled":true},
	{"start_s":14,"end_s":19.2,"offer":400,"next_offer":408,"ok":2000,"failed":0,"signal":"probe","settled":true},
	{"start_s":20.2,"end_s":25.2,"offer":408,"next_offer":408,"ok":2000,"failed":40,"signal":"dead-band","settled":true}]}`
	var r report
	if err := json.Unmarshal([]byte(in), &r); err != nil {
		t.Fatal(err)
	}
	f, err := measure(r)
	if err != nil {
		t.Fatal(err)
	}
	// Full-length windows 5, 5, 5.2, 5 → median 5; gaps 1, 1, 0, 1 → 1;
	// after a change (windows 0, 1, 3) 1, 1, 1.
	if f.windows != 5 || f.early != 1 || f.medianLen != 5 || f.medianGap != 1 || abs(f.medianChangeGap-1) > 1e-9 {
		t.Fatalf("figures %+v", f)
	}
	if f.failedBefore != 240 || f.sentTill != 2240 || f.settledAt != 9 || f.capacity != 398.5 {
		t.Fatalf("before settling %+v", f)
	}
	var b strings.Builder
	f.print(&b)
	if !strings.Contains(b.String(), "240 failed of 2240 attempts = 10.71 %") {
		t.Fatalf("output:\n%s", b.String())
	}
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}
