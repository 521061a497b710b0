package mustjson

import (
	"bytes"
	"encoding/json"
)

// Validator is a decoded value that can check itself.
type Validator interface {
	Validate() error
}

// Decode decodes data into a T, rejecting unknown fields and trailing
// data, and validates it. It panics, naming the file as name, when either
// fails.
func Decode[T Validator](name string, data []byte) T {
	var v T
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&v); err != nil {
		panic(name + ": " + err.Error())
	}
	if dec.More() {
		panic(name + ": trailing data")
	}
	if err := v.Validate(); err != nil {
		panic(name + ": " + err.Error())
	}
	return v
}
