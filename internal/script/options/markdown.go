package options

import "strings"

// MarkdownTable is Catalog as the Markdown table of docs/k6-options.md:
// every documented k6 option with its script key, flag and K6_* variable,
// and what throttle does with it. A test keeps the file equal to it.
func MarkdownTable() string {
	var b strings.Builder
	b.WriteString("| Option | Script key | Flag | Environment | throttle | Why, or how it differs |\n")
	b.WriteString("|---|---|---|---|---|---|\n")
	code := func(s string) string {
		if s == "" {
			return "—"
		}
		return "`" + s + "`"
	}
	for i := range Catalog {
		e := &Catalog[i]
		flag := ""
		if e.Flag != "" {
			flag = "--" + e.Flag
			if e.Short != "" {
				flag = "-" + e.Short + ", " + flag
			}
		}
		b.WriteString("| " + e.Name + " | " + code(e.Key) + " | " + code(flag) + " | " + code(e.Env) + " | " + e.Status.String() + " | " + strings.ReplaceAll(e.Note, "|", "\\|") + " |\n")
	}
	return b.String()
}
