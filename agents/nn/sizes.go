package nn

import (
	"errors"
	"fmt"
)

// Bounds on a network's shape that CheckSizes enforces. A config (ppo,
// dqn, a checkpoint's meta) that names widths beyond them is a data
// problem, reported as an error wrapping ErrSize, not a panic in
// NewLinear or an out-of-memory crash in NewParam.
const (
	// MaxWidth is the widest layer, input and output included.
	MaxWidth = 4096
	// MaxParams caps a network's weights and biases together: 2^25
	// (32Mi) float32 values, 128 MiB, which with the gradient and Adam's
	// two moments is 512 MiB per network. Two hidden layers of MaxWidth
	// fit; three do not.
	MaxParams = 1 << 25
)

// ErrSize wraps every shape CheckSizes refuses.
var ErrSize = errors.New("nn: bad network size")

// CheckSizes reports whether sizes (inputs, hidden widths, outputs, as
// NewStack and NewOrthogonalMLP take them) make a network this package can
// build: at least two sizes, each at least 1, and at most MaxParams
// parameters. The inputs and outputs come from the spaces, so only
// CheckHidden bounds widths by MaxWidth.
func CheckSizes(sizes []int) error {
	if len(sizes) < 2 {
		return fmt.Errorf("%w: %d sizes, want at least 2 (inputs and outputs)", ErrSize, len(sizes))
	}
	for i, s := range sizes {
		if s < 1 {
			return fmt.Errorf("%w: size %d is %d, want at least 1", ErrSize, i, s)
		}
	}
	n := 0
	for i := 0; i+1 < len(sizes); i++ {
		a, b := sizes[i], sizes[i+1]
		if a > MaxParams || b > MaxParams || a*b > MaxParams-n-b { // a, b <= 2^25: no overflow
			return fmt.Errorf("%w: sizes %v hold more than %d parameters", ErrSize, sizes, MaxParams)
		}
		n += a*b + b
	}
	return nil
}

// CheckHidden checks the hidden widths of a config (ppo.Config.Hidden,
// dqn.Config.Hidden) before the spaces are known: each in [1, MaxWidth],
// and the hidden-to-hidden layers within MaxParams (CheckSizes checks the
// whole network once the spaces are known). An empty list is fine: a
// linear network. The error names the index, hidden[i].
func CheckHidden(hidden []int) error {
	for i, h := range hidden {
		if h < 1 || h > MaxWidth {
			return fmt.Errorf("%w: hidden[%d] is %d, want 1 to %d", ErrSize, i, h, MaxWidth)
		}
	}
	return CheckSizes(append(append([]int{1}, hidden...), 1))
}
