package governor

import (
	"sync"
	"testing"
)

func TestTallyCountsConcurrently(t *testing.T) {
	var tally Tally
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			for j := 0; j < 1000; j++ {
				tally.Add(j%4 == 0) // a quarter fail
			}
		}(i)
	}
	wg.Wait()
	if ok, failed := tally.Attempts(); ok != 6000 || failed != 2000 {
		t.Fatalf("Attempts() = %d, %d; want 6000, 2000", ok, failed)
	}
	var _ Counters = &tally
}
