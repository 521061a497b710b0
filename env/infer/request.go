package infer

import "github.com/drover-sched/drover/datasets/llm"

// Request is one inference request of a trace: when it arrives and how
// many tokens it brings and asks for. It is datasets/llm's Request, which
// the trace readers produce (datasets may not import env: the workload
// types live in the first layer, as datasets.Job does for the training
// simulator).
type Request = llm.Request

// ErrBadRequest is returned (wrapped) by Request.Validate for a request
// no simulation can run.
var ErrBadRequest = llm.ErrBadRequest

// MaxTokens bounds a request's prompt and output tokens (2^24, beyond any
// model's context).
const MaxTokens = llm.MaxTokens
