// Package llmreq holds the one type Drover's LLM trace readers
// (datasets/llm) and its inference simulator (env/infer) share: Request,
// an inference request's arrival, prompt and output tokens and images,
// with its bounds and Validate. Users name it llm.Request or
// infer.Request (both are aliases of this type); it lives here, a leaf
// importing only the standard library, so that the simulator links none
// of the readers' dependencies (Parquet, protobuf, gonum's distributions)
// and the readers, the first layer, import no env.
//
// # Usage
//
//	r := llmreq.Request{ID: 0, Arrival: 1.5, Prompt: 1024, Output: 128}
//	if err := r.Validate(); err != nil { // wraps ErrBadRequest
//		return err
//	}
package llmreq
