package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestInferMmscale runs drover infer mmscale over two hours of the
// synthetic week for Llama-3.2-11B-Vision: it profiles, prints the table
// with a row per system and target tried, and the command's errors name
// the flag.
func TestInferMmscale(t *testing.T) {
	if testing.Short() {
		t.Skip("simulates two hours of the week twice per target")
	}
	var out, errb bytes.Buffer
	if code := run([]string{"infer", "mmscale", "--model", "llama", "--days", "0.0833", "--start-day", "1", "--targets", "1,0.5"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d\n%s", code, errb.String())
	}
	s := out.String()
	for _, want := range []string{"## llama-3.2-11b-vision", "profile (", "| monolith | 1.0 |", "| modserve | 1.0 |", "costs: ", "derived: "} {
		if !strings.Contains(s, want) {
			t.Errorf("output lacks %q:\n%s", want, s)
		}
	}
	for _, bad := range [][]string{
		{"--model", "gpt"},
		{"--targets", "1,3"},
		{"--router", "modserve-decoup"},
		{"--monitor", "600"},
	} {
		errb.Reset()
		if code := run(append([]string{"infer", "mmscale"}, bad...), &out, &errb); code == 0 || !strings.Contains(errb.String(), bad[0]) {
			t.Errorf("%v: exit %d, stderr %q; want an error naming %s", bad, code, errb.String(), bad[0])
		}
	}
}
