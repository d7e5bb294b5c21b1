package options

import "strings"

// Status says what throttle does with a documented k6 option.
type Status int

const (
	// Honoured: parsed into Options and acted on as k6 documents.
	Honoured Status = iota
	// Refused: giving it is an error naming it (exit 2), never ignored.
	Refused
	// Ignored: a k6 cloud option, accepted and ignored as `k6 run` does.
	Ignored
)

func (s Status) String() string {
	switch s {
	case Honoured:
		return "honoured"
	case Refused:
		return "refused"
	}
	return "accepted, ignored (cloud)"
}

// Entry is one option of k6's Options reference: where it can be set and
// what throttle does with it. Catalog is the single table that Resolve,
// Flags.Set, FromEnv and docs/k6-options.md all read.
type Entry struct {
	// Name is the option's title in k6's Options reference.
	Name string
	// Key is the script options key ("" if the script cannot set it),
	// Flag the long `k6 run` flag without dashes, Short its one-letter
	// form, Env its K6_* environment variable ("" for none).
	Key, Flag, Short, Env string
	Status                Status
	// Note is why, and anything that differs from k6.
	Note string
	// same is a value of a refused option that asks for what throttle does
	// anyway (besides k6's off values false, 0 and empty): accepted.
	same string
	// field is the Flags field the option sets; "" for options only a
	// script can set (read by Resolve itself), for refused ones, and for
	// the command line's own flags that cmd/throttle handles.
	field string
}

// CLIOnly reports whether the option is a flag cmd/throttle handles
// itself (no Flags field, not a script option): -e, -q, -v.
func (e *Entry) CLIOnly() bool { return e.Status == Honoured && e.field == "" && e.Key == "" }

