package longtest_test

import (
	"testing"

	"github.com/drover-sched/drover/internal/longtest"
)

func TestEnabled(t *testing.T) {
	for _, tt := range []struct {
		value string
		want  bool
	}{{"", false}, {"0", false}, {"true", false}, {"1", true}} {
		t.Run("DROVER_LONG="+tt.value, func(t *testing.T) {
			t.Setenv(longtest.Env, tt.value)
			if got := longtest.Enabled(); got != tt.want {
				t.Errorf("Enabled() = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestSkip(t *testing.T) {
	t.Setenv(longtest.Env, "")
	ran := false
	t.Run("off", func(t *testing.T) {
		longtest.Skip(t, "a test")
		ran = true
	})
	if ran {
		t.Error("Skip let the test run without DROVER_LONG=1")
	}
	t.Setenv(longtest.Env, "1")
	t.Run("on", func(t *testing.T) {
		longtest.Skip(t, "a test")
		ran = true
	})
	if !ran {
		t.Error("Skip skipped the test with DROVER_LONG=1")
	}
}
