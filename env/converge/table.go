package converge

import (
	"fmt"
	"strings"
	"text/tabwriter"
)

// Table returns the fitted parameters as a plain-text table: name, fitted
// value, Confidence interval, unit and source, one parameter a line, then
// each parameter's method. doc.go carries this table; a test checks that
// it matches the fit.
func (m *Model) Table() string {
	var b strings.Builder
	w := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintf(w, "parameter\tfit\t%.0f%% interval\tunit\tsource\n", 100*Confidence)
	for _, p := range m.Params() {
		fmt.Fprintf(w, "%s\t%s\t[%s, %s]\t%s\t%s\n", p.Name, num(p.Value), num(p.Lo), num(p.Hi), p.Unit, p.Source)
	}
	w.Flush()
	b.WriteString("\n")
	for _, p := range m.Params() {
		fmt.Fprintf(&b, "%s: %s.\n", p.Name, p.Method)
	}
	return b.String()
}

// num formats a parameter value with four significant digits.
func num(v float64) string { return fmt.Sprintf("%.4g", v) }
