package infer

import "github.com/drover-sched/drover/internal/llmreq"

// Request is one inference request of a trace: when it arrives and how
// many tokens it brings and asks for. It is datasets/llm's Request, which
// the trace readers produce; both name the leaf type internal/llmreq
// defines, so that the simulator links none of the readers' dependencies
// (Parquet, protobuf, gonum's distributions) and datasets imports no env.
type Request = llmreq.Request

// ErrBadRequest is returned (wrapped) by Request.Validate for a request
// no simulation can run.
var ErrBadRequest = llmreq.ErrBadRequest

// MaxTokens bounds a request's prompt and output tokens (2^24, beyond any
// model's context).
const MaxTokens = llmreq.MaxTokens
