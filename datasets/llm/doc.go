// Package llm reads and writes the request traces of Drover's LLM
// inference simulator (env/infer, issue 34): Request, the workload unit,
// and its validation. The trace readers are being built.
package llm
