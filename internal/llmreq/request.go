package llmreq

import (
	"errors"
	"fmt"
	"math"
)

// Request is one inference request of a trace: when it arrives and how
// many tokens it brings and asks for. The trace readers (datasets/llm)
// produce it and the simulator (env/infer) runs it; llm.Request and
// infer.Request are this type.
type Request struct {
	// ID is the request's index in its trace (arrival order).
	ID int
	// Arrival is the arrival time in seconds since the start of the trace.
	Arrival float64
	// Prompt is the number of prompt (context) tokens, Output the number of
	// tokens to generate.
	Prompt, Output int
	// Images is the number of images a multimodal request carries (the
	// Azure LMM 2025 trace's NumImages), 0 for a text-only request. The
	// tokens an image becomes depend on the model (6,404, 7,290 or 1,280
	// for one 896x896 image in ModServe's three models), so they are not
	// in Prompt: the simulator adds them per model.
	Images int
}

// ErrBadRequest is returned (wrapped) by Validate for a request no
// simulation can run. Its text says llm, the package users name.
var ErrBadRequest = errors.New("llm: bad request")

// MaxTokens bounds a request's prompt and output tokens (2^24, beyond any
// model's context).
const MaxTokens = 1 << 24

// MaxImages bounds a request's images (2^16; the Azure LMM 2025 trace's
// largest requests carry about 10^4).
const MaxImages = 1 << 16

// Validate checks r: a finite, non-negative arrival, a positive prompt and
// output within MaxTokens, and 0..MaxImages images.
func (r *Request) Validate() error {
	switch {
	case math.IsNaN(r.Arrival) || math.IsInf(r.Arrival, 0) || r.Arrival < 0:
		return fmt.Errorf("%w: request %d: arrival %v s, want a finite time >= 0", ErrBadRequest, r.ID, r.Arrival)
	case r.Prompt <= 0 || r.Prompt > MaxTokens:
		return fmt.Errorf("%w: request %d: prompt tokens %d, want 1..%d", ErrBadRequest, r.ID, r.Prompt, MaxTokens)
	case r.Output <= 0 || r.Output > MaxTokens:
		return fmt.Errorf("%w: request %d: output tokens %d, want 1..%d", ErrBadRequest, r.ID, r.Output, MaxTokens)
	case r.Images < 0 || r.Images > MaxImages:
		return fmt.Errorf("%w: request %d: %d images, want 0..%d", ErrBadRequest, r.ID, r.Images, MaxImages)
	}
	return nil
}
