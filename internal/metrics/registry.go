package metrics

import (
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Registry is every series one throttle process exports: its phases, the
// built-in target when it runs one, and a script's custom metrics. Collectors
// are added while the process runs (a scrape before a phase is added simply
// does not show it). It is safe for concurrent use; make it with New.
type Registry struct {
	reg *prometheus.Registry

	mu     sync.Mutex
	custom map[string]*Custom // by declared name
	taken  map[string]string  // exposition name -> the declared name holding it
}

// New returns an empty registry: no Go runtime or process collectors, so
// that every series it exports is a throttle series with a phase label.
func New() *Registry {
	return &Registry{reg: prometheus.NewRegistry(), custom: map[string]*Custom{}, taken: map[string]string{}}
}

// Gatherer is the registry as client_golang gathers it (tests and the
// handler read it).
func (r *Registry) Gatherer() prometheus.Gatherer { return r.reg }

// maxScrapes bounds concurrent scrapes: each costs a histogram merge, and a
// misconfigured scraper must not take the engine's CPU.
const maxScrapes = 4

// scrapeTimeout bounds one scrape.
const scrapeTimeout = 10 * time.Second

// Handler serves the registry in the Prometheus exposition formats (text,
// protobuf or OpenMetrics, as the scraper asks).
func (r *Registry) Handler() http.Handler {
	return promhttp.HandlerFor(r.reg, promhttp.HandlerOpts{
		ErrorHandling:       promhttp.ContinueOnError,
		MaxRequestsInFlight: maxScrapes,
		Timeout:             scrapeTimeout,
	})
}