// Catalog is every option k6 documents (Options reference, the `k6 run`
// flags, the K6_* environment variables, @types/k6's Options), in the
// reference's order.
var Catalog = []Entry{
	{Name: "Address", Flag: "address", Short: "a", Env: "K6_ADDRESS", Status: Refused, Note: "throttle has no REST API to pause, resume or scale a run"},
	{Name: "Batch", Key: "batch", Flag: "batch", Env: "K6_BATCH", field: "Batch", Note: "default 20: the most requests one http.batch call has in flight at once"},
	{Name: "Batch per host", Key: "batchPerHost", Flag: "batch-per-host", Env: "K6_BATCH_PER_HOST", field: "BatchPerHost", Note: "default 6: the most one http.batch call has in flight to one host; 0: no limit"},
	{Name: "Blacklist IP", Key: "blacklistIPs", Flag: "blacklist-ip", Env: "K6_BLACKLIST_IPS", Status: Refused, Note: "no IP block list in throttle's HTTP clients"},
	{Name: "Block hostnames", Key: "blockHostnames", Flag: "block-hostnames", Env: "K6_BLOCK_HOSTNAMES", Status: Refused, Note: "no hostname block list in throttle's HTTP clients"},
	{Name: "Compatibility mode", Key: "compatibilityMode", Flag: "compatibility-mode", Env: "K6_COMPATIBILITY_MODE", field: "CompatibilityMode", Note: "only \"extended\" (k6's default); \"base\" and \"experimental_enhanced\" are refused"},
	{Name: "Config", Flag: "config", Short: "c", Env: "K6_CONFIG", Status: Refused, Note: "no JSON config file: set options in the script, flags or K6_* variables"},
	{Name: "Console output", Key: "consoleOutput", Flag: "console-output", Env: "K6_CONSOLE_OUTPUT", Status: Refused, Note: "console output goes to stderr only"},
	{Name: "Discard response bodies", Key: "discardResponseBodies", Flag: "discard-response-bodies", Env: "K6_DISCARD_RESPONSE_BODIES", field: "DiscardResponseBodies"},
	{Name: "DNS", Key: "dns", Flag: "dns", Env: "K6_DNS", Status: Refused, Note: "the system resolver is used; no ttl/select/policy"},
	{Name: "Duration", Key: "duration", Flag: "duration", Short: "d", Env: "K6_DURATION", field: "Duration", Note: "shortcut: constant-vus (with iterations: shared-iterations' maxDuration)"},
	{Name: "Execution segment", Key: "executionSegment", Flag: "execution-segment", Env: "K6_EXECUTION_SEGMENT", field: "ExecutionSegment", Note: "this instance's part of every scenario's VUs, iterations and rates; whole numbers split as ceil(n·to) − ceil(n·from), so the parts sum to the authored totals (k6 stripes them: an odd VU may land on another instance)"},
	{Name: "Execution segment sequence", Key: "executionSegmentSequence", Flag: "execution-segment-sequence", Env: "K6_EXECUTION_SEGMENT_SEQUENCE", field: "ExecutionSegmentSequence", Note: "checked: the segment must be one of its parts; the split does not depend on it"},
	{Name: "Exit on running", Flag: "exit-on-running", Env: "K6_EXIT_ON_RUNNING", Status: Refused, Note: "a k6 cloud/operator control flag; throttle runs the test to its end"},
	{Name: "Extension options (ext)", Key: "ext", Status: Ignored, Note: "only ext.loadimpact (k6 cloud) is accepted and ignored; any other ext key is refused"},
	{Name: "Cloud options", Key: "cloud", Status: Ignored, Note: "k6 cloud settings; `k6 run` ignores them too"},
	{Name: "Handle summary timeout", Key: "handleSummaryTimeout", Note: "default 2m (from @types/k6)"},
	{Name: "Hosts", Key: "hosts", Note: "name → IP or IP:port overrides for the script's requests (plain HTTP; TLS names the address)"},
	{Name: "HTTP debug", Key: "httpDebug", Flag: "http-debug", Env: "K6_HTTP_DEBUG", field: "HTTPDebug", Note: "each request and response dumped to stderr (headers; \"full\" with bodies)"},
	{Name: "Include system env vars", Key: "includeSystemEnvVars", Flag: "include-system-env-vars", Env: "K6_INCLUDE_SYSTEM_ENV_VARS", field: "IncludeSystemEnvVars", Note: "default true, as for `k6 run`"},
	{Name: "Insecure skip TLS verify", Key: "insecureSkipTLSVerify", Flag: "insecure-skip-tls-verify", Env: "K6_INSECURE_SKIP_TLS_VERIFY", field: "InsecureSkipTLSVerify"},
	{Name: "Iterations", Key: "iterations", Flag: "iterations", Short: "i", Env: "K6_ITERATIONS", field: "Iterations", Note: "shortcut: shared-iterations"},
	{Name: "Linger", Key: "linger", Flag: "linger", Short: "l", Env: "K6_LINGER", Status: Refused, Note: "throttle exits when the test ends"},
	{Name: "Local IPs", Key: "localIPs", Flag: "local-ips", Env: "K6_LOCAL_IPS", Status: Refused, Note: "no source-address selection"},
	{Name: "Log output", Key: "logOutput", Flag: "log-output", Env: "K6_LOG_OUTPUT", Status: Refused, same: "stderr", Note: "logs go to stderr only (\"stderr\" is accepted)"},
	{Name: "Log format", Key: "logFormat", Flag: "log-format", Env: "K6_LOG_FORMAT", Status: Refused, Note: "logs are k6's text format only"},
	{Name: "Max redirects", Key: "maxRedirects", Flag: "max-redirects", Env: "K6_MAX_REDIRECTS", field: "MaxRedirects", Note: "default 10"},
	{Name: "Minimum iteration duration", Key: "minIterationDuration", Flag: "min-iteration-duration", Env: "K6_MIN_ITERATION_DURATION", field: "MinIterationDuration"},
	{Name: "No color", Key: "noColor", Flag: "no-color", Env: "K6_NO_COLOR", field: "NoColor"},
	{Name: "No connection reuse", Key: "noConnectionReuse", Flag: "no-connection-reuse", Env: "K6_NO_CONNECTION_REUSE", field: "NoConnectionReuse"},
	{Name: "No cookies reset", Key: "noCookiesReset", Env: "K6_NO_COOKIES_RESET", field: "NoCookiesReset"},
	{Name: "No summary", Flag: "no-summary", Env: "K6_NO_SUMMARY", field: "NoSummary", Note: "k6 deprecates it for --summary-mode=disabled; both work"},
	{Name: "No setup", Flag: "no-setup", Env: "K6_NO_SETUP", field: "NoSetup"},
	{Name: "No teardown", Flag: "no-teardown", Env: "K6_NO_TEARDOWN", field: "NoTeardown"},
	{Name: "No thresholds", Flag: "no-thresholds", Env: "K6_NO_THRESHOLDS", field: "NoThresholds"},
	{Name: "No usage report", Key: "noUsageReport", Flag: "no-usage-report", Env: "K6_NO_USAGE_REPORT", field: "NoUsageReport", Note: "throttle never sends a usage report"},
	{Name: "No VU connection reuse", Key: "noVUConnectionReuse", Flag: "no-vu-connection-reuse", Env: "K6_NO_VU_CONNECTION_REUSE", field: "NoVUConnectionReuse", Note: "a VU closes its connections between iterations"},
	{Name: "Paused", Key: "paused", Flag: "paused", Short: "p", Env: "K6_PAUSED", Status: Refused, Note: "no REST API to resume a paused run"},
	{Name: "Profiling enabled", Flag: "profiling-enabled", Env: "K6_PROFILING_ENABLED", Status: Refused, Note: "no REST API to serve profiles"},
	{Name: "Quiet", Flag: "quiet", Short: "q", Note: "cmd/throttle: no progress output"},
	{Name: "Results output", Flag: "out", Short: "o", Env: "K6_OUT", field: "Out", Note: "repeatable; which outputs exist is cmd/throttle's (json=, csv=, …); K6_OUT is comma-separated"},
	{Name: "RPS", Key: "rps", Flag: "rps", Env: "K6_RPS", Status: Refused, Note: "no global request-rate cap; use an arrival-rate scenario"},
	{Name: "Scenarios", Key: "scenarios", Note: "the six executors with every documented key; externally-controlled and browser scenarios are refused; an unknown key is an error"},
	{Name: "Setup timeout", Key: "setupTimeout", Env: "K6_SETUP_TIMEOUT", field: "SetupTimeout", Note: "default 60s"},
	{Name: "Show logs", Flag: "show-logs", Status: Ignored, Note: "a `k6 cloud` flag"},
	{Name: "Stages", Key: "stages", Flag: "stage", Short: "s", Env: "K6_STAGES", field: "Stages", Note: "shortcut: ramping-vus; flag form duration:target, repeatable or comma-separated"},
	{Name: "Supply environment variable", Flag: "env", Short: "e", Note: "cmd/throttle: NAME=VALUE into __ENV; does not set options, as in k6"},
	{Name: "Summary export", Flag: "summary-export", Env: "K6_SUMMARY_EXPORT", field: "SummaryExport"},
	{Name: "Summary mode", Flag: "summary-mode", Env: "K6_SUMMARY_MODE", field: "SummaryMode", Note: "compact (default), full, legacy or disabled; compact and full as k6's documentation shows them"},
	{Name: "Summary trend stats", Key: "summaryTrendStats", Flag: "summary-trend-stats", Env: "K6_SUMMARY_TREND_STATS", field: "SummaryTrendStats", Note: "avg, min, med, max, count, p(N); default avg,min,med,max,p(90),p(95)"},
	{Name: "Summary time unit", Key: "summaryTimeUnit", Flag: "summary-time-unit", Env: "K6_SUMMARY_TIME_UNIT", field: "SummaryTimeUnit", Note: "s, ms or us"},
	{Name: "System tags", Key: "systemTags", Flag: "system-tags", Env: "K6_SYSTEM_TAGS", field: "SystemTags", Note: "a tag name k6 does not document is an error"},
	{Name: "Tags", Key: "tags", Flag: "tag", field: "Tags", Note: "flag form NAME=VALUE, repeatable; a higher source's tags replace the script's as a whole, as in k6"},
	{Name: "Teardown timeout", Key: "teardownTimeout", Env: "K6_TEARDOWN_TIMEOUT", field: "TeardownTimeout", Note: "default 60s"},
	{Name: "Thresholds", Key: "thresholds", Note: "every aggregation and operator, abortOnFail, delayAbortEval, sub-metrics metric{tag:value}"},
	{Name: "Throw", Key: "throw", Flag: "throw", Short: "w", Env: "K6_THROW", field: "Throw", Note: "a request that fails to go out (network error, timeout) throws; a bad custom metric value throws"},
	{Name: "TLS auth", Key: "tlsAuth", Status: Refused, Note: "no client certificates"},
	{Name: "TLS cipher suites", Key: "tlsCipherSuites", Status: Refused, Note: "Go's default cipher suites only"},
	{Name: "TLS version", Key: "tlsVersion", Status: Refused, Note: "Go's default TLS versions only"},
	{Name: "TLS AIA fetch", Key: "tlsAIAFetch", Status: Refused, Note: "no AIA certificate fetching"},
	{Name: "Traces output", Flag: "traces-output", Env: "K6_TRACES_OUTPUT", Status: Refused, Note: "no trace output"},
	{Name: "User agent", Key: "userAgent", Flag: "user-agent", Env: "K6_USER_AGENT", field: "UserAgent", Note: "a request's own User-Agent header wins; \"\" leaves the header to the HTTP client (k6 sends none)"},
	{Name: "Verbose", Flag: "verbose", Short: "v", Note: "cmd/throttle: debug logging"},
	{Name: "VUs", Key: "vus", Flag: "vus", Short: "u", Env: "K6_VUS", field: "VUs", Note: "shortcut VU count; beside scenarios it is unused (a notice says so)"},
	{Name: "VUs max", Key: "vusMax", Status: Refused, Note: "deprecated in k6; use a scenario's maxVUs"},
	{Name: "Web dashboard", Env: "K6_WEB_DASHBOARD", Status: Refused, Note: "k6's web dashboard is not built in"},
}

