package llm

import "github.com/drover-sched/drover/internal/llmreq"

// Request is one inference request of a trace: when it arrives and how
// many tokens it brings and asks for (ID, Arrival in seconds, Prompt,
// Output, and the Images of a multimodal request). The simulator
// (env/infer) runs these: infer.Request is the same type, defined in the
// leaf package internal/llmreq so that the simulator links none of this
// package's readers.
type Request = llmreq.Request

// ErrBadRequest is returned (wrapped) for a request no simulation can run
// (Request.Validate).
var ErrBadRequest = llmreq.ErrBadRequest

// MaxTokens bounds a request's prompt and output tokens (2^24, beyond any
// model's context).
const MaxTokens = llmreq.MaxTokens

// MaxImages bounds a request's images (2^16; the Azure LMM 2025 trace's
// largest requests carry about 10^4).
const MaxImages = llmreq.MaxImages