// asksNothing reports whether a refused option's value is one that asks
// for nothing throttle does not do: k6's off value (false, 0, empty) or
// e.same. raw is JSON from a script, or else a flag's or variable's text.
func (e *Entry) asksNothing(value string, raw bool) bool {
	value = strings.TrimSpace(value)
	if e.same != "" && (value == e.same || raw && value == `"`+e.same+`"`) {
		return true
	}
	if raw {
		switch value {
		case "false", "0", "[]", "{}", `""`, "null":
			return true
		}
		return false
	}
	return value == "false" || value == "0"
}

var (
	byKey  = map[string]*Entry{}
	byFlag = map[string]*Entry{}
	byEnv  = map[string]*Entry{}
)

func init() {
	for i := range Catalog {
		e := &Catalog[i]
		if e.Key != "" {
			byKey[e.Key] = e
		}
		if e.Flag != "" {
			byFlag[e.Flag] = e
		}
		if e.Short != "" {
			byFlag[e.Short] = e
		}
		if e.Env != "" {
			byEnv[e.Env] = e
		}
	}
}

// Lookup finds a flag's entry by its long or short name (no dashes).
func Lookup(flag string) (*Entry, bool) {
	e, ok := byFlag[flag]
	return e, ok
}

// refusedSwitches are the refused flags that k6 gives as switches, without
// a value.
var refusedSwitches = map[string]bool{"paused": true, "linger": true, "exit-on-running": true, "profiling-enabled": true, "show-logs": true}

// NoValue is what the flag stands for when given without a value: "true"
// for a switch, "headers" for --http-debug, "" for a flag that takes a
// value. A command line registers it as the flag's default-when-bare.
func (e *Entry) NoValue() string {
	switch {
	case e.field == "HTTPDebug":
		return "headers"
	case e.field != "":
		var f Flags
		if _, isBool := f.field(e).Interface().(*bool); isBool {
			return "true"
		}
	case refusedSwitches[e.Flag]:
		return "true"
	}
	return ""
}
